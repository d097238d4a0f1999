/* api_engine.c: the public calls that need the script layer's own structs
 * (engine.h, model.h, policy.h) and its planning run with statistics
 * (planning.h): an engine's machine, home and sandbox, a model's graph.
 * Every other core/api file goes through these. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "engine.h"
#include "load.h"
#include "machine_file.h"
#include "model.h"
#include "planning.h"
#include "policy.h"
#include "sandbox.h"

int fe_api_null(const void *p, const char *fn, const char *what, fe_error *err)
{
    if (p)
        return 0;
    fe_error_set(err, FE_EINPUT, "%s: %s is NULL", fn, what);
    return 1;
}

const fe_machine *fe_api_machine(const fe_engine *e)
{
    return &e->machine;
}

int fe_api_use_shipped_machine(fe_engine *e, const char *name, fe_error *err)
{
    fe_machine m;
    int rc = fe_machine_load_shipped(e->sb, name, &m, err);
    if (rc == FE_OK)
        e->machine = m;
    return rc;
}

void fe_api_set_machine(fe_engine *e, const fe_machine *m)
{
    e->machine = *m;
}

const fe_graph *fe_api_graph(const fe_model *m)
{
    return m->g;
}

fe_model *fe_api_model(fe_graph *g, fe_error *err)
{
    return fe_model_wrap(g, err);
}

const char *fe_engine_home(const fe_engine *e)
{
    return e ? fe_sandbox_home(e->sb) : NULL;
}

void fe_engine_set_limits(fe_engine *e, const fe_engine_options *o)
{
    if (e && o) {
        fe_sandbox_opts so = fe_sandbox_opts_of(o);
        fe_sandbox_set_limits(e->sb, &so);
    }
}

const char *fe_engine_machine(const fe_engine *e)
{
    return e ? e->machine.name : NULL;
}

const char *fe_engine_machine_description(const fe_engine *e)
{
    return e ? e->machine.description : NULL;
}

fe_model *fe_model_load_dims(const char *path, int n, const char *const *names,
                             const int64_t *values, fe_error *err)
{
    if (fe_api_null(path, "fe_model_load_dims", "the path", err))
        return NULL;
    if (n < 0 || (n > 0 && (!names || !values))) {
        fe_error_set(err, FE_EINPUT, "fe_model_load_dims: %d dims without names and values", n);
        return NULL;
    }
    fe_dimset ds = {n, names, values};
    return fe_api_model(fe_load_model_file(path, &ds, err), err);
}

int64_t fe_model_dim(const fe_model *m, const char *name)
{
    if (!m || !name)
        return 0;
    int32_t d = fe_graph_find_dim(m->g, name);
    return d >= 0 ? m->g->dims[d].value : 0;
}

const char *fe_model_file(const fe_model *m)
{
    return m ? m->g->file : NULL;
}

fe_plan *fe_policy_plan(fe_policy *p, const fe_model *m, fe_plan_stats *stats, fe_error *err)
{
    if (fe_api_null(p, "fe_policy_plan", "the policy", err) ||
        fe_api_null(m, "fe_policy_plan", "the model", err))
        return NULL;
    fe_run_stats st;
    memset(&st, 0, sizeof st);
    fe_plan *plan = fe_run_policy(p->e, p, m->g, &st, err);
    if (plan && stats) {
        /* The run's figures, field by field (the public struct is its own). */
#define COPY(f) stats->f = st.f
        COPY(hook_calls); COPY(hook_seconds); COPY(decide_calls); COPY(instructions);
        COPY(lua_bytes); COPY(rounds); COPY(seconds); COPY(sim_calls); COPY(sim_seconds);
        COPY(bench_measured); COPY(bench_cached); COPY(bench_fallbacks); COPY(bench_seconds);
        COPY(decide_reused); COPY(hook_memo);
#undef COPY
        memcpy(stats->fault, st.fault, sizeof stats->fault);
    }
    return plan;
}

void fe_watchdog(void)
{
    fe_sandbox_watchdog();
}
