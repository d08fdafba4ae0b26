/*
 * fuzz_pcap.c - libFuzzer target for the capture-file readers: each input
 * is a whole file (classic pcap in either byte order and timestamp
 * precision, read by the mapped reader, pcapmap.c; pcapng and anything
 * else, by libpcap through source.c), opened as intspect opens -r FILE,
 * read to its end or its first error, every packet dissected with the
 * first protocol of its link type and every coalesced report visited.
 *
 * The bytes reach the readers as a file: a memfd, named by its
 * /proc/self/fd path, so nothing touches the disk. Checked beyond ASan
 * and UBSan: a packet's captured length never exceeds what is left of the
 * file, and the reader stops (no endless loop over a record of length 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"
#include "../../src/core/source.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct isp_registry *reg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0 ||
	    isp_registry_finalize(reg, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_pcap: cannot make the registry\n");
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[256];
	int fd = memfd_create("fuzz_pcap", MFD_CLOEXEC);

	if (!reg)
		LLVMFuzzerInitialize(NULL, NULL);
	if (fd < 0)
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			abort();
		off += (size_t)w;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct isp_source_opts o = { .file = path };
	struct isp_source *s = isp_source_open(&o, err, sizeof(err));
	if (s) {
		uint16_t first = isp_source_first_proto(s, reg, err, sizeof(err));
		struct isp_packet p = { 0 };
		struct isp_stats st = { 0 };
		uint64_t n = 0;
		while (first != ISP_PROTO_NONE &&
		       isp_source_next(s, &p.data, &p.caplen, &p.wirelen, &p.ts_ns, err,
				       sizeof(err)) == 1) {
			/* every record holds its header, so a file of `size`
			 * bytes holds fewer than size / 16 + 1 of them */
			if (p.caplen > size || ++n > size / 16 + 1) {
				fprintf(stderr, "fuzz_pcap: packet %llu of %u bytes in a %zu-byte file\n",
					(unsigned long long)n, p.caplen, size);
				abort();
			}
			p.index = n;
			isp_dissect(reg, &p, first, &st);
			if (isp_dissect_refused(&p))
				continue;
			unsigned reports = 0;
			while (isp_dissect_next_report(reg, &p, &st))
				if (++reports > 256)
					abort();
		}
		isp_source_close(s);
	}
	close(fd);
	return 0;
}
