/*
 * qrec.h - a record as a channel's queue holds it: a head, the report
 * name, the key and the text, each string ended by a NUL, the whole
 * rounded to 16 bytes. The queue writes records so (queue_lease.c); a
 * producer that holds records back until their turn (a worker's log,
 * src/filters/event_batch.c) writes them so too, and a run of them then
 * goes into the queue in one copy (isp_queue_write_held).
 */
#ifndef ISP_OUTPUTS_QREC_H
#define ISP_OUTPUTS_QREC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "channel.h"

#define QALIGN 16u
#define PAD_MARK UINT32_MAX     /* text_len of a pad header */

struct qhdr {
	uint32_t size;          /* whole record (or pad), multiple of QALIGN */
	uint32_t text_len, key_len, report_len;
};

/* The bytes of a record of a report name of rl bytes, a key of kl and a
 * text of tl. */
static inline size_t rec_size(size_t rl, size_t kl, size_t tl)
{
	size_t n = sizeof(struct qhdr) + rl + 1 + kl + 1 + tl + 1;

	return (n + QALIGN - 1) & ~(size_t)(QALIGN - 1);
}

/* A report name or key, short in practice: two overlapping fixed-size
 * copies, no call, for up to 16 bytes; a key is often empty, and a call
 * to memcpy for no byte cost a tenth of the reserve. */
static inline unsigned char *put_small(unsigned char *p, const char *s, size_t n)
{
	/* n is s's length: cppcheck pairs a caller's short literal with the
	 * bounds of a branch that literal never takes */
	if (n >= 8 && n <= 16) {
		__builtin_memcpy(p, s, 8);
		// cppcheck-suppress pointerOutOfBoundsCond
		__builtin_memcpy(p + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		__builtin_memcpy(p, s, 4);
		// cppcheck-suppress pointerOutOfBoundsCond
		__builtin_memcpy(p + n - 4, s + n - 4, 4);
	} else if (n > 16) {
		memcpy(p, s, n);
	} else if (n > 0) {     /* 1 to 3 bytes: the first, middle and last */
		p[0] = (unsigned char)s[0];
		p[n / 2] = (unsigned char)s[n / 2];
		p[n - 1] = (unsigned char)s[n - 1];
	}
	p[n] = '\0';
	return p + n + 1;
}

/* A record's head, report name and key at `at` (16-aligned): where its
 * text goes. */
static inline char *qrec_open(void *at, const char *report, size_t rl, const char *key, size_t kl)
{
	struct qhdr h = { .key_len = (uint32_t)kl, .report_len = (uint32_t)rl };
	unsigned char *p = at;

	memcpy(p, &h, sizeof(h));
	return (char *)put_small(put_small(p + sizeof(h), report, rl), key, kl);
}

/* The record at `at` ends after tl bytes of text: its size (where the
 * next one goes). */
static inline size_t qrec_close(void *at, size_t tl)
{
	struct qhdr *h = at;
	char *text = (char *)(h + 1) + h->report_len + 1 + h->key_len + 1;
	size_t size = rec_size(h->report_len, h->key_len, tl);

	text[tl] = '\0';
	h->text_len = (uint32_t)tl;
	h->size = (uint32_t)size;
	return size;
}

/* The record at `at`, as a channel takes it. */
static inline struct isp_record qrec_read(const void *at)
{
	const struct qhdr *h = at;
	const char *report = (const char *)(h + 1), *key = report + h->report_len + 1;

	return (struct isp_record){ report, key, h->key_len, key + h->key_len + 1, h->text_len,
				    false };
}

#endif
