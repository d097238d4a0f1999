/* api_policy.c: policies, the public handle fe_policy: a policy reference
 * of the script layer (core/script/policy.h) in its engine's planner, which
 * loads, combines and overrides it; and planning with one. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "planning.h"

/* A handle for a policy of e, or NULL with FE_ENOMEM. */
static fe_policy *handle(fe_engine *e, fe_error *err)
{
    fe_policy *p = calloc(1, sizeof *p);
    if (!p)
        fe_error_set(err, FE_ENOMEM, "out of memory");
    else
        p->e = e;
    return p;
}

/* p once rc, the code that filled p->r, is FE_OK; else NULL, p freed. */
static fe_policy *filled(fe_policy *p, int rc)
{
    if (rc == FE_OK)
        return p;
    free(p);
    return NULL;
}

fe_policy *fe_engine_load_policy(fe_engine *e, const char *name_or_path, fe_error *err)
{
    fe_policy *p = handle(e, err);
    return p ? filled(p, fe_policy_load(e->pl, name_or_path, &p->r, err)) : NULL;
}

fe_policy *fe_engine_load_policy_buffer(fe_engine *e, const char *source, size_t len,
                                        const char *label, fe_error *err)
{
    fe_policy *p = handle(e, err);
    return p ? filled(p, fe_policy_load_buffer(e->pl, source, len, label, &p->r, err)) : NULL;
}

fe_policy *fe_engine_combine(fe_engine *e, const char *how, fe_policy *const *policies, int n,
                             fe_error *err)
{
    for (int i = 0; i < n; i++)
        if (policies[i]->e != e) {
            fe_error_set(err, FE_EINPUT, "fe_engine_combine: policy %d belongs to another engine", i);
            return NULL;
        }
    const fe_policy_ref **list = malloc((n > 0 ? (size_t)n : 1) * sizeof *list);
    fe_policy *p = list ? handle(e, err) : NULL;
    if (!p) {
        if (!list)
            fe_error_set(err, FE_ENOMEM, "out of memory");
        free(list);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        list[i] = &policies[i]->r;
    int rc = fe_policy_combine(e->pl, how, list, n, &p->r, err);
    free(list);
    return filled(p, rc);
}

int fe_policy_set_param(fe_policy *p, const char *key, const char *value, fe_error *err)
{
    return fe_policy_override(&p->r, key, value, err);
}

const char *fe_policy_name(const fe_policy *p) { return p->r.name; }
const char *fe_policy_driver(const fe_policy *p) { return p->r.driver; }
const char *fe_policy_description(const fe_policy *p) { return p->r.description; }
const char *fe_policy_source(const fe_policy *p) { return p->r.source; }

void fe_policy_free(fe_policy *p)
{
    if (!p)
        return;
    if (p->e->active == p)
        p->e->active = NULL;
    fe_policy_release(&p->r);
    free(p);
}

fe_plan *fe_policy_plan(fe_policy *p, const fe_model *m, fe_plan_stats *stats, fe_error *err)
{
    if (fe_api_null(p, "fe_policy_plan", "the policy", err) ||
        fe_api_null(m, "fe_policy_plan", "the model", err))
        return NULL;
    fe_run_stats st;
    memset(&st, 0, sizeof st);
    fe_plan *plan = fe_run_policy(&p->r, m->g, &st, err);
    if (plan && stats) {
        /* The run's figures, field by field (the public struct is its own). */
#define COPY(f) stats->f = st.f
        COPY(hook_calls); COPY(hook_seconds); COPY(decide_calls); COPY(instructions);
        COPY(lua_bytes); COPY(rounds); COPY(seconds); COPY(sim_calls); COPY(sim_seconds);
        COPY(bench_measured); COPY(bench_cached); COPY(bench_fallbacks); COPY(bench_seconds);
        COPY(decide_reused); COPY(hook_memo); 
        stats->bench_compared = st.bench_agree.compared;
        stats->bench_agreed = st.bench_agree.agreed;
        memcpy(stats->bench_disagree, st.bench_agree.disagree, sizeof stats->bench_disagree);
        stats->profile_compared = st.profile_agree.compared;
        stats->profile_agreed = st.profile_agree.agreed;
        memcpy(stats->profile_disagree, st.profile_agree.disagree, sizeof stats->profile_disagree);
#undef COPY
        memcpy(stats->fault, st.fault, sizeof stats->fault);
    }
    return plan;
}
