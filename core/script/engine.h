/* engine.h: the objects behind the public handles (fuseeng.h): engines,
 * models and policies. engine.c owns engines and models, policy.c policies,
 * run.c a planning run. */
#ifndef FE_ENGINE_H
#define FE_ENGINE_H

#include <limits.h>

#include "fuseeng.h"
#include "graph.h"
#include "machine.h"
#include "profile.h"
#include "sandbox.h"

struct fe_engine {
    fe_sandbox *sb;
    int fe_ref;              /* the engine's own fuseeng module (registry ref) */
    fe_policy *active;
    fe_machine machine;      /* for ctx:simulate and the plans' splits */
    fe_profile *profile;     /* for ctx.profile; NULL if none */
    double bench_budget;     /* seconds ctx:bench may spend per run */
    double bench_item;       /* seconds of repetitions per measured item */
};

struct fe_model {
    fe_graph *g;
};

struct fe_policy {
    fe_engine *e;
    int ref;                 /* the Lua policy table (registry ref) */
    char name[256];
    char driver[16];
    char description[256];
    char path[PATH_MAX];     /* file it came from, or its label */
};

/* Load the machine (name or file) the engine plans for. FE_OK or
 * FE_EINPUT naming the file and field. */
int fe_engine_set_machine(fe_engine *e, const char *name_or_path, fe_error *err);

/* Load a profile file for ctx.profile (replacing any). FE_OK or FE_EINPUT. */
int fe_engine_set_profile(fe_engine *e, const char *path, fe_error *err);

/* Push the engine's fuseeng module table. */
void fe_engine_push_fe(fe_engine *e);

/* Wrap the Lua policy table on top of the stack (popped) into a policy
 * handle, reading its name, driver and description. NULL with FE_EINPUT if
 * the table is not a policy the engine can run (fe_policy_check). */
fe_policy *fe_policy_wrap(fe_engine *e, const char *path, fe_error *err);

/* Check what the engine reads of p's table (name, driver, the hooks its
 * driver calls, types of the other fields) and refresh p's name, driver
 * and description from it. A table made by fe.policy passes; one a script
 * made by hand with the policy marker may not. FE_OK or FE_EINPUT naming
 * p's file and the field. */
int fe_policy_check(fe_policy *p, fe_error *err);

#endif
