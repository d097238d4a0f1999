/* engine.c: engines, the public handle fe_engine of fuseeng.h. An engine
 * opens nothing beyond its sandbox and library: the graph objects and ctx
 * register their metatables when first made (lua_graph.c, ctx.c). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "lua_core.h"
#include "machine_file.h"

void fe_free(void *p)
{
    free(p);
}

fe_engine *fe_engine_new(const fe_engine_options *opts, fe_error *err)
{
    fe_sandbox_opts so = fe_sandbox_opts_of(opts);
    fe_engine *e = calloc(1, sizeof *e);
    if (!e) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating an engine");
        return NULL;
    }
    if (!(e->sb = fe_sandbox_new(&so, err))) {
        free(e);
        return NULL;
    }
    fe_sandbox_preload(e->sb, FE_LUA_CORE_MODULES);
    lua_State *L = fe_sandbox_L(e->sb);
    e->bench_budget = opts && opts->bench_budget > 0 ? opts->bench_budget : 60.0;
    if ((opts && opts->weights && !(e->weights = strdup(opts->weights))) ||
        (opts && opts->inputs && !(e->inputs = strdup(opts->inputs)))) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating an engine");
        fe_engine_free(e);
        return NULL;
    }
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
    free(e->weights);
    free(e->inputs);
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
