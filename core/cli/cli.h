/* cli.h: the fuseeng command line: one file per command, shared helpers. */
#ifndef FE_CLI_H
#define FE_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "fuseeng_cli.h"

typedef struct fe_cmd {
    const char *name;
    const char *summary;   /* one line for `fuseeng --help` */
    const char *usage;     /* full text for `fuseeng help NAME` */
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
} fe_cmd;

/* The command table (main.c). */
extern const fe_cmd *const fe_cli_commands[];

/* printf to f with control characters escaped, '\n' and '\t' kept
 * (fe_escape): for text that holds names and paths. */
void fe_cli_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A file named on the command line, for fe_cli_distinct: the option (or
 * "the model") and the path (NULL: not given). */
typedef struct fe_cli_file {
    const char *opt;
    const char *path;
} fe_cli_file;

/* 0, or a usage error (2) when an output names the same file as one of the
 * inputs or as another output: writing it would destroy what is read. */
int fe_cli_distinct(const char *cmd, const fe_cli_file *in, int nin, const fe_cli_file *out,
                    int nout);

/* Print "fuseeng CMD: message (see 'fuseeng help CMD')", one line, to
 * stderr; returns 2. */
int fe_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* After work that Ctrl-C cut short and whose finished part was printed:
 * say so on stderr; returns 130 (128 + SIGINT, as a shell reports it). */
int fe_cli_interrupted(void);

/* Print err's message to stderr as "fuseeng: message"; returns its exit code. */
int fe_cli_fail(const fe_error *err);

/* Print text (a result of the API, or NULL after an error) to stdout and
 * free it: 0, or -1 for NULL. */
int fe_cli_put(char *text);

/* Write text (as fe_cli_put) to the file path, whole or not at all; what
 * names it in messages. FE_OK or the error's code. */
int fe_cli_write(const char *path, const char *what, char *text, fe_error *err);

/* "fuseeng CMD ARG..." from a command's argv (argv[0] is its name), each
 * argument that needs it quoted for a POSIX shell, into buf (truncated). */
void fe_cli_command_line(int argc, char **argv, char *buf, size_t size);

/* Prefix err's message with a printf-style context ("model.json: "). */
void fe_cli_prefix(fe_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* After a run: if the policy faulted and fell back (fallback_on_error =
 * "unfused"), say so on stderr, one warning line naming the file and
 * line (fault is "" otherwise). The run still succeeds. */
void fe_cli_warn_fallback(const char *fault);

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
} fe_cli_dims;

/* Parse a --dim argument, "NAME=V" or "NAME=V1,V2,...", with the engine's
 * one parser (fe_dimarg_parse); 0, or 2 after a usage error naming it. */
int fe_cli_parse_dim(const char *cmd, const char *arg, fe_dimarg *d);
/* Parse one "NAME=V" into dims; returns 0 or 2 after a usage error. */
int fe_cli_add_dim(const char *cmd, fe_cli_dims *dims, const char *arg);

/* Load the named policies, combine them (combine: all|any|chain|vote, used
 * when n > 1) and apply "key=value" params; caller frees the result. */
fe_policy *fe_cli_load_policies(fe_engine *e, const char *const *names, int n, const char *combine,
                                const char *const *params, int nparams, fe_error *err);

/* How to plan a model: the options run, bench and profile share
 * (planopts.c). */
typedef struct fe_cli_plan_opts {
    const char *policies[16];
    int npolicies;
    const char *combine;
    const char *params[64];
    int nparams;
    fe_cli_dims dims;
    const char *plan_in;     /* --plan FILE: a saved plan instead of a policy */
    int ignore_model;        /* --ignore-model-name: a plan made for another model */
    const char *profile;
    fe_engine_options eng;
    /* --dim NAME=v1,v2,...: plan once per value, a dispatch table (run only) */
    int nbuckets;
    int64_t buckets[64];
    char bucket_dim[128];
} fe_cli_plan_opts;

/* Match one of the Lua limits (--max-instructions, --max-memory,
 * --max-seconds) at argv[*i] into eng, advancing *i: 1 if matched, 0 if
 * not, 2 after a usage error. */
int fe_cli_limit_opt(const char *cmd, int argc, char **argv, int *i, fe_engine_options *eng);

/* Match one planning option (--policy, --combine, --param, --dim, --plan,
 * --machine, --profile, --bench-budget, and the Lua limits) at argv[*i],
 * advancing *i: 1 if matched, 0 if not, 2 after a usage error. */
int fe_cli_plan_opt(const char *cmd, int argc, char **argv, int *i, fe_cli_plan_opts *o);
/* The files o reads beside the model (a --plan, a --profile, policy and
 * machine files) into in[0..cap), the model first; returns the count. */
int fe_cli_plan_inputs(const char *model, const fe_cli_plan_opts *o, fe_cli_file *in, int cap);

/* Usage checks after parsing (need_policy: a policy or --plan is required;
 * else no policy means the unfused plan). 0 or 2. */
int fe_cli_plan_check(const char *cmd, const fe_cli_plan_opts *o, int need_policy);

/* A planned model: everything fe_cli_plan_make made, owned here. */
typedef struct fe_cli_planned {
    fe_engine *e;
    fe_saved_plan *saved;       /* --plan: owns model and plan */
    fe_model *model;
    fe_policy *policy;          /* NULL for --plan or the unfused plan */
    fe_plan *plan;
    fe_plan_stats stats;
} fe_cli_planned;

/* Load model with the options' dims, make the engine, and plan it (the
 * policies, the saved plan, or unfused). FE_OK, or an error code with err
 * set and nothing left to free. */
int fe_cli_plan_make(const char *model, const fe_cli_plan_opts *o, fe_cli_planned *out,
                     fe_error *err);
void fe_cli_planned_free(fe_cli_planned *p);
/* What made the plan, for reports: the --plan file, the policy, "unfused". */
const char *fe_cli_plan_label(const fe_cli_plan_opts *o, const fe_plan *p);

/* --seed N (a positive integer) and seconds options; 0 or 2 after a
 * usage error. */
int fe_cli_seed(const char *cmd, const char *val, uint64_t *seed);
int fe_cli_seconds(const char *cmd, const char *name, const char *val, double *s);
/* --device cpu|cuda into *device (FE_DEVICE_*); 0 or 2 after a usage error. */
int fe_cli_device(const char *cmd, const char *val, int *device);

/* A whole number from lo to hi (within int) for option name into *out; 0,
 * or 2 after a usage error naming the range. */
int fe_cli_count(const char *cmd, const char *name, const char *val, long lo, long hi, int *out);

/* The names of the shipped policies (policies/NAME.lua of e's home),
 * sorted, at most cap; the count, or -1 after printing why there are none. */
int fe_cli_shipped(fe_engine *e, char (*names)[64], int cap);

#endif
