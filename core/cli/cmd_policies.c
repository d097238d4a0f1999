/* cmd_policies.c: `fuseeng policies`: the shipped policies, one line each. */
#include <glob.h>
#include <limits.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng policies\n"
    "\n"
    "List the policies shipped in policies/ with their driver and one-line\n"
    "description. Give a name to --policy, or a path to your own file.\n";

static int run(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return fe_cli_usage("policies", "takes no arguments");
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        return fe_cli_fail(&err);
    char pat[PATH_MAX + 32];
    snprintf(pat, sizeof pat, "%s/policies/*.lua", fe_engine_home(e));
    glob_t gl;
    int status = 0;
    if (glob(pat, 0, NULL, &gl) != 0) {
        fprintf(stderr, "fuseeng: no policies in %s/policies\n", fe_engine_home(e));
        fe_engine_free(e);
        return 1;
    }
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        const char *base = strrchr(gl.gl_pathv[i], '/');
        base = base ? base + 1 : gl.gl_pathv[i];
        fe_policy *p = fe_engine_load_policy(e, gl.gl_pathv[i], &err);
        if (!p) {
            fe_cli_printf(stdout, "%-22s (does not load: %s)\n", base, err.message);
            status = 1;
            continue;
        }
        fe_cli_printf(stdout, "%-22s %-9s %s\n", fe_policy_name(p), fe_policy_driver(p),
                      fe_policy_description(p));
        fe_policy_free(p);
    }
    globfree(&gl);
    fe_engine_free(e);
    return status;
}

const fe_cmd fe_cmd_policies = {"policies", "list the shipped policies", usage, run};
