/* planner.h: what policies plan in: a sandboxed Lua state with the engine's
 * own fuseeng library, the machine it plans for, an optional profile, and
 * the limits of ctx:bench. The public fe_engine (core/api) wraps one;
 * policies are policy.h's, a planning run planning.h's. */
#ifndef FE_PLANNER_H
#define FE_PLANNER_H

#include "machine.h"
#include "profile.h"
#include "sandbox.h"

/* How to make a planner; a zero field means its default. */
typedef struct fe_planner_opts {
    fe_sandbox_opts sandbox;   /* the Lua state's limits and home */
    const char *machine;       /* machine name or file (gcu) */
    double bench_budget;       /* seconds ctx:bench may measure per run (60) */
    const char *weights;       /* ctx:bench's safetensors files (NULL: random) */
    const char *inputs;
    int bench_device;          /* FE_DEVICE_*: where ctx:bench measures (CPU) */
} fe_planner_opts;

typedef struct fe_planner {
    fe_sandbox *sb;
    int fe_ref;              /* the planner's own fuseeng module (registry ref) */
    fe_machine machine;      /* for ctx:simulate and the plans' splits */
    fe_profile *profile;     /* for ctx.profile; NULL if none */
    double bench_budget;     /* seconds ctx:bench may spend per run */
    double bench_item;       /* seconds of repetitions per measured item */
    char *weights, *inputs;  /* ctx:bench's safetensors files (NULL: random) */
    int bench_device;        /* FE_DEVICE_* */
} fe_planner;

/* A new planner (free with fe_planner_free), or NULL with err set. o may
 * be NULL. */
fe_planner *fe_planner_new(const fe_planner_opts *o, fe_error *err);
void fe_planner_free(fe_planner *pl);

/* Load the machine (name or file) the planner plans for. FE_OK or
 * FE_EINPUT naming the file and field. */
int fe_planner_set_machine(fe_planner *pl, const char *name_or_path, fe_error *err);

/* Load a profile file for ctx.profile (replacing any). FE_OK or FE_EINPUT. */
int fe_planner_set_profile(fe_planner *pl, const char *path, fe_error *err);

/* Push the planner's fuseeng module table. */
void fe_planner_push_fe(fe_planner *pl);

#endif
