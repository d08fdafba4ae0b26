/*
 * tcfg.c - output sections from strings for the tests (tcfg.h).
 */
#include "tcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXKV 16

struct isp_channel *tcfg_open(const char *type, const char *const *kvs,
			      char *err, size_t errlen)
{
	struct isp_kv kv[MAXKV];
	char buf[MAXKV][512];
	size_t n = 0;

	for (; kvs && kvs[n]; n++) {
		char *eq;

		if (n == MAXKV)
			abort();
		snprintf(buf[n], sizeof(buf[n]), "%s", kvs[n]);
		eq = strchr(buf[n], '=');
		if (!eq)
			abort();
		*eq = '\0';
		kv[n] = (struct isp_kv){ buf[n], eq + 1, (int)n + 2, 3 };
	}

	struct isp_channel_cfg cfg = {
		.name = "t", .type = type, .kv = kv, .nkv = n,
		.file = "test.conf", .line = 1, .col = 1,
	};

	err[0] = '\0';
	return isp_channel_open(&cfg, err, errlen);
}
