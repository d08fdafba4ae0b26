/*
 * fdlines.h - write records as text lines to a file descriptor, a batch at
 * a time, surviving partial writes.
 *
 * Shared by the stdout and file channels. A batch taken as lines (their
 * types say `lines`: queue.h) goes out as it lies, in one write; other
 * records are copied into the channel's staging buffer and go out in one
 * write (writev only from a line larger than the buffer), so a batch
 * costs one system call
 * and one segment for the kernel to copy, and a
 * write cut short (signal, full disk, pipe) resumes exactly where it
 * stopped: the caller keeps `*partial`, the bytes of the first undelivered
 * record already written, and the channel layer offers that record first
 * again, so no line is ever duplicated or cut in two.
 */
#ifndef ISP_OUTPUTS_FDLINES_H
#define ISP_OUTPUTS_FDLINES_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"

/* A channel's staging buffer (its thread's only). */
struct isp_fdstage {
	char *buf;
	size_t cap;
};

#define ISP_FDSTAGE_BYTES (256u * 1024u)

/* 0, or -1 when out of memory. */
int isp_fdstage_init(struct isp_fdstage *s);
void isp_fdstage_free(struct isp_fdstage *s);

/*
 * Write recs[0..n) each followed by '\n', the first one starting at byte
 * *partial of its line. Returns the number of lines completed; on a write
 * error stops there with *partial updated and *err = errno (0 otherwise).
 * *bytes is increased by what was written. stage may be NULL (or without
 * a buffer): then every batch goes out with writev.
 */
size_t isp_fd_write_lines(int fd, const struct isp_fdstage *stage,
			  const struct isp_record *recs, size_t n,
			  size_t *partial, uint64_t *bytes, int *err);

#endif
