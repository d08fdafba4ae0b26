/*
 * parallel.c - see parallel.h.
 */
#include "parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/shards.h"
#include "../core/workers.h"
#include "../filters/engine.h"
#include "../filters/program.h"

uint64_t cli_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void worker_packet(void *ctx, const struct isp_packet *p)
{
	isp_engine_packet(ctx, p);
}

static void worker_tick(void *ctx, uint64_t now_ns)
{
	isp_engine_close_windows(ctx, now_ns);
}

uint64_t parallel_window_end(const struct isp_program *prog, uint64_t t)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < prog->nqueries; i++) {
		uint64_t p = prog->queries[i].period_ns;
		uint64_t end = (t / p + 1) * p;
		if (end < next)
			next = end;
	}
	return next;
}

static int new_engines(struct parallel *par, unsigned n, struct isp_program *prog,
		       const struct isp_registry *reg, struct isp_channel **channels,
		       struct isp_engine *reader_engine)
{
	char err[256];

	par->n = n;
	par->next_tick = 0;
	par->engines = calloc(n, sizeof(*par->engines));
	if (!par->engines)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		par->engines[i] = isp_engine_new(prog, reg, channels, err, sizeof(err));
		if (!par->engines[i]) {
			fprintf(stderr, "intspect: %s\n", err);
			return -1;
		}
		isp_engine_set_role(par->engines[i], true);
	}
	isp_engine_set_role(reader_engine, false);
	return 0;
}

int parallel_start(struct parallel *par, unsigned n, struct isp_program *prog,
		   const struct isp_registry *reg, struct isp_channel **channels,
		   struct isp_engine *reader_engine, uint16_t first)
{
	static const struct isp_worker_ops ops = { worker_packet, worker_tick };

	if (new_engines(par, n, prog, reg, channels, reader_engine) < 0)
		return -1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus > 0 && n + 1 > (unsigned long)cpus)   /* measured: see bench/README.md */
		fprintf(stderr, "intspect: note: a reader and %u workers share %ld CPUs; with fewer "
			"workers than CPUs each has one\n", n, cpus);
	par->w = isp_workers_start(n, reg, first, &ops, (void *const *)par->engines, 32u << 20);
	if (!par->w) {
		fprintf(stderr, "intspect: cannot start %u workers\n", n);
		return -1;
	}
	return 0;
}

void parallel_tick(struct parallel *par, const struct isp_program *prog,
		   struct isp_engine *reader_engine, uint64_t now)
{
	isp_workers_tick(par->w, now);
	isp_engine_merge_windows(reader_engine, par->engines, par->n);
	par->next_tick = now == UINT64_MAX ? UINT64_MAX : parallel_window_end(prog, now);
}

void parallel_stop(struct parallel *par)
{
	isp_workers_stop(par->w);
	for (unsigned i = 0; par->engines && i < par->n; i++)
		isp_engine_free(par->engines[i]);
	free(par->engines);
	memset(par, 0, sizeof(*par));
}

/* ---- shards ---- */

/* the reader engine's rules (one owner), called under the shards' lock */
static void shared_packet(void *ctx, const struct isp_packet *p)
{
	isp_engine_packet(ctx, p);
}

static void shards_tick(struct isp_shards *sh, struct parallel *par,
			struct isp_engine *reader_engine, uint64_t now)
{
	isp_shards_tick(sh, now);
	isp_engine_merge_windows(reader_engine, par->engines, par->n);
	isp_shards_resume(sh);
}

int parallel_run_shards(struct parallel *par, struct isp_source **src, unsigned nsrc,
			unsigned n, const struct shard_run *run, struct isp_program *prog,
			const struct isp_registry *reg, struct isp_channel **channels,
			struct isp_engine *reader_engine, uint16_t first, struct isp_stats *st)
{
	struct isp_shard_ops ops = { worker_packet, worker_tick, NULL };
	int rc = 0;

	if (new_engines(par, n, prog, reg, channels, reader_engine) < 0)
		return 1;
	for (unsigned i = 0; i < prog->nevents; i++)
		if (isp_event_needs_one_owner(prog, i))
			ops.shared = shared_packet;
	/* smaller rings than behind one reader: there are n * (n - 1) */
	struct isp_shards *sh = isp_shards_start(n, src, nsrc, reg, first, &ops,
						 (void *const *)par->engines, reader_engine, 8u << 20);
	if (!sh) {
		fprintf(stderr, "intspect: cannot start %u workers\n", n);
		return 1;
	}
	uint64_t next_tick = parallel_window_end(prog, cli_wall_ns());
	while (!*run->stop && !isp_shards_ended(sh) &&
	       (!run->count || isp_shards_packets(sh) < run->count)) {
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
		if (*run->print_stats) {
			*run->print_stats = 0;
			run->progress(run->progress_ctx, isp_shards_packets(sh));
		}
		uint64_t now = cli_wall_ns();
		if (now >= next_tick) {
			shards_tick(sh, par, reader_engine, now);
			next_tick = parallel_window_end(prog, now);
		}
	}
	isp_shards_stop_reading(sh);
	shards_tick(sh, par, reader_engine, UINT64_MAX);        /* every open window */
	if (isp_shards_error(sh)) {
		fprintf(stderr, "intspect: %s\n", isp_shards_error(sh));
		rc = 1;
	}
	if (isp_shards_dropped(sh))
		fprintf(stderr, "intspect: %llu items dropped: a worker's ring was full\n",
			(unsigned long long)isp_shards_dropped(sh));
	/* how the kernel or the card spread the input */
	fprintf(stderr, "intspect: %u workers read %u shares:", n, nsrc);
	for (unsigned i = 0; i < nsrc; i++)
		fprintf(stderr, "%s%llu", i ? " + " : " ",
			(unsigned long long)isp_shards_share_packets(sh, i));
	fprintf(stderr, " packets\n");
	isp_shards_stats(sh, st);
	isp_shards_stop(sh);
	return rc;
}
