/* engine.h: the engine behind fe_engine (fuseeng.h): a sandboxed Lua state
 * with the engine's own fuseeng library, the machine it plans for, an
 * optional profile, and the limits of ctx:bench. Policies are policy.h's,
 * models model.h's, a planning run planning.h's. */
#ifndef FE_ENGINE_H
#define FE_ENGINE_H

#include "fuseeng.h"
#include "machine.h"
#include "profile.h"
#include "sandbox.h"

struct fe_engine {
    fe_sandbox *sb;
    int fe_ref;              /* the engine's own fuseeng module (registry ref) */
    fe_policy *active;       /* fe_engine_use's; fe_policy_free clears it */
    fe_machine machine;      /* for ctx:simulate and the plans' splits */
    fe_profile *profile;     /* for ctx.profile; NULL if none */
    double bench_budget;     /* seconds ctx:bench may spend per run */
    double bench_item;       /* seconds of repetitions per measured item */
    char *weights, *inputs;  /* ctx:bench's safetensors files (NULL: random) */
};

/* Load the machine (name or file) the engine plans for. FE_OK or
 * FE_EINPUT naming the file and field. */
int fe_engine_set_machine(fe_engine *e, const char *name_or_path, fe_error *err);

/* Load a profile file for ctx.profile (replacing any). FE_OK or FE_EINPUT. */
int fe_engine_set_profile(fe_engine *e, const char *path, fe_error *err);

/* Push the engine's fuseeng module table. */
void fe_engine_push_fe(fe_engine *e);

#endif
