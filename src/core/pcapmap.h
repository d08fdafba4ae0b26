/*
 * pcapmap.h - a memory-mapped reader of classic pcap files.
 *
 * libpcap reads a file with two stdio freads per packet (locked, copied);
 * mapping the file and walking its records costs neither. Every record
 * header is checked against the file's size, so a cut or corrupt file
 * ends with an error, never a read past the mapping. pcapng and anything
 * that is not a classic pcap file is left to libpcap.
 */
#ifndef ISP_PCAPMAP_H
#define ISP_PCAPMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pcap_map {
	const uint8_t *base;
	size_t len, off;
	size_t dropped;         /* pages before this offset were given back */
	size_t prefetched;      /* cache lines before this offset were asked for */
	size_t populated;       /* pages before this offset were mapped ahead */
	bool no_populate;       /* the kernel cannot map ahead (before 5.14) */
	bool swap;              /* file written with the other byte order */
	bool nano;              /* nanosecond timestamps */
	uint32_t linktype;
	uint32_t snaplen;
};

/* 1: mapped; 0: not a classic pcap file (use libpcap); -1: error in err. */
int pcap_map_open(struct pcap_map *m, const char *path, char *err, size_t errlen);

/* 1: a packet; 0: end of file; -1: a bad record (message in err). */
int pcap_map_next(struct pcap_map *m, const uint8_t **data, uint32_t *caplen,
		  uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen);

/* Ask for the cache lines of [off + skip, off + skip + len) of the file
 * (off: the next record), for whoever will read them: workers that take
 * turns at the file warm the part they will read next. */
void pcap_map_prefetch(const struct pcap_map *m, size_t skip, size_t len);

void pcap_map_close(struct pcap_map *m);

#endif
