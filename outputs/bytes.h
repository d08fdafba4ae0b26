/*
 * bytes.h - what the network output types share: a growing byte buffer
 * (a request, a batch of lines) and a bounded wait on a socket.
 */
#ifndef ISP_OUTPUTS_BYTES_H
#define ISP_OUTPUTS_BYTES_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>

#include "queue.h"      /* isp_now_ns */

struct isp_bytes {
	char *p;
	size_t len, cap;
};

/* Room for n more bytes; -1: out of memory. */
static inline int isp_bytes_room(struct isp_bytes *b, size_t n)
{
	if (b->len + n <= b->cap)
		return 0;

	size_t cap = (b->len + n) * 2;
	char *p = realloc(b->p, cap);

	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* poll() for `events` until the CLOCK_MONOTONIC time `deadline` (ns):
 * revents, or 0 once the time is up. */
static inline int isp_wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - isp_now_ns();
		struct pollfd p = { .fd = fd, .events = events };

		if (left <= 0)
			return 0;
		int r = poll(&p, 1, (int)((left + 999999) / 1000000));

		if (r > 0)
			return p.revents;
		if (r == 0 || errno != EINTR)
			return 0;
	}
}

#endif
