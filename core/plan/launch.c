/* launch.c: a group's launch kind from the op registry's flags (launch.h).
 *
 * A group is a view group when every member only reinterprets memory: the
 * backend hands its consumers a strided alias, as PyTorch does for view,
 * transpose, slice and expand. One exception is left to the model, not
 * the engine: a reshape of a transposed tensor, which PyTorch must copy,
 * is still a view here (its consumer reads through the strided index, as
 * Inductor's generated kernels do). A library op alone is extern; with
 * anything fused into it the group is generated code (a template kernel).
 */
#include "launch.h"
#include "ops.h"

fe_launch fe_group_launch(const fe_graph *g, const int32_t *nodes, int n)
{
    int views = 0;
    for (int i = 0; i < n; i++)
        views += (fe_op_get(fe_graph_node(g, nodes[i])->op)->flags & FE_OPF_VIEW) != 0;
    if (n > 0 && views == n)
        return FE_LAUNCH_NONE;
    if (n == 1 && (fe_op_get(fe_graph_node(g, nodes[0])->op)->flags & FE_OPF_LIBRARY))
        return FE_LAUNCH_EXTERN;
    return FE_LAUNCH_KERNEL;
}

const char *fe_launch_name(fe_launch l)
{
    switch (l) {
    case FE_LAUNCH_EXTERN: return "extern";
    case FE_LAUNCH_NONE: return "view";
    default: return "kernel";
    }
}
