/*
 * prometheus_int.h - what the parts of the Prometheus channel share: the
 * series table (prometheus_series.c: records in, exposition text out),
 * the HTTP server (prometheus_http.c: its thread, requests, responses)
 * and the channel (prometheus.c: keys, open, write_batch, close).
 */
#ifndef ISP_OUTPUTS_PROMETHEUS_INT_H
#define ISP_OUTPUTS_PROMETHEUS_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "channel.h"
#include "prometheus.h"

/* ---- the series table ---- */

/* One series: its exposition text up to the value, `name{labels}`. */
struct prom_series {
	char *text;
	uint32_t hash;
	uint32_t next;          /* chain in the series index (PROM_NONE: end) */
	uint32_t family;
	uint32_t at_family;     /* its place in the family's list */
	uint32_t group;
	uint32_t at_group;      /* its place in the group's list */
	uint64_t record;        /* the table's record that set it last (0: none yet) */
	bool is_int;
	int64_t iv;
	double fv;
};

/* A list of series indices (a family's, a group's). */
struct prom_list {
	uint32_t *v;
	uint32_t n, cap;
};

/* A metric family: one name, a HELP and TYPE line, its series together. */
struct prom_family {
	char *name;
	char *help;
	uint32_t hash, next;
	struct prom_list series;
};

/* A group: the series of one measurement and tags (a record's key): those
 * its last record set; removed together when the key expires. */
struct prom_group {
	char *key;              /* measurement, NUL, tags as written */
	size_t key_len;
	uint32_t hash, next;
	struct prom_list series;
};

#define PROM_NONE UINT32_MAX

struct prom_table {
	const char *prefix;             /* metric name prefix */
	size_t max_series;
	struct prom_series *s;          /* by index; text NULL: free */
	uint32_t ns, caps, free_head;   /* slots used, allocated, first free */
	size_t live;                    /* series now */
	struct prom_family *f;
	uint32_t nf, capf;
	struct prom_group *g;
	uint32_t ng, capg, free_group;
	uint32_t *idx_s, *idx_f, *idx_g;        /* hash heads */
	uint32_t nidx_s, nidx_f, nidx_g;        /* powers of two */
	struct isp_bytes names;         /* a record's names, unescaped */
	struct isp_bytes scratch;       /* a series' text being made */
	/* counters (under the table's lock, read on a scrape) */
	uint64_t refused;       /* series not created: max-series reached */
	uint64_t removed;       /* series removed by an expiry record */
	uint64_t superseded;    /* series a later record of their key had no value for */
	uint64_t collided;      /* fields whose series another field of the record set */
	uint64_t records;       /* records taken (their number stamps the series;
				 * 64 bits: never wraps back to a stamp in use) */
	uint64_t not_numeric;   /* string fields, which have no sample */
	uint64_t unparsable;    /* records that were not line protocol */
};

int prom_table_init(struct prom_table *t, const char *prefix, size_t max_series);
void prom_table_free(struct prom_table *t);
/* One record in line protocol: its numeric fields set their series, and
 * the series of its measurement and tags it has no value for go (a hop
 * the path no longer has); or an `expired` field removes them all.
 * -1: out of memory (the record is then lost, counted by the caller). */
int prom_table_record(struct prom_table *t, const char *line, size_t len);
/* Every family with at least one series, in exposition format; one whose
 * name is a family of `reserved` (intspect's own, NULL: none) is written
 * as NAME_record. */
void prom_table_text(const struct prom_table *t, struct isp_prom_text *out,
		     const struct isp_prom_text *reserved);

/* ---- the channel ---- */

struct prom_out {
	char *name;                     /* channel name, for messages */
	char where[80];                 /* "127.0.0.1:9464", for messages */
	char *path;                     /* "/metrics" */
	char *prefix;                   /* of the series records make */
	size_t max_series;
	bool self;                      /* serve the program's counters */
	struct isp_channel *ch;
	uint64_t lost;                  /* records not taken (memory): said at flush */
	struct prom_table table;
	pthread_mutex_t mu;             /* the table, between write_batch and scrapes */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int listen_fd;
	int wake[2];                    /* close wakes the server thread */
	pthread_t thread;
	bool started;
	_Atomic uint64_t scrapes;       /* answered with 200 */
	_Atomic uint64_t bad_requests;  /* answered with 4xx */
};

/* Start serving o->listen_fd on a thread; -1 with a message. */
int prom_http_start(struct prom_out *o, char *err, size_t errlen);
/* Stop it (the thread is joined; a scrape in progress is finished). */
void prom_http_stop(struct prom_out *o);
/* The body of a scrape of o. */
void prom_scrape(struct prom_out *o, struct isp_prom_text *t);

#endif
