/*
 * ctl.c - intspect-ctl, the control socket's client: one request from the
 * command line, its response as a table (or as JSON with --json). The
 * protocol is src/control/README.md.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"

static void usage(FILE *out)
{
	fprintf(out,
"Usage: intspect-ctl [-s PATH | -t [HOST:]PORT -k TOKEN] [--json] COMMAND [ARGS]\n"
"Steer a running intspect through its control socket.\n"
"\n"
"  -s, --socket PATH     the Unix socket (default: $INTSPECT_CONTROL, else\n"
"                        /run/intspect/control.sock as root, $XDG_RUNTIME_DIR/\n"
"                        intspect.sock or /tmp/intspect-UID.sock otherwise)\n"
"  -t, --tcp [HOST:]PORT the TCP control port (HOST default 127.0.0.1)\n"
"  -k, --token TOKEN     its token (default: $INTSPECT_TOKEN)\n"
"  -j, --json            print the response as it came, one JSON line\n"
"  -h, --help            this help\n"
"  -V, --version         print the version\n"
"\n"
"Commands:\n"
"  stats                      every counter: packets, decoded, malformed, workers,\n"
"                             rules, flow monitors, channels\n"
"  rules                      the rules, enabled or not, with their counters\n"
"  enable RULE, disable RULE  run a rule, or stop running it\n"
"  reset MONITOR              forget every flow of a flow monitor (removed ones too)\n"
"  set-sampling MONITOR RATIO the share of new flows monitored (0 < RATIO <= 1)\n"
"  set-interval MONITOR MS    query-interval, from the next interval on\n"
"  set-overflow MONITOR N     overflow-threshold (0: off)\n"
"  entry-add MONITOR VALUE... monitor a flow (one value per match attribute;\n"
"                             a per-hop one as 1,2,3)\n"
"  entry-remove MONITOR VALUE...  stop monitoring a flow, and keep it out\n"
"  get MONITOR [VALUE...]     the flows' counters and buffers now (one flow\n"
"                             with its values)\n"
"  monitor-add MONITOR 'KEYS' a flow monitor more, its section's keys as in a\n"
"                             config file: 'match = {\"ip.src\"}; sampling = 0.5'\n"
"  monitor-remove MONITOR     a flow monitor less (what it holds written first)\n"
"  dta get STORE KEY...       a Key-Write store's value (a DTA report's key is a\n"
"                             number; a rule-fed store's, one value per key attribute)\n"
"  dta poll STORE LIST [CURSOR [MAX]]  an Append list's entries from CURSOR on\n"
"                             (0: the oldest kept), the next cursor and what was lost\n"
"  dta estimate STORE KEY [EPOCH]  a Key-Increment or count-min/count-sketch\n"
"                             Sketch-Merge store's estimate (EPOCH: the newest)\n"
"  dta cardinality STORE [EPOCH]   an hll Sketch-Merge store's distinct keys\n"
"  dta info STORE             a store's counters and file\n"
"  reload                     read the config file again and swap the rules\n"
"                             (unchanged ones keep their state)\n"
"  help                       the commands the server knows\n"
"\n"
"Exit status: 0 done; 1 the server refused the request (its message on\n"
"stderr); 2 bad usage, or no server.\n");
}

static int connect_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "intspect-ctl: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "intspect-ctl: %s: %s (is intspect running with a control "
			"socket there?)\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int connect_tcp(const char *spec)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(spec, ':');
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd;

	if (colon && (size_t)(colon - spec) < sizeof(host)) {
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
	}
	const char *port = colon ? colon + 1 : spec;
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	a.sin_port = htons((uint16_t)p);
	if (!isdigit((unsigned char)*port) || *end || p == 0 || p > 65535 ||
	    inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "intspect-ctl: --tcp %s: expected [IPv4-ADDRESS:]PORT\n", spec);
		return -1;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "intspect-ctl: %s: %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static const char *default_socket(char *buf, size_t n)
{
	const char *env = getenv("INTSPECT_CONTROL"), *xdg = getenv("XDG_RUNTIME_DIR");

	if (env && *env)
		return env;
	if (geteuid() == 0)
		return "/run/intspect/control.sock";
	if (xdg && *xdg)
		snprintf(buf, n, "%s/intspect.sock", xdg);
	else
		snprintf(buf, n, "/tmp/intspect-%u.sock", (unsigned)geteuid());
	return buf;
}

/* The request of a command line; NULL after a message. */
static json_t *request(int argc, char **argv)
{
	static const struct {
		const char *cmd;
		int args;               /* -1: a name and values */
		const char *number;     /* the second argument's key */
	} forms[] = {
		{ "stats", 0, NULL }, { "rules", 0, NULL }, { "help", 0, NULL },
		{ "reload", 0, NULL }, { "monitor-add", 2, NULL }, { "monitor-remove", 1, NULL },
		{ "enable", 1, NULL }, { "disable", 1, NULL }, { "reset", 1, NULL },
		{ "set-sampling", 2, "ratio" }, { "set-interval", 2, "ms" },
		{ "set-overflow", 2, "threshold" }, { "entry-add", -1, NULL },
		{ "entry-remove", -1, NULL }, { "get", -1, NULL },
	};
	const char *cmd = argv[0];

	if (strcmp(cmd, "dta") == 0) {
		/* dta OP STORE [ARGS...] */
		if (argc < 3) {
			fprintf(stderr, "intspect-ctl: dta OP STORE [ARGS] (see --help)\n");
			return NULL;
		}
		json_t *q = json_pack("{s:s,s:s,s:s}", "cmd", cmd, "op", argv[1], "store", argv[2]);
		json_t *a = json_array();
		for (int k = 3; k < argc; k++)
			json_array_append_new(a, json_string(argv[k]));
		json_object_set_new(q, "args", a);
		return q;
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (strcmp(cmd, forms[i].cmd) != 0)
			continue;
		int want = forms[i].args;
		if ((want >= 0 && argc - 1 != want) || (want < 0 && argc < 2) ||
		    (want < 0 && strcmp(cmd, "get") && argc < 3)) {
			fprintf(stderr, "intspect-ctl: %s: wrong number of arguments (see --help)\n",
				cmd);
			return NULL;
		}
		json_t *q = json_pack("{s:s}", "cmd", cmd);
		if (argc > 1)
			json_object_set_new(q, "name", json_string(argv[1]));
		if (strcmp(cmd, "monitor-add") == 0)
			json_object_set_new(q, "section", json_string(argv[2]));
		if (forms[i].number) {
			char *end;
			double d = strtod(argv[2], &end);
			if (end == argv[2] || *end) {
				fprintf(stderr, "intspect-ctl: %s: '%s' is not a number\n", cmd, argv[2]);
				json_decref(q);
				return NULL;
			}
			json_object_set_new(q, forms[i].number, json_real(d));
		}
		if (want < 0 && argc > 2) {
			json_t *key = json_array();
			for (int k = 2; k < argc; k++)
				json_array_append_new(key, json_string(argv[k]));
			json_object_set_new(q, "key", key);
		}
		return q;
	}
	/* a command this client does not know may be the server's */
	if (argc == 1)
		return json_pack("{s:s}", "cmd", cmd);
	fprintf(stderr, "intspect-ctl: unknown command '%s' (see --help)\n", cmd);
	return NULL;
}

/* ---- tables ---- */

static void scalar(const json_t *v)
{
	if (json_is_string(v))
		fputs(json_string_value(v), stdout);
	else if (json_is_integer(v))
		printf("%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		printf("%g", json_real_value(v));
	else if (json_is_true(v))
		fputs("yes", stdout);
	else if (json_is_false(v))
		fputs("no", stdout);
	else if (json_is_null(v))
		fputs("-", stdout);
	else {
		char *t = json_dumps(v, JSON_COMPACT);
		fputs(t ? t : "?", stdout);
		free(t);
	}
}

/* An array of objects: one row each, the keys of every object as columns
 * in the order they first appear ("-" where a row has none), tab-separated
 * so that `column -t` or awk read it. */
static void table(const char *title, const json_t *a)
{
	const char *cols[64] = { NULL }, *k;
	unsigned ncols = 0;
	json_t *v, *row;
	size_t i;

	if (title)
		printf("%s:\n", title);
	if (!json_is_object(json_array_get(a, 0))) {
		json_array_foreach(a, i, v) {
			scalar(v);
			putchar('\n');
		}
		return;
	}
	json_array_foreach(a, i, row) {
		json_object_foreach(row, k, v) {
			unsigned c = 0;
			while (c < ncols && strcmp(cols[c], k) != 0)
				c++;
			if (c == ncols && ncols < sizeof(cols) / sizeof(cols[0]))
				cols[ncols++] = k;
		}
	}
	for (unsigned c = 0; c < ncols; c++)
		printf("%s%s", c ? "\t" : "", cols[c]);
	putchar('\n');
	json_array_foreach(a, i, row) {
		for (unsigned c = 0; c < ncols; c++) {
			if (c)
				putchar('\t');
			v = json_object_get(row, cols[c]);
			if (v)
				scalar(v);
			else
				putchar('-');
		}
		putchar('\n');
	}
}

static void print_table(const json_t *resp)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)resp, k, v) {
		if (strcmp(k, "ok") == 0 || json_is_array(v))
			continue;
		if (json_is_object(v)) {
			const char *k2;
			json_t *v2;
			json_object_foreach(v, k2, v2) {
				printf("%s.%s\t", k, k2);
				scalar(v2);
				putchar('\n');
			}
			continue;
		}
		printf("%s\t", k);
		scalar(v);
		putchar('\n');
	}
	json_object_foreach((json_t *)resp, k, v)
		if (json_is_array(v) && json_array_size(v))
			table(k, v);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' }, { "tcp", required_argument, NULL, 't' },
		{ "token", required_argument, NULL, 'k' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *tcp = NULL, *token = getenv("INTSPECT_TOKEN");
	bool raw = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "+s:t:k:jhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 't': tcp = optarg; break;
		case 'k': token = optarg; break;
		case 'j': raw = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("intspect-ctl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	json_t *q = request(argc - optind, argv + optind);
	if (!q)
		return 2;
	if (tcp && token)
		json_object_set_new(q, "token", json_string(token));
	char buf[256];
	int fd = tcp ? connect_tcp(tcp) : connect_unix(path ? path : default_socket(buf, sizeof(buf)));
	if (fd < 0) {
		json_decref(q);
		return 2;
	}
	char *line = json_dumps(q, JSON_COMPACT);
	json_decref(q);
	size_t n = line ? strlen(line) : 0;
	if (!line || write(fd, line, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
		fprintf(stderr, "intspect-ctl: sending the request: %s\n", strerror(errno));
		free(line);
		close(fd);
		return 2;
	}
	free(line);
	/* the response: one line */
	size_t len = 0, cap = 1 << 16;
	char *resp = malloc(cap);
	for (ssize_t r; resp && (r = read(fd, resp + len, cap - len - 1)) > 0;) {
		len += (size_t)r;
		if (memchr(resp + len - (size_t)r, '\n', (size_t)r))
			break;
		if (cap - len < 4096) {
			char *grown = realloc(resp, cap *= 2);
			if (!grown)
				break;
			resp = grown;
		}
	}
	close(fd);
	if (!resp || !len) {
		fprintf(stderr, "intspect-ctl: no response\n");
		free(resp);
		return 2;
	}
	resp[len] = 0;
	json_error_t je;
	json_t *o = json_loads(resp, JSON_DISABLE_EOF_CHECK, &je);
	int rc = 0;
	if (!o) {
		fprintf(stderr, "intspect-ctl: the response is not JSON: %s\n", je.text);
		rc = 2;
	} else if (!json_is_true(json_object_get(o, "ok"))) {
		const char *e = json_string_value(json_object_get(o, "error"));
		if (raw)
			fputs(resp, stdout);
		else
			fprintf(stderr, "intspect-ctl: %s\n", e ? e : "refused");
		rc = 1;
	} else if (raw) {
		fputs(resp, stdout);
	} else {
		print_table(o);
	}
	json_decref(o);
	free(resp);
	return rc;
}
