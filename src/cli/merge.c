/*
 * merge.c - see merge.h.
 */
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "runchan.h"
#include "../filters/engine.h"
#include "../filters/pmerge.h"
#ifdef HAVE_RDKAFKA
#include "../core/kafkasrc.h"
#endif

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An offline merge reads its files side by side: always from the one
 * whose instances said the least so far (its last watermark), so that
 * windows close as they would on a stream and memory holds a few. */
struct merge_file {
	const char *path;
	FILE *f;
	uint64_t mark;          /* its last watermark; UINT64_MAX at its end */
};

/* The watermark a line says, or 0 (a file may hold several instances:
 * only its end ends it). */
static uint64_t line_mark(const char *line)
{
	const char *w = strstr(line, "\"watermark\":");

	return w ? strtoull(w + 12, NULL, 10) : 0;
}

static int read_files(struct isp_pmerge *pm, const struct cli_merge *m, volatile sig_atomic_t *stop)
{
	struct merge_file f[CLI_MERGE_MAX];
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	for (unsigned i = 0; i < m->nsrc; i++) {
		f[i] = (struct merge_file){ m->src[i], strcmp(m->src[i], "-") == 0 ? stdin :
					    fopen(m->src[i], "r"), 0 };
		if (!f[i].f) {
			fprintf(stderr, "intspect: merge: %s: %s\n", m->src[i], strerror(errno));
			for (unsigned k = 0; k < i; k++)
				if (f[k].f != stdin)
					fclose(f[k].f);
			return 1;
		}
	}
	isp_pmerge_expect(pm, m->nsrc);
	while (!*stop) {
		unsigned at = m->nsrc;
		for (unsigned i = 0; i < m->nsrc; i++)
			if (f[i].mark != UINT64_MAX && (at == m->nsrc || f[i].mark < f[at].mark))
				at = i;
		if (at == m->nsrc)
			break;
		/* up to its next watermark */
		for (;;) {
			ssize_t n = getline(&line, &cap, f[at].f);
			if (n <= 0) {
				if (ferror(f[at].f)) {
					fprintf(stderr, "intspect: merge: %s: read error\n", f[at].path);
					rc = 1;
				}
				f[at].mark = UINT64_MAX;
				break;
			}
			while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
				line[--n] = 0;
			if (!n)
				continue;
			isp_pmerge_feed(pm, line, (size_t)n, 0);
			uint64_t w = line_mark(line);
			if (w) {
				if (w > f[at].mark)
					f[at].mark = w;
				break;
			}
		}
	}
	free(line);
	for (unsigned i = 0; i < m->nsrc; i++)
		if (f[i].f != stdin)
			fclose(f[i].f);
	return rc;
}

/* Every channel has written or dropped what it was given (Kafka: and the
 * broker acknowledged it). */
static bool settled(const struct isp_program *prog, struct isp_channel *const *ch)
{
	for (unsigned i = 0; i < prog->nchannels; i++) {
		struct isp_channel_stats st;
		if (!ch[i])
			continue;
		isp_channel_get_stats(ch[i], &st);
		bool kafka = strcmp(prog->channels[i].cfg.type, "kafka") == 0;
		if (st.queue_depth || st.queued != st.delivered + st.dropped ||
		    (kafka && st.acked < st.delivered))
			return false;
	}
	return true;
}

#ifdef HAVE_RDKAFKA
static int read_kafka(struct isp_pmerge *pm, const char *brokers, const char *topic,
		      const char *group, const struct isp_program *prog,
		      struct isp_channel *const *ch, volatile sig_atomic_t *stop,
		      struct kafka_in **out)
{
	char err[512];
	struct kafka_in *k = kafka_in_open(brokers, topic, group && *group ? group : "intspect-merge",
					   NULL, 0, err, sizeof(err));
	bool pending = false;

	if (!k) {
		fprintf(stderr, "intspect: merge: %s\n", err);
		return 2;
	}
	*out = k;
	while (!*stop) {
		const uint8_t *data;
		size_t len;
		uint64_t ts;
		int rc = kafka_in_next(k, &data, &len, &ts, 100, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "intspect: merge: %s\n", err);
			return 1;
		}
		if (rc == 1) {
			isp_pmerge_feed(pm, (const char *)data, len, mono_ns());
			pending = true;
		}
		isp_pmerge_tick(pm, mono_ns());
		/* what was read is in no open window and out of the channels:
		 * a restart need not read it again */
		struct isp_pmerge_stats st;
		isp_pmerge_stats(pm, &st);
		if (pending && st.open == 0 && settled(prog, ch)) {
			kafka_in_commit(k);
			pending = false;
		}
	}
	return 0;
}
#endif

int cli_merge_run(const struct cli_merge *m, const struct isp_registry *reg,
		  struct isp_program *prog, volatile sig_atomic_t *stop)
{
	char err[512], brokers[512] = "", topic[256] = "", group[256] = "";
	bool kafka = false;
	int rc = 0;

	if (m->nsrc == 1 && strncmp(m->src[0], "kafka:", 6) == 0) {
#ifdef HAVE_RDKAFKA
		if (kafka_in_parse(m->src[0] + 6, brokers, sizeof(brokers), topic, sizeof(topic),
				   group, sizeof(group), err, sizeof(err)) < 0) {
			fprintf(stderr, "intspect: --merge: %s\n", err);
			return 2;
		}
		kafka = true;
#endif
	} else if (m->nsrc == 0 && prog->input_mode && strcmp(prog->input_mode, "kafka-partials") == 0) {
		snprintf(brokers, sizeof(brokers), "%s", prog->input_source);
		snprintf(topic, sizeof(topic), "%s", prog->input_topic);
		snprintf(group, sizeof(group), "%s", prog->input_group ? prog->input_group : "");
		kafka = true;
	}
	for (unsigned i = 0; i < m->nsrc; i++) {
		if (strncmp(m->src[i], "kafka:", 6) == 0 && (m->nsrc > 1 || !kafka)) {
			fprintf(stderr, "intspect: --merge %s: %s\n", m->src[i],
#ifdef HAVE_RDKAFKA
				"a Kafka topic is the merge's only input"
#else
				"this intspect was built without librdkafka"
#endif
				);
			return 2;
		}
	}
	if (!kafka && m->nsrc == 0) {
		fprintf(stderr, "intspect: merge: no input: --merge FILE ('-': standard input), "
			"--merge kafka:BROKERS/TOPIC[@GROUP], or input { mode = kafka-partials }\n");
		return 2;
	}
	struct isp_channel **ch = cli_open_channels(prog);
	if (!ch)
		return 2;
	isp_program_bind_channels(prog, ch);
	struct isp_pmerge *pm = isp_pmerge_new(prog, reg, ch, err, sizeof(err));
	if (!pm) {
		fprintf(stderr, "intspect: merge: %s\n", err);
		cli_close_channels(prog, ch);
		return 2;
	}
#ifdef HAVE_RDKAFKA
	struct kafka_in *k = NULL;
	if (kafka)
		rc = read_kafka(pm, brokers, topic, group, prog, ch, stop, &k);
#else
	if (kafka) {
		fprintf(stderr, "intspect: merge: this intspect was built without librdkafka\n");
		rc = 2;
	}
#endif
	if (!kafka)
		rc = read_files(pm, m, stop);
	isp_pmerge_finish(pm);
	isp_pmerge_print_stats(pm, stderr);
	unsigned lossy = cli_close_channels(prog, ch);
#ifdef HAVE_RDKAFKA
	if (k) {
		/* everything read is written: committed unless records were lost,
		 * so that a rerun reads them again */
		if (!lossy)
			kafka_in_commit(k);
		struct kafka_in_stats ks;
		kafka_in_stats(k, &ks);
		fprintf(stderr, "intspect: merge: Kafka %s: %llu messages consumed, %llu offset "
			"commits (%llu failed), %llu partitions assigned, %llu revoked\n", topic,
			(unsigned long long)ks.consumed, (unsigned long long)ks.committed,
			(unsigned long long)ks.commit_failures, (unsigned long long)ks.assigned,
			(unsigned long long)ks.revoked);
		kafka_in_close(k);
	}
#endif
	isp_pmerge_free(pm);
	if (lossy && rc == 0 && !m->allow_drops) {
		fprintf(stderr, "intspect: %u channel(s) lost records or never connected: exit "
			"status 3 (--allow-drops: 0)\n", lossy);
		rc = 3;
	}
	return rc;
}
