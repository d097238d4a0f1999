/* api_engine.c: engines, the public handle fe_engine: a planner (the
 * script layer's sandboxed Lua state with its machine, profile and
 * ctx:bench limits, core/script/planner.h) and the active policy. Also
 * what the rest of core/api needs of an engine: its machine. */
#include <stdlib.h>

#include "api.h"
#include "home.h"
#include "machine_file.h"
#include "planning.h"
#include "sandbox.h"

int fe_api_null(const void *p, const char *fn, const char *what, fe_error *err)
{
    if (p)
        return 0;
    fe_error_set(err, FE_EINPUT, "%s: %s is NULL", fn, what);
    return 1;
}

fe_sandbox_opts fe_api_sandbox_opts(const fe_engine_options *o)
{
    if (!o)
        return (fe_sandbox_opts){0};
    return (fe_sandbox_opts){.instructions = o->max_instructions, .memory = o->max_memory,
                             .seconds = o->max_seconds, .home = o->home};
}

fe_engine *fe_engine_new(const fe_engine_options *opts, fe_error *err)
{
    fe_planner_opts o = {0};
    o.sandbox = fe_api_sandbox_opts(opts);
    if (opts) {
        o.machine = opts->machine;
        o.bench_budget = opts->bench_budget;
        o.weights = opts->weights;
        o.inputs = opts->inputs;
        o.bench_device = opts->bench_device;
    }
    fe_engine *e = calloc(1, sizeof *e);
    if (!e) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating an engine");
        return NULL;
    }
    if (!(e->pl = fe_planner_new(&o, err))) {
        free(e);
        return NULL;
    }
    return e;
}

void fe_engine_free(fe_engine *e)
{
    if (!e)
        return;
    fe_planner_free(e->pl);
    free(e);
}

int fe_engine_set_machine(fe_engine *e, const char *name_or_path, fe_error *err)
{
    return fe_planner_set_machine(e->pl, name_or_path, err);
}

int fe_engine_set_profile(fe_engine *e, const char *path, fe_error *err)
{
    return fe_planner_set_profile(e->pl, path, err);
}

const char *fe_engine_home(const fe_engine *e)
{
    return e ? fe_sandbox_home(e->pl->sb) : NULL;
}

const char *fe_engine_machine_names(const fe_engine *e, char *out, size_t size)
{
    if (size)
        out[0] = 0;
    if (e && size)
        fe_home_names(fe_sandbox_home(e->pl->sb), "lua/machines", out, size);
    return out;
}

void fe_engine_set_limits(fe_engine *e, const fe_engine_options *o)
{
    if (e && o) {
        fe_sandbox_opts so = fe_api_sandbox_opts(o);
        fe_sandbox_set_limits(e->pl->sb, &so);
    }
}

const char *fe_engine_machine(const fe_engine *e)
{
    return e ? e->pl->machine.name : NULL;
}

const char *fe_engine_machine_description(const fe_engine *e)
{
    return e ? e->pl->machine.description : NULL;
}

const fe_machine *fe_api_machine(const fe_engine *e)
{
    return &e->pl->machine;
}

int fe_api_use_shipped_machine(fe_engine *e, const char *name, fe_error *err)
{
    fe_machine m;
    int rc = fe_machine_load_shipped(e->pl->sb, name, &m, err);
    if (rc == FE_OK)
        e->pl->machine = m;
    return rc;
}

void fe_api_set_machine(fe_engine *e, const fe_machine *m)
{
    e->pl->machine = *m;
}

int fe_engine_use(fe_engine *e, fe_policy *p, fe_error *err)
{
    if (!p || p->e != e)
        return fe_error_set(err, FE_EINPUT, "fe_engine_use: the policy belongs to another engine");
    e->active = p;
    return FE_OK;
}

fe_plan *fe_engine_plan(fe_engine *e, const fe_model *m, fe_error *err)
{
    if (!e->active) {
        fe_error_set(err, FE_EINPUT, "no active policy: load one and call fe_engine_use");
        return NULL;
    }
    return fe_run_policy(&e->active->r, m->g, NULL, err);
}

void fe_watchdog(void)
{
    fe_sandbox_watchdog();
}
