/*
 * fdlines.h - write records as text lines to a file descriptor, a batch at
 * a time, surviving partial writes.
 *
 * Shared by the stdout and file channels. One writev per batch (up to
 * IOV_MAX/2 records per call), so a batch costs one system call, and a
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

/*
 * Write recs[0..n) each followed by '\n', the first one starting at byte
 * *partial of its line. Returns the number of lines completed; on a write
 * error stops there with *partial updated and *err = errno (0 otherwise).
 * *bytes is increased by what was written.
 */
size_t isp_fd_write_lines(int fd, const struct isp_record *recs, size_t n,
			  size_t *partial, uint64_t *bytes, int *err);

#endif
