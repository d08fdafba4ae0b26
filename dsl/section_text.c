/*
 * section_text.c - the canonical text of a config section: its type,
 * name, keys and values (with each value's kind: "5" and 5 differ), not
 * its layout or comments. Hot reload compares it to tell a rule or a
 * channel that did not change.
 */
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static bool put_text(char **buf, size_t *len, size_t *cap, const char *t)
{
	size_t n = strlen(t);

	if (*len + n + 1 > *cap) {
		size_t want = (*cap ? *cap * 2 : 256) + n;
		char *grown = realloc(*buf, want);
		if (!grown)
			return false;
		*buf = grown;
		*cap = want;
	}
	memcpy(*buf + *len, t, n + 1);
	*len += n;
	return true;
}

static bool value_text(char **buf, size_t *len, size_t *cap, const struct cfg_value *v)
{
	if (v->kind != CV_LIST) {
		/* the kind too: "5" and 5 are different words */
		const char kind[2] = { (char)('0' + v->kind), 0 };
		return put_text(buf, len, cap, kind) && put_text(buf, len, cap, v->text ? v->text : "") &&
		       put_text(buf, len, cap, "\x1f");
	}
	bool ok = put_text(buf, len, cap, "{");
	for (size_t i = 0; ok && i < v->nitems; i++)
		ok = value_text(buf, len, cap, v->items[i]);
	return ok && put_text(buf, len, cap, "}");
}

char *section_text(const struct cfg_section *s, const char *extra)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	bool ok = put_text(&buf, &len, &cap, s->type) && put_text(&buf, &len, &cap, " ") &&
		  put_text(&buf, &len, &cap, s->name ? s->name : "") &&
		  put_text(&buf, &len, &cap, extra ? extra : "") && put_text(&buf, &len, &cap, "{");

	for (size_t i = 0; ok && i < s->nkvs; i++) {
		const struct cfg_kv *kv = s->kvs[i];
		ok = put_text(&buf, &len, &cap, kv->key) &&
		     put_text(&buf, &len, &cap, kv->subkey ? kv->subkey : "") &&
		     put_text(&buf, &len, &cap, "=") && value_text(&buf, &len, &cap, kv->value);
	}
	if (!ok || !put_text(&buf, &len, &cap, "}")) {
		free(buf);
		return NULL;
	}
	return buf;
}
