/* cmd_check.c: `fuseeng check MODEL`: validate a model and summarise it. */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng check MODEL [--dim NAME=V]... [--json]\n"
    "\n"
    "Load and validate MODEL (a fuseeng.model/1 file): JSON syntax, tensors, ops,\n"
    "references, cycles, shapes and dtypes. Prints a summary: nodes, tensors, an op\n"
    "histogram, pattern kinds, total FLOPs, weight and activation bytes.\n"
    "\n"
    "  --dim NAME=V   override a symbolic dim's default (repeatable)\n"
    "  --json         print the summary as JSON\n"
    "\n"
    "Exit status 2 and one message naming the file and line (or node/tensor) when\n"
    "the model is invalid.\n";

static int run(int argc, char **argv)
{
    const char *model = NULL, *val;
    fe_cli_dims dims = {0};
    int json = 0;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_opt("check", argc, argv, &i, "--dim", &val);
        if (m == 2)
            return 2;
        if (m == 1) {
            if (fe_cli_add_dim("check", &dims, val))
                return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("check", "unknown option '%s'", argv[i]);
        } else if (model) {
            return fe_cli_usage("check", "one MODEL at a time (got '%s' and '%s')", model, argv[i]);
        } else {
            model = argv[i];
        }
    }
    if (!model)
        return fe_cli_usage("check", "missing MODEL (a fuseeng.model/1 JSON file)");
    fe_error err = {0};
    fe_model *m = fe_model_load_dims(model, dims.n, dims.names, dims.values, &err);
    int rc = 0;
    if (!m || fe_cli_put(fe_model_format(m, json ? FE_FORMAT_JSON : FE_FORMAT_TEXT, &err)))
        rc = fe_cli_fail(&err);
    fe_model_free(m);
    return rc;
}

const fe_cmd fe_cmd_check = {"check", "validate a model file and summarise it", usage, run};
