/*
 * sockutil.h - what the socket channel's Check tests share (check_socket.c,
 * check_socket_mmt.c, one program): a temporary directory for Unix
 * sockets, records into a channel and the text expected out of it, and
 * readers on loopback, each failing the test (ck_assert) when the system
 * refuses.
 */
#ifndef ISP_TEST_SOCKUTIL_H
#define ISP_TEST_SOCKUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../../outputs/channel.h"

extern char err[1024];                  /* the last open's message */
extern char dir[64], sock_path[96];     /* per test: a directory, a socket name in it */

void setup(void);
void teardown(void);
void sleep_ms(unsigned ms);
double now_s(void);                     /* CLOCK_MONOTONIC, seconds */

/* A channel "t" of type socket with keys "key=value" (tcfg.h positions);
 * fails the test when it does not open. */
struct isp_channel *must_open(const char *const *kvs);
void put(struct isp_channel *ch, const char *text, size_t len);
/* Records {"rec":i} for i in [from, to). */
void put_n(struct isp_channel *ch, int from, int to);
/* The lines put_n sends, newlines included (a static buffer). */
char *expect_n(int from, int to);
struct isp_channel_stats stats(const struct isp_channel *ch);
/* Until delivered >= n, at most 5 s. */
bool wait_delivered(const struct isp_channel *ch, uint64_t n);

/* Readers: a TCP listener on 127.0.0.1 (port chosen by the kernel), a UDP
 * receiver (port 0: any), the port of a UDP socket, a Unix socket bound at
 * sock_path (listening for a stream one). */
int tcp_listener(int *port);
int udp_receiver(int port);
int udp_port(int fd);
int unix_socket(int type, bool listening);
int accept_within(int lfd, int ms);
/* Up to `want` bytes or what came within `ms`, NUL-terminated (malloc'd). */
char *read_stream(int fd, size_t want, int ms);
/* `n` datagrams or what came within `ms`, concatenated (a static buffer). */
char *read_dgrams(int fd, int n, int ms);

/* check_socket_mmt.c: MMT-Probe's words (BOTH, type names, server-address)
 * and check mode. */
void socket_mmt_tests(TCase *tc);

#endif
