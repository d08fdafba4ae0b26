/*
 * builtin.c - the plugins linked into the binary, in registration order.
 * Order matters only for heuristics under the same parent.
 */
#include "../core/registry.h"

#define PLUGINS(X) X(ethernet) X(vlan) X(ipv4) X(ipv6) X(udp) X(tcp) \
	X(vxlan) X(vxlan_gpe) X(geneve) X(gre) X(int) X(int_report) X(dta) \
	X(sll) X(sll2) X(raw) X(null) X(loop)

#define DECLARE(n) int isp_##n##_register(struct isp_registry *reg);
PLUGINS(DECLARE)

int isp_register_builtins(struct isp_registry *reg)
{
#define CALL(n) if (isp_##n##_register(reg) < 0) return -1;
	PLUGINS(CALL)
	return 0;
}
