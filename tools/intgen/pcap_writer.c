/*
 * pcap_writer.c - buffered classic pcap writer (see pcap_writer.h).
 */
#include "pcap_writer.h"

#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define PCAP_BUF_SIZE (4u << 20)
#define PCAP_SNAPLEN 262144u
#define LINKTYPE_ETHERNET 1u

static int flush_buf(struct pcap_writer *w)
{
	if (w->len && !w->error && fwrite(w->buf, 1, w->len, w->fp) != w->len)
		w->error = 1;
	w->len = 0;
	return w->error ? -1 : 0;
}

int pcap_open(struct pcap_writer *w, const char *path, int nanosec)
{
	uint8_t hdr[24];

	memset(w, 0, sizeof(*w));
	w->buf = malloc(PCAP_BUF_SIZE);
	if (!w->buf)
		return -1;
	w->cap = PCAP_BUF_SIZE;
	w->fp = fopen(path, "wb");
	if (!w->fp) {
		free(w->buf);
		w->buf = NULL;
		return -1;
	}
	w->nanosec = nanosec;
	put32le(hdr, nanosec ? 0xA1B23C4Du : 0xA1B2C3D4u);
	put16le(hdr + 4, 2);
	put16le(hdr + 6, 4);
	put32le(hdr + 8, 0);  /* thiszone */
	put32le(hdr + 12, 0); /* sigfigs */
	put32le(hdr + 16, PCAP_SNAPLEN);
	put32le(hdr + 20, LINKTYPE_ETHERNET);
	memcpy(w->buf, hdr, sizeof(hdr));
	w->len = sizeof(hdr);
	return 0;
}

int pcap_write(struct pcap_writer *w, uint64_t ts_ns, const uint8_t *data,
	       uint32_t caplen, uint32_t wirelen)
{
	uint32_t sec = (uint32_t)(ts_ns / 1000000000u);
	uint32_t frac = (uint32_t)(ts_ns % 1000000000u);
	size_t need = 16 + (size_t)caplen;

	if (!w->nanosec)
		frac /= 1000u;
	if (w->len + need > w->cap && flush_buf(w))
		return -1;
	if (need > w->cap) {
		/* Larger than the buffer: cannot happen with intgen's frame
		 * limits, but stay correct rather than overflow. */
		uint8_t rh[16];
		put32le(rh, sec);
		put32le(rh + 4, frac);
		put32le(rh + 8, caplen);
		put32le(rh + 12, wirelen);
		if (fwrite(rh, 1, 16, w->fp) != 16 ||
		    fwrite(data, 1, caplen, w->fp) != caplen)
			w->error = 1;
		return w->error ? -1 : 0;
	}
	uint8_t *p = w->buf + w->len;
	put32le(p, sec);
	put32le(p + 4, frac);
	put32le(p + 8, caplen);
	put32le(p + 12, wirelen);
	memcpy(p + 16, data, caplen);
	w->len += need;
	return w->error ? -1 : 0;
}

int pcap_close(struct pcap_writer *w)
{
	int rc = flush_buf(w);

	if (w->fp && fclose(w->fp) != 0)
		rc = -1;
	free(w->buf);
	memset(w, 0, sizeof(*w));
	return rc;
}
