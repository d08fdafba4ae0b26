/*
 * input.c - what a config says about the input (compile.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "../src/core/source.h"

void isp_program_input(struct isp_program *prog, struct isp_source_opts *so)
{
	if (!so->file && !so->iface && !so->udp && !so->dpdk && !so->kafka && prog->input_source) {
		const char *mode = prog->input_mode ? prog->input_mode : "file";
		if (strcmp(mode, "kafka") == 0) {
			size_t n = strlen(prog->input_source) + strlen(prog->input_topic) +
				   (prog->input_group ? strlen(prog->input_group) : 0) + 3;
			free(prog->input_kafka);
			if ((prog->input_kafka = malloc(n)))
				snprintf(prog->input_kafka, n, "%s/%s%s%s", prog->input_source,
					 prog->input_topic, prog->input_group ? "@" : "",
					 prog->input_group ? prog->input_group : "");
			so->kafka = prog->input_kafka;
		} else if (strcmp(mode, "kafka-partials") == 0) {
			/* the merge stage's input (src/cli/merge.c) */
		} else if (strcmp(mode, "live") == 0)
			so->iface = prog->input_source;
		else if (strcmp(mode, "udp") == 0)
			so->udp = prog->input_source;
		else if (strcmp(mode, "dpdk") == 0)     /* MMT-Probe: dpdk-option */
			so->dpdk = prog->input_dpdk ? prog->input_dpdk : prog->input_source;
		else
			so->file = prog->input_source;
	}
	if (!so->filter)
		so->filter = prog->input_filter;
	if (!so->snaplen)
		so->snaplen = prog->input_snaplen;
	if (!so->buffer_mb)
		so->buffer_mb = prog->input_buffer_mb;
	if (!so->timeout_ms)
		so->timeout_ms = prog->input_timeout_ms;
	if (!prog->source_name) {
		/* MMT-Probe's CSV names the input.source (a file or interface) */
		const char *name = so->file ? so->file : so->iface ? so->iface :
				   so->udp ? so->udp : so->dpdk ? "dpdk" : so->kafka ? so->kafka :
				   "intspect";
		prog->source_name = strdup(name);
	}
}

int isp_program_check_live(const struct isp_program *prog, char *err, size_t errlen)
{
	for (unsigned i = 0; i < prog->nchannels; i++) {
		const struct isp_channel_cfg *cc = &prog->channels[i].cfg;
		for (size_t k = 0; prog->channels[i].used && k < cc->nkv; k++) {
			if (strcmp(cc->kv[k].key, "drop-policy") == 0 &&
			    strcmp(cc->kv[k].value, "block") == 0) {
				snprintf(err, errlen, "%s:%d:%d: drop-policy = block is for capture "
					 "files: on a live input it would lose packets instead of "
					 "records", cc->file ? cc->file : "config", cc->kv[k].line,
					 cc->kv[k].col);
				return -1;
			}
		}
	}
	return 0;
}
