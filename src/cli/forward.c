/*
 * forward.c - see forward.h.
 */
#include "forward.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "../core/kafkasrc.h"
#include "../core/mesh.h"
#include "../core/registry.h"

int cli_forward_open(struct cli_forward *f, const char *spec, const struct isp_registry *reg,
		     bool file_input)
{
	char brokers[512], topic[256], group[256], err[512];

	memset(f, 0, sizeof(*f));
	if (strncmp(spec, "kafka:", 6) != 0) {
		fprintf(stderr, "intspect: --forward '%s': expected kafka:BROKERS/TOPIC\n", spec);
		return -1;
	}
#ifdef HAVE_RDKAFKA
	if (kafka_in_parse(spec + 6, brokers, sizeof(brokers), topic, sizeof(topic), group,
			   sizeof(group), err, sizeof(err)) < 0 || group[0]) {
		fprintf(stderr, "intspect: --forward: %s\n", group[0] ? "a forwarder has no group: "
			"kafka:BROKERS/TOPIC" : err);
		return -1;
	}
	const struct isp_kv kv[] = {
		{ "brokers", brokers, 0, 0 }, { "topic", topic, 0, 0 }, { "key", "group", 0, 0 },
		{ "drop-policy", file_input ? "block" : "drop-newest", 0, 0 },
	};
	struct isp_channel_cfg cfg = { .name = "forward", .type = "kafka", .kv = kv,
				       .nkv = sizeof(kv) / sizeof(kv[0]), .file = "--forward" };
	if (!(f->ch = isp_channel_open(&cfg, err, sizeof(err)))) {
		fprintf(stderr, "intspect: %s\n", err);
		return -1;
	}
	f->udp = isp_proto_id(reg, "udp");
	f->ip4 = isp_proto_id(reg, "ip");
	f->ip6 = isp_proto_id(reg, "ipv6");
	f->dta = isp_proto_id(reg, "dta");
	return 0;
#else
	(void)brokers, (void)topic, (void)group, (void)err, (void)reg, (void)file_input;
	fprintf(stderr, "intspect: --forward: this intspect was built without librdkafka\n");
	return -1;
#endif
}

static void *fwd_worker_new(void *ctx, unsigned i, unsigned n, char *err, size_t errlen)
{
	(void)i, (void)err, (void)errlen;
	return n == 1 ? ctx : NULL;
}

static void put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static void fwd_item(void *ctx, const struct isp_packet *p, uint64_t what)
{
	struct cli_forward *f = ctx;
	unsigned u = 0;

	(void)what;
	if (p->report_index)
		return;         /* a coalesced datagram goes once, whole */
	while (u < p->nlayers && p->layer[u].proto != f->udp)
		u++;
	if (u == p->nlayers || p->layer[u].end < p->layer[u].off + 8) {
		f->no_udp++;
		return;
	}
	const struct isp_layer *l = &p->layer[u];
	const uint8_t *udp = p->data + l->off;
	size_t len = l->end - l->off - 8;
	uint32_t sender = 0;
	if (u > 0 && p->layer[u - 1].proto == f->ip4 && p->layer[u - 1].len >= 20) {
		const uint8_t *ip = p->data + p->layer[u - 1].off;
		sender = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 | (uint32_t)ip[14] << 8 | ip[15];
	}
	/* the report port is the reader's; a DTA port is kept */
	bool dta = u + 1 < p->nlayers && p->layer[u + 1].proto == f->dta;
	uint8_t *fr = f->frame;
	memcpy(fr, FORWARD_MAGIC, 4);
	fr[4] = FORWARD_VERSION;
	fr[5] = 0;
	memcpy(fr + 6, udp, 2);                 /* sender port */
	if (dta)
		memcpy(fr + 8, udp + 2, 2);
	else
		put(fr + 8, 0, 2);
	put(fr + 10, 0, 2);
	put(fr + 12, sender, 4);
	put(fr + 16, p->ts_ns, 8);
	if (len > sizeof(f->frame) - FORWARD_HEADER)
		len = sizeof(f->frame) - FORWARD_HEADER;
	memcpy(fr + FORWARD_HEADER, udp + 8, len);
	char key[17];
	snprintf(key, sizeof(key), "%016llx",
		 (unsigned long long)isp_item_hash(p, f->ip4, f->ip6));
	struct isp_record r = { "forward", key, 16, (const char *)fr, FORWARD_HEADER + len, false };
	if (isp_channel_submit(f->ch, &r))
		f->forwarded++;
	else
		f->dropped++;
}

const struct isp_pipeline_ops cli_forward_ops = {
	.worker_new = fwd_worker_new,
	.item = fwd_item,
};

unsigned cli_forward_close(struct cli_forward *f, FILE *out)
{
	struct isp_channel_stats st;

	if (!f->ch)
		return 0;
	isp_channel_drain(f->ch);
	isp_channel_get_stats(f->ch, &st);
	fprintf(out, "intspect: forward: %llu datagrams queued, %llu acknowledged by the broker, "
		"%llu dropped, %llu packets without UDP not forwarded\n",
		(unsigned long long)f->forwarded, (unsigned long long)st.acked,
		(unsigned long long)st.dropped, (unsigned long long)f->no_udp);
	bool lost = st.dropped || isp_channel_never_connected(f->ch);
	isp_channel_close(f->ch);
	f->ch = NULL;
	return lost;
}
