/*
 * udpsrc.h - a UDP socket that receives telemetry reports the way a
 * collector does: no root, recvmmsg batches, a large receive buffer,
 * kernel timestamps, and the kernel's drop counter (SO_RXQ_OVFL).
 *
 * Each datagram is handed on behind a synthesized IPv4 + UDP header
 * (sender address and port, our address and port), so the same plugin
 * chain decodes it as it would a captured report: ip.1.src is the sender.
 */
#ifndef ISP_UDPSRC_H
#define ISP_UDPSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct udp_src;

/* "PORT" or "ADDR:PORT" (IPv4). NULL with a message in err. reuseport lets
 * several sockets share the port (one per worker). */
struct udp_src *udp_src_open(const char *spec, int rcvbuf_mb, bool reuseport, int timeout_ms,
			     char *err, size_t errlen);

/* Whether spec ("PORT" or "IPv4:PORT") is one udp_src_open takes: 0, or
 * -1 with a message (nothing opened). */
int udp_src_check_spec(const char *spec, char *err, size_t errlen);

/* 1: a datagram (data valid until the next call), 2: nothing within the
 * read timeout, 0: stopped, -1: error. */
int udp_src_next(struct udp_src *u, const uint8_t **data, uint32_t *caplen,
		 uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen);

uint16_t udp_src_port(const struct udp_src *u);
void udp_src_stop(struct udp_src *u);
/* A file descriptor that, readable, ends a wait for datagrams at once
 * (returning 2); it is read then. -1: none. */
void udp_src_set_wake(struct udp_src *u, int fd);
/* Datagrams received, and dropped by the kernel for lack of buffer. */
void udp_src_stats(const struct udp_src *u, uint64_t *received, uint64_t *dropped);
void udp_src_close(struct udp_src *u);

/* The socket's backlog when the current batch was read, in 256ths of its
 * receive buffer; 0 when the batch was not full (nothing waits). */
uint8_t udp_src_backlog(const struct udp_src *u);
/* Datagrams read from the socket and not handed out yet (a stop hands
 * them out first). */
bool udp_src_pending(const struct udp_src *u);

#endif
