/*
 * fdlines.c - batches of records as lines on a file descriptor (fdlines.h).
 */
#include "fdlines.h"

#include <errno.h>
#include <sys/uio.h>

/* Linux's IOV_MAX; two entries (text, newline) per record. */
#define NIOV 1024

size_t isp_fd_write_lines(int fd, const struct isp_record *recs, size_t n,
			  size_t *partial, uint64_t *bytes, int *err)
{
	static char nl = '\n';
	struct iovec iov[NIOV];
	size_t done = 0;

	*err = 0;
	while (done < n) {
		int cnt = 0;

		for (size_t i = done; i < n && cnt + 2 <= NIOV; i++) {
			const struct isp_record *r = &recs[i];
			size_t skip = i == done ? *partial : 0;

			if (skip < r->len) {
				iov[cnt].iov_base = (void *)(r->text + skip);
				iov[cnt++].iov_len = r->len - skip;
			}
			iov[cnt].iov_base = &nl;
			iov[cnt++].iov_len = 1;
		}

		ssize_t w = writev(fd, iov, cnt);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*err = w < 0 ? errno : EIO;
			return done;
		}
		*bytes += (uint64_t)w;
		for (size_t left = (size_t)w; left > 0;) {
			size_t rest = recs[done].len + 1 - *partial;

			if (left >= rest) {
				left -= rest;
				*partial = 0;
				done++;
			} else {
				*partial += left;
				left = 0;
			}
		}
	}
	return done;
}
