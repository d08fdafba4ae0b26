/*
 * dpdksrc.c - a DPDK port as a packet source (built when configure finds
 * libdpdk): EAL arguments from the command line, one RX queue per worker
 * (RSS on the IP addresses where the device can hash), bursts of 32, each
 * mbuf processed in place and freed when the next packet is asked for.
 * With the net_pcap virtual device (`--no-huge --no-pci --vdev
 * net_pcap0,rx_pcap=FILE`, one queue per rx_pcap) it runs on any machine.
 */
#include "dpdksrc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_version.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define BURST 32
#define MAX_EAL_ARGS 64

struct dpdk_port {
	uint16_t id;
	uint16_t nq;            /* RX queues configured */
	struct rte_mempool *pool;
};

/* a reader of one RX queue; queue 0's owns the port */
struct dpdk_src {
	struct dpdk_port *port;
	uint16_t q;
	struct rte_mbuf *burst[BURST];
	unsigned n, next;
	_Atomic int stop;      /* set from a signal handler or another thread */
	uint64_t burst_ts;
};

static bool eal_up;

/* Up to `want` RX queues, with RSS where the device hashes: the kernel of
 * the card spreads flows, the workers re-dispatch by monitored flow. */
static int configure_port(struct dpdk_port *p, unsigned want)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int rc = rte_eth_dev_info_get(p->id, &info);

	if (rc != 0)
		return rc;
	memset(&conf, 0, sizeof(conf));
	p->nq = (uint16_t)(want < info.max_rx_queues ? want : info.max_rx_queues);
	if (p->nq == 0)
		p->nq = 1;
	if (p->nq > 1 && (info.flow_type_rss_offloads & RTE_ETH_RSS_IP)) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP & info.flow_type_rss_offloads;
	}
	rc = rte_eth_dev_configure(p->id, p->nq, 1, &conf);
	for (uint16_t q = 0; rc == 0 && q < p->nq; q++)
		rc = rte_eth_rx_queue_setup(p->id, q, 1024, (unsigned)rte_eth_dev_socket_id(p->id),
					    NULL, p->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(p->id, 0, 64, (unsigned)rte_eth_dev_socket_id(p->id), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(p->id);
	if (rc == 0)
		rte_eth_promiscuous_enable(p->id);
	return rc;
}

struct dpdk_src *dpdk_src_open(const char *eal_args, unsigned queues, char *err, size_t errlen)
{
	char *copy = strdup(eal_args ? eal_args : "");
	char *argv[MAX_EAL_ARGS + 2];
	int argc = 0;
	struct dpdk_src *s = calloc(1, sizeof(*s));
	struct dpdk_port *p = calloc(1, sizeof(*p));

	if (!copy || !s || !p) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	s->port = p;
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
	RTE_ETH_FOREACH_DEV(p->id)
		break;
	p->pool = rte_pktmbuf_pool_create("isp_rx", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!p->pool) {
		snprintf(err, errlen, "DPDK mbuf pool: %s", rte_strerror(rte_errno));
		goto fail;
	}
	int rc = configure_port(p, queues ? queues : 1);
	if (rc != 0) {
		snprintf(err, errlen, "DPDK port %u: %s", p->id, rte_strerror(-rc));
		goto fail;
	}
	free(copy);
	return s;
fail:
	free(copy);
	if (p && p->pool)
		rte_mempool_free(p->pool);
	free(p);
	free(s);
	return NULL;
}

unsigned dpdk_src_queues(const struct dpdk_src *s)
{
	return s->port->nq;
}

struct dpdk_src *dpdk_src_queue(struct dpdk_src *first, unsigned q)
{
	struct dpdk_src *s;

	if (q >= first->port->nq || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->port = first->port;
	s->q = (uint16_t)q;
	return s;
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
		if (atomic_load_explicit(&s->stop, memory_order_relaxed))
			return 0;
		uint16_t got = rte_eth_rx_burst(s->port->id, s->q, s->burst, BURST);
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
	atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
}

void dpdk_src_stats(struct dpdk_src *s, uint64_t *received, uint64_t *dropped)
{
	struct rte_eth_stats st;

	if (s->q != 0 || rte_eth_stats_get(s->port->id, &st) != 0) {     /* the port's, once */
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
	if (s->q == 0) {
		rte_eth_dev_stop(s->port->id);
		rte_eth_dev_close(s->port->id);
		rte_mempool_free(s->port->pool);
		free(s->port);
		rte_eal_cleanup();
		eal_up = false;
	}
	free(s);
}

const char *dpdk_src_version(void)
{
	return rte_version();
}
