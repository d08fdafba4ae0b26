/*
 * dta_send.c - the live DTA reporter (see dta_send.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "dta_send.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HISTORY 256u            /* one per sequence number */
#define RESEND_MAX 127u         /* reports a NACK sends again, at most */
#define NACK_MAX 64u            /* bytes read of a NACK datagram */
#define NACK_FLAG 0x80
#define NACK_FLAG_SKETCH 0x40
#define ALL_REPORTERS (~0u)

/* A report as sent, kept for retransmission. */
struct hist {
	uint64_t number;        /* the reporter's report number */
	bool valid;
	uint8_t opcode;
	uint16_t sketch, epoch, column, columns;
	size_t len, cap;
	uint8_t *bytes;
};

struct reporter {
	int fd;                 /* sends this reporter's reports */
	uint64_t top;           /* 1 + the highest report number recorded */
	struct hist h[HISTORY];
};

struct dta_sender {
	const struct ig_config *cfg;
	struct sockaddr_in dst;
	bool loopback;
	unsigned nrep;
	struct reporter *rep;
	struct pollfd *pfd;     /* the NACK sockets */
	unsigned *pfd_rep;      /* reporter of each, or ALL_REPORTERS */
	unsigned npfd;
	uint64_t t0, step_ns, first_sent;
	struct dta_send_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* HOST[:PORT]; the port defaults to --dta-port. */
static int resolve(struct dta_sender *s, const char *spec)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	unsigned port = s->cfg->dta.port;
	struct addrinfo hints, *res;

	if (n >= sizeof(host)) {
		fprintf(stderr, "intgen: --send: host name too long\n");
		return -1;
	}
	memcpy(host, spec, n);
	host[n] = 0;
	if (colon)
		port = (unsigned)strtoul(colon + 1, NULL, 10); /* checked by dta_opts.c */
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_DGRAM;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		fprintf(stderr, "intgen: --send %s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	memcpy(&s->dst, res->ai_addr, sizeof(s->dst));
	freeaddrinfo(res);
	s->dst.sin_port = htons((uint16_t)port);
	s->loopback = (ntohl(s->dst.sin_addr.s_addr) >> 24) == 127;
	return 0;
}

/* Two sockets per reporter on loopback: ask for the hard limit if the
 * soft one is too low (it is 1024 on many systems). */
static void raise_fd_limit(unsigned need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int udp_socket(uint32_t addr, uint16_t port, bool nonblock,
		      const char *what)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		fprintf(stderr, "intgen: socket: %s\n", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(addr);
	sa.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (nonblock && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))) {
		char txt[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &sa.sin_addr, txt, sizeof(txt));
		fprintf(stderr, "intgen: %s %s:%u: %s\n", what, txt, port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct dta_sender *dta_send_open(const struct ig_config *cfg)
{
	struct dta_sender *s = calloc(1, sizeof(*s));
	unsigned n = cfg->dta.reporters;

	if (!s)
		return NULL;
	s->cfg = cfg;
	s->nrep = n;
	s->step_ns = (uint64_t)(1e9 / cfg->pps + 0.5);
	s->rep = calloc(n, sizeof(*s->rep));
	s->pfd = calloc(n, sizeof(*s->pfd));
	s->pfd_rep = calloc(n, sizeof(*s->pfd_rep));
	if (!s->rep || !s->pfd || !s->pfd_rep) {
		fprintf(stderr, "intgen: out of memory\n");
		goto fail;
	}
	for (unsigned r = 0; r < n; r++)
		s->rep[r].fd = -1;
	if (resolve(s, cfg->dta.send))
		goto fail;
	raise_fd_limit(2 * n + 16);
	for (unsigned r = 0; r < n; r++) {
		/* Linux routes all of 127/8 to lo: each reporter gets an
		 * address of its own, and with it its own NACK port. */
		uint32_t a = s->loopback ? 0x7F000000u + r + 2 : INADDR_ANY;

		s->rep[r].fd = udp_socket(a, 0, false, "reporter socket");
		if (s->rep[r].fd < 0)
			goto fail;
		if (!s->loopback && r > 0)
			continue; /* one shared NACK socket, opened for r = 0 */
		int nfd = udp_socket(a, cfg->dta.nack_port, true, "NACK socket");
		if (nfd < 0)
			goto fail;
		s->pfd[s->npfd].fd = nfd;
		s->pfd[s->npfd].events = POLLIN;
		s->pfd_rep[s->npfd++] = s->loopback ? r : ALL_REPORTERS;
	}
	return s;
fail:
	dta_send_close(s, NULL);
	return NULL;
}

static int send_bytes(struct dta_sender *s, unsigned r, const uint8_t *p,
		      size_t len)
{
	for (;;) {
		ssize_t n = sendto(s->rep[r].fd, p, len, 0,
				   (const struct sockaddr *)&s->dst, sizeof(s->dst));
		if (n >= 0)
			return 0;
		if (errno == EINTR)
			continue;
		/* The kernel had no buffer for it: a loss like any other,
		 * which NACKs repair. */
		if (errno == ENOBUFS || errno == EAGAIN)
			return 0;
		fprintf(stderr, "intgen: send: %s\n", strerror(errno));
		return -1;
	}
}

static int resend(struct dta_sender *s, unsigned r, const struct hist *h)
{
	s->st.retransmitted++;
	return send_bytes(s, r, h->bytes, h->len);
}

/* Go-back-N: every report after the one whose sequence number is seq.
 * The named report is the latest with that number (the collector cannot
 * be a whole sequence space behind); a NACK naming no report of the last
 * 256 (nothing received yet) resends what the history holds. At most the
 * last RESEND_MAX go again: an older one is more than half the 8-bit
 * space behind the newest, where a collector would take it for new. */
static int nack_seq(struct dta_sender *s, unsigned r, uint8_t seq)
{
	struct reporter *rp = &s->rep[r];

	if (!rp->top)
		return 0;
	uint64_t last = rp->top - 1;
	uint64_t back = (uint8_t)(last - seq);
	uint64_t from = back > last ? 0 : last - back + 1;

	if (rp->top > RESEND_MAX && from < rp->top - RESEND_MAX)
		from = rp->top - RESEND_MAX;
	for (uint64_t n = from; n <= last; n++) {
		const struct hist *h = &rp->h[n % HISTORY];
		/* a report held back by --dta-reorder is not sent yet */
		if (h->valid && h->number == n && resend(s, r, h))
			return -1;
	}
	return 0;
}

/* Sketch-Merge: the named sketch/reporter/epoch from column col on. */
static int nack_sketch(struct dta_sender *s, unsigned r, uint16_t sketch,
		       uint16_t epoch, uint16_t col)
{
	struct reporter *rp = &s->rep[r];
	uint64_t from = rp->top > HISTORY ? rp->top - HISTORY : 0;

	for (uint64_t n = from; n < rp->top; n++) {
		const struct hist *h = &rp->h[n % HISTORY];

		if (h->valid && h->number == n && h->opcode == DTA_OP_SKETCH &&
		    h->sketch == sketch && h->epoch == epoch &&
		    (uint32_t)h->column + h->columns > col && resend(s, r, h))
			return -1;
	}
	return 0;
}

static int handle_nack(struct dta_sender *s, unsigned who, const uint8_t *b,
		       size_t n)
{
	if (n < 2 || !(b[1] & NACK_FLAG)) {
		s->st.bad_nacks++;
		return 0;
	}
	if (b[1] & NACK_FLAG_SKETCH) {
		unsigned r = n >= 10 ? (unsigned)(b[4] << 8 | b[5]) : s->nrep;

		if (r >= s->nrep || (who != ALL_REPORTERS && who != r)) {
			s->st.bad_nacks++;
			return 0;
		}
		s->st.nacks++;
		return nack_sketch(s, r, (uint16_t)(b[2] << 8 | b[3]),
				   (uint16_t)(b[6] << 8 | b[7]),
				   (uint16_t)(b[8] << 8 | b[9]));
	}
	s->st.nacks++;
	if (who != ALL_REPORTERS)
		return nack_seq(s, who, b[0]);
	/* Off loopback every reporter shares the address the NACK came to,
	 * so it cannot say whose sequence it names: all of them resend. */
	for (unsigned r = 0; r < s->nrep; r++)
		if (nack_seq(s, r, b[0]))
			return -1;
	return 0;
}

/* Wait up to timeout_ms for NACKs and answer all that arrived. Returns
 * the number of datagrams read, or -1 on an error. */
static int serve(struct dta_sender *s, int timeout_ms)
{
	uint8_t b[NACK_MAX];
	int got = 0;

	int rc = poll(s->pfd, s->npfd, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -1;
	for (unsigned i = 0; rc > 0 && i < s->npfd; i++) {
		if (!(s->pfd[i].revents & POLLIN))
			continue;
		for (;;) {
			ssize_t n = recv(s->pfd[i].fd, b, sizeof(b), 0);
			if (n < 0)
				break; /* EAGAIN: drained */
			got++;
			if (handle_nack(s, s->pfd_rep[i], b, (size_t)n))
				return -1;
		}
	}
	return got;
}

static void remember(struct dta_sender *s, const struct dta_report *rep,
		     const uint8_t *p, size_t len)
{
	struct reporter *rp = &s->rep[rep->reporter];
	struct hist *h = &rp->h[rep->number % HISTORY];

	if (h->cap < len) {
		uint8_t *nb = realloc(h->bytes, len);
		if (!nb) {
			h->valid = false; /* cannot resend it: a NACK skips it */
			return;
		}
		h->bytes = nb;
		h->cap = len;
	}
	memcpy(h->bytes, p, len);
	h->len = len;
	h->number = rep->number;
	h->valid = true;
	h->opcode = rep->opcode;
	h->sketch = rep->sketch;
	h->epoch = rep->epoch;
	h->column = rep->column;
	h->columns = rep->columns;
	if (rep->number >= rp->top)
		rp->top = rep->number + 1;
}

int dta_send_first(struct dta_sender *s, const struct dta_report *rep,
		   const uint8_t *p, size_t len, bool lost)
{
	remember(s, rep, p, len);
	if (lost)
		return 0;
	if (!s->first_sent)
		s->t0 = now_ns();
	uint64_t due = s->t0 + s->first_sent * s->step_ns;

	if (serve(s, 0) < 0)
		return -1;
	for (;;) {
		uint64_t now = now_ns();
		if (now >= due)
			break;
		uint64_t left = due - now;
		if (left < 2000000u) {
			sleep_until(due);
			break;
		}
		if (serve(s, (int)(left / 1000000u) - 1) < 0)
			return -1;
	}
	s->first_sent++;
	return send_bytes(s, rep->reporter, p, len);
}

int dta_send_linger(struct dta_sender *s)
{
	uint64_t linger = (uint64_t)s->cfg->dta.linger_ms * 1000000u;
	uint64_t last = now_ns();

	for (;;) {
		uint64_t now = now_ns();
		if (now - last >= linger)
			return 0;
		int rc = serve(s, (int)((last + linger - now + 999999u) / 1000000u));
		if (rc < 0)
			return -1;
		if (rc > 0)
			last = now_ns();
	}
}

void dta_send_close(struct dta_sender *s, struct dta_send_stats *st)
{
	if (!s)
		return;
	if (st)
		*st = s->st;
	for (unsigned i = 0; i < s->npfd; i++)
		close(s->pfd[i].fd);
	if (s->rep)
		for (unsigned r = 0; r < s->nrep; r++) {
			if (s->rep[r].fd >= 0)
				close(s->rep[r].fd);
			for (unsigned i = 0; i < HISTORY; i++)
				free(s->rep[r].h[i].bytes);
		}
	free(s->rep);
	free(s->pfd);
	free(s->pfd_rep);
	free(s);
}
