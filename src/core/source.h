/*
 * source.h - packet sources: capture files (classic pcap memory-mapped;
 * pcapng and "-" for stdin through libpcap), live interfaces (libpcap), and
 * a UDP listener for telemetry reports.
 */
#ifndef ISP_SOURCE_H
#define ISP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct isp_registry;

/* A live input's longest wait for a packet: how soon an idle worker
 * closes windows by the wall clock, answers the control socket and stops. */
#define ISP_LIVE_TIMEOUT_MS 10

struct isp_source_opts {
	const char *file;       /* -r FILE, "-" = stdin */
	const char *iface;      /* -i IFACE */
	const char *filter;     /* BPF expression */
	const char *udp;        /* UDP report listener: "PORT" or "ADDR:PORT" */
	const char *dpdk;       /* DPDK EAL arguments: read the first port */
	const char *kafka;      /* BROKERS/TOPIC[@GROUP]: reports from a topic (kafkasrc.h) */
	const char *const *kafka_props; /* librdkafka properties, "name=value" */
	unsigned nkafka_props;
	uint16_t kafka_port;    /* the report port its datagrams go to (32766) */
	/* Kafka: what the channels were given, and whether they settled it
	 * (offsets are committed behind them; kafkasrc.h) */
	unsigned (*rec_mark)(void *ctx, uint64_t *mark, unsigned max);
	bool (*rec_settled)(void *ctx, const uint64_t *mark, unsigned n);
	void *rec_ctx;
	bool reuseport;         /* several listeners on one port (workers) */
	int snaplen;            /* live: bytes per packet (default 262144) */
	int buffer_mb;          /* live: kernel buffer (default 64) */
	bool promisc;
	int timeout_ms;         /* live, UDP: longest wait in a read (ISP_LIVE_TIMEOUT_MS) */
};

struct isp_source;

/* What can be told of o without opening anything (one input, a spec it
 * parses, a filter it takes, properties librdkafka knows, workers it can
 * have): 0, or -1 with a message; a bad option or config, not a failing
 * input. */
int isp_source_check(const struct isp_source_opts *o, unsigned workers, char *err,
		     size_t errlen);

/* Open a source; NULL with a message in err. */
struct isp_source *isp_source_open(const struct isp_source_opts *o,
				   char *err, size_t errlen);

/* First protocol of the source's link type in reg, or ISP_PROTO_NONE with
 * a message. */
uint16_t isp_source_first_proto(struct isp_source *s, const struct isp_registry *reg,
				char *err, size_t errlen);

/* The LINKTYPE_ value (the registry's link-table key) of a libpcap DLT_
 * value: they differ for raw IP (DLT_RAW 12 or 14, LINKTYPE_RAW 101). */
int isp_source_linktype_of_dlt(int dlt);

/* Next packet: 1 got one, 0 end of input, 2 nothing yet (live: a read
 * timeout, a chance to do periodic work), 3 (a Kafka input) partitions
 * are leaving: write what the rules hold now and mark a checkpoint, -1
 * error (message in err). The data stays valid until the next call. */
int isp_source_next(struct isp_source *s, const uint8_t **data, uint32_t *caplen,
		    uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen);

/* The input's backlog when the current packet was read, in 256ths of
 * its buffer (a UDP socket's; 0 for the other inputs): how far behind the
 * reader is, for overload shedding. */
uint8_t isp_source_backlog(const struct isp_source *s);
/* Items read from the input and not handed out yet: a stop hands them
 * out before isp_source_next says the end (a UDP socket's batch). */
bool isp_source_pending(const struct isp_source *s);
/* Whether isp_source_backlog can be other than 0 (a UDP socket). */
bool isp_source_has_backlog(const struct isp_source *s);

/*
 * Open a live input as n shares, one per worker, each read by its own
 * thread: a live interface joins one PACKET_FANOUT group (the kernel
 * spreads flows by hash), a UDP listener opens n sockets on one port with
 * SO_REUSEPORT, a DPDK port gets up to n RX queues with RSS. Returns how
 * many shares were opened into src[] (a DPDK port may have fewer queues),
 * 0 for inputs that cannot be shared (files), -1 with a message. Close
 * them in reverse order (a DPDK port belongs to share 0).
 */
int isp_source_open_shares(const struct isp_source_opts *o, unsigned n, struct isp_source **src,
			   char *err, size_t errlen);

/* The port a UDP listener is bound to (0 for other sources). */
uint16_t isp_source_udp_port(const struct isp_source *s);

/* true when the bytes isp_source_next gives stay valid until the source
 * is closed (a memory-mapped capture): they can then be pointed to. */
bool isp_source_keeps_bytes(const struct isp_source *s);
/* A memory-mapped capture read without a filter: its mapping, whose
 * records the caller may read itself (pcap_map_next, inline), looking at
 * isp_source_stop_flag after each; NULL for every other source. */
struct pcap_map *isp_source_map(struct isp_source *s);
/* The flag isp_source_break sets (relaxed loads: a signal handler or
 * another thread stores it). */
const _Atomic int *isp_source_stop_flag(const struct isp_source *s);
/* The optional inputs compiled in, one line each: for -V. */
void isp_source_describe(FILE *out);

/* A mapped capture: the bytes from `skip` past the next packet, `len` of
 * them at most, that are mapped already (*at: their start), to ask for
 * their cache lines; 0 for other sources. */
size_t isp_source_ahead(struct isp_source *s, size_t skip, size_t len, const uint8_t **at);

/* true for a capture file (or standard input): read to its end, at its
 * own pace, nothing lost by waiting. */
bool isp_source_is_file(const struct isp_source *s);

/* Decimals the timestamps deserve: 9 for nanosecond captures, else 6. */
unsigned isp_source_ts_digits(const struct isp_source *s);

/* Ask a blocking live read to return (safe from a signal handler). */
void isp_source_break(struct isp_source *s);

/* A descriptor that, readable, makes a live read waiting for packets
 * return 2 at once (the UDP listener; a live interface waits out its
 * timeout). true when the source uses it. */
bool isp_source_set_wake(struct isp_source *s, int fd);

/* A Kafka input: its offsets may be committed up to here once the
 * channels settled what they hold now (with_current: including the packet
 * just read; force: even right after another). Nothing for the others. */
void isp_source_checkpoint(struct isp_source *s, bool with_current, bool force);
/* true for a source that takes checkpoints (a Kafka input). */
bool isp_source_checkpoints(const struct isp_source *s);

/* Kernel counters of a live source: received, dropped. false for files. */
bool isp_source_kernel_stats(struct isp_source *s, uint64_t *recv, uint64_t *drop);

void isp_source_close(struct isp_source *s);

#endif
