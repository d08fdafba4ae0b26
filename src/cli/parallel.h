/*
 * parallel.h - running the rules on several workers: one reader in front
 * of N workers (capture files, and live inputs read by one thread), or N
 * workers that each read a share of a live input (shards).
 */
#ifndef ISP_CLI_PARALLEL_H
#define ISP_CLI_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/dissect.h"

struct isp_program;
struct isp_registry;
struct isp_channel;
struct isp_engine;
struct isp_source;

struct parallel {
	struct isp_workers *w;          /* one reader in front */
	struct isp_engine **engines;    /* one per worker */
	unsigned n;
	uint64_t next_tick;
};

uint64_t cli_wall_ns(void);

/* The next window end of any query report after t (windows are aligned to
 * multiples of their period): when workers hand their windows over. */
uint64_t parallel_window_end(const struct isp_program *prog, uint64_t t);

/* Workers behind the reader (whose engine keeps the rules that need one
 * owner and merges windows). -1 after a message. */
int parallel_start(struct parallel *par, unsigned n, struct isp_program *prog,
		   const struct isp_registry *reg, struct isp_channel **channels,
		   struct isp_engine *reader_engine, uint16_t first);
/* Close windows up to now: every worker hands them over, the reader
 * merges and writes them. */
void parallel_tick(struct parallel *par, const struct isp_program *prog,
		   struct isp_engine *reader_engine, uint64_t now);
void parallel_stop(struct parallel *par);

struct shard_run {
	unsigned count;                 /* -c: stop after (at least) this many */
	volatile int *stop;             /* set by a signal */
	volatile int *print_stats;      /* SIGUSR1 */
	void (*progress)(void *ctx, uint64_t packets);
	void *progress_ctx;
};

/*
 * Run n workers that each read one of the nsrc shares of a live input,
 * until stopped, counted out or ended; windows close on the wall clock.
 * Adds the shares' counters to st. 0, or 1 after a read error message.
 */
int parallel_run_shards(struct parallel *par, struct isp_source **src, unsigned nsrc,
			unsigned n, const struct shard_run *run, struct isp_program *prog,
			const struct isp_registry *reg, struct isp_channel **channels,
			struct isp_engine *reader_engine, uint16_t first, struct isp_stats *st);

#endif
