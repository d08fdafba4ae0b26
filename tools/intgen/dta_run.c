/*
 * dta_run.c - the --format dta run (see dta_run.h).
 *
 * The network between the reporters and the collector is simulated here
 * with a random stream of its own, so that --dta-loss and --dta-reorder
 * change what arrives but never what the reporters sent: the same seed
 * gives the same reports with or without faults.
 */
#include "dta_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dta.h"
#include "dta_send.h"
#include "expect.h"
#include "pcap_writer.h"
#include "rng.h"

/* At most this many counters of a Sketch-Merge report in the expect file,
 * as the decoder's dta.counters attribute holds the first 32. */
#define EXPECT_COUNTERS 32u

struct dta_out {
	const struct ig_config *cfg;
	struct dta_gen gen;
	struct rng net;
	struct dta_report slot[2]; /* a report and the one it lets pass */
	uint8_t frame[DTA_MAX_FRAME];
	uint8_t payload[DTA_MAX_PAYLOAD];
	struct pcap_writer pcap;
	struct expect_writer exp;
	bool have_pcap, have_exp;
	struct dta_sender *snd;
	uint64_t wire;             /* first transmissions so far */
	uint64_t total, lost, reordered;
	double step_ns;
};

static void expect_report(struct expect_writer *w, const struct ig_config *cfg,
			  const struct dta_report *rep)
{
	uint8_t src[4], dst[4];
	unsigned data_len = 4u * rep->nwords;

	expect_begin(w);
	if (!rep->lost) {
		expect_kv_u64(w, "index", rep->index);
		expect_kv_u64(w, "meta.packet_index", rep->index);
	}
	expect_kv_u64(w, "dta.opcode", rep->opcode);
	if (!cfg->dta.no_seq)
		expect_kv_u64(w, "dta.sequence", rep->seq);
	expect_kv_u64(w, "dta.flags", rep->flags);
	expect_kv_u64(w, "dta.immediate", (rep->flags & DTA_FLAG_IMMEDIATE) != 0);
	expect_kv_u64(w, "dta.retransmit", (rep->flags & DTA_FLAG_RETRANSMIT) != 0);
	expect_kv_u64(w, "dta.priority", rep->flags & 3u);
	switch (rep->opcode) {
	case DTA_OP_KEYWRITE:
		expect_kv_u64(w, "dta.redundancy", rep->redundancy);
		expect_kv_u64(w, "dta.key", rep->key);
		expect_kv_u32s(w, "dta.data", rep->words, rep->nwords);
		expect_kv_u64(w, "dta.data_len", data_len);
		break;
	case DTA_OP_APPEND:
		expect_kv_u64(w, "dta.list", rep->list);
		expect_kv_u32s(w, "dta.data", rep->words, rep->nwords);
		expect_kv_u64(w, "dta.data_len", data_len);
		break;
	case DTA_OP_INCREMENT:
		expect_kv_u64(w, "dta.redundancy", rep->redundancy);
		expect_kv_u64(w, "dta.key", rep->key);
		expect_kv_u64(w, "dta.counter", rep->counter);
		break;
	case DTA_OP_POSTCARD:
		expect_kv_u64(w, "dta.key", rep->key);
		expect_kv_u64(w, "dta.hop", rep->hop);
		expect_kv_u32s(w, "dta.data", rep->words, 1);
		expect_kv_u64(w, "dta.data_len", 4);
		break;
	case DTA_OP_SKETCH:
		expect_kv_u64(w, "dta.sketch", rep->sketch);
		expect_kv_u64(w, "dta.reporter", rep->reporter);
		expect_kv_u64(w, "dta.epoch", rep->epoch);
		expect_kv_u64(w, "dta.column", rep->column);
		expect_kv_u64(w, "dta.columns", rep->columns);
		expect_kv_u64(w, "dta.rows", rep->rows);
		expect_kv_u32s(w, "dta.counters", rep->words,
			       rep->nwords < EXPECT_COUNTERS ? rep->nwords : EXPECT_COUNTERS);
		expect_kv_u64(w, "dta.data_len", data_len);
		break;
	}
	dta_reporter_ip(rep->reporter, src);
	dta_dest_ip(rep->shard, dst);
	expect_kv_ipv4(w, "ip.src", src);
	expect_kv_ipv4(w, "ip.dst", dst);
	expect_kv_u64(w, "udp.src_port", DTA_SRC_PORT_BASE + rep->reporter);
	expect_kv_u64(w, "udp.dst_port", cfg->dta.port);
	expect_kv_u64(w, "gen.reporter", rep->reporter);
	expect_kv_bool(w, "lost", rep->lost);
	expect_kv_bool(w, "reordered", rep->reordered);
	expect_end(w);
}

/* {"sketch_truth":true,"epoch":E,"counts":{"KEY":N,...},"distinct":D,"total":T} */
static void expect_truth(struct dta_out *o)
{
	const struct dta_sketch *s = &o->gen.sk;
	char key[16];

	for (uint32_t e = 0; e < o->cfg->dta.epochs; e++) {
		const struct dta_truth *t = &s->truth[e];

		expect_begin(&o->exp);
		expect_kv_bool(&o->exp, "sketch_truth", 1);
		expect_kv_u64(&o->exp, "epoch", e);
		expect_obj_begin(&o->exp, "counts");
		for (size_t i = 0; i < t->n; i++) {
			snprintf(key, sizeof(key), "%u", (unsigned)o->gen.keys[t->idx[i]]);
			expect_kv_u64(&o->exp, key, t->count[i]);
		}
		expect_obj_end(&o->exp);
		expect_kv_u64(&o->exp, "distinct", t->n);
		expect_kv_u64(&o->exp, "total", t->total);
		expect_end(&o->exp);
	}
}

/* The network delivers rep: it takes the next place in the capture (and
 * the next time slot), and the live sender sends it. */
static int transmit(struct dta_out *o, struct dta_report *rep)
{
	const struct ig_config *cfg = o->cfg;

	rep->index = ++o->wire;
	if (o->have_pcap) {
		uint64_t ts = cfg->ts_start_ns +
			      (uint64_t)((double)(rep->index - 1) * o->step_ns + 0.5);
		size_t len = dta_frame(o->frame, cfg, rep);

		if (pcap_write(&o->pcap, ts, o->frame, (uint32_t)len, (uint32_t)len))
			return -1;
	}
	if (o->snd) {
		size_t len = dta_payload(o->payload, cfg, rep);
		if (dta_send_first(o->snd, rep, o->payload, len, false))
			return -1;
	}
	return 0;
}

/* The network loses rep's first transmission; the live sender still
 * keeps it for a NACK. */
static int drop(struct dta_out *o, struct dta_report *rep)
{
	rep->lost = true;
	o->lost++;
	if (o->snd) {
		size_t len = dta_payload(o->payload, o->cfg, rep);
		return dta_send_first(o->snd, rep, o->payload, len, true);
	}
	return 0;
}

static bool chance(struct dta_out *o, double p)
{
	return p > 0 && rng_unit(&o->net) < p;
}

/* Reports the run makes: -n, or in sketch mode every column of every
 * epoch and reporter. */
static uint64_t planned(const struct ig_config *cfg)
{
	const struct ig_dta *d = &cfg->dta;

	if (d->op != DOP_SKETCH)
		return cfg->count;
	return (uint64_t)d->epochs * d->reporters * ((d->width + d->chunk - 1) / d->chunk);
}

/* Loss spares the run's last 8 reports a reporter: a report lost with
 * nothing after it from its reporter leaves no gap a collector could see
 * (a reporter that keeps sending has no last report). */
static bool lose(struct dta_out *o)
{
	uint64_t spare = 8ull * o->cfg->dta.reporters;

	return chance(o, o->cfg->dta.loss) && o->total + spare <= planned(o->cfg);
}

/* One report, or two when the first is delayed behind the next: then the
 * next is drawn at once and goes first. A delayed report whose follower
 * is lost simply goes out (it passed nobody, so it is not "reordered").
 * Returns 1 while reports remain, 0 at the end, -1 on an error. */
static int step(struct dta_out *o)
{
	const struct ig_dta *d = &o->cfg->dta;
	struct dta_report *a = &o->slot[0], *b = &o->slot[1];
	int rc = dta_gen_next(&o->gen, a);
	int err = 0;

	if (rc <= 0)
		return rc;
	o->total++;
	if (lose(o)) {
		err = drop(o, a);
	} else if (chance(o, d->reorder) && (rc = dta_gen_next(&o->gen, b)) != 0) {
		if (rc < 0)
			return -1;
		o->total++;
		if (lose(o)) {
			err = transmit(o, a) || drop(o, b);
		} else {
			a->reordered = true;
			o->reordered++;
			err = transmit(o, b) || transmit(o, a);
		}
		if (o->have_exp) {
			expect_report(&o->exp, o->cfg, a);
			expect_report(&o->exp, o->cfg, b);
		}
		return err ? -1 : 1;
	} else {
		err = transmit(o, a);
	}
	if (o->have_exp)
		expect_report(&o->exp, o->cfg, a);
	return err ? -1 : 1;
}

static int open_outputs(struct dta_out *o)
{
	const struct ig_config *cfg = o->cfg;

	if (cfg->out_path) {
		if (pcap_open(&o->pcap, cfg->out_path, cfg->nanosec)) {
			fprintf(stderr, "intgen: %s: %s\n", cfg->out_path, strerror(errno));
			return -1;
		}
		o->have_pcap = true;
	}
	if (cfg->expect_path) {
		if (expect_open(&o->exp, cfg->expect_path)) {
			fprintf(stderr, "intgen: %s: %s\n", cfg->expect_path,
				strerror(errno));
			return -1;
		}
		o->have_exp = true;
	}
	if (cfg->dta.send && !(o->snd = dta_send_open(cfg)))
		return -1;
	return 0;
}

static int close_outputs(struct dta_out *o, int rc)
{
	const struct ig_config *cfg = o->cfg;
	struct dta_send_stats st;

	if (o->have_pcap && pcap_close(&o->pcap)) {
		fprintf(stderr, "intgen: %s: write error\n", cfg->out_path);
		rc = 1;
	}
	if (o->have_exp && expect_close(&o->exp)) {
		fprintf(stderr, "intgen: %s: write error\n", cfg->expect_path);
		rc = 1;
	}
	if (o->snd) {
		dta_send_close(o->snd, &st);
		fprintf(stderr, "intgen: sent %llu reports (%llu lost, %llu reordered), "
			"%llu NACKs received, %llu retransmitted",
			(unsigned long long)o->total, (unsigned long long)o->lost,
			(unsigned long long)o->reordered,
			(unsigned long long)st.nacks,
			(unsigned long long)st.retransmitted);
		if (st.bad_nacks)
			fprintf(stderr, ", %llu malformed NACKs ignored",
				(unsigned long long)st.bad_nacks);
		fputc('\n', stderr);
	}
	return rc;
}

int dta_run(const struct ig_config *cfg)
{
	static struct dta_out o; /* large frame buffers: keep them off the stack */
	int rc = 0;

	memset(&o, 0, sizeof(o));
	o.cfg = cfg;
	o.step_ns = 1e9 / cfg->pps;
	rng_seed(&o.net, cfg->seed ^ 0x5EED0FA17EDBEEFull);
	if (dta_gen_init(&o.gen, cfg)) {
		fprintf(stderr, "intgen: out of memory\n");
		dta_gen_free(&o.gen);
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		o.slot[i].words = malloc(o.gen.max_words * sizeof(uint32_t));
		if (!o.slot[i].words) {
			fprintf(stderr, "intgen: out of memory\n");
			rc = 1;
		}
	}
	if (!rc && open_outputs(&o))
		rc = 1;
	while (!rc) {
		int s = step(&o);
		if (s < 0) {
			fprintf(stderr, "intgen: %s\n", o.have_pcap && o.pcap.error ?
				"write error" : "out of memory or send error");
			rc = 1;
		}
		if (s <= 0)
			break;
	}
	if (!rc && o.have_exp && cfg->dta.op == DOP_SKETCH)
		expect_truth(&o);
	if (!rc && o.snd && dta_send_linger(o.snd)) {
		fprintf(stderr, "intgen: poll: %s\n", strerror(errno));
		rc = 1;
	}
	rc = close_outputs(&o, rc);
	for (int i = 0; i < 2; i++)
		free(o.slot[i].words);
	dta_gen_free(&o.gen);
	return rc;
}
