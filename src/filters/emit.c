/*
 * emit.c - records to their rules' channels (engine_int.h).
 *
 * A record is written once, in the engine's buffer, and each channel's
 * queue copies it. A record for one channel only (a per-packet event's,
 * usually) is instead written straight into that queue's ring when it
 * has room at once, and committed: no copy and no second pass over its
 * bytes, about a third of what a 600-byte record cost to hand over
 * (bench/README.md, "Records written in place").
 */
#include <string.h>

#include "engine_int.h"

void engine_emit_begin(struct isp_engine *e, const char *report, size_t report_len,
		       const char *key, size_t keylen, const int *channels, unsigned nchannels,
		       const struct rule_formats *f, unsigned which)
{
	if (e->logging) {       /* settled in order: kept until its batch is committed */
		event_log_begin(e, report, report_len, key ? key : "", key ? keylen : 0);
		return;
	}
	/* several workers stage their records (one lock for many), but for
	 * those written at a batch's commit, which go in the file's order
	 * as the records committed around them (engine_emit_copy) */
	if (nchannels != 1 || (e->stage && !e->committing) || !e->channels)
		return;
	if (!takes_encoding(f, 0, which))
		return;         /* another encoding goes there */
	struct isp_channel *ch = e->channels[channels[0]];
	if (!ch)
		return;
	if (e->stage && e->stage[channels[0]].n)
		isp_channel_stage_flush(&e->stage[channels[0]]);       /* staged first */
	char *out = isp_channel_reserve(ch, e, report, report_len, key ? key : "",
					key ? keylen : 0, REC_MAX);
	if (out) {
		rec_target(&e->rec, out);
		e->direct = ch;
	}
}

bool engine_channels_use_key(const struct isp_engine *e, const int *channels, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct isp_channel *ch = e->channels ? e->channels[channels[i]] : NULL;
		if (ch && isp_channel_uses_key(ch))
			return true;
	}
	return false;
}

void engine_emit(struct isp_engine *e, const char *report, const char *key, size_t keylen,
		 const int *channels, unsigned nchannels, const struct rule_formats *f,
		 unsigned which, struct rule_stats *st)
{
	size_t len = rec_end(&e->rec);
	/* a record counts once, whatever the number of its encodings */
	const bool first = which == 0;

	if (e->logging) {
		event_log_end(e, len, which, st);
		return;
	}
	if (e->direct) {        /* written in its channel's queue */
		struct isp_channel *ch = e->direct;

		e->direct = NULL;
		rec_target(&e->rec, NULL);
		if (len == 0) {
			isp_channel_abort(ch);
			st->dropped++;
		} else {
			isp_channel_commit(ch, len);
			st->records += first;
		}
		return;
	}
	engine_emit_bytes(e, report, key, keylen, e->rec.w.buf, len, channels, nchannels, f, which,
			  st);
}

void engine_emit_bytes(struct isp_engine *e, const char *report, const char *key, size_t keylen,
		       const char *rec, size_t len, const int *channels, unsigned nchannels,
		       const struct rule_formats *f, unsigned which, struct rule_stats *st)
{
	if (len == 0) {         /* too large, or a point without a field */
		st->dropped++;
		return;
	}
	if (which == 0)         /* a record counts once, whatever its encodings */
		st->records++;
	struct isp_record r = { report, key ? key : "", key ? keylen : 0, rec, len, false };
	for (unsigned i = 0; i < nchannels; i++) {
		if (!takes_encoding(f, i, which))
			continue;       /* another encoding goes there */
		struct isp_channel *ch = e->channels ? e->channels[channels[i]] : NULL;
		if (ch && e->stage)
			isp_channel_stage_add(&e->stage[channels[i]], &r, &st->dropped);
		else if (!ch || !isp_channel_submit(ch, &r))
			st->dropped++;
	}
}

void engine_emit_copy(struct isp_engine *e, const char *report, size_t report_len, const char *key,
		      size_t keylen, const char *rec, size_t len, const int *channels,
		      unsigned nchannels, const struct rule_formats *f, unsigned which,
		      struct rule_stats *st)
{
	struct isp_channel *ch;
	int at;

	if (len && nchannels == 1 && takes_encoding(f, 0, which) && e->channels &&
	    (ch = e->channels[at = channels[0]])) {
		/* records staged for it (a rule of several channels) go first */
		if (e->stage && e->stage[at].n)
			isp_channel_stage_flush(&e->stage[at]);
		char *out = isp_channel_reserve(ch, e, report, report_len, key ? key : "",
						key ? keylen : 0, len);
		if (out) {
			memcpy(out, rec, len);
			isp_channel_commit(ch, len);
			st->records += which == 0;
			return;
		}
	}
	engine_emit_bytes(e, report, key, keylen, rec, len, channels, nchannels, f, which, st);
}
