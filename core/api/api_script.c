/* api_script.c: a Lua file run in the policy sandbox (fuseeng script):
 * tests and experiments with the DSLs run exactly as policies do. */
#include <lauxlib.h>

#include "api.h"
#include "lua_core.h"
#include "sandbox.h"

int fe_script_run(const char *path, int nargs, const char *const *args,
                  const fe_engine_options *limits, int *status, fe_error *err)
{
    if (fe_api_null(path, "fe_script_run", "the path", err))
        return FE_EINPUT;
    if (nargs < 0 || (nargs > 0 && !args))
        return fe_error_set(err, FE_EINPUT, "fe_script_run: %d arguments without an array", nargs);
    if (status)
        *status = 0;
    fe_sandbox_opts opts = fe_api_sandbox_opts(limits);
    fe_sandbox *sb = fe_sandbox_new(&opts, err);
    if (!sb)
        return err ? err->code : FE_ERUNTIME;
    fe_sandbox_preload(sb, FE_LUA_CORE_MODULES);
    lua_State *L = fe_sandbox_L(sb);
    fe_sandbox_push_env(sb);
    lua_pushliteral(L, "arg");
    lua_createtable(L, nargs, 1);
    lua_pushstring(L, path);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < nargs; i++) {
        lua_pushstring(L, args[i] ? args[i] : "");
        lua_rawseti(L, -2, i + 1);
    }
    lua_rawset(L, -3);   /* raw: the environment's strict guard rejects new globals */
    int rc = fe_sandbox_load_file(sb, path, "the script", err);
    if (rc == FE_OK) {
        fe_sandbox_begin(sb, path);
        rc = fe_sandbox_pcall(sb, 0, 1, path, err);
        if (rc == FE_OK && status && lua_isinteger(L, -1))
            *status = (int)lua_tointeger(L, -1);
    }
    fe_sandbox_free(sb);
    return rc;
}
