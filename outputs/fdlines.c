/*
 * fdlines.c - batches of records as lines on a file descriptor (fdlines.h).
 */
#include "fdlines.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Linux's IOV_MAX; two entries (text, newline) per record. */
#define NIOV 1024

size_t isp_lined_run(const struct isp_record *recs, size_t done, size_t n, size_t skip)
{
	if (done >= n || !recs[done].lined)
		return 0;

	const char *end = recs[done].text + recs[done].len + 1;

	for (size_t i = done + 1; i < n && recs[i].lined && recs[i].text == end; i++)
		end += recs[i].len + 1;
	return (size_t)(end - recs[done].text) - skip;
}

/* Lines recs[done..n) as iovecs, the first from byte `skip` of its line. */
static int iov_lines(struct iovec *iov, const struct isp_record *recs,
		     size_t done, size_t n, size_t skip)
{
	static char nl = '\n';
	int cnt = 0;

	for (size_t i = done; i < n && cnt + 2 <= NIOV; i++, skip = 0) {
		const struct isp_record *r = &recs[i];

		if (skip < r->len) {
			iov[cnt].iov_base = (void *)(r->text + skip);
			iov[cnt++].iov_len = r->len - skip;
		}
		iov[cnt].iov_base = &nl;
		iov[cnt++].iov_len = 1;
	}
	return cnt;
}

size_t isp_fd_write_lines(int fd, const struct isp_record *recs, size_t n,
			  size_t *partial, uint64_t *bytes, int *err)
{
	struct iovec iov[NIOV];
	size_t done = 0;

	*err = 0;
	while (done < n) {
		/* Lines as they were taken, one segment: the kernel's cost
		 * per iovec segment is more than a copy (measured: a fifth to
		 * a third less CPU for 100-800 byte lines to a file, staged
		 * into one buffer, than as two segments a line). Records not
		 * laid out so go out as segments. */
		size_t run = isp_lined_run(recs, done, n, *partial);
		ssize_t w = run ? write(fd, recs[done].text + *partial, run) :
				  writev(fd, iov, iov_lines(iov, recs, done, n, *partial));

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
