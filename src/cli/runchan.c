/*
 * runchan.c - the channels of a run (runchan.h): opened from a program,
 * their counters printed, closed with their losses counted.
 */
#include "runchan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct isp_channel **cli_open_channels(const struct isp_program *prog)
{
	char err[512];
	struct isp_channel **channels = calloc(prog->nchannels ? prog->nchannels : 1,
					       sizeof(*channels));

	isp_channels_init();
	if (!channels)
		return NULL;
	for (unsigned i = 0; i < prog->nchannels; i++) {
		if (!prog->channels[i].used)
			continue;
		struct isp_channel_cfg cfg = prog->channels[i].cfg;
		int pos[2] = { 0, 0 };

		cfg.err_pos = pos;
		channels[i] = isp_channel_open(&cfg, err, sizeof(err));
		if (!channels[i]) {
			/* "file:line:col: error: ..." as the compiler's messages */
			const char *file = cfg.file ? cfg.file : "config";
			int skip = pos[0] > 0 ? snprintf(NULL, 0, "%s:%d:%d: ", file, pos[0], pos[1]) :
				   snprintf(NULL, 0, "%s: ", file);
			if (skip > 0 && (size_t)skip <= strlen(err))
				fprintf(stderr, "%.*serror: %s\n", skip, err, err + skip);
			else
				fprintf(stderr, "%s\n", err);
			for (unsigned k = 0; k < i; k++)
				if (channels[k])
					isp_channel_close(channels[k]);
			free(channels);
			return NULL;
		}
	}
	return channels;
}

void cli_print_channels(const struct isp_program *prog, struct isp_channel *const *channels)
{
	for (unsigned i = 0; prog && channels && i < prog->nchannels; i++) {
		if (!channels[i])
			continue;
		struct isp_channel_stats st;
		isp_channel_get_stats(channels[i], &st);
		fprintf(stderr, "intspect: channel %s: %llu records queued, %llu delivered, "
			"%llu dropped, %llu retried, %llu reconnects, %llu acknowledged\n",
			isp_channel_name(channels[i]),
			(unsigned long long)st.queued, (unsigned long long)st.delivered,
			(unsigned long long)st.dropped, (unsigned long long)st.retried,
			(unsigned long long)st.reconnects, (unsigned long long)st.acked);
	}
}

/* Stop every channel at once (deadlines run in parallel), wait for them,
 * print what each delivered and lost, free. Returns how many enabled
 * channels lost records or never reached their service (each said). */
unsigned cli_close_channels(const struct isp_program *prog, struct isp_channel **channels)
{
	unsigned lossy = 0;

	if (!prog || !channels)
		return 0;
	for (unsigned i = 0; i < prog->nchannels; i++)
		if (channels[i])
			isp_channel_shutdown(channels[i]);
	for (unsigned i = 0; i < prog->nchannels; i++)
		if (channels[i])
			isp_channel_drain(channels[i]);
	cli_print_channels(prog, channels);
	for (unsigned i = 0; i < prog->nchannels; i++) {
		struct isp_channel_stats st;

		if (!channels[i] || !isp_channel_enabled(channels[i]))
			continue;       /* enable = false drops by request */
		isp_channel_get_stats(channels[i], &st);
		if (isp_channel_never_connected(channels[i])) {
			/* (a socket or InfluxDB channel says why at its close) */
			if (!isp_channel_says_never_connected(channels[i]))
				fprintf(stderr, "intspect: channel %s: never connected\n",
					isp_channel_name(channels[i]));
			lossy++;
		} else if (st.dropped) {
			lossy++;
		}
	}
	for (unsigned i = 0; i < prog->nchannels; i++)
		if (channels[i])
			isp_channel_close(channels[i]);
	free(channels);
	return lossy;
}

unsigned cli_channels_mark(const struct isp_program *prog, struct isp_channel *const *channels,
			   uint64_t *mark, unsigned max)
{
	unsigned n = prog && channels ? prog->nchannels : 0;

	for (unsigned i = 0; i < n && i < max; i++) {
		struct isp_channel_stats st = { 0 };
		if (channels[i])
			isp_channel_get_stats(channels[i], &st);
		mark[i] = st.queued;
	}
	return n < max ? n : max;
}

bool cli_channels_settled(const struct isp_program *prog, struct isp_channel *const *channels,
			  const uint64_t *mark, unsigned n)
{
	for (unsigned i = 0; prog && channels && i < n && i < prog->nchannels; i++) {
		struct isp_channel_stats st;
		if (!channels[i])
			continue;
		isp_channel_get_stats(channels[i], &st);
		/* a Kafka channel moves a failed record from delivered to
		 * dropped: settled once acknowledged */
		bool kafka = strcmp(prog->channels[i].cfg.type, "kafka") == 0;
		uint64_t done = (kafka ? st.acked : st.delivered) + st.dropped;
		if (done < mark[i])
			return false;
	}
	return true;
}
