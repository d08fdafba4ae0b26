/*
 * socket_int.h - what the two halves of the socket channel share: the
 * writer (socket.c: connecting, sending, reconnecting) and the set-up
 * (socket_open.c: keys, open, close).
 *
 * A channel has one connection, or two for MMT-Probe's type BOTH (a Unix
 * stream socket and TCP, every record sent on both). A record is delivered
 * once every connection has sent it whole; a connection that is further on
 * remembers by how many records (`ahead`), because the channel layer offers
 * the undelivered rest of a batch again, first and in the same order, and
 * that connection must not send those records twice.
 */
#ifndef ISP_OUTPUTS_SOCKET_INT_H
#define ISP_OUTPUTS_SOCKET_INT_H

#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "channel.h"

enum sock_kind { K_UDP, K_TCP, K_UNIX, K_UNIX_DGRAM, K_BOTH };

/* One connection to one reader. */
struct sock_conn {
	enum sock_kind kind;            /* never K_BOTH */
	char *host, *port;              /* udp, tcp */
	struct sockaddr_un sun;         /* unix, unix-dgram */
	int fd;                         /* -1: not connected */
	bool connected_once;            /* later connections are reconnects */
	size_t partial;                 /* stream: bytes of record `ahead` sent */
	size_t ahead;                   /* records of the batch's head already
					 * sent whole here, not yet on the other */
	struct addrinfo *ai, *ai_cur;   /* udp/tcp: addresses, the one in use */
	int64_t flush_connect_ns;       /* flush does not try to connect before */
	char last_err[192];
};

struct sock_out {
	enum sock_kind kind;            /* as configured (K_BOTH: two conns) */
	struct sock_conn conn[2];
	unsigned nconn;
	int connect_ms, wait_ms, sndbuf;
	uint64_t oversize;              /* records too large for a datagram */
	char *name;
	struct isp_channel *ch;
};

/* socket.c: (re)resolve c's hostname:port; 0, or getaddrinfo's error with
 * c->last_err set. */
int isp_sock_resolve(struct sock_conn *c);

/* socket_open.c: the type's open and close. */
int isp_sock_open(void **state, const struct isp_channel_cfg *cfg,
		  int *bad_kv, char *err, size_t errlen);
void isp_sock_close(void *state);

#endif
