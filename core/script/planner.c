/* planner.c: planners, the Lua side of an engine (core/api's fe_engine). A
 * planner opens nothing beyond its sandbox and library: the graph objects
 * and ctx register their metatables when first made (lua_graph.c, ctx.c). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lua_core.h"
#include "machine_file.h"
#include "planner.h"

fe_planner *fe_planner_new(const fe_planner_opts *o, fe_error *err)
{
    fe_planner_opts none = {0};
    if (!o)
        o = &none;
    fe_planner *pl = calloc(1, sizeof *pl);
    if (!pl) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating an engine");
        return NULL;
    }
    if (!(pl->sb = fe_sandbox_new(&o->sandbox, err))) {
        free(pl);
        return NULL;
    }
    fe_sandbox_preload(pl->sb, FE_LUA_CORE_MODULES);
    lua_State *L = fe_sandbox_L(pl->sb);
    pl->bench_budget = o->bench_budget > 0 ? o->bench_budget : 60.0;
    pl->bench_device = o->bench_device;
    if ((o->weights && !(pl->weights = strdup(o->weights))) ||
        (o->inputs && !(pl->inputs = strdup(o->inputs)))) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating an engine");
        fe_planner_free(pl);
        return NULL;
    }
    if (fe_planner_set_machine(pl, o->machine ? o->machine : "gcu", err) != FE_OK) {
        fe_planner_free(pl);
        return NULL;
    }
    /* The planner's own instance of the policy library, for combining and
     * typing parameters from C. */
    fe_sandbox_push_env(pl->sb);
    lua_getfield(L, -1, "require");
    lua_pushliteral(L, "fuseeng");
    lua_remove(L, -3);
    if (fe_sandbox_pcall(pl->sb, 1, 1, "fuseeng library", err) != FE_OK) {
        fe_error_prefix(err, "loading lua/fuseeng.lua: ");
        fe_planner_free(pl);
        return NULL;
    }
    pl->fe_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return pl;
}

void fe_planner_free(fe_planner *pl)
{
    if (!pl)
        return;
    fe_profile_free(pl->profile);
    fe_sandbox_free(pl->sb);
    free(pl->weights);
    free(pl->inputs);
    free(pl);
}

int fe_planner_set_machine(fe_planner *pl, const char *name_or_path, fe_error *err)
{
    fe_machine m;
    int rc = fe_machine_load(pl->sb, name_or_path, &m, err);
    if (rc == FE_OK)
        pl->machine = m;
    return rc;
}

int fe_planner_set_profile(fe_planner *pl, const char *path, fe_error *err)
{
    fe_profile *p = fe_profile_read(path, err);
    if (!p)
        return err ? err->code : FE_EINPUT;
    fe_profile_free(pl->profile);
    pl->profile = p;
    return FE_OK;
}

void fe_planner_push_fe(fe_planner *pl)
{
    lua_rawgeti(fe_sandbox_L(pl->sb), LUA_REGISTRYINDEX, pl->fe_ref);
}
