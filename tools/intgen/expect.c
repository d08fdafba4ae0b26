/*
 * expect.c - JSON-lines writer for the expected values (see expect.h).
 *
 * Hand-rolled formatting instead of fprintf: the file can hold millions of
 * lines with dozens of numbers each, and printf parsing would dominate the
 * generator's run time.
 */
#define _POSIX_C_SOURCE 200809L

#include "expect.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT_BUF_SIZE (4u << 20)
#define EXPECT_LINE_MAX (64u << 10) /* > 32 hops x 20 arrays x 21 chars */

int expect_open(struct expect_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->buf = malloc(EXPECT_BUF_SIZE);
	if (!w->buf)
		return -1;
	w->cap = EXPECT_BUF_SIZE;
	w->fp = fopen(path, "w");
	if (!w->fp) {
		free(w->buf);
		w->buf = NULL;
		return -1;
	}
	return 0;
}

static void flush_buf(struct expect_writer *w)
{
	if (w->len && !w->error && fwrite(w->buf, 1, w->len, w->fp) != w->len)
		w->error = 1;
	w->len = 0;
}

/* Make sure a whole line fits, so the emitters below need no checks. */
static void reserve_line(struct expect_writer *w)
{
	if (w->cap - w->len < EXPECT_LINE_MAX)
		flush_buf(w);
}

static void out_str(struct expect_writer *w, const char *s)
{
	size_t n = strlen(s);
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void out_u64(struct expect_writer *w, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		w->buf[w->len++] = tmp[--n];
}

/* ,"key": -- every key after the first (meta.packet_index, or the first
 * one after expect_begin / expect_obj_begin) */
static void out_key(struct expect_writer *w, const char *key)
{
	if (w->fresh) {
		w->fresh = 0;
		out_str(w, "\"");
	} else {
		out_str(w, ",\"");
	}
	out_str(w, key);
	out_str(w, "\":");
}

static void kv_u64(struct expect_writer *w, const char *key, uint64_t v)
{
	out_key(w, key);
	out_u64(w, v);
}

static void kv_str(struct expect_writer *w, const char *key, const char *s)
{
	out_key(w, key);
	w->buf[w->len++] = '"';
	out_str(w, s);
	w->buf[w->len++] = '"';
}

/* Which per-hop field an array holds; the value is read per hop. */
enum hop_field {
	HF_SWITCH, HF_IN_PORT, HF_EG_PORT, HF_LATENCY, HF_QID, HF_QOCC,
	HF_TS_IN, HF_TS_EG, HF_LV2_IN, HF_LV2_EG, HF_TX, HF_BUF_ID, HF_BUF_OCC,
	HF_L4S_MARK, HF_L4S_DROP
};

static uint64_t hop_value(const struct ig_hop *h, enum hop_field f,
			  const struct ig_item *it, uint64_t *all_ones)
{
	unsigned ts_bytes = it->ts_bytes;
	bool l4s = it->l4s;

	switch (f) {
	case HF_SWITCH:   *all_ones = 0xFFFFFFFFu; return h->switch_id;
	case HF_IN_PORT:  *all_ones = 0xFFFF;      return h->in_port;
	case HF_EG_PORT:  *all_ones = 0xFFFF;      return h->eg_port;
	case HF_LATENCY:  *all_ones = 0xFFFFFFFFu; return h->latency;
	case HF_QID:      *all_ones = 0xFF;        return h->queue_id;
	case HF_QOCC:     *all_ones = 0xFFFFFF;    return h->queue_occ;
	case HF_TS_IN:
	case HF_TS_EG: {
		uint64_t v = f == HF_TS_IN ? h->ts_in : h->ts_eg;
		*all_ones = ts_bytes == 8 ? UINT64_MAX : 0xFFFFFFFFu;
		return ts_bytes == 8 ? v : (v & 0xFFFFFFFFu);
	}
	case HF_LV2_IN:
		*all_ones = l4s ? 0xFFFF : 0xFFFFFFFFu;
		return l4s ? (h->lv2_in & 0xFFFF) : h->lv2_in;
	case HF_LV2_EG:
		*all_ones = l4s ? 0xFFFF : 0xFFFFFFFFu;
		return l4s ? (h->lv2_eg & 0xFFFF) : h->lv2_eg;
	case HF_TX:       *all_ones = 0xFFFFFFFFu; return h->tx_util;
	case HF_BUF_ID:   *all_ones = 0xFF;        return h->buffer_id;
	case HF_BUF_OCC:  *all_ones = 0xFFFFFF;    return h->buffer_occ;
	case HF_L4S_MARK: *all_ones = 0xFFFF;      return h->l4s_mark;
	case HF_L4S_DROP: *all_ones = 0xFFFF;      return h->l4s_drop;
	}
	*all_ones = 0;
	return 0;
}

/* Array in path order (index 0 = first hop), null for all-ones. */
static void kv_hops(struct expect_writer *w, const char *key,
		    const struct ig_item *it, enum hop_field f)
{
	out_key(w, key);
	w->buf[w->len++] = '[';
	for (unsigned h = 0; h < it->nhops; h++) {
		uint64_t ones, v = hop_value(&it->hop[h], f, it, &ones);
		if (h)
			w->buf[w->len++] = ',';
		if (v == ones)
			out_str(w, "null");
		else
			out_u64(w, v);
	}
	w->buf[w->len++] = ']';
}

static void kv_addr(struct expect_writer *w, const char *key,
		    const uint8_t *a, int v6)
{
	char txt[INET6_ADDRSTRLEN];

	if (!inet_ntop(v6 ? AF_INET6 : AF_INET, a, txt, sizeof(txt)))
		strcpy(txt, "?");
	kv_str(w, key, txt);
}

static void report_keys(struct expect_writer *w, const struct ig_config *cfg,
			const struct ig_item *it)
{
	const struct ig_repmd *r = &it->rep;

	kv_u64(w, "int_report.version", (uint64_t)cfg->report_ver);
	kv_u64(w, "int_report.hw_id", it->hw_id);
	kv_u64(w, "int_report.seq_num", it->seq);
	if (cfg->report_ver == 0) {
		kv_u64(w, "int_report.ingress_time", r->ts_in & 0xFFFFFFFFu);
		if (it->inner_kind == 1 || it->inner_kind == 2) {
			kv_u64(w, "int_report.node_id", it->node_id);
			kv_u64(w, "int_report.ingress_port", r->in_port);
			kv_u64(w, "int_report.egress_port", r->eg_port);
			kv_u64(w, "int_report.queue_id", r->queue_id);
		}
		if (it->inner_kind == 1)
			kv_u64(w, "int_report.drop_reason", r->drop_reason);
		if (it->inner_kind == 2) {
			kv_u64(w, "int_report.queue_occup", r->queue_occ);
			kv_u64(w, "int_report.egress_time", r->ts_eg & 0xFFFFFFFFu);
		}
		return;
	}
	kv_u64(w, "int_report.node_id", it->node_id);
	if (cfg->report_ver == 1) {
		unsigned b = cfg->rep_md_bits;
		kv_u64(w, "int_report.ingress_time", r->ts_in & 0xFFFFFFFFu);
		if (b & 0x20) {
			kv_u64(w, "int_report.ingress_port", r->in_port);
			kv_u64(w, "int_report.egress_port", r->eg_port);
		}
		if (b & 0x10)
			kv_u64(w, "int_report.hop_latency", r->latency);
		if (b & 0x08) {
			kv_u64(w, "int_report.queue_id", r->queue_id);
			kv_u64(w, "int_report.queue_occup", r->queue_occ);
		}
		if (b & 0x04)
			kv_u64(w, "int_report.egress_time", r->ts_eg & 0xFFFFFFFFu);
		if (b & 0x02) {
			kv_u64(w, "int_report.drop_queue_id", r->queue_id);
			kv_u64(w, "int_report.drop_reason", r->drop_reason);
		}
		if (b & 0x01)
			kv_u64(w, "int_report.tx_utilize", r->tx_util);
		return;
	}
	unsigned b = cfg->rep_md_bits;
	if (b & 0x4000) {
		kv_u64(w, "int_report.ingress_port", r->in_port);
		kv_u64(w, "int_report.egress_port", r->eg_port);
	}
	if (b & 0x2000)
		kv_u64(w, "int_report.hop_latency", r->latency);
	if (b & 0x1000) {
		kv_u64(w, "int_report.queue_id", r->queue_id);
		kv_u64(w, "int_report.queue_occup", r->queue_occ);
	}
	if (b & 0x0800)
		kv_u64(w, "int_report.ingress_time", r->ts_in);
	if (b & 0x0400)
		kv_u64(w, "int_report.egress_time", r->ts_eg);
	if (b & 0x0200) {
		kv_u64(w, "int_report.lv2_ingress_port", r->lv2_in);
		kv_u64(w, "int_report.lv2_egress_port", r->lv2_eg);
	}
	if (b & 0x0100)
		kv_u64(w, "int_report.tx_utilize", r->tx_util);
	if (b & 0x0080) {
		kv_u64(w, "int_report.buffer_id", r->buffer_id);
		kv_u64(w, "int_report.buffer_occup", r->buffer_occ);
	}
	if (b & 0x0001) {
		kv_u64(w, "int_report.drop_queue_id", r->queue_id);
		kv_u64(w, "int_report.drop_reason", r->drop_reason);
	}
}

static void int_keys(struct expect_writer *w, const struct ig_config *cfg,
		     const struct ig_item *it)
{
	uint16_t bm = it->bitmap;
	bool v2 = cfg->int_ver >= IV_20 && !cfg->l4s;

	kv_u64(w, "int.version", it->md_version);
	if (it->mx) {
		kv_u64(w, "int.instruction_bits", bm);
		return;
	}
	kv_u64(w, "int.num_hop", it->nhops);
	kv_u64(w, "int.instruction_bits", bm);
	if (cfg->int_ver != IV_05 || cfg->l4s) {
		kv_u64(w, "int.hop_ml", it->hop_ml);
		kv_u64(w, "int.remaining_hop_cnt", it->remaining);
	} else if (cfg->transport == TR_UDP || cfg->transport == TR_TCP) {
		/* the tail (int_write_tail_v05) */
		kv_u64(w, "int.tail_next_proto", it->flow.proto);
		kv_u64(w, "int.tail_dest_port", it->flow.dport);
		kv_u64(w, "int.tail_dscp", it->flow.dscp);
	}
	if (bm & 0x8000)
		kv_hops(w, "int.hop_switch_ids", it, HF_SWITCH);
	if (bm & 0x4000) {
		kv_hops(w, "int.hop_ingress_port_ids", it, HF_IN_PORT);
		kv_hops(w, "int.hop_egress_port_ids", it, HF_EG_PORT);
	}
	if (bm & 0x2000)
		kv_hops(w, "int.hop_latencies", it, HF_LATENCY);
	if (bm & 0x1000) {
		kv_hops(w, "int.hop_queue_ids", it, HF_QID);
		kv_hops(w, "int.hop_queue_occups", it, HF_QOCC);
	}
	if (bm & 0x0800)
		kv_hops(w, "int.hop_ingress_times", it, HF_TS_IN);
	if (bm & 0x0400)
		kv_hops(w, "int.hop_egress_times", it, HF_TS_EG);
	if ((bm & 0x0200) && (cfg->int_ver != IV_05 || cfg->l4s)) {
		kv_hops(w, "int.hop_lv2_ingress_port_ids", it, HF_LV2_IN);
		kv_hops(w, "int.hop_lv2_egress_port_ids", it, HF_LV2_EG);
	}
	if (bm & 0x0100)
		kv_hops(w, "int.hop_tx_utilizes", it, HF_TX);
	if ((bm & 0x0080) && v2) {
		kv_hops(w, "int.hop_buffer_ids", it, HF_BUF_ID);
		kv_hops(w, "int.hop_buffer_occups", it, HF_BUF_OCC);
	}
	if (cfg->l4s && (bm & 0x00F0)) {
		kv_hops(w, "int.hop_l4s_mark", it, HF_L4S_MARK);
		kv_hops(w, "int.hop_l4s_drop", it, HF_L4S_DROP);
	}
	if (bm & 0x2000) {
		uint64_t sum = 0;
		for (unsigned h = 0; h < it->nhops; h++)
			if (it->hop[h].latency != 0xFFFFFFFFu)
				sum += it->hop[h].latency;
		kv_u64(w, "int.latency", sum);
	}
}

void expect_item(struct expect_writer *w, const struct ig_config *cfg,
		 uint64_t pkt_index, const struct ig_item *it, int in_report)
{
	const struct ig_flow *f = &it->flow;
	bool tcp = f->proto == 6;

	reserve_line(w);
	out_str(w, "{\"meta.packet_index\":");
	out_u64(w, pkt_index);
	if (in_report)
		report_keys(w, cfg, it);
	/* IPv6 is its own protocol, as in MMT: ipv6.src, ipv6.next_header */
	kv_addr(w, f->v6 ? "ipv6.src" : "ip.src", f->src, f->v6);
	kv_addr(w, f->v6 ? "ipv6.dst" : "ip.dst", f->dst, f->v6);
	kv_u64(w, f->v6 ? "ipv6.next_header" : "ip.proto", f->proto);
	kv_u64(w, tcp ? "tcp.src_port" : "udp.src_port", f->sport);
	kv_u64(w, tcp ? "tcp.dst_port" : "udp.dst_port", f->dport);
	if (it->has_int)
		int_keys(w, cfg, it);
	out_str(w, "}\n");
}

void expect_malformed(struct expect_writer *w, uint64_t pkt_index,
		      const char *reason)
{
	reserve_line(w);
	out_str(w, "{\"meta.packet_index\":");
	out_u64(w, pkt_index);
	kv_str(w, "malformed", reason);
	out_str(w, "}\n");
}

void expect_begin(struct expect_writer *w)
{
	reserve_line(w);
	w->buf[w->len++] = '{';
	w->fresh = 1;
}

void expect_end(struct expect_writer *w)
{
	out_str(w, "}\n");
	w->fresh = 0;
}

/* Keys written with these make room first: one line can be longer than
 * EXPECT_LINE_MAX (sketch truth over many keys). */
void expect_kv_u64(struct expect_writer *w, const char *key, uint64_t v)
{
	reserve_line(w);
	kv_u64(w, key, v);
}

void expect_kv_bool(struct expect_writer *w, const char *key, int v)
{
	reserve_line(w);
	out_key(w, key);
	out_str(w, v ? "true" : "false");
}

void expect_kv_str(struct expect_writer *w, const char *key, const char *s)
{
	reserve_line(w);
	kv_str(w, key, s);
}

void expect_kv_ipv4(struct expect_writer *w, const char *key,
		    const uint8_t a[4])
{
	reserve_line(w);
	kv_addr(w, key, a, 0);
}

void expect_kv_u32s(struct expect_writer *w, const char *key,
		    const uint32_t *v, size_t n)
{
	reserve_line(w); /* 4096 x 11 characters fit in EXPECT_LINE_MAX */
	out_key(w, key);
	w->buf[w->len++] = '[';
	for (size_t i = 0; i < n; i++) {
		if (i)
			w->buf[w->len++] = ',';
		out_u64(w, v[i]);
	}
	w->buf[w->len++] = ']';
}

void expect_obj_begin(struct expect_writer *w, const char *key)
{
	reserve_line(w);
	out_key(w, key);
	w->buf[w->len++] = '{';
	w->fresh = 1;
}

void expect_obj_end(struct expect_writer *w)
{
	w->buf[w->len++] = '}';
	w->fresh = 0;
}

int expect_close(struct expect_writer *w)
{
	int rc;

	flush_buf(w);
	rc = w->error ? -1 : 0;
	if (w->fp && fclose(w->fp) != 0)
		rc = -1;
	free(w->buf);
	memset(w, 0, sizeof(*w));
	return rc;
}
