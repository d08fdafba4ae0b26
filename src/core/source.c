/*
 * source.c - libpcap-backed packet sources.
 */
#include "source.h"

#include <errno.h>
#include <stdatomic.h>
#include <linux/if_packet.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pcapmap.h"
#include "udpsrc.h"
#include "config.h"
#ifdef HAVE_DPDK
#include "dpdksrc.h"
#endif
#ifdef HAVE_RDKAFKA
#include "kafkasrc.h"
#endif
#include "registry.h"

struct isp_source {
	pcap_t *pc;             /* libpcap, or a dead handle for filters when mapped */
	struct pcap_map map;
	bool mapped;
	struct udp_src *udp;    /* UDP report listener */
#ifdef HAVE_DPDK
	struct dpdk_src *dpdk;
#endif
#ifdef HAVE_RDKAFKA
	struct kafka_src *kafka;
#endif
	bool filtered;
	struct bpf_program prog;
	int linktype;           /* LINKTYPE_ value, not libpcap's DLT_ */
	bool nano;
	bool live;
	bool file;              /* a capture file or standard input */
	_Atomic int stop;      /* set from a signal handler or another thread */
};

/*
 * The registry's link table is keyed by LINKTYPE_ values, what a pcap file
 * holds; libpcap hands out DLT_ values, which differ for raw IP: DLT_RAW is
 * 12 (14 on OpenBSD) where files say LINKTYPE_RAW 101. Files written with
 * the DLT value are taken the same way. The other link types decoded have
 * one value for both.
 */
#define LINKTYPE_RAW 101
#define LINKTYPE_IPV4 228

int isp_source_linktype_of_dlt(int dlt)
{
	return dlt == DLT_RAW || dlt == 12 || dlt == 14 ? LINKTYPE_RAW : dlt;
}

/* ... and libpcap's filter compiler wants the DLT_ value back. */
static int dlt_of_linktype(int linktype)
{
	return linktype == LINKTYPE_RAW ? DLT_RAW : linktype;
}

static int apply_filter(struct isp_source *s, const char *filter, char *err, size_t errlen)
{
	struct bpf_program prog;

	if (!filter || !*filter)
		return 0;
	if (pcap_compile(s->pc, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "filter '%s': %s", filter, pcap_geterr(s->pc));
		return -1;
	}
	if (s->mapped) {        /* applied per packet with pcap_offline_filter */
		s->prog = prog;
		s->filtered = true;
		return 0;
	}
	int rc = pcap_setfilter(s->pc, &prog);
	pcap_freecode(&prog);
	if (rc < 0) {
		snprintf(err, errlen, "filter '%s': %s", filter, pcap_geterr(s->pc));
		return -1;
	}
	return 0;
}

static struct isp_source *open_live(struct isp_source *s, const struct isp_source_opts *o,
				    char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";

	s->pc = pcap_create(o->iface, ebuf);
	if (!s->pc) {
		snprintf(err, errlen, "%s: %s", o->iface, ebuf);
		return NULL;
	}
	pcap_set_snaplen(s->pc, o->snaplen > 0 ? o->snaplen : 262144);
	pcap_set_promisc(s->pc, o->promisc);
	pcap_set_buffer_size(s->pc, (o->buffer_mb > 0 ? o->buffer_mb : 64) << 20);
	pcap_set_immediate_mode(s->pc, 0);
	pcap_set_timeout(s->pc, o->timeout_ms > 0 ? o->timeout_ms : ISP_LIVE_TIMEOUT_MS);
	pcap_set_tstamp_precision(s->pc, PCAP_TSTAMP_PRECISION_NANO);
	int rc = pcap_activate(s->pc);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", o->iface, pcap_geterr(s->pc));
		return NULL;
	}
	s->nano = pcap_get_tstamp_precision(s->pc) == PCAP_TSTAMP_PRECISION_NANO;
	s->live = true;
	return s;
}

int isp_source_check(const struct isp_source_opts *o, unsigned workers, char *err,
		     size_t errlen)
{
	if (!!o->file + !!o->iface + !!o->udp + !!o->dpdk + !!o->kafka > 1) {
		snprintf(err, errlen, "give one input: -r, -i, -u, -k or --dpdk");
		return -1;
	}
	if ((o->udp || o->kafka) && o->filter && *o->filter) {
		snprintf(err, errlen, "a BPF filter does not apply to a %s input",
			 o->udp ? "UDP" : "Kafka");
		return -1;
	}
	if (o->udp && udp_src_check_spec(o->udp, err, errlen) < 0)
		return -1;
	if (o->kafka && workers > 1) {
		snprintf(err, errlen, "a Kafka input is read by one worker (-w 1): for more, run "
			 "more intspect processes in its consumer group (README.md, \"Scaling out\")");
		return -1;
	}
#ifdef HAVE_RDKAFKA
	char b[512], t[256], g[256];    /* kafka_src_open's sizes */
	if (o->kafka && (kafka_in_parse(o->kafka, b, sizeof(b), t, sizeof(t), g, sizeof(g), err,
					errlen) < 0 ||
			 kafka_in_check_props(o->kafka_props, o->nkafka_props, err, errlen) < 0))
		return -1;
#endif
	return 0;
}

struct isp_source *isp_source_open(const struct isp_source_opts *o, char *err, size_t errlen)
{
	struct isp_source *s = calloc(1, sizeof(*s));
	char ebuf[PCAP_ERRBUF_SIZE] = "";

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (o->dpdk) {
#ifdef HAVE_DPDK
		s->dpdk = dpdk_src_open(o->dpdk, 1, err, errlen);
		if (!s->dpdk)
			goto fail;
		s->linktype = DLT_EN10MB;
		s->nano = true;
		s->live = true;
		return s;
#else
		snprintf(err, errlen, "this intspect was built without DPDK (install libdpdk-dev and rebuild)");
		goto fail;
#endif
	}
	if (o->kafka) {
#ifdef HAVE_RDKAFKA
		struct kafka_src_opts ko = { o->kafka, o->kafka_props, o->nkafka_props, o->kafka_port,
					     o->rec_mark, o->rec_settled, o->rec_ctx };
		if (o->filter && *o->filter) {
			snprintf(err, errlen, "a BPF filter does not apply to a Kafka input");
			goto fail;
		}
		if (!(s->kafka = kafka_src_open(&ko, err, errlen)))
			goto fail;
		s->linktype = LINKTYPE_IPV4;    /* it writes an IPv4 header in front */
		s->nano = true;
		s->live = true;
		return s;
#else
		snprintf(err, errlen, "this intspect was built without librdkafka (install "
			 "librdkafka-dev and rebuild)");
		goto fail;
#endif
	}
	if (o->udp) {
		s->udp = udp_src_open(o->udp, o->buffer_mb, o->reuseport, o->timeout_ms, err, errlen);
		if (!s->udp)
			goto fail;
		s->linktype = LINKTYPE_IPV4;    /* it writes an IPv4 header in front */
		s->nano = true;
		s->live = true;
		if (o->filter && *o->filter) {
			snprintf(err, errlen, "a BPF filter does not apply to a UDP listener");
			goto fail;
		}
		return s;
	}
	if (o->iface) {
		if (!open_live(s, o, err, errlen))
			goto fail;
	} else {
		const char *f = o->file ? o->file : "-";
		s->file = true;
		int mrc = strcmp(f, "-") == 0 ? 0 : pcap_map_open(&s->map, f, err, errlen);
		if (mrc < 0)
			goto fail;
		if (mrc > 0 && o->filter && *o->filter &&
		    (s->map.linktype == 0 || s->map.linktype == 108)) {
			/* libpcap compiles the address-family test of NULL and
			 * LOOP for a file (every AF_INET6 value, the file's byte
			 * order) only when it reads the file itself */
			pcap_map_close(&s->map);
			mrc = 0;
		}
		if (mrc > 0) {
			s->mapped = true;
			s->nano = true;
			s->linktype = isp_source_linktype_of_dlt((int)s->map.linktype);
			s->pc = pcap_open_dead_with_tstamp_precision(dlt_of_linktype(s->linktype),
				s->map.snaplen ? (int)s->map.snaplen : 262144, PCAP_TSTAMP_PRECISION_NANO);
			if (!s->pc) {
				snprintf(err, errlen, "%s: out of memory", f);
				goto fail;
			}
			if (apply_filter(s, o->filter, err, errlen) < 0)
				goto fail;
			return s;
		}
		/* our own FILE with a large buffer: libpcap reads through stdio,
		 * whose default 4 KiB buffer costs a read(2) every 16 packets */
		FILE *fp = strcmp(f, "-") == 0 ? stdin : fopen(f, "rb");
		if (!fp) {
			snprintf(err, errlen, "%s: %s", f, strerror(errno));
			goto fail;
		}
		setvbuf(fp, NULL, _IOFBF, 1 << 20);
		s->pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, ebuf);
		if (!s->pc) {
			snprintf(err, errlen, "%s: %s", f, ebuf);
			if (fp != stdin)
				fclose(fp);
			goto fail;
		}
		/* libpcap scales microsecond files to the precision asked for */
		s->nano = pcap_get_tstamp_precision(s->pc) == PCAP_TSTAMP_PRECISION_NANO;
	}
	s->linktype = isp_source_linktype_of_dlt(pcap_datalink(s->pc));
	if (apply_filter(s, o->filter, err, errlen) < 0)
		goto fail;
	return s;
fail:
	isp_source_close(s);
	return NULL;
}

/* Every share of a live interface joins one fanout group: the kernel
 * hashes each packet's flow to one socket, and each socket has its own
 * ring and drop counters. */
static int join_fanout(struct isp_source *s, const char *iface, char *err, size_t errlen)
{
	int arg = (getpid() & 0xffff) | (PACKET_FANOUT_HASH << 16);

	if (setsockopt(pcap_fileno(s->pc), SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) != 0) {
		snprintf(err, errlen, "%s: PACKET_FANOUT: %s", iface, strerror(errno));
		return -1;
	}
	return 0;
}

#ifdef HAVE_DPDK
static struct isp_source *new_share(struct isp_source *like)
{
	struct isp_source *s = calloc(1, sizeof(*s));

	if (s) {
		s->linktype = like->linktype;
		s->nano = like->nano;
		s->live = true;
	}
	return s;
}
#endif

int isp_source_open_shares(const struct isp_source_opts *o, unsigned n, struct isp_source **src,
			   char *err, size_t errlen)
{
	struct isp_source_opts one = *o;
	unsigned got = 0;
	char spec[300];

	if (o->kafka) {
		snprintf(err, errlen, "a Kafka input is read by one worker (-w 1): for more, run "
			 "more intspect processes in its consumer group (README.md, \"Scaling out\")");
		return -1;
	}
	if (!o->iface && !o->udp && !o->dpdk)
		return 0;
	one.reuseport = true;
	/* a share that waits for its own packets does not take the others' */
	one.timeout_ms = 10;
	if (o->dpdk) {
#ifdef HAVE_DPDK
		src[0] = new_share(&(struct isp_source){ .linktype = DLT_EN10MB, .nano = true });
		if (!src[0] || !(src[0]->dpdk = dpdk_src_open(o->dpdk, n, err, errlen)))
			goto fail;
		for (got = 1; got < dpdk_src_queues(src[0]->dpdk); got++) {
			src[got] = new_share(src[0]);
			if (!src[got] || !(src[got]->dpdk = dpdk_src_queue(src[0]->dpdk, got))) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
		}
		return (int)got;
#else
		snprintf(err, errlen, "this intspect was built without DPDK (install libdpdk-dev and rebuild)");
		return -1;
#endif
	}
	for (got = 0; got < n; got++) {
		src[got] = isp_source_open(&one, err, errlen);
		if (!src[got])
			goto fail;
		if (o->iface && join_fanout(src[got], o->iface, err, errlen) < 0) {
			got++;
			goto fail;
		}
		if (o->udp && got == 0) {       /* the others bind the port the first got */
			const char *colon = strrchr(o->udp, ':');
			int alen = colon ? (int)(colon - o->udp) + 1 : 0;
			snprintf(spec, sizeof(spec), "%.*s%u", alen, o->udp, udp_src_port(src[0]->udp));
			one.udp = spec;
		}
	}
	return (int)got;
fail:
	while (got-- > 0)
		isp_source_close(src[got]);
	return -1;
}

uint16_t isp_source_udp_port(const struct isp_source *s)
{
#ifdef HAVE_RDKAFKA
	if (s->kafka)
		return kafka_src_port(s->kafka);
#endif
	return s->udp ? udp_src_port(s->udp) : 0;
}

void isp_source_checkpoint(struct isp_source *s, bool with_current, bool force)
{
#ifdef HAVE_RDKAFKA
	if (s->kafka)
		kafka_src_checkpoint(s->kafka, with_current, force);
#else
	(void)s, (void)with_current, (void)force;
#endif
}

bool isp_source_checkpoints(const struct isp_source *s)
{
#ifdef HAVE_RDKAFKA
	return s->kafka != NULL;
#else
	(void)s;
	return false;
#endif
}

uint16_t isp_source_first_proto(struct isp_source *s, const struct isp_registry *reg,
				char *err, size_t errlen)
{
	int lt = s->linktype;
	uint8_t id = lt >= 0 && lt < 65536 ? reg->table[ISP_TBL_LINKTYPE][lt] : 0xff;

	if (id == 0xff) {
		const char *name = pcap_datalink_val_to_name(dlt_of_linktype(lt));
		snprintf(err, errlen, "link type %s (%d) is not supported", name ? name : "?", lt);
		return ISP_PROTO_NONE;
	}
	return id;
}

bool isp_source_has_backlog(const struct isp_source *s)
{
	return s->udp != NULL;
}

bool isp_source_pending(const struct isp_source *s)
{
	return s->udp && udp_src_pending(s->udp);
}

uint8_t isp_source_backlog(const struct isp_source *s)
{
	return s->udp ? udp_src_backlog(s->udp) : 0;
}

struct pcap_map *isp_source_map(struct isp_source *s)
{
	return s->mapped && !s->filtered ? &s->map : NULL;
}

const _Atomic int *isp_source_stop_flag(const struct isp_source *s)
{
	return &s->stop;
}

/*
 * A capture read through stdio from a pipe (standard input, a FIFO) may
 * stay silent for as long as its writer (tcpdump -w -) likes, and a read
 * blocked in it restarts after a signal: so when stdio holds no byte of
 * it, wait for the pipe in slices that look at the stop. false: stopped.
 */
static bool wait_readable(struct isp_source *s)
{
	FILE *f = pcap_file(s->pc);

	if (!f)
		return true;
#ifdef __GLIBC__
	if (f->_IO_read_ptr < f->_IO_read_end)
		return true;    /* bytes already read: no wait */
#endif
	struct pollfd p = { fileno(f), POLLIN, 0 };
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		p.revents = 0;
		if (poll(&p, 1, 100) != 0)
			return true;    /* data, its end or an error: the read says */
	}
	return false;
}

int isp_source_next(struct isp_source *s, const uint8_t **data, uint32_t *caplen,
		    uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen)
{
	struct pcap_pkthdr *h;
	const u_char *d;

	/* a mapped file first: the input that reads fastest */
	while (s->mapped) {
		int rc = pcap_map_next(&s->map, data, caplen, wirelen, ts_ns, err, errlen);
		if (rc <= 0 || atomic_load_explicit(&s->stop, memory_order_relaxed))
			return rc < 0 ? -1 : 0;
		if (!s->filtered)
			return 1;
		struct pcap_pkthdr ph = { .caplen = *caplen, .len = *wirelen };
		if (pcap_offline_filter(&s->prog, &ph, *data))
			return 1;
	}
	if (s->udp)
		return udp_src_next(s->udp, data, caplen, wirelen, ts_ns, err, errlen);
#ifdef HAVE_RDKAFKA
	if (s->kafka)
		return kafka_src_next(s->kafka, data, caplen, wirelen, ts_ns, err, errlen);
#endif
#ifdef HAVE_DPDK
	if (s->dpdk)
		return dpdk_src_next(s->dpdk, data, caplen, wirelen, ts_ns, err, errlen);
#endif

	{
		if (s->file && !wait_readable(s))
			return 0;
		int rc = pcap_next_ex(s->pc, &h, &d);
		if (rc == 1) {
			*data = d;
			*caplen = h->caplen;
			*wirelen = h->len;
			*ts_ns = (uint64_t)h->ts.tv_sec * 1000000000u +
				 (uint64_t)h->ts.tv_usec * (s->nano ? 1u : 1000u);
			return 1;
		}
		if (rc == 0)            /* live timeout: nothing yet */
			return atomic_load_explicit(&s->stop, memory_order_relaxed) ? 0 : 2;
		if (rc == PCAP_ERROR_BREAK)
			return 0;
		snprintf(err, errlen, "read: %s", pcap_geterr(s->pc));
		return -1;
	}
}

bool isp_source_keeps_bytes(const struct isp_source *s)
{
	return s->mapped;
}

size_t isp_source_ahead(struct isp_source *s, size_t skip, size_t len, const uint8_t **at)
{
	return s->mapped ? pcap_map_ahead(&s->map, skip, len, at) : 0;
}

bool isp_source_is_file(const struct isp_source *s)
{
	return s->file;
}

unsigned isp_source_ts_digits(const struct isp_source *s)
{
	(void)s;
	return 6;       /* microseconds, as tcpdump prints */
}

bool isp_source_set_wake(struct isp_source *s, int fd)
{
	if (!s || !s->udp)
		return false;
	udp_src_set_wake(s->udp, fd);
	return true;
}

void isp_source_break(struct isp_source *s)
{
	if (s && s->udp)
		udp_src_stop(s->udp);
#ifdef HAVE_RDKAFKA
	if (s && s->kafka)
		kafka_src_stop(s->kafka);
#endif
#ifdef HAVE_DPDK
	if (s && s->dpdk)
		dpdk_src_stop(s->dpdk);
#endif
	if (s && s->pc) {
		atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
		pcap_breakloop(s->pc);
	}
}

bool isp_source_kernel_stats(struct isp_source *s, uint64_t *recv, uint64_t *drop)
{
	struct pcap_stat st;

	if (s->udp) {
		udp_src_stats(s->udp, recv, drop);
		return true;
	}
#ifdef HAVE_RDKAFKA
	if (s->kafka) {         /* consumed; nothing is dropped before us */
		struct kafka_in_stats ks;
		kafka_src_stats(s->kafka, &ks);
		*recv = ks.consumed;
		*drop = 0;
		return true;
	}
#endif
#ifdef HAVE_DPDK
	if (s->dpdk) {
		dpdk_src_stats(s->dpdk, recv, drop);
		return true;
	}
#endif
	if (!s->live || pcap_stats(s->pc, &st) < 0)
		return false;
	*recv = st.ps_recv;
	*drop = (uint64_t)st.ps_drop + st.ps_ifdrop;
	return true;
}

void isp_source_close(struct isp_source *s)
{
	if (!s)
		return;
	if (s->filtered)
		pcap_freecode(&s->prog);
	udp_src_close(s->udp);
#ifdef HAVE_RDKAFKA
	kafka_src_close(s->kafka);
#endif
#ifdef HAVE_DPDK
	dpdk_src_close(s->dpdk);
#endif
	pcap_map_close(&s->map);
	if (s->pc)
		pcap_close(s->pc);
	free(s);
}

void isp_source_describe(FILE *out)
{
	fprintf(out, "  inputs: capture files (pcap mapped, pcapng, stdin), live interfaces, "
		"UDP report socket\n");
#ifdef HAVE_RDKAFKA
	fprintf(out, "  kafka input: librdkafka %s\n", kafka_src_version());
#else
	fprintf(out, "  kafka input: not built (configure found no librdkafka)\n");
#endif
#ifdef HAVE_DPDK
	fprintf(out, "  dpdk input: %s\n", dpdk_src_version());
#else
	fprintf(out, "  dpdk input: not built (--disable-dpdk, or configure found no libdpdk)\n");
#endif
}
