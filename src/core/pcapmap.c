/*
 * pcapmap.c - see pcapmap.h.
 */
#include "pcapmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PCAP_MAP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PCAP_MAP_ASAN 1
#endif
#ifdef PCAP_MAP_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define GLOBAL_HDR 24
#define PREFETCH_AHEAD 2048             /* a few packets ahead */
#define POPULATE_CHUNK (2u << 20)       /* pages mapped ahead at a time */
#define DROP_LAG (4u << 20)             /* pages dropped this far behind the reader */
#define DROP_ALIGN (2u << 20)           /* a huge page: a part given back would split its mapping */
#define CHORES_EVERY 1024               /* bytes read between two rounds of chores */

int pcap_map_open(struct pcap_map *m, const char *path, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < GLOBAL_HDR) {
		close(fd);
		return 0;       /* a pipe, a device, or too short: libpcap decides */
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
#ifdef PCAP_MAP_ASAN
	/* The kernel may hand out addresses of a large block ASan freed
	 * and unmapped, whose shadow still says "freed": the mapping is
	 * ours, every byte of it readable (a fuzz run read one such file's
	 * magic as a use after free). */
	ASAN_UNPOISON_MEMORY_REGION(p, (size_t)st.st_size);
#endif
	const uint8_t *b = p;
	uint32_t magic;
	memcpy(&magic, b, 4);
	switch (magic) {
	case 0xa1b2c3d4: break;
	case 0xa1b23c4d: m->nano = true; break;
	case 0xd4c3b2a1: m->swap = true; break;
	case 0x4d3cb2a1: m->swap = true; m->nano = true; break;
	default:
		munmap(p, (size_t)st.st_size);
		return 0;       /* pcapng or not a capture: libpcap decides */
	}
	m->base = b;
	m->len = (size_t)st.st_size;
	m->off = GLOBAL_HDR;
	m->lead = POPULATE_CHUNK / 2;
	/* up to 2.3 a record may hold its lengths the other way round (2.3:
	 * some writers, found by their values): rare enough to leave to
	 * libpcap, which knows; so is any version but 2.4 */
	uint16_t major, minor;
	memcpy(&major, b + 4, 2);
	memcpy(&minor, b + 6, 2);
	if (m->swap) {
		major = __builtin_bswap16(major);
		minor = __builtin_bswap16(minor);
	}
	if (major != 2 || minor < 4) {
		munmap(p, (size_t)st.st_size);
		return 0;
	}
	m->snaplen = pcap_map_rd32(b + 16, m->swap);
	m->max_incl = m->snaplen && m->snaplen < PCAP_MAP_MAX_CAPLEN ? m->snaplen
								    : PCAP_MAP_MAX_CAPLEN;
	/* the link type is the low 16 bits (LT_LINKTYPE); above: FCS
	 * information and reserved bits */
	m->linktype = pcap_map_rd32(b + 20, m->swap) & 0xffff;
	madvise(p, m->len, MADV_SEQUENTIAL);
#ifdef MADV_HUGEPAGE
	/* A capture read from the disk comes into the page cache in folios
	 * of 2 MiB (where the file system has large folios: ext4 and xfs
	 * since Linux 6.x), which the kernel maps whole (it places a large
	 * file mapping on a 2 MiB boundary): mapping and giving back its
	 * pages then cost one entry per 2 MiB, not per 4 KiB (decode only,
	 * 2M packets of bench/'s (a): 29% of the samples in the kernel
	 * with 4 KiB folios, 17% with 2 MiB ones); ignored elsewhere. */
	madvise(p, m->len, MADV_HUGEPAGE);
#endif
	return 1;
}

static void populate(struct pcap_map *m, size_t off, size_t n)
{
#ifdef MADV_POPULATE_READ
	if (!atomic_load_explicit(&m->no_populate, memory_order_relaxed) &&
	    madvise((void *)(m->base + off), n, MADV_POPULATE_READ) != 0 && errno == EINVAL)
		/* an older kernel: the pages fault in */
		atomic_store_explicit(&m->no_populate, true, memory_order_relaxed);
#else
	(void)m;
	(void)off;
	(void)n;
#endif
}

static void drop(const struct pcap_map *m, size_t off, size_t n)
{
	madvise((void *)(m->base + off), n, MADV_DONTNEED);
}

/* Note [at, at + n) for a call made after the turn: contiguous with any
 * range noted before, so one range a call. */
static void note(size_t *off, size_t *len, size_t at, size_t n)
{
	if (!*len)
		*off = at;
	*len += n;
}

static void populate_ahead(struct pcap_map *m)
{
	size_t n = m->len - m->populated < POPULATE_CHUNK ? m->len - m->populated : POPULATE_CHUNK;

	if (m->defer_calls)
		note(&m->due.map_off, &m->due.map_len, m->populated, n);
	else
		populate(m, m->populated, n);
	m->populated += n;
}

void pcap_map_calls_take(struct pcap_map *m, struct pcap_map_calls *out)
{
	*out = m->due;
	memset(&m->due, 0, sizeof(m->due));
}

void pcap_map_calls_make(struct pcap_map *m, const struct pcap_map_calls *c)
{
	if (c->map_len)
		populate(m, c->map_off, c->map_len);
	if (c->drop_len)
		drop(m, c->drop_off, c->drop_len);
}

int pcap_map_odd(struct pcap_map *m, const uint8_t **data, uint32_t *caplen,
		 uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen)
{
	size_t left = m->len - m->off;

	if (left < PCAP_MAP_RECORD_HDR) {
		snprintf(err, errlen, "truncated capture: %zu bytes of a record header at offset %zu",
			 left, m->off);
		return -1;
	}
	const uint8_t *h = m->base + m->off;
	uint32_t incl = pcap_map_rd32(h + 8, m->swap);
	if (incl <= PCAP_MAP_MAX_CAPLEN && left - PCAP_MAP_RECORD_HDR >= incl) {
		/* past the snap length: its first snaplen bytes, as libpcap */
		uint32_t sec = pcap_map_rd32(h, m->swap), frac = pcap_map_rd32(h + 4, m->swap);
		*data = h + PCAP_MAP_RECORD_HDR;
		*caplen = m->max_incl;
		*wirelen = pcap_map_rd32(h + 12, m->swap);
		*ts_ns = (uint64_t)sec * 1000000000u + (uint64_t)frac * (m->nano ? 1u : 1000u);
		m->off += PCAP_MAP_RECORD_HDR + incl;
		return 1;
	}
	if (incl > PCAP_MAP_MAX_CAPLEN)
		snprintf(err, errlen, "bad record at offset %zu: captured length %u", m->off, incl);
	else
		snprintf(err, errlen, "truncated capture: record at offset %zu needs %u bytes, %zu left",
			 m->off, incl, left - PCAP_MAP_RECORD_HDR);
	return -1;
}

void pcap_map_chores(struct pcap_map *m)
{
	/* Map the next pages before they are read: a page fault per 64 KiB
	 * (the kernel's fault-around) was a seventh of a decode-only run;
	 * one call per 2 MiB maps the same pages for much less. */
	if (m->off + m->lead > m->populated && m->populated < m->len)
		populate_ahead(m);
	/* drop the pages already read (file-backed, they come back if touched):
	 * a large capture then does not count in the resident set. Not up to
	 * the reader: items held a few packets back (ahead.c) and first items
	 * of batches waiting for their turn (event_batch.c) read their bytes
	 * later, and a dropped page read again came back mapped with its
	 * neighbours, for good (a million flows, both rules of bench/memory.sh:
	 * 262,660 KiB at most dropping up to the reader, 253,400 with a lag) */
	if (m->off - m->dropped >= (16u << 20)) {
		uintptr_t at = ((uintptr_t)m->base + m->off - DROP_LAG) & ~(uintptr_t)(DROP_ALIGN - 1);
		size_t upto = at > (uintptr_t)m->base ? at - (uintptr_t)m->base : 0;
		if (upto > m->dropped) {
			if (m->defer_calls)
				note(&m->due.drop_off, &m->due.drop_len, m->dropped, upto - m->dropped);
			else
				drop(m, m->dropped, upto - m->dropped);
			m->dropped = upto;
		}
	}
	/* The hardware prefetcher stops at page boundaries, and per-hop
	 * attributes read bytes the decoders never touched: ask for the
	 * lines a few packets ahead, each once, enough for the next
	 * CHORES_EVERY bytes too. */
	size_t ahead = m->off + PREFETCH_AHEAD + CHORES_EVERY;
	if (ahead > m->len)
		ahead = m->len;
	size_t a = m->prefetched;
	/* four lines a turn (the loop's own cost was most of this call's),
	 * while the fourth is before `ahead` */
	size_t four = ahead > 192 ? ahead - 192 : 0;
	for (; a < four; a += 256) {
		__builtin_prefetch(m->base + a);
		__builtin_prefetch(m->base + a + 64);
		__builtin_prefetch(m->base + a + 128);
		__builtin_prefetch(m->base + a + 192);
	}
	for (; a < ahead; a += 64)
		__builtin_prefetch(m->base + a);
	m->prefetched = a;
	m->chores = m->off + CHORES_EVERY;
}

size_t pcap_map_ahead(const struct pcap_map *m, size_t skip, size_t len, const uint8_t **at)
{
	size_t from = m->off + skip, to = from + len;

	if (to > m->len)
		to = m->len;
	if (to > m->populated)
		to = m->populated;
	*at = m->base + from;
	return to > from ? to - from : 0;
}

void pcap_map_close(struct pcap_map *m)
{
	if (m->base)
		munmap((void *)m->base, m->len);
	memset(m, 0, sizeof(*m));
}
