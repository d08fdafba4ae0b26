/*
 * link_next.h - the payload of the link layers that do not carry an
 * EtherType of their own: Linux cooked captures (sll.c, sll2.c) and the
 * BSD loopback headers (null.c, loop.c). Inline, because each plugin is
 * also built alone as a .so.
 */
#ifndef ISP_PLUGINS_LINK_NEXT_H
#define ISP_PLUGINS_LINK_NEXT_H

#include "../../core/plugin.h"

#define ARPHRD_IEEE80211_RADIOTAP 803
#define ARPHRD_NETLINK 824

/* A cooked capture's protocol field: below 0x0600 it is one of Linux's
 * pseudo-types (802.2 LLC, Novell 802.3, CAN), and netlink and radiotap
 * devices put their own numbers there: none of them is an EtherType. */
static inline void isp_next_cooked(struct isp_dissect *d, unsigned proto, unsigned hatype)
{
	if (proto >= 0x0600 && hatype != ARPHRD_NETLINK && hatype != ARPHRD_IEEE80211_RADIOTAP)
		isp_next_by(d, ISP_TBL_ETHERTYPE, proto);
}

/* A loopback header's address family: AF_INET is 2 everywhere; AF_INET6
 * is 10 on Linux, 24 on OpenBSD and NetBSD, 28 on FreeBSD, 30 on macOS.
 * Another family is not decoded, and not an error. */
static inline void isp_next_by_family(struct isp_dissect *d, uint32_t af)
{
	if (af == 2)
		isp_next_by(d, ISP_TBL_LINKTYPE, 228);          /* LINKTYPE_IPV4 */
	else if (af == 10 || af == 24 || af == 28 || af == 30)
		isp_next_by(d, ISP_TBL_LINKTYPE, 229);          /* LINKTYPE_IPV6 */
}

#endif
