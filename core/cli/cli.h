/* cli.h: the fuseeng command line: one file per command, shared helpers. */
#ifndef FE_CLI_H
#define FE_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "load.h"

typedef struct fe_cmd {
    const char *name;
    const char *summary;   /* one line for `fuseeng --help` */
    const char *usage;     /* full text for `fuseeng help NAME` */
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
} fe_cmd;

/* The command table (main.c). */
extern const fe_cmd *const fe_cli_commands[];

/* Print "fuseeng CMD: message" and a hint to stderr; returns 2. */
int fe_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print err's message to stderr as "fuseeng: message"; returns its exit code. */
int fe_cli_fail(const fe_error *err);

/* Argument scanning: fe_cli_opt matches "--name VALUE" or "--name=VALUE" at
 * argv[*i] and advances *i; returns 1 if matched (value in *val), 0 if not,
 * 2 after printing a usage error when the value is missing. */
int fe_cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val);

/* Collected --dim NAME=V options. */
typedef struct fe_cli_dims {
    int n;
    const char *names[64];
    int64_t values[64];
    char buf[64][128];
    fe_dimset set;
} fe_cli_dims;

/* Parse one "NAME=V" into dims; returns 0 or 2 after a usage error. */
int fe_cli_add_dim(const char *cmd, fe_cli_dims *dims, const char *arg);

/* Load the named policies, combine them (combine: all|any|chain|vote, used
 * when n > 1) and apply "key=value" params; caller frees the result. */
struct fe_engine;
struct fe_policy;
struct fe_policy *fe_cli_load_policies(struct fe_engine *e, const char *const *names, int n,
                                       const char *combine, const char *const *params,
                                       int nparams, fe_error *err);

/* Human-readable quantities into buf ("12.5 MiB", "1.23 TFLOP", "3.2 us"). */
const char *fe_fmt_bytes(double bytes, char *buf, size_t size);
const char *fe_fmt_flops(double flops, char *buf, size_t size);
const char *fe_fmt_time(double seconds, char *buf, size_t size);

#endif
