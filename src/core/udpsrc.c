/*
 * udpsrc.c - see udpsrc.h.
 */
#include "udpsrc.h"
#include "source.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define HEADROOM 28             /* IPv4 (20) + UDP (8) in front of each datagram */
#define DGRAM_MAX 65536

struct udp_src {
	int fd;
	uint16_t port;
	uint32_t local_addr;    /* host order */
	_Atomic int stop;      /* set from a signal handler or another thread */
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];
	char ctl[BATCH][CMSG_SPACE(sizeof(struct timespec)) + CMSG_SPACE(sizeof(uint32_t))];
	uint8_t *buf;           /* BATCH × (HEADROOM + DGRAM_MAX) */
	unsigned n, next;       /* datagrams in the batch, next to hand out */
	int wake_fd;            /* readable: return idle at once (-1: none) */
	int timeout_ms;
	uint64_t received, dropped;
	uint8_t backlog;        /* at the last refill, in 256ths of the buffer */
};

static int parse_spec(const char *spec, struct sockaddr_in *sa, char *err, size_t errlen)
{
	char host[64] = "0.0.0.0";
	const char *colon = strrchr(spec, ':');
	const char *port = colon ? colon + 1 : spec;

	if (colon) {
		size_t n = (size_t)(colon - spec);
		if (n >= sizeof(host))
			goto bad;
		memcpy(host, spec, n);
		host[n] = 0;
	}
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	if (*port == 0 || *end || p == 0 || p > 65535)
		goto bad;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)p);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "'%s': expected PORT or IPv4:PORT", spec);
	return -1;
}

int udp_src_check_spec(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_in sa;

	return parse_spec(spec, &sa, err, errlen);
}

struct udp_src *udp_src_open(const char *spec, int rcvbuf_mb, bool reuseport, int timeout_ms,
			     char *err, size_t errlen)
{
	struct sockaddr_in sa;
	struct udp_src *u;

	if (parse_spec(spec, &sa, err, errlen) < 0)
		return NULL;
	if (!(u = calloc(1, sizeof(*u))) || !(u->buf = malloc((size_t)BATCH * (HEADROOM + DGRAM_MAX)))) {
		free(u);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	u->fd = -1;
	u->wake_fd = -1;
	u->timeout_ms = timeout_ms > 0 ? timeout_ms : ISP_LIVE_TIMEOUT_MS;
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0)
		goto sys;
	int one = 1;
	if (reuseport)
		setsockopt(u->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	int bytes = (rcvbuf_mb > 0 ? rcvbuf_mb : 32) << 20;
	/* FORCE needs CAP_NET_ADMIN; without it the kernel caps at rmem_max */
	if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) {
		setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
		/* the kernel took what it allows (it reports twice the size
		 * asked, for its bookkeeping): said once, not per worker */
		static atomic_flag said = ATOMIC_FLAG_INIT;
		int got = 0;
		socklen_t gl = sizeof(got);
		if (getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &got, &gl) == 0 && got / 2 < bytes &&
		    !atomic_flag_test_and_set(&said))
			fprintf(stderr, "intspect: note: UDP receive buffer %d KiB, not the %d MiB asked: "
				"the kernel's net.core.rmem_max (raise it, or run as root or with "
				"CAP_NET_ADMIN)\n", got / 2 / 1024, bytes >> 20);
	}
	setsockopt(u->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* wake up to close windows and stop */
	struct timeval tv = { 0, (timeout_ms > 0 ? timeout_ms : ISP_LIVE_TIMEOUT_MS) * 1000 };
	setsockopt(u->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto sys;
	socklen_t sl = sizeof(sa);
	getsockname(u->fd, (struct sockaddr *)&sa, &sl);
	u->port = ntohs(sa.sin_port);
	u->local_addr = ntohl(sa.sin_addr.s_addr);
	for (unsigned i = 0; i < BATCH; i++) {
		u->iov[i].iov_base = u->buf + (size_t)i * (HEADROOM + DGRAM_MAX) + HEADROOM;
		u->iov[i].iov_len = DGRAM_MAX;
	}
	return u;
sys:
	snprintf(err, errlen, "UDP %s: %s", spec, strerror(errno));
	udp_src_close(u);
	return NULL;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static int refill(struct udp_src *u, char *err, size_t errlen)
{
	for (unsigned i = 0; i < BATCH; i++) {
		memset(&u->msg[i].msg_hdr, 0, sizeof(u->msg[i].msg_hdr));
		u->msg[i].msg_hdr.msg_name = &u->from[i];
		u->msg[i].msg_hdr.msg_namelen = sizeof(u->from[i]);
		u->msg[i].msg_hdr.msg_iov = &u->iov[i];
		u->msg[i].msg_hdr.msg_iovlen = 1;
		u->msg[i].msg_hdr.msg_control = u->ctl[i];
		u->msg[i].msg_hdr.msg_controllen = sizeof(u->ctl[i]);
	}
	int flags = MSG_WAITFORONE;
	if (u->wake_fd >= 0) {
		/* wait for a datagram or a wake-up (a control request) */
		struct pollfd p[2] = { { u->fd, POLLIN, 0 }, { u->wake_fd, POLLIN, 0 } };
		int rc = poll(p, 2, u->timeout_ms);
		if (rc < 0 && errno != EINTR) {
			snprintf(err, errlen, "UDP receive: %s", strerror(errno));
			return -1;
		}
		if (p[1].revents & POLLIN) {
			uint64_t v;
			if (read(u->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return -1;
		}
		if (rc <= 0 || !(p[0].revents & POLLIN))
			return atomic_load_explicit(&u->stop, memory_order_relaxed) ? 0 : 2;
		flags = MSG_DONTWAIT;
	}
	int n = recvmmsg(u->fd, u->msg, BATCH, flags, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return atomic_load_explicit(&u->stop, memory_order_relaxed) ? 0 : 2;
		snprintf(err, errlen, "UDP receive: %s", strerror(errno));
		return -1;
	}
	u->n = (unsigned)n;
	u->next = 0;
	u->backlog = 0;
	if (n == BATCH) {
		/* a full batch: more may wait; how much of the buffer is taken
		 * (SO_MEMINFO: allocated against the receive buffer) */
		uint32_t mem[SK_MEMINFO_VARS];
		socklen_t ml = sizeof(mem);
		if (getsockopt(u->fd, SOL_SOCKET, SO_MEMINFO, mem, &ml) == 0 &&
		    mem[SK_MEMINFO_RCVBUF]) {
			uint64_t f = (uint64_t)mem[SK_MEMINFO_RMEM_ALLOC] * 256 / mem[SK_MEMINFO_RCVBUF];
			u->backlog = (uint8_t)(f > 255 ? 255 : f);
		}
	}
	return 1;
}

uint8_t udp_src_backlog(const struct udp_src *u)
{
	return u->backlog;
}

bool udp_src_pending(const struct udp_src *u)
{
	return u->next < u->n;
}

int udp_src_next(struct udp_src *u, const uint8_t **data, uint32_t *caplen,
		 uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen)
{
	/* a stop lets the datagrams of the batch read go through first: they
	 * left the socket, nothing else would count them */
	if (u->next >= u->n) {
		if (atomic_load_explicit(&u->stop, memory_order_relaxed))
			return 0;
		int rc = refill(u, err, errlen);
		if (rc != 1)
			return rc;
	}
	unsigned i = u->next++;
	struct msghdr *h = &u->msg[i].msg_hdr;
	uint32_t len = u->msg[i].msg_len;
	uint8_t *p = (uint8_t *)u->iov[i].iov_base - HEADROOM;
	struct timespec ts = { 0, 0 };

	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_TIMESTAMPNS)
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		else if (c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t drops;
			memcpy(&drops, CMSG_DATA(c), sizeof(drops));
			u->dropped = drops;     /* the kernel's running total */
		}
	}
	if (ts.tv_sec == 0)
		clock_gettime(CLOCK_REALTIME, &ts);
	if (h->msg_flags & MSG_TRUNC)
		len = DGRAM_MAX;        /* cut: the decoders see a short capture */
	/* IPv4 header: version/IHL, TOS 0, total length, DF, TTL 64, UDP */
	memset(p, 0, HEADROOM);
	p[0] = 0x45;
	put16(p + 2, (unsigned)(HEADROOM + len > 65535 ? 65535 : HEADROOM + len));
	p[6] = 0x40;
	p[8] = 64;
	p[9] = 17;
	put32(p + 12, ntohl(u->from[i].sin_addr.s_addr));
	put32(p + 16, u->local_addr);
	put16(p + 20, ntohs(u->from[i].sin_port));
	put16(p + 22, u->port);
	put16(p + 24, (unsigned)(8 + len > 65535 ? 65535 : 8 + len));
	*data = p;
	*caplen = HEADROOM + len;
	*wirelen = (h->msg_flags & MSG_TRUNC) ? HEADROOM + len + 1 : HEADROOM + len;
	*ts_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	u->received++;
	return 1;
}

uint16_t udp_src_port(const struct udp_src *u)
{
	return u->port;
}

void udp_src_set_wake(struct udp_src *u, int fd)
{
	u->wake_fd = fd;
}

void udp_src_stop(struct udp_src *u)
{
	atomic_store_explicit(&u->stop, 1, memory_order_relaxed);
}

void udp_src_stats(const struct udp_src *u, uint64_t *received, uint64_t *dropped)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t ml = sizeof(mem);

	*received = u->received;
	*dropped = u->dropped;
	/* SO_RXQ_OVFL comes with a datagram queued after the drops: drops
	 * that no datagram followed (a burst at the end) are only in the
	 * socket's own counter, the same total */
	if (u->fd >= 0 && getsockopt(u->fd, SOL_SOCKET, SO_MEMINFO, mem, &ml) == 0 &&
	    ml > SK_MEMINFO_DROPS * sizeof(mem[0]) && mem[SK_MEMINFO_DROPS] > *dropped)
		*dropped = mem[SK_MEMINFO_DROPS];
}

void udp_src_close(struct udp_src *u)
{
	if (!u)
		return;
	if (u->fd >= 0)
		close(u->fd);
	free(u->buf);
	free(u);
}
