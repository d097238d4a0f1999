/* cmd_ops.c: `fuseeng ops`: the op registry, as model writers need it. */
#include <string.h>

#include "cli.h"
#include "ops.h"

static const char usage[] =
    "usage: fuseeng ops [OP]\n"
    "\n"
    "List the operators model files may use: pattern kind, number of inputs,\n"
    "attributes, FLOPs per output element and values per element held in\n"
    "registers (the simulator's register model), and a description. With OP,\n"
    "only that op. The README's operator reference has the full semantics.\n";

static int run(int argc, char **argv)
{
    if (argc > 2)
        return fe_cli_usage("ops", "takes at most one OP");
    int only = -1;
    if (argc == 2 && (only = fe_op_find(argv[1])) < 0)
        return fe_cli_usage("ops", "no op '%s'; known ops are: %s", argv[1], fe_op_names());
    printf("%-12s %-11s %-7s %5s %4s  %-40s %s\n", "op", "kind", "inputs", "flops", "live",
           "attrs", "description");
    for (int i = 0; i < FE_NOPS; i++) {
        if (only >= 0 && i != only)
            continue;
        const fe_op *op = fe_op_get(i);
        char in[16];
        if (op->max_in == FE_VARIADIC)
            snprintf(in, sizeof in, "%d+", op->min_in);
        else if (op->min_in == op->max_in)
            snprintf(in, sizeof in, "%d", op->min_in);
        else
            snprintf(in, sizeof in, "%d-%d", op->min_in, op->max_in);
        printf("%-12s %-11s %-7s %5d %4d  %-40s %s\n", op->name, fe_pattern_name(op->pattern), in,
               op->flops, op->live, op->attrs[0] ? op->attrs : "-", op->desc);
    }
    return 0;
}

const fe_cmd fe_cmd_ops = {"ops", "list the operator set (kinds, inputs, attrs)", usage, run};
