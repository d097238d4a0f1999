/* ranges.c: the range of values an integer tensor may hold so that every
 * index it reaches stays in range (see ranges.h).
 *
 * Note on the derivation. An index op asks for values in [0, n) of its
 * index operand: gather along its axis, embedding the table's rows, an
 * exported aten index.Tensor or gather (kernels/ops/aten_bounds.c). The
 * requirement travels backwards, from a node's outputs to its inputs, one
 * node at a time in reverse topological order, so every consumer of a
 * tensor has spoken before its producer is looked at:
 *
 *     token_type_ids --clone--> t --embedding(rows 2)--> ...
 *          [0, 2)      <-same--  [0, 2)  <-index--
 *
 * Each op either passes the range on (views, concat, pad, cast, relu,
 * where's values, min/max, amax/amin, a gather's or embedding's table, an
 * aten clone or index's data), moves it (neg, add or sub of an integer
 * scalar), frees its input (a where's condition, an index operand's own
 * values, anything whose output is bool, aten comparisons and fills), or
 * cannot be inverted (arithmetic between tensors, float math, reductions
 * that sum, matmul, an aten op such as cumsum or one fuseeng does not
 * know): then the range is unknown and the session refuses to draw random
 * values for a graph input or weight behind it, naming it, where before it
 * drew [0, 16) and the index kernel stopped on a value out of range.
 * A tensor read by several nodes takes the intersection of their ranges.
 */
#include <math.h>
#include <stdlib.h>

#include "aten_bounds.h"
#include "ops.h"
#include "ranges.h"

static fe_range free_range(void)
{
    return (fe_range){FE_RANGE_FREE, 0, 0, -1, -1, 0};
}

static fe_range in_range(int64_t lo, int64_t hi, int32_t index)
{
    return (fe_range){FE_RANGE_IN, lo, hi, -1, index, 0};
}

static fe_range unknown(int32_t via, int32_t index, int clash)
{
    return (fe_range){FE_RANGE_UNKNOWN, 0, 0, via, index, clash};
}

/* What both a and b ask for; `at` the node where they meet. */
static fe_range meet(fe_range a, fe_range b, int32_t at)
{
    if (a.kind == FE_RANGE_UNKNOWN || b.kind == FE_RANGE_FREE)
        return a;
    if (b.kind == FE_RANGE_UNKNOWN || a.kind == FE_RANGE_FREE)
        return b;
    fe_range r = in_range(a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, a.index);
    return r.lo < r.hi ? r : unknown(at, a.index, 1);
}

/* The range node n's own indexing asks of its input q. */
static fe_range index_operand(const fe_graph *g, const fe_node *n, int32_t v, int q)
{
    if ((n->op == FE_OP_GATHER || n->op == FE_OP_EMBEDDING) && q == 1) {
        const fe_tensor *d = fe_graph_tensor(g, fe_node_input(g, n, 0));
        int ax = n->op == FE_OP_GATHER ? fe_axis(fe_node_attr_int(g, n, "axis", 0), d->rank) : 0;
        if (ax >= 0 && d->rank > 0)
            return in_range(0, fe_tensor_shape(g, d)[ax], v);
    } else if (n->op == FE_OP_CUSTOM && q >= 1) {
        int64_t b = fe_k_aten_index_bound(g, n, q);
        if (b >= 0)
            return in_range(0, b, v);
    }
    return free_range();
}

/* c moved by x -> x + s (s an integer), or unknown. */
static fe_range shifted(fe_range c, double s, int32_t v)
{
    fe_range r = c;
    if (s != floor(s) || fabs(s) > 0x1p52 ||
        __builtin_add_overflow(c.lo, (int64_t)s, &r.lo) || __builtin_add_overflow(c.hi, (int64_t)s, &r.hi))
        return unknown(v, c.index, 0);
    return r;
}

/* The range input q of node v must hold so that its outputs hold c. */
static fe_range through(const fe_graph *g, const fe_node *n, int32_t v, int q, fe_range c)
{
    double s = 0;
    int scalar = fe_node_scalar(g, n, &s);
    int si = (int)fe_node_attr_int(g, n, "scalar_index", n->op == FE_OP_WHERE ? 2 : 1);
    int bool_out = 1;
    for (int k = 0; k < n->nout; k++)
        bool_out &= fe_graph_tensor(g, fe_node_output(g, n, k))->dtype == FE_BOOL;
    if (c.kind == FE_RANGE_FREE || bool_out)   /* a bool is 0 or 1, whatever its input held */
        return free_range();
    /* operands whose values never reach the outputs: they only pick */
    if (((n->op == FE_OP_GATHER || n->op == FE_OP_EMBEDDING) && q == 1) ||
        (n->op == FE_OP_WHERE && (scalar && si <= q ? q + 1 : q) == 0) ||
        (n->op == FE_OP_CUSTOM && fe_k_aten_value_flow(g, n, q) == FE_K_FLOW_NONE))
        return free_range();
    if (c.kind == FE_RANGE_UNKNOWN)            /* unknown past here already */
        return c;
    switch (n->op) {
    case FE_OP_RESHAPE: case FE_OP_TRANSPOSE: case FE_OP_SLICE: case FE_OP_CONCAT:
    case FE_OP_PAD: case FE_OP_EXPAND: case FE_OP_CAST: case FE_OP_RELU:
    case FE_OP_AMAX: case FE_OP_AMIN:
        return c;
    case FE_OP_GATHER: case FE_OP_EMBEDDING:   /* the table's values */
    case FE_OP_WHERE:                          /* the values it picks from */
        return c;
    case FE_OP_MAXIMUM:                        /* max(x, s) < hi needs s < hi */
        return !scalar || s < (double)c.hi ? c : unknown(v, c.index, 0);
    case FE_OP_MINIMUM:                        /* min(x, s) >= lo needs s >= lo */
        return !scalar || s >= (double)c.lo ? c : unknown(v, c.index, 0);
    case FE_OP_ABS:
        return c.hi > 0 ? in_range(c.lo > 0 ? c.lo : 0, c.hi, c.index) : unknown(v, c.index, 0);
    case FE_OP_NEG:                            /* -x in [lo, hi): x in (-hi, -lo] */
        return c.lo > INT64_MIN + 1 ? in_range(1 - c.hi, 1 - c.lo, c.index) : unknown(v, c.index, 0);
    case FE_OP_ADD:
        return scalar ? shifted(c, -s, v) : unknown(v, c.index, 0);
    case FE_OP_SUB:
        if (!scalar)
            return unknown(v, c.index, 0);
        if (si == 0)                           /* s - x */
            return c.lo > INT64_MIN + 1 ? shifted(in_range(1 - c.hi, 1 - c.lo, c.index), s, v)
                                        : unknown(v, c.index, 0);
        return shifted(c, s, v);
    case FE_OP_CUSTOM:
        return fe_k_aten_value_flow(g, n, q) == FE_K_FLOW_SAME ? c : unknown(v, c.index, 0);
    default:
        return unknown(v, c.index, 0);
    }
}

fe_range *fe_ranges(const fe_graph *g)
{
    fe_range *r = malloc((size_t)(g->ntensors ? g->ntensors : 1) * sizeof *r);
    if (!r)
        return NULL;
    for (int32_t t = 0; t < g->ntensors; t++)
        r[t] = free_range();
    for (int32_t v = g->nnodes - 1; v >= 0; v--) {
        const fe_node *n = fe_graph_node(g, v);
        fe_range c = free_range();
        for (int k = 0; k < n->nout; k++)
            c = meet(c, r[fe_node_output(g, n, k)], v);
        for (int q = 0; q < n->nin; q++) {
            int32_t t = fe_node_input(g, n, q);
            fe_range need = meet(index_operand(g, n, v, q), through(g, n, v, q, c), v);
            r[t] = meet(r[t], need, v);
        }
    }
    return r;
}

static const char *op_of(const fe_graph *g, const fe_node *n)
{
    const char *aten = n->op == FE_OP_CUSTOM ? fe_node_attr_str(g, n, "aten", NULL) : NULL;
    return aten ? aten : fe_node_op_name(n);
}

int fe_range_check(const fe_graph *g, int32_t t, const fe_range *r, fe_error *err)
{
    if (r->kind != FE_RANGE_UNKNOWN)
        return FE_OK;
    const fe_tensor *tt = fe_graph_tensor(g, t);
    const fe_node *via = fe_graph_node(g, r->via);
    const fe_node *ix = r->index >= 0 ? fe_graph_node(g, r->index) : via;
    const char *what = tt->kind == FE_WEIGHT ? "weight" : tt->kind == FE_INPUT ? "input" : "tensor";
    const char *opt = tt->kind == FE_WEIGHT ? "--weights" : "--inputs";
    if (r->clash)
        return fe_error_set(err, FE_EINPUT, "%s '%s' (%s) reaches indices that ask for ranges "
                            "with no value in common (they meet at node '%s' (%s)), so random "
                            "values for it cannot keep node '%s' (%s) in range: give its values "
                            "with %s FILE.safetensors", what, fe_tensor_name(g, tt),
                            fe_dtype_name(tt->dtype), fe_node_name(g, via), op_of(g, via),
                            fe_node_name(g, ix), op_of(g, ix), opt);
    return fe_error_set(err, FE_EINPUT, "%s '%s' (%s) reaches the indices of node '%s' (%s) "
                        "through node '%s' (%s), whose values fuseeng cannot follow back, so "
                        "random values for it could fall out of range: give its values with %s "
                        "FILE.safetensors", what, fe_tensor_name(g, tt), fe_dtype_name(tt->dtype),
                        fe_node_name(g, ix), op_of(g, ix), fe_node_name(g, via), op_of(g, via), opt);
}
