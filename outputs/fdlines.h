/*
 * fdlines.h - write records as text lines to a file descriptor, a batch at
 * a time, surviving partial writes.
 *
 * Shared by the stdout and file channels (and the socket's lined runs).
 * Their batches come taken as lines (the types say `lines`: queue.h):
 * each text followed by its newline, one after the other, so a batch goes
 * out as it lies, in one write and one segment for the kernel to copy.
 * A write cut short (signal, full disk, pipe) resumes exactly where it
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
 * Bytes of the lines recs[done..n) that already lie one after the other,
 * each with its newline (`lined`), the first from byte `skip` of its
 * line; 0 when the first is not such a line.
 */
size_t isp_lined_run(const struct isp_record *recs, size_t done, size_t n, size_t skip);

/*
 * Write recs[0..n) each followed by '\n', the first one starting at byte
 * *partial of its line: lined runs as they lie, other records with writev.
 * Returns the number of lines completed; on a write error stops there with
 * *partial updated and *err = errno (0 otherwise). *bytes is increased by
 * what was written.
 */
size_t isp_fd_write_lines(int fd, const struct isp_record *recs, size_t n,
			  size_t *partial, uint64_t *bytes, int *err);

#endif
