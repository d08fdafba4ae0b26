/*
 * compile.h - the semantic pass and compiler: a parsed config becomes a
 * program (src/filters/program.h). Every error is an error record with the
 * location of what is wrong; the caller prints them.
 */
#ifndef ISP_DSL_COMPILE_H
#define ISP_DSL_COMPILE_H

#include "../src/core/registry.h"
#include "../src/filters/program.h"
#include "ast.h"
#include "diag.h"

/*
 * Compile a config file (and its includes). NULL when any error was
 * recorded. The program keeps the config tree alive (channel configs
 * point into it) and frees it with isp_program_free().
 */
struct isp_program *isp_compile_file(struct dsl_diags *d, const struct isp_registry *reg,
				     const char *path);
/* Hot reload: the file compiled with the attribute slots of base first (a
 * rule that did not change compiles to the same slots, so its state
 * carries over), the sections of each extra text after the file's (flow
 * monitors added through the control socket: pairs of a name, which its
 * messages give as the file, and a text; NULL-ended), and without the flow
 * monitors named in skip (NULL-ended; removed through the control
 * socket). */
struct isp_compile_more {
	const struct isp_program *base;
	const char *const *extra;
	const char *const *skip;
};
struct isp_program *isp_compile_file_on(struct dsl_diags *d, const struct isp_registry *reg,
					const char *path, const struct isp_compile_more *more);
struct isp_program *isp_compile_mem(struct dsl_diags *d, const struct isp_registry *reg,
				    const char *name, const char *text, size_t len);

/*
 * How the compiler checks an output section's own keys: the channel
 * layer's isp_channel_check_at (outputs/channel.h), which runs the type's
 * open in check mode. The program that runs channels sets it once, before
 * compiling, so that -T and a run refuse the same sections in the same
 * words; without it (the fuzzer, unit tests) only the type is checked.
 */
typedef int (*isp_output_check_fn)(const struct isp_channel_cfg *cfg, int pos[2],
				   char *err, size_t errlen);
void isp_compile_set_output_check(isp_output_check_fn fn);

/* ---- what a config says about the input (input.c) ---- */

struct isp_source_opts;

/*
 * The input section, where the command line gave no input: mode (file,
 * live, udp, dpdk) and source fill so; its filter applies when the
 * command line has none.
 */
void isp_program_input(struct isp_program *prog, struct isp_source_opts *so);

/* A live input cannot wait for a channel (drop-policy = block would lose
 * packets instead of records): -1 with "file:line:col: message". */
int isp_program_check_live(const struct isp_program *prog, char *err, size_t errlen);

#endif

