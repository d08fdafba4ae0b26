/*
 * pcap_writer.h - classic libpcap file output without libpcap.
 *
 * Writes the 24-byte global header and 16-byte record headers by hand,
 * always little-endian, with microsecond (0xA1B2C3D4) or nanosecond
 * (0xA1B23C4D) magic, link type Ethernet. Output is collected in a large
 * private buffer and flushed with fwrite so millions of small records cost
 * one system call per megabyte.
 */
#ifndef INTGEN_PCAP_WRITER_H
#define INTGEN_PCAP_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pcap_writer {
	FILE *fp;
	int nanosec;
	uint8_t *buf;
	size_t len, cap;
	int error; /* sticky: set once a write fails */
};

/* Create (truncate) path and write the global header. Returns 0, or -1 with
 * errno set; on failure nothing needs closing. */
int pcap_open(struct pcap_writer *w, const char *path, int nanosec);

/* Append one record. ts_ns is nanoseconds since the epoch (rounded down to
 * microseconds for the microsecond format); caplen bytes of data are
 * written and wirelen is recorded as the original length (wirelen >=
 * caplen). Returns 0 or -1 on a write error (sticky). */
int pcap_write(struct pcap_writer *w, uint64_t ts_ns, const uint8_t *data,
	       uint32_t caplen, uint32_t wirelen);

/* Flush, close and free. Returns 0, or -1 if any write or the close failed. */
int pcap_close(struct pcap_writer *w);

#endif
