/* cmd_ops.c: `fuseeng ops`: the op registry, as model writers need it. */
#include "cli.h"

static const char usage[] =
    "usage: fuseeng ops [OP]\n"
    "\n"
    "List the operators model files may use: pattern kind, number of inputs,\n"
    "attributes, FLOPs per output element and values per element held in\n"
    "registers (the simulator's register model), and a description. With OP,\n"
    "only that op. docs/formats.md (operator set) has the full semantics.\n";

static int run(int argc, char **argv)
{
    if (argc > 2)
        return fe_cli_usage("ops", "takes at most one OP");
    fe_error err = {0};
    if (fe_cli_put(fe_ops_format(argc == 2 ? argv[1] : NULL, &err)))
        return err.code == FE_EINPUT ? fe_cli_usage("ops", "%s", err.message) : fe_cli_fail(&err);
    return 0;
}

const fe_cmd fe_cmd_ops = {"ops", "list the operator set (kinds, inputs, attrs)", usage, run};
