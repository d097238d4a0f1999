/* engine.c: engines and models, the public handles of fuseeng.h. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "machine_file.h"
#include "load.h"
#include "lua_bench.h"
#include "lua_graph.h"
#include "lua_sim.h"
#include "run.h"

void fe_free(void *p)
{
    free(p);
}

fe_engine *fe_engine_new(const fe_engine_options *opts, fe_error *err)
{
    fe_sandbox_opts so = {0};
    if (opts) {
        so.instructions = opts->max_instructions;
        so.memory = opts->max_memory;
        so.seconds = opts->max_seconds;
        so.home = opts->home;
    }
    fe_engine *e = calloc(1, sizeof *e);
    if (!e) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating an engine");
        return NULL;
    }
    if (!(e->sb = fe_sandbox_new(&so, err))) {
        free(e);
        return NULL;
    }
    lua_State *L = fe_sandbox_L(e->sb);
    fe_lg_open(L);
    fe_run_open(L);
    fe_lua_sim_open(L);
    fe_lua_bench_open(L);
    e->bench_budget = opts && opts->bench_budget > 0 ? opts->bench_budget : 60.0;
    if (fe_engine_set_machine(e, opts && opts->machine ? opts->machine : "gcu", err) != FE_OK) {
        fe_engine_free(e);
        return NULL;
    }
    /* The engine's own instance of the policy library, for combining and
     * typing parameters from C. */
    fe_sandbox_push_env(e->sb);
    lua_getfield(L, -1, "require");
    lua_pushliteral(L, "fuseeng");
    lua_remove(L, -3);
    if (fe_sandbox_pcall(e->sb, 1, 1, "fuseeng library", err) != FE_OK) {
        fe_error_prefix(err, "loading lua/fuseeng.lua: ");
        fe_engine_free(e);
        return NULL;
    }
    e->fe_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return e;
}

void fe_engine_free(fe_engine *e)
{
    if (!e)
        return;
    fe_profile_free(e->profile);
    fe_sandbox_free(e->sb);
    free(e);
}

int fe_engine_set_machine(fe_engine *e, const char *name_or_path, fe_error *err)
{
    fe_machine m;
    int rc = fe_machine_load(e->sb, name_or_path, &m, err);
    if (rc == FE_OK)
        e->machine = m;
    return rc;
}

int fe_engine_set_profile(fe_engine *e, const char *path, fe_error *err)
{
    fe_profile *p = fe_profile_read(path, err);
    if (!p)
        return err ? err->code : FE_EINPUT;
    fe_profile_free(e->profile);
    e->profile = p;
    return FE_OK;
}

void fe_engine_push_fe(fe_engine *e)
{
    lua_rawgeti(fe_sandbox_L(e->sb), LUA_REGISTRYINDEX, e->fe_ref);
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
    return fe_run_policy(e, e->active, m->g, NULL, err);
}

/* "B=8,S=4096" into a dimset; returns FE_OK or FE_EINPUT. */
static int parse_dims(const char *spec, fe_dimset *ds, char names[][128], const char **np,
                      int64_t *vals, int cap, fe_error *err)
{
    ds->n = 0;
    ds->names = np;
    ds->values = vals;
    if (!spec)
        return FE_OK;
    const char *s = spec;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        char *num_end;
        if (!eq || eq == s || (size_t)(eq - s) >= 128 || ds->n >= cap)
            return fe_error_set(err, FE_EINPUT, "dims '%s': expected NAME=VALUE[,NAME=VALUE...]", spec);
        memcpy(names[ds->n], s, (size_t)(eq - s));
        names[ds->n][eq - s] = '\0';
        long long v = strtoll(eq + 1, &num_end, 10);
        if (num_end != s + len || v < 1)
            return fe_error_set(err, FE_EINPUT, "dims '%s': %s needs a positive integer", spec,
                                names[ds->n]);
        np[ds->n] = names[ds->n];
        vals[ds->n++] = v;
        s += len + (end ? 1 : 0);
    }
    return FE_OK;
}

static fe_model *wrap_model(fe_graph *g, fe_error *err)
{
    if (!g)
        return NULL;
    fe_model *m = malloc(sizeof *m);
    if (!m) {
        fe_graph_free(g);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    m->g = g;
    return m;
}

fe_model *fe_model_load_file(const char *path, const char *dims, fe_error *err)
{
    char names[32][128];
    const char *np[32];
    int64_t vals[32];
    fe_dimset ds;
    if (parse_dims(dims, &ds, names, np, vals, 32, err))
        return NULL;
    return wrap_model(fe_load_model_file(path, &ds, err), err);
}

fe_model *fe_model_load_buffer(const char *json, size_t len, const char *label, const char *dims,
                               fe_error *err)
{
    char names[32][128];
    const char *np[32];
    int64_t vals[32];
    fe_dimset ds;
    if (parse_dims(dims, &ds, names, np, vals, 32, err))
        return NULL;
    return wrap_model(fe_load_model_buffer(json, len, label, &ds, err), err);
}

void fe_model_free(fe_model *m)
{
    if (!m)
        return;
    fe_graph_free(m->g);
    free(m);
}

const char *fe_model_name(const fe_model *m)
{
    return m->g->name;
}

int fe_model_nodes(const fe_model *m)
{
    return m->g->nnodes;
}
