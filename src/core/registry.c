/*
 * registry.c - protocol registration, dispatch tables, attribute names.
 */
#include "registry.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"

#define NO_PROTO ISP_TABLE_NONE

struct isp_registry *isp_registry_new(void)
{
	struct isp_registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	memset(reg->table, NO_PROTO, sizeof(reg->table));
	int id = isp_register_proto(reg, &isp_meta_desc);
	reg->meta = (uint16_t)id;
	return reg;
}

void isp_registry_free(struct isp_registry *reg)
{
	free(reg);
}

uint16_t isp_proto_id(const struct isp_registry *reg, const char *name)
{
	for (uint16_t i = 0; i < reg->nprotos; i++)
		if (strcmp(reg->proto[i].desc->name, name) == 0)
			return i;
	return ISP_PROTO_NONE;
}

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int isp_register_proto(struct isp_registry *reg, const struct isp_proto_desc *d)
{
	if (reg->nprotos >= ISP_MAX_PROTOS || !valid_name(d->name) ||
	    isp_proto_id(reg, d->name) != ISP_PROTO_NONE)
		return -1;
	if (strcmp(d->name, "meta") != 0 && !d->decode)
		return -1;

	uint16_t id = reg->nprotos++;
	struct isp_proto *p = &reg->proto[id];

	p->desc = d;
	reg->decode[id] = d->decode;
	p->origin = "built-in";
	for (const struct isp_attr_desc *a = d->attrs; a && a->name; a++)
		p->nattrs++;
	for (const struct isp_link *k = d->links; k && k->table != 0xff; k++)
		if (k->table < ISP_TBL__COUNT && k->key < 65536)
			reg->table[k->table][k->key] = (uint8_t)id;
	return id;
}

int isp_registry_link(struct isp_registry *reg, const char *proto,
		      enum isp_table t, uint32_t key)
{
	uint16_t id = isp_proto_id(reg, proto);

	if (id == ISP_PROTO_NONE || t >= ISP_TBL__COUNT || key > 65535)
		return -1;
	reg->table[t][key] = (uint8_t)id;
	return 0;
}

int isp_registry_finalize(struct isp_registry *reg, char *err, size_t errlen)
{
	isp_meta_bind(reg);
	reg->ip4 = isp_proto_id(reg, "ip");
	reg->ip6 = isp_proto_id(reg, "ipv6");
	for (uint16_t i = 0; i < reg->nprotos; i++)
		reg->heur[i].n = 0;
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;

		if (!d->detect || !d->detect_parents)
			continue;
		for (const char *const *pn = d->detect_parents; *pn; pn++) {
			uint16_t parent = isp_proto_id(reg, *pn);

			if (parent == ISP_PROTO_NONE)
				continue; /* parent not loaded: nothing to attach to */
			struct isp_heuristics *h = &reg->heur[parent];
			if (h->n >= ISP_MAX_HEURISTICS) {
				snprintf(err, errlen, "too many heuristic protocols under %s", *pn);
				return -1;
			}
			h->id[h->n] = i;
			h->detect[h->n++] = d->detect;
		}
	}
	return 0;
}

/* "P[,P...]" or "none": the ports that lead to protocol id, replacing its
 * earlier ones in that table. */
static int set_ports(struct isp_registry *reg, uint16_t id, enum isp_table t,
		     const char *value, char *err, size_t errlen)
{
	uint16_t ports[64];
	unsigned n = 0;

	if (strcmp(value, "none") != 0) {
		for (const char *s = value; *s;) {
			char *end;
			errno = 0;
			unsigned long v = strtoul(s, &end, 0);
			if (errno || end == s || v > 65535 || n >= 64 || (*end && *end != ',')) {
				snprintf(err, errlen, "'%s': expected ports separated by commas, or none",
					 value);
				return -1;
			}
			ports[n++] = (uint16_t)v;
			s = *end ? end + 1 : end;
		}
	}
	for (unsigned k = 0; k < 65536; k++)
		if (reg->table[t][k] == id)
			reg->table[t][k] = NO_PROTO;
	for (unsigned i = 0; i < n; i++)
		reg->table[t][ports[i]] = (uint8_t)id;
	return 0;
}

int isp_registry_option(struct isp_registry *reg, const char *assignment,
			char *err, size_t errlen)
{
	const char *dot = strchr(assignment, '.');
	const char *eq = strchr(assignment, '=');
	char proto[32], key[64];

	if (!dot || !eq || dot > eq || (size_t)(dot - assignment) >= sizeof(proto) ||
	    (size_t)(eq - dot - 1) >= sizeof(key) || eq == dot + 1) {
		snprintf(err, errlen, "option '%s' is not of the form proto.name=value",
			 assignment);
		return -1;
	}
	memcpy(proto, assignment, (size_t)(dot - assignment));
	proto[dot - assignment] = 0;
	memcpy(key, dot + 1, (size_t)(eq - dot - 1));
	key[eq - dot - 1] = 0;

	uint16_t id = isp_proto_id(reg, proto);
	if (id == ISP_PROTO_NONE) {
		snprintf(err, errlen, "option '%s': unknown protocol '%s'", assignment, proto);
		return -1;
	}
	const struct isp_proto_desc *d = reg->proto[id].desc;
	if (strcmp(key, "udp-ports") == 0 || strcmp(key, "tcp-ports") == 0)
		return set_ports(reg, id, key[0] == 'u' ? ISP_TBL_UDP_PORT : ISP_TBL_TCP_PORT,
				 eq + 1, err, errlen);
	if (!d->set_option) {
		snprintf(err, errlen, "option '%s': protocol '%s' has no options", assignment, proto);
		return -1;
	}
	char perr[200] = "";
	if (d->set_option(key, eq + 1, perr, sizeof(perr)) != 0) {
		snprintf(err, errlen, "option '%s': %s", assignment, perr);
		return -1;
	}
	return 0;
}

/* ---- plugin .so loading ---- */

int isp_load_plugin_dir(struct isp_registry *reg, const char *dir,
			unsigned *loaded, unsigned *skipped,
			char *err, size_t errlen)
{
	DIR *dp = opendir(dir);

	*loaded = *skipped = 0;
	if (!dp) {
		snprintf(err, errlen, "plugin directory %s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(dp)) != NULL) {
		size_t n = strlen(de->d_name);
		if (n < 4 || strcmp(de->d_name + n - 3, ".so") != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(err, errlen, "plugin %s: %s", path, dlerror());
			rc = -1;
			break;
		}
		int (*abi)(void) = (int (*)(void))dlsym(h, "isp_plugin_abi");
		int (*reg_fn)(struct isp_registry *) =
			(int (*)(struct isp_registry *))dlsym(h, "isp_plugin_register");
		if (!abi || !reg_fn) {
			snprintf(err, errlen, "plugin %s: not an intspect plugin "
				 "(no isp_plugin_register)", path);
			dlclose(h);
			rc = -1;
			break;
		}
		if (abi() != ISP_PLUGIN_ABI) {
			snprintf(err, errlen, "plugin %s: ABI %d, this intspect needs %d",
				 path, abi(), ISP_PLUGIN_ABI);
			dlclose(h);
			rc = -1;
			break;
		}
		uint16_t before = reg->nprotos;
		if (reg_fn(reg) < 0) {
			/* already registered by a built-in: keep the built-in */
			(*skipped)++;
			if (reg->nprotos == before)
				dlclose(h);
			continue;
		}
		for (uint16_t i = before; i < reg->nprotos; i++)
			reg->proto[i].origin = "plugin";
		(*loaded)++;
		/* the handle stays open for the life of the process */
	}
	closedir(dp);
	return rc;
}

/* ---- attribute names ---- */

unsigned isp_edit_distance(const char *a, const char *b)
{
	/* Hints take distances up to 3, so only the band |i - j| <= 3 of the
	 * table is computed (a cell outside it is at least 4): a config of
	 * many unknown words is refused as quickly as one. */
	enum { FAR = 4 };
	size_t la = strlen(a), lb = strlen(b);
	unsigned rows[2][64], *prev = rows[0], *cur = rows[1];

	if (la >= 63 || lb >= 63 || la >= lb + FAR || lb >= la + FAR)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j < FAR ? (unsigned)j : FAR;
	for (size_t i = 1; i <= la; i++) {
		size_t lo = i > FAR - 1 ? i - (FAR - 1) : 1;
		size_t hi = i + (FAR - 1) < lb ? i + (FAR - 1) : lb;
		cur[lo - 1] = lo == 1 && i < FAR ? (unsigned)i : FAR;
		unsigned row_min = cur[lo - 1];
		for (size_t j = lo; j <= hi; j++) {
			unsigned best = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			cur[j] = best < FAR ? best : FAR;
			if (cur[j] < row_min)
				row_min = cur[j];
		}
		if (row_min >= FAR)     /* no later row gets back under it */
			return 99;
		if (hi < lb)
			cur[hi + 1] = FAR;      /* the next row reads it as above */
		unsigned *t = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb] < FAR ? prev[lb] : 99;
}

static void suggest(const struct isp_registry *reg, const char *want,
		    char *out, size_t outlen)
{
	unsigned best = 4;
	char full[128];
	size_t lw = strlen(want);

	out[0] = 0;
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;
		size_t lp = strlen(d->name) + 1;
		for (const struct isp_attr_desc *a = d->attrs; a && a->name; a++) {
			/* a name 4 or more letters longer or shorter is no hint:
			 * not worth writing out */
			size_t lf = lp + strlen(a->name);
			if (lf >= lw + 4 || lw >= lf + 4 || lf >= sizeof(full))
				continue;
			memcpy(full, d->name, lp - 1);
			full[lp - 1] = '.';
			memcpy(full + lp, a->name, lf - lp + 1);
			unsigned dist = isp_edit_distance(want, full);
			if (dist < best) {
				best = dist;
				snprintf(out, outlen, "%s", full);
			}
		}
	}
}

int isp_attr_lookup(const struct isp_registry *reg, const char *name,
		    struct isp_attr_ref *ref, char *err, size_t errlen)
{
	char proto[32];
	const char *dot = strchr(name, '.');

	if (!dot || (size_t)(dot - name) >= sizeof(proto)) {
		snprintf(err, errlen, "'%s' is not an attribute name (proto.attr)", name);
		return -1;
	}
	memcpy(proto, name, (size_t)(dot - name));
	proto[dot - name] = 0;
	if (strcmp(proto, "ipv4") == 0)         /* what people write for MMT's "ip" */
		strcpy(proto, "ip");
	const char *attr = dot + 1;
	unsigned instance = 0;
	if (isdigit((unsigned char)*attr)) {
		char *end;
		unsigned long n = strtoul(attr, &end, 10);
		if (*end != '.' || n == 0 || n > ISP_MAX_LAYERS) {
			snprintf(err, errlen, "'%s': instance must be 1..%d as in proto.N.attr",
				 name, ISP_MAX_LAYERS);
			return -1;
		}
		instance = (unsigned)n;
		attr = end + 1;
	}
	uint16_t id = isp_proto_id(reg, proto);
	if (id != ISP_PROTO_NONE) {
		const struct isp_proto_desc *d = reg->proto[id].desc;
		for (uint16_t i = 0; d->attrs && d->attrs[i].name; i++) {
			if (strcmp(d->attrs[i].name, attr) == 0) {
				ref->proto = id;
				ref->instance = (uint8_t)instance;
				ref->attr = i;
				return 0;
			}
		}
	}
	char hint[128], bare[160];
	snprintf(bare, sizeof(bare), "%s.%s", proto, attr);
	suggest(reg, bare, hint, sizeof(hint));
	if (id == ISP_PROTO_NONE)
		snprintf(err, errlen, "unknown protocol '%s' in '%s'%s%s%s", proto, name,
			 hint[0] ? "; did you mean '" : "", hint, hint[0] ? "'?" : "");
	else
		snprintf(err, errlen, "unknown attribute '%s'%s%s%s", name,
			 hint[0] ? "; did you mean '" : "", hint, hint[0] ? "'?" : "");
	return -1;
}

isp_put_fn isp_attr_put_of(const struct isp_registry *reg, const struct isp_attr_ref *r)
{
	const struct isp_proto_desc *d = reg->proto[r->proto].desc;
	const char *name = d->attrs[r->attr].name;

	for (const struct isp_attr_put *u = d->puts; u && u->name; u++)
		if (strcmp(u->name, name) == 0)
			return u->put;
	return NULL;
}

/* The numbered instances of isp_attr_get (registry.h), and any caller that
 * wants the layer itself. */
const struct isp_layer *isp_attr_layer(const struct isp_packet *p,
				       const struct isp_attr_ref *r)
{
	if (!(p->protos >> r->proto & 1))
		return NULL;
	if (r->instance == 0)
		return &p->layer[p->last[r->proto]];
	/* the dissector does not number layers (few rules ask for one) */
	for (unsigned i = 0, k = 0; i < p->nlayers; i++)
		if (p->layer[i].proto == r->proto && ++k == r->instance)
			return &p->layer[i];
	return NULL;
}

unsigned isp_layer_instance(const struct isp_packet *p, const struct isp_layer *l)
{
	unsigned k = 0;

	for (const struct isp_layer *x = p->layer; x <= l; x++)
		k += x->proto == l->proto;
	return k;
}

const struct isp_layer *isp_layer_before(const struct isp_packet *p,
					 uint16_t proto, unsigned before)
{
	for (int i = (int)before - 1; i >= 0; i--)
		if (p->layer[i].proto == proto)
			return &p->layer[i];
	return NULL;
}

const char *isp_type_name(enum isp_type t)
{
	static const char *const names[ISP_T__COUNT] = {
		[ISP_T_U8] = "u8", [ISP_T_U16] = "u16", [ISP_T_U32] = "u32",
		[ISP_T_U64] = "u64", [ISP_T_IPV4] = "ipv4", [ISP_T_IPV6] = "ipv6",
		[ISP_T_MAC] = "mac", [ISP_T_STRING] = "string",
		[ISP_T_TIMESTAMP] = "timestamp",
	};
	return (unsigned)t < ISP_T__COUNT ? names[t] : "?";
}
