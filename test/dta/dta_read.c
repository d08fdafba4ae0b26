/*
 * dta_read.c - another process reading intspect's DTA stores, as an
 * application would: only <intspect/dta_store.h> (no intspect code),
 * the file mapped read-only.
 *
 *   dta_read kw FILE          keys (one 32-bit number a line) on stdin:
 *                             "KEY COPIES W0 W1 ..." ("KEY 0" unanswered)
 *   dta_read shard N          keys on stdin: "KEY SHARD", the collector of
 *                             0..N-1 a client sends the key to (isp_dta_shard)
 *   dta_read kwx FILE         the same with keys as hex bytes (a rule's key)
 *   dta_read kix FILE         keys as hex bytes on stdin: "KEY ESTIMATE"
 *   dta_read ki FILE          keys on stdin: "KEY ESTIMATE"
 *   dta_read sm FILE          keys on stdin: "KEY ESTIMATE" (newest epoch)
 *   dta_read card FILE        "CARDINALITY COMPLETE"
 *   dta_read poll FILE        every list from 0: "LIST W0 W1 ..." a line,
 *                             then "lost LIST N"
 *   dta_read watch FILE MS    poll every list while a writer appends, for
 *                             MS ms: each entry holds one 64-bit value
 *                             twice (words 0-1 and 2-3), growing in its
 *                             list; prints "read N lost L torn T"
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dta_store.h"

static const struct isp_dta_header *map(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		exit(2);
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	const char *why = m == MAP_FAILED ? "cannot map" : isp_dta_invalid(m, (size_t)st.st_size);
	if (why) {
		fprintf(stderr, "dta_read: %s: %s\n", path, why);
		exit(2);
	}
	return m;
}

static void key_bytes(uint32_t k, uint8_t b[4])
{
	b[0] = (uint8_t)(k >> 24), b[1] = (uint8_t)(k >> 16), b[2] = (uint8_t)(k >> 8);
	b[3] = (uint8_t)k;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dta_read kw|kwx|ki|kix|sm|card|poll|watch FILE [MS] | dta_read shard N\n");
		return 2;
	}
	const char *cmd = argv[1];
	unsigned long k;
	uint8_t kb[4];

	if (!strcmp(cmd, "shard")) {
		unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
		while (scanf("%lu", &k) == 1) {
			key_bytes((uint32_t)k, kb);
			printf("%lu %u\n", k, isp_dta_shard(kb, 4, n));
		}
		return 0;
	}
	const struct isp_dta_header *h = map(argv[2]);
	uint32_t w[ISP_DTA_MAX_WORDS];

	if (!strcmp(cmd, "kwx") || !strcmp(cmd, "kix")) {
		char hex[2100];
		uint8_t key[1024];
		while (scanf("%2099s", hex) == 1) {
			size_t n = strlen(hex) / 2;
			for (size_t i = 0; i < n; i++)
				sscanf(hex + 2 * i, "%2hhx", &key[i]);
			if (cmd[1] == 'i') {
				printf("%s %" PRIu64 "\n", hex, isp_dta_ki_estimate(h, key, n));
				continue;
			}
			unsigned c = isp_dta_kw_get(h, key, n, w);
			printf("%s %u", hex, c);
			for (unsigned i = 0; c && i < h->value_bytes / 4; i++)
				printf(" %" PRIu32, w[i]);
			putchar('\n');
		}
		return 0;
	}
	if (!strcmp(cmd, "kw") || !strcmp(cmd, "ki") || !strcmp(cmd, "sm")) {
		struct isp_dta_epoch *e = cmd[0] == 's' ? isp_dta_find_epoch(h, -1) : NULL;
		while (scanf("%lu", &k) == 1) {
			key_bytes((uint32_t)k, kb);
			if (cmd[1] == 'w') {
				unsigned c = isp_dta_kw_get(h, kb, 4, w);
				printf("%lu %u", k, c);
				for (unsigned i = 0; c && i < h->value_bytes / 4; i++)
					printf(" %" PRIu32, w[i]);
				putchar('\n');
			} else if (cmd[1] == 'i') {
				printf("%lu %" PRIu64 "\n", k, isp_dta_ki_estimate(h, kb, 4));
			} else {
				printf("%lu %" PRId64 "\n", k, e ? isp_dta_sm_estimate(h, e, kb) : 0);
			}
		}
		return 0;
	}
	if (!strcmp(cmd, "card")) {
		struct isp_dta_epoch *e = isp_dta_find_epoch(h, -1);
		printf("%.0f %u\n", e ? isp_dta_sm_cardinality(h, e) : 0.0,
		       e ? atomic_load(&e->complete) : 0);
		return 0;
	}
	size_t vb = h->value_bytes;
	uint8_t *buf = malloc(256 * vb);
	uint64_t *cur = calloc(h->lists, sizeof(*cur)), lost, read = 0, lost_all = 0, torn = 0;
	if (!buf || !cur)
		return 2;
	if (!strcmp(cmd, "poll")) {
		for (uint32_t l = 0; l < h->lists; l++) {
			uint64_t lost_l = 0;
			unsigned n;
			while ((n = isp_dta_poll(h, l, &cur[l], buf, 256, &lost)) > 0 || lost) {
				lost_l += lost;
				for (unsigned i = 0; i < n; i++) {
					memcpy(w, buf + i * vb, vb);
					printf("%" PRIu32, l);
					for (size_t j = 0; j < vb / 4; j++)
						printf(" %" PRIu32, w[j]);
					putchar('\n');
				}
			}
			printf("lost %" PRIu32 " %" PRIu64 "\n", l, lost_l);
		}
		free(buf);
		free(cur);
		return 0;
	}
	if (!strcmp(cmd, "watch") && argc > 3 && vb >= 16) {
		uint64_t end = now_ms() + strtoull(argv[3], NULL, 10), *last;
		if (!(last = calloc(h->lists, sizeof(*last)))) {
			free(buf);
			free(cur);
			return 2;
		}
		do {
			for (uint32_t l = 0; l < h->lists; l++) {
				unsigned n = isp_dta_poll(h, l, &cur[l], buf, 256, &lost);
				lost_all += lost;
				for (unsigned i = 0; i < n; i++) {
					memcpy(w, buf + i * vb, vb);
					uint64_t v = (uint64_t)w[0] << 32 | w[1];
					/* written twice: halves that differ are torn;
					 * a list's values only grow */
					torn += w[0] != w[2] || w[1] != w[3] || v <= last[l];
					last[l] = v;
				}
				read += n;
			}
		} while (now_ms() < end);
		printf("read %" PRIu64 " lost %" PRIu64 " torn %" PRIu64 "\n", read, lost_all, torn);
		free(last);
		free(buf);
		free(cur);
		return torn ? 1 : 0;
	}
	fprintf(stderr, "dta_read: unknown command %s\n", cmd);
	free(buf);
	free(cur);
	return 2;
}
