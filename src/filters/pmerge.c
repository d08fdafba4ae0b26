/*
 * pmerge.c - the merge stage (pmerge.h).
 *
 * Each open window of each rule is an engine of its own (query.c keeps
 * one window per engine): partial groups fold into its tables exactly as
 * the windows of several workers fold at a tick, and closing it writes
 * its records through the rule's channels. Engines of written windows go
 * back to a pool: a merge of a steady stream makes none after its first
 * windows.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "partial.h"
#include "pmerge.h"
#include "query_int.h"

#define MAX_INSTANCES 4096
#define MAX_OPEN 1024           /* windows open at once: past it the oldest is written */
#define MAX_AHEAD 256           /* an instance's watermarks or counts ahead of its mark */

struct pm_window {
	unsigned rule;
	uint64_t start, end;
	struct isp_engine *e;
	uint64_t told_ns;       /* when an instance first said it closed it (0: none yet) */
	struct pm_window *next; /* by end, then rule */
};

/* What an instance said of one rule's windows. Its records may come out
 * of order (a topic keyed by group spreads them over partitions): a
 * watermark names the window before it and how many groups it wrote, so
 * the windows it closed are known whole only once the chain is unbroken
 * and every group of it arrived. */
struct pm_said {
	uint64_t end, after, groups;
};

struct pm_got {
	uint64_t end, groups;
};

struct pm_track {
	uint64_t mark;          /* its windows ending at or before it are here whole */
	uint64_t last;          /* its end record: the last window it wrote whole */
	/* it stopped: the windows after `last` wait for it (its partitions
	 * may go on elsewhere, or it comes back) until lateness-ms */
	bool ended;
	struct pm_said *said;   /* watermarks ahead of the mark */
	unsigned nsaid, capsaid;
	struct pm_got *got;     /* groups arrived per window ahead of the mark */
	unsigned ngot, capgot;
};

struct pm_instance {
	uint64_t id;
	struct pm_track *t;     /* per rule */
};

struct isp_pmerge {
	const struct isp_program *prog;
	const struct isp_registry *reg;
	struct isp_channel **channels;
	struct pm_window *open;
	struct pm_window *kept;         /* written, kept for corrections (late = correct) */
	struct isp_engine **pool, **all;        /* free engines; every engine made */
	unsigned npool, nall, capall;
	struct pm_instance *inst;
	unsigned ninst;
	uint64_t *closed;       /* per rule: windows ending at or before it are written */
	uint64_t *written;      /* per rule: windows written (MMT's report counter: each
				   window has an engine of its own, whose count starts at 0) */
	uint64_t *fp;           /* per rule: partial_fingerprint */
	bool *said;             /* per rule: a mismatch was reported */
	struct arena scratch;
	struct isp_pmerge_stats st;
	uint64_t lateness_ns;
	char why[160];          /* the first malformed record's reason */
	unsigned want;          /* instances to wait for; 0: those seen */
};

struct isp_pmerge *isp_pmerge_new(const struct isp_program *prog, const struct isp_registry *reg,
				  struct isp_channel **channels, char *err, size_t errlen)
{
	struct isp_pmerge *m = calloc(1, sizeof(*m));
	unsigned nq = prog->nqueries ? prog->nqueries : 1;

	if (!m || !(m->closed = calloc(nq, sizeof(*m->closed))) ||
	    !(m->written = calloc(nq, sizeof(*m->written))) ||
	    !(m->fp = calloc(nq, sizeof(*m->fp))) || !(m->said = calloc(nq, sizeof(*m->said))) ||
	    !(m->inst = calloc(MAX_INSTANCES, sizeof(*m->inst)))) {
		isp_pmerge_free(m);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (prog->nqueries == 0) {
		isp_pmerge_free(m);
		snprintf(err, errlen, "nothing to merge: the config has no query-report");
		return NULL;
	}
	m->prog = prog;
	m->reg = reg;
	m->channels = channels;
	m->lateness_ns = (uint64_t)prog->merge_lateness_ms * 1000000u;
	m->want = prog->merge_instances;
	for (unsigned i = 0; i < prog->nqueries; i++)
		m->fp[i] = partial_fingerprint(&prog->queries[i]);
	return m;
}

static struct isp_engine *engine_take(struct isp_pmerge *m)
{
	if (m->npool)
		return m->pool[--m->npool];
	if (m->nall == m->capall) {
		unsigned cap = m->capall ? 2 * m->capall : 8;
		struct isp_engine **a = realloc(m->all, cap * sizeof(*a));
		struct isp_engine **p = a ? realloc(m->pool, cap * sizeof(*p)) : NULL;
		if (a)
			m->all = a;
		if (!p)
			return NULL;
		m->pool = p;
		m->capall = cap;
	}
	char err[256];
	struct isp_engine *e = isp_engine_new(m->prog, m->reg, m->channels, false, err, sizeof(err));
	if (e)
		m->all[m->nall++] = e;
	return e;
}

static void write_window(struct isp_pmerge *m, struct pm_window **at, uint64_t now_ns);

/* The open window of rule i ending at end, made when asked. */
static struct pm_window *window_of(struct isp_pmerge *m, unsigned i, uint64_t start, uint64_t end,
				   bool make)
{
	struct pm_window **at = &m->open;

	for (; *at; at = &(*at)->next) {
		if ((*at)->end == end && (*at)->rule == i)
			return *at;
		if ((*at)->end > end || ((*at)->end == end && (*at)->rule > i))
			break;
	}
	if (!make)
		return NULL;
	if (m->st.open >= MAX_OPEN) {
		/* a stream of windows nobody closes: the oldest goes as it is */
		m->st.forced++;
		write_window(m, &m->open, 0);
		return window_of(m, i, start, end, make);
	}
	struct pm_window *w = calloc(1, sizeof(*w));
	if (!w || !(w->e = engine_take(m))) {
		free(w);
		return NULL;
	}
	w->rule = i;
	w->start = start;
	w->end = end;
	w->next = *at;
	*at = w;
	m->st.open++;
	return w;
}

static void write_window(struct isp_pmerge *m, struct pm_window **at, uint64_t now_ns)
{
	struct pm_window *w = *at;
	bool keep = m->prog->merge_late_correct;

	w->e->q[w->rule].flushes = m->written[w->rule]++;
	query_write_merged(w->e, w->rule, w->start, w->end, keep);
	isp_engine_flush(w->e);
	if (w->end > m->closed[w->rule])
		m->closed[w->rule] = w->end;
	*at = w->next;
	m->st.open--;
	m->st.windows++;
	if (keep) {
		/* late partials correct it for lateness-ms more */
		w->told_ns = now_ns;
		w->next = m->kept;
		m->kept = w;
		return;
	}
	m->pool[m->npool++] = w->e;
	free(w);
}

/* The windows kept for corrections whose time is over (all: now 0). */
static void forget_kept(struct isp_pmerge *m, uint64_t now_ns)
{
	for (struct pm_window **at = &m->kept; *at;) {
		struct pm_window *w = *at;
		if (now_ns && now_ns - w->told_ns < m->lateness_ns) {
			at = &w->next;
			continue;
		}
		query_forget(w->e, w->rule);
		m->pool[m->npool++] = w->e;
		*at = w->next;
		free(w);
	}
}

/* How many instances have closed rule i's windows up to end. */
static unsigned told(const struct isp_pmerge *m, unsigned i, uint64_t end)
{
	unsigned k = 0;

	for (unsigned j = 0; j < m->ninst; j++)
		k += m->inst[j].t[i].mark >= end;
	return k;
}

void isp_pmerge_expect(struct isp_pmerge *m, unsigned n)
{
	if (!m->prog->merge_instances)
		m->want = n;
}

void isp_pmerge_tick(struct isp_pmerge *m, uint64_t now_ns)
{
	unsigned need = m->want ? m->want : m->ninst;

	for (struct pm_window *w = m->open; w; w = w->next)
		if (!w->told_ns && told(m, w->rule, w->end))
			w->told_ns = now_ns;
	/* in the order one instance writes them: by end, then rule; a
	 * window complete behind one that is not waits for it */
	while (m->open) {
		struct pm_window *w = m->open;
		bool all = m->ninst >= need && told(m, w->rule, w->end) >= need;
		bool late = !all && w->told_ns && now_ns && now_ns - w->told_ns >= m->lateness_ns;
		if (!all && !late)
			break;
		m->st.forced += late;
		write_window(m, &m->open, now_ns);
	}
	if (now_ns)
		forget_kept(m, now_ns);
}

/* One more element at the end of a vector (zeroed), or NULL. */
static void *grow(void *vec, unsigned *n, unsigned *cap, size_t size)
{
	void **v = vec;

	if (*n == *cap) {
		unsigned c = *cap ? 2 * *cap : 4;
		void *p = realloc(*v, c * size);
		if (!p)
			return NULL;
		*v = p;
		*cap = c;
	}
	void *at = (uint8_t *)*v + (size_t)(*n)++ * size;
	memset(at, 0, size);
	return at;
}

static uint64_t got_of(const struct pm_track *t, uint64_t end)
{
	for (unsigned k = 0; k < t->ngot; k++)
		if (t->got[k].end == end)
			return t->got[k].groups;
	return 0;
}

/* Move the mark along the chain of watermarks whose groups all arrived
 * (a chain starting again at 0: the instance restarted). true when it
 * moved. */
static bool advance(struct pm_track *t)
{
	bool moved = false;

	for (bool again = true; again;) {
		again = false;
		for (unsigned k = 0; k < t->nsaid; k++) {
			const struct pm_said *a = &t->said[k];
			if ((a->after != t->mark && a->after != 0) || a->end <= t->mark ||
			    got_of(t, a->end) < a->groups)
				continue;
			t->mark = a->end;
			moved = again = true;
			break;
		}
	}
	if (!moved)
		return false;
	/* what the mark passed is no longer needed */
	unsigned n = 0;
	for (unsigned k = 0; k < t->nsaid; k++)
		if (t->said[k].end > t->mark)
			t->said[n++] = t->said[k];
	t->nsaid = n;
	n = 0;
	for (unsigned k = 0; k < t->ngot; k++)
		if (t->got[k].end > t->mark)
			t->got[n++] = t->got[k];
	t->ngot = n;
	return true;
}

/* An instance that said it ended speaks again (restarted with the same
 * probe-id): it has nothing before `from`, and its windows from there
 * are waited for again. */
static void restart(struct pm_track *t, uint64_t from)
{
	t->ended = false;
	t->mark = from;
	t->nsaid = t->ngot = 0;
}

static struct pm_instance *instance_of(struct isp_pmerge *m, uint64_t id)
{
	for (unsigned j = 0; j < m->ninst; j++)
		if (m->inst[j].id == id)
			return &m->inst[j];
	if (m->ninst == MAX_INSTANCES)
		return NULL;
	struct pm_instance *in = &m->inst[m->ninst];
	if (!(in->t = calloc(m->prog->nqueries, sizeof(*in->t))))
		return NULL;
	in->id = id;
	m->ninst++;
	m->st.instances = m->ninst;
	return in;
}

static int rule_named(const struct isp_program *prog, const char *name)
{
	for (unsigned i = 0; name && i < prog->nqueries; i++)
		if (strcmp(prog->queries[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool member_u64(const json_t *o, const char *key, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* A whole-input window's packet times, as the instance saw them so far
 * (absent from other windows' records) */
static void fold_span(struct isp_engine *e, unsigned i, const json_t *o)
{
	uint64_t lo, hi;

	if (member_u64(o, "seen_lo", &lo) && member_u64(o, "seen_hi", &hi) && lo <= hi)
		query_span_add(&e->q[i], lo, hi);
}

/* A group of a window already written: corrected (late = correct, the
 * window still kept) or dropped, counted either way. */
static bool late(struct isp_pmerge *m, unsigned i, const json_t *o, uint64_t end)
{
	struct pm_window *w = m->kept;
	struct qgroup *g;
	char err[128];

	while (w && (w->rule != i || w->end != end))
		w = w->next;
	if (!w) {
		m->st.late++;
		return true;
	}
	if (partial_fold(w->e, i, o, &m->scratch, &g, err, sizeof(err)) != 0) {
		if (!m->why[0])
			snprintf(m->why, sizeof(m->why), "%s", err);
		return false;
	}
	fold_span(w->e, i, o);
	if (g) {
		query_write_correction(w->e, i, g);
		isp_engine_flush(w->e);
	}
	m->st.corrections++;
	return true;
}

/* One record; false when it is not a partial record at all. */
static bool feed(struct isp_pmerge *m, const json_t *o, uint64_t now_ns)
{
	uint64_t version, id, start, end;
	const char *fp = json_string_value(json_object_get(o, "rule"));

	if (!json_is_object(o) || !member_u64(o, "partial", &version))
		return false;
	if (version != PARTIAL_VERSION) {
		/* another intspect's encoding: its keys and states would not
		 * read the same */
		if (!m->why[0])
			snprintf(m->why, sizeof(m->why),
				 "partial windows of version %" PRIu64 ", this intspect reads version %u",
				 version, PARTIAL_VERSION);
		return false;
	}
	if (!member_u64(o, "instance", &id) || !fp)
		return false;
	int i = rule_named(m->prog, json_string_value(json_object_get(o, "report")));
	if (i < 0) {
		m->st.unknown++;
		return true;
	}
	char want[20];
	snprintf(want, sizeof(want), "%016" PRIx64, m->fp[i]);
	if (strcmp(fp, want) != 0) {
		if (!m->said[i])
			fprintf(stderr, "intspect: merge: partials of '%s' come from a query-report "
				"whose period, group-by or select differ from this one's: dropped\n",
				m->prog->queries[i].name);
		m->said[i] = true;
		m->st.mismatched++;
		return true;
	}
	struct pm_instance *in = instance_of(m, id);
	if (!in)
		return false;
	struct pm_track *t = &in->t[i];
	uint64_t after, groups;
	if (json_is_true(json_object_get(o, "start"))) {
		if (!member_u64(o, "window_start", &start))
			return false;
		if (t->ended)
			restart(t, start);
		m->st.watermarks++;
		return true;
	}
	if (json_is_true(json_object_get(o, "end"))) {
		if (!member_u64(o, "last", &t->last))
			return false;
		t->ended = true;
		m->st.watermarks++;
		advance(t);
		isp_pmerge_tick(m, now_ns);
		return true;
	}
	if (member_u64(o, "watermark", &end)) {
		if (!member_u64(o, "groups", &groups) || !member_u64(o, "after", &after) ||
		    after >= end)
			return false;
		if (t->ended && after == 0)
			restart(t, end - m->prog->queries[i].period_ns);
		m->st.watermarks++;
		if (end > t->mark) {
			if (t->nsaid >= MAX_AHEAD)
				return false;   /* a chain that never joins: not a merge's */
			struct pm_said *a = grow(&t->said, &t->nsaid, &t->capsaid, sizeof(*a));
			if (!a)
				return false;
			*a = (struct pm_said){ end, after, groups };
			advance(t);
		}
		isp_pmerge_tick(m, now_ns);
		return true;
	}
	const uint64_t period = m->prog->queries[i].period_ns;
	if (!member_u64(o, "window_start", &start) || !member_u64(o, "window_end", &end) ||
	    end - start != period || start % period != 0)
		return false;
	if (end <= m->closed[i])
		return late(m, (unsigned)i, o, end);
	if (t->ended)
		restart(t, start);
	struct pm_window *w = window_of(m, (unsigned)i, start, end, true);
	char err[128];
	struct qgroup *g;
	if (!w) {
		snprintf(m->why, sizeof(m->why), "out of memory for a window");
		return false;
	}
	if (partial_fold(w->e, (unsigned)i, o, &m->scratch, &g, err, sizeof(err)) != 0) {
		if (!m->why[0])
			snprintf(m->why, sizeof(m->why), "%s", err);
		return false;
	}
	fold_span(w->e, (unsigned)i, o);
	arena_reset(&m->scratch);
	m->st.groups++;
	unsigned k = 0;
	while (k < t->ngot && t->got[k].end != end)
		k++;
	if (k == t->ngot && t->ngot >= MAX_AHEAD) {
		t->got[k % MAX_AHEAD] = (struct pm_got){ end, 0 };     /* (the oldest count lost) */
		k %= MAX_AHEAD;
	} else if (k == t->ngot) {
		struct pm_got *c = grow(&t->got, &t->ngot, &t->capgot, sizeof(*c));
		if (!c)
			return false;
		*c = (struct pm_got){ end, 0 };
	}
	t->got[k].groups++;
	if (advance(t))
		isp_pmerge_tick(m, now_ns);
	return true;
}

void isp_pmerge_feed(struct isp_pmerge *m, const char *text, size_t len, uint64_t now_ns)
{
	json_error_t jerr;
	json_t *o = json_loadb(text, len, 0, &jerr);

	m->st.records++;
	if (!o || !feed(m, o, now_ns)) {
		if (!m->why[0])
			snprintf(m->why, sizeof(m->why), "%s", o ? "a field is missing or out of range" :
				 jerr.text);
		m->st.malformed++;
	}
	arena_reset(&m->scratch);
	json_decref(o);
}

void isp_pmerge_finish(struct isp_pmerge *m)
{
	while (m->open)
		write_window(m, &m->open, 0);
	forget_kept(m, 0);
}

void isp_pmerge_stats(const struct isp_pmerge *m, struct isp_pmerge_stats *st)
{
	*st = m->st;
}

void isp_pmerge_print_stats(const struct isp_pmerge *m, FILE *out)
{
	const struct isp_pmerge_stats *s = &m->st;

	fprintf(out, "intspect: merge: %" PRIu64 " records read, %" PRIu64 " partial groups, %"
		PRIu64 " watermarks, %u instances, %" PRIu64 " windows written (%" PRIu64
		" before every instance closed them), %" PRIu64 " late partials dropped, %"
		PRIu64 " corrections, %"
		PRIu64 " malformed, %" PRIu64 " of an unknown report, %" PRIu64
		" of a different rule\n", s->records, s->groups, s->watermarks, s->instances,
		s->windows, s->forced, s->late, s->corrections, s->malformed, s->unknown,
		s->mismatched);
	if (s->malformed)
		fprintf(out, "intspect: merge: the first malformed record: %s\n", m->why);
	for (unsigned i = 0; i < m->prog->nqueries; i++) {
		uint64_t rec = 0, drop = 0, over = 0, win = 0;
		for (unsigned k = 0; k < m->nall; k++) {
			const struct rule_stats *st = &m->all[k]->q[i].st;
			rec += st->records;
			drop += st->dropped;
			over += st->overflows;
			win += st->windows;
		}
		fprintf(out, "intspect: query %s: %" PRIu64 " windows, %" PRIu64 " records, %"
			PRIu64 " dropped, %" PRIu64 " groups over max-groups\n",
			m->prog->queries[i].name, win, rec, drop, over);
	}
}

void isp_pmerge_free(struct isp_pmerge *m)
{
	if (!m)
		return;
	for (struct pm_window **l = &m->open; l; l = l == &m->open ? &m->kept : NULL)
		while (*l) {
			struct pm_window *w = *l;
			*l = w->next;
			free(w);
		}
	for (unsigned k = 0; k < m->nall; k++)
		isp_engine_free(m->all[k]);
	for (unsigned j = 0; j < m->ninst; j++) {
		for (unsigned i = 0; i < m->prog->nqueries; i++) {
			free(m->inst[j].t[i].said);
			free(m->inst[j].t[i].got);
		}
		free(m->inst[j].t);
	}
	free(m->all);
	free(m->pool);
	free(m->inst);
	free(m->closed);
	free(m->written);
	free(m->fp);
	free(m->said);
	arena_free(&m->scratch);
	free(m);
}
