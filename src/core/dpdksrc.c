/*
 * dpdksrc.c - a DPDK port as a packet source (built when configure finds
 * libdpdk): EAL arguments from the command line, bursts of 32 received on
 * one queue, each mbuf processed in place and freed when the next packet
 * is asked for. With the net_pcap virtual device (`--no-huge --no-pci
 * --vdev net_pcap0,rx_pcap=FILE`) it runs on any machine.
 */
#include "dpdksrc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define BURST 32
#define MAX_EAL_ARGS 64

struct dpdk_src {
	uint16_t port;
	struct rte_mempool *pool;
	struct rte_mbuf *burst[BURST];
	unsigned n, next;
	volatile int stop;
	uint64_t burst_ts;
};

static bool eal_up;

struct dpdk_src *dpdk_src_open(const char *eal_args, char *err, size_t errlen)
{
	char *copy = strdup(eal_args ? eal_args : "");
	char *argv[MAX_EAL_ARGS + 2];
	int argc = 0;
	struct dpdk_src *s = calloc(1, sizeof(*s));

	if (!copy || !s) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	argv[argc++] = (char *)"intspect";
	for (char *tok = strtok(copy, " \t"); tok && argc < MAX_EAL_ARGS; tok = strtok(NULL, " \t"))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (eal_up) {
		snprintf(err, errlen, "DPDK: the EAL is already running");
		goto fail;
	}
	if (rte_eal_init(argc, argv) < 0) {
		snprintf(err, errlen, "DPDK EAL: %s (arguments: %s)", rte_strerror(rte_errno), eal_args);
		goto fail;
	}
	eal_up = true;
	if (rte_eth_dev_count_avail() == 0) {
		snprintf(err, errlen, "DPDK: no port (give one with --vdev or a bound NIC)");
		goto fail;
	}
	RTE_ETH_FOREACH_DEV(s->port)
		break;
	s->pool = rte_pktmbuf_pool_create("isp_rx", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!s->pool) {
		snprintf(err, errlen, "DPDK mbuf pool: %s", rte_strerror(rte_errno));
		goto fail;
	}
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	int rc = rte_eth_dev_configure(s->port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(s->port, 0, 1024, (unsigned)rte_eth_dev_socket_id(s->port),
					    NULL, s->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(s->port, 0, 64, (unsigned)rte_eth_dev_socket_id(s->port),
					    NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(s->port);
	if (rc == 0)
		rte_eth_promiscuous_enable(s->port);
	if (rc != 0) {
		snprintf(err, errlen, "DPDK port %u: %s", s->port, rte_strerror(-rc));
		goto fail;
	}
	free(copy);
	return s;
fail:
	free(copy);
	if (s && s->pool)
		rte_mempool_free(s->pool);
	free(s);
	return NULL;
}

static void free_burst(struct dpdk_src *s)
{
	for (unsigned i = s->next > 0 ? s->next - 1 : 0; i < s->n; i++)
		rte_pktmbuf_free(s->burst[i]);
	s->n = s->next = 0;
}

int dpdk_src_next(struct dpdk_src *s, const uint8_t **data, uint32_t *caplen,
		  uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	if (s->next > 0 && s->next <= s->n)     /* the packet handed out last time */
		rte_pktmbuf_free(s->burst[s->next - 1]);
	if (s->next >= s->n) {
		s->n = s->next = 0;
		if (s->stop)
			return 0;
		uint16_t got = rte_eth_rx_burst(s->port, 0, s->burst, BURST);
		if (got == 0) {
			struct timespec ts = { 0, 100000 };     /* poll, but let the core breathe */
			nanosleep(&ts, NULL);
			return 2;
		}
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		s->burst_ts = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		s->n = got;
		if (s->n > 1)
			rte_prefetch0(rte_pktmbuf_mtod(s->burst[1], void *));
	}
	struct rte_mbuf *m = s->burst[s->next++];
	if (s->next < s->n)
		rte_prefetch0(rte_pktmbuf_mtod(s->burst[s->next], void *));
	*data = rte_pktmbuf_mtod(m, const uint8_t *);
	*caplen = m->data_len;          /* the first segment; a longer packet is cut */
	*wirelen = m->pkt_len;
	*ts_ns = s->burst_ts;
	return 1;
}

void dpdk_src_stop(struct dpdk_src *s)
{
	s->stop = 1;
}

void dpdk_src_stats(struct dpdk_src *s, uint64_t *received, uint64_t *dropped)
{
	struct rte_eth_stats st;

	if (rte_eth_stats_get(s->port, &st) != 0) {
		*received = *dropped = 0;
		return;
	}
	*received = st.ipackets;
	*dropped = st.imissed + st.rx_nombuf + st.ierrors;
}

void dpdk_src_close(struct dpdk_src *s)
{
	if (!s)
		return;
	free_burst(s);
	rte_eth_dev_stop(s->port);
	rte_eth_dev_close(s->port);
	rte_mempool_free(s->pool);
	free(s);
	rte_eal_cleanup();
	eal_up = false;
}
