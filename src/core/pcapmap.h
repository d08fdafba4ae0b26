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

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pcap_map {
	const uint8_t *base;
	size_t len, off;
	size_t dropped;         /* pages before this offset were given back */
	size_t prefetched;      /* cache lines before this offset were asked for */
	size_t populated;       /* pages before this offset were mapped ahead */
	size_t chores;          /* where mapping, dropping and prefetching are due */
	size_t lead;            /* pages are mapped at least this far ahead of off */
	/* workers take turns at the file (batches.c): the system calls are
	 * noted here, taken by the turn's holder and made after its turn */
	bool defer_calls;
	struct pcap_map_calls {
		size_t map_off, map_len;        /* MADV_POPULATE_READ */
		size_t drop_off, drop_len;      /* MADV_DONTNEED */
	} due;
	_Atomic bool no_populate;       /* the kernel cannot map ahead (before 5.14) */
	bool swap;              /* file written with the other byte order */
	bool nano;              /* nanosecond timestamps */
	uint32_t linktype;
	uint32_t snaplen;
	uint32_t max_incl;      /* a longer record is cut (snaplen) or bad */
};

/* The calls noted since the last take (defer_calls), into *out; the
 * caller makes them with pcap_map_calls_make once the others may read
 * on (an madvise takes tens of microseconds: under the turn, the other
 * workers waited for it). */
void pcap_map_calls_take(struct pcap_map *m, struct pcap_map_calls *out);
void pcap_map_calls_make(struct pcap_map *m, const struct pcap_map_calls *c);

/* 1: mapped; 0: not a classic pcap file (use libpcap); -1: error in err. */
int pcap_map_open(struct pcap_map *m, const char *path, char *err, size_t errlen);

#define PCAP_MAP_RECORD_HDR 16
#define PCAP_MAP_MAX_CAPLEN (256u * 1024u)      /* libpcap's own limit */

static inline uint32_t pcap_map_rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* pcap_map_next's rare paths, out of line: a record longer than the
 * file's snap length (cut to it, as libpcap does) or the message of a bad
 * one (-1), and the pages mapped, dropped and prefetched every kilobyte. */
int pcap_map_odd(struct pcap_map *m, const uint8_t **data, uint32_t *caplen,
		 uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen);
void pcap_map_chores(struct pcap_map *m);

/* The record at `off` of a file of `len` bytes when it is plain (its
 * header there, its captured length within the snap length and the
 * file): its fields, and where the next one starts. false: the end, or
 * pcap_map_odd's case. Shared by pcap_map_next and the walk of a batch
 * (batches.c), which keeps the offset in a register. */
static inline __attribute__((always_inline)) bool
pcap_map_plain(const uint8_t *base, size_t len, size_t off, uint32_t max_incl, bool swap,
	       uint64_t frac_ns, const uint8_t **data, uint32_t *caplen, uint32_t *wirelen,
	       uint64_t *ts_ns, size_t *next)
{
	size_t left = len - off;
	const uint8_t *h = base + off;
	uint32_t incl;

	if (left < PCAP_MAP_RECORD_HDR || (incl = pcap_map_rd32(h + 8, swap)) > max_incl ||
	    left - PCAP_MAP_RECORD_HDR < incl)
		return false;
	uint32_t sec = pcap_map_rd32(h, swap), frac = pcap_map_rd32(h + 4, swap);
	*data = h + PCAP_MAP_RECORD_HDR;
	*caplen = incl;
	*wirelen = pcap_map_rd32(h + 12, swap);        /* below incl: the dissector refuses it */
	*ts_ns = (uint64_t)sec * 1000000000u + (uint64_t)frac * frac_ns;
	*next = off + PCAP_MAP_RECORD_HDR + incl;
	return true;
}

/* 1: a packet; 0: end of file; -1: a bad record (message in err). Inline:
 * the read loop of a mapped file is a few tens of instructions a packet. */
static inline int pcap_map_next(struct pcap_map *m, const uint8_t **data, uint32_t *caplen,
				uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen)
{
	if (m->off == m->len)
		return 0;
	if (m->off >= m->chores)
		pcap_map_chores(m);
	if (__builtin_expect(!pcap_map_plain(m->base, m->len, m->off, m->max_incl, m->swap,
					     m->nano ? 1u : 1000u, data, caplen, wirelen, ts_ns,
					     &m->off), 0))
		return pcap_map_odd(m, data, caplen, wirelen, ts_ns, err, errlen);
	return 1;
}

/* The part of [off + skip, off + skip + len) of the file (off: the next
 * record) that is mapped already: its length, *at its start. Workers that
 * take turns at the file ask for the lines of the part they will read
 * next (a page not mapped yet would fault in the prefetch). */
size_t pcap_map_ahead(const struct pcap_map *m, size_t skip, size_t len, const uint8_t **at);

void pcap_map_close(struct pcap_map *m);

#endif
