/* cmd_script.c: `fuseeng script FILE [ARGS]`: run a Lua file in the policy
 * sandbox, as policies run (tests, experiments with the DSLs). */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lua_core.h"
#include "sandbox.h"

static const char usage[] =
    "usage: fuseeng script FILE [ARGS]...\n"
    "\n"
    "Run the Lua file FILE in the same sandbox as policies (no os, io or debug;\n"
    "require finds the fuseeng library, lpeg and fuseeng.core). ARGS are in the\n"
    "global table 'arg'. If FILE returns an integer, it is the exit status.\n"
    "A Lua error exits with status 2 and the message as FILE:LINE: message.\n"
    "\n"
    "  --max-instructions N   instruction budget (default 2e9)\n"
    "  --max-memory MIB       memory cap of the Lua state (default 512)\n"
    "  --max-seconds S        wall-clock limit (default 300)\n";

static int run(int argc, char **argv)
{
    fe_engine_options limits = {0};
    const char *file = NULL;
    int first_arg = argc;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_limit_opt("script", argc, argv, &i, &limits);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("script", "unknown option '%s'", argv[i]);
        } else {
            file = argv[i];
            first_arg = i + 1;
            break;
        }
    }
    if (!file)
        return fe_cli_usage("script", "missing FILE (a Lua script)");
    fe_error err = {0};
    fe_sandbox_opts opts = {.instructions = limits.max_instructions, .memory = limits.max_memory,
                            .seconds = limits.max_seconds};
    fe_sandbox *sb = fe_sandbox_new(&opts, &err);
    if (!sb)
        return fe_cli_fail(&err);
    fe_sandbox_preload(sb, FE_LUA_CORE_MODULES);
    lua_State *L = fe_sandbox_L(sb);
    fe_sandbox_push_env(sb);
    lua_pushliteral(L, "arg");
    lua_createtable(L, argc - first_arg, 1);
    lua_pushstring(L, file);
    lua_rawseti(L, -2, 0);
    for (int i = first_arg; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - first_arg + 1);
    }
    lua_rawset(L, -3);   /* raw: the environment's strict guard rejects new globals */
    int status = 0;
    if (fe_sandbox_load_file(sb, file, &err) != FE_OK) {
        status = fe_cli_fail(&err);
    } else {
        fe_sandbox_begin(sb, file);
        if (fe_sandbox_pcall(sb, 0, 1, file, &err) != FE_OK)
            status = fe_cli_fail(&err);
        else if (lua_isinteger(L, -1))
            status = (int)lua_tointeger(L, -1);
    }
    fe_sandbox_free(sb);
    return status;
}

const fe_cmd fe_cmd_script = {"script", "run a Lua file in the policy sandbox", usage, run};
