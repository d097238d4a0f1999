/* cmd_script.c: `fuseeng script FILE [ARGS]`: run a Lua file in the policy
 * sandbox, as policies run (tests, experiments with the DSLs). */
#include "cli.h"

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
    int status = 0;
    if (fe_script_run(file, argc - first_arg, (const char *const *)argv + first_arg, &limits,
                      &status, &err) != FE_OK)
        return fe_cli_fail(&err);
    return status;
}

const fe_cmd fe_cmd_script = {"script", "run a Lua file in the policy sandbox", usage, run};
