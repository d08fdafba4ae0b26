/*
 * server.h - the control socket (README.md in this folder): a Unix stream
 * socket (mode 0600) and optionally a TCP port that needs a token;
 * newline-delimited JSON requests, one response line each, served by one
 * thread. Every error is a response, never a dropped connection.
 */
#ifndef ISP_CONTROL_SERVER_H
#define ISP_CONTROL_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct isp_ctl_server_cfg {
	const char *path;       /* Unix socket; NULL: none */
	const char *tcp;        /* "[HOST:]PORT" (HOST default 127.0.0.1); NULL: none */
	const char *token;      /* required on TCP */
};

/* A request (a JSON object with "cmd", the token checked and removed):
 * the response, one JSON object as text without a newline (malloc'd; the
 * server frees it), or NULL when out of memory. Text rather than a tree:
 * a large response (get) is spliced, never parsed and written again. */
typedef char *(*isp_ctl_handler)(void *ctx, json_t *req);

struct isp_ctl_server;

/* Listen and serve on a thread of its own; NULL with a message. A Unix
 * path a running process answers on is refused; a stale one replaced. */
struct isp_ctl_server *isp_ctl_server_start(const struct isp_ctl_server_cfg *cfg,
					    isp_ctl_handler handler, void *ctx, char *err,
					    size_t errlen);
/* The TCP port bound (0: none), for a configured port 0. */
unsigned isp_ctl_server_port(const struct isp_ctl_server *s);
/* From a signal handler (SIGHUP): the server's thread runs the handler on
 * {"cmd":"reload"} (its response goes to stderr when refused). */
void isp_ctl_server_hup(struct isp_ctl_server *s);

/* Stop serving, close every connection, remove the socket file. */
void isp_ctl_server_stop(struct isp_ctl_server *s);

/* An error response: {"ok":false,"error":MESSAGE}. */
json_t *isp_ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A response tree as text, the tree freed (NULL: out of memory). */
char *isp_ctl_text(json_t *resp);

#endif
