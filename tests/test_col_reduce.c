/* test_col_reduce.c: reductions over the leading axes in fused groups.
 *
 * The fused executor folds a column reduction (sum, mean, amax, amin over
 * the leading axes) into per-thread column accumulators (fused_run.c); a
 * group whose later members read one runs as programs in turn, cut at
 * those reductions (kernels/group_stages.c), and so does a group whose
 * outputs differ in shape. Every case runs as one group and must agree
 * with the unfused reference kernels, and its "how" line must say how it
 * ran: one program, programs in turn, or op by op with the reason. */
#include "testlib.h"
#include "execlib.h"

#include "legality.h"
#include "plan.h"

/* Run json's nodes as one group (TLF split `split`) against the reference. */
static void one_group(const char *json, int split, const char *how)
{
    fe_graph *g = tl_graph_q(json);
    fe_error err = {0};
    int32_t *labels = calloc((size_t)g->nnodes, sizeof *labels);
    assert_non_null(labels);
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    if (!p)
        fail_msg("%s", err.message);
    p->groups[0].split = split;
    tl_agree(g, p, fe_node_name(g, fe_graph_node(g, 0)), how);
    fe_plan_free(p);
    fe_graph_free(g);
    free(labels);
}

/* A column mean stored beside full-size results: one program, whose mean
 * is complete only when both threads' rows and every TLF part are in. */
static void stored_only(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [300, 70], 'dtype': '%s', 'kind': 'input'}},"
        " 'nodes': [{'name': 'e', 'op': 'exp', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 'm', 'op': '%s', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0], 'keepdim': %s}},"
        "  {'name': 'r', 'op': 'sum', 'inputs': ['t0'], 'outputs': ['t2'], 'attrs': {'axes': [1], 'keepdim': true}},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['t0', 't2'], 'outputs': ['t3']}],"
        " 'outputs': ['t1', 't3']}";
    const char *ops[] = {"mean", "sum", "amax", "amin"};
    char buf[2048];
    for (int k = 0; k < 4; k++)
        for (int split = 1; split <= 3; split += 2) {
            snprintf(buf, sizeof buf, json, "f32", ops[k], k % 2 ? "false" : "true");
            one_group(buf, split, "fused_rows: 4 ops in");
        }
    snprintf(buf, sizeof buf, json, "f16", "mean", "true");   /* rounded to f16 once, at the end */
    one_group(buf, 1, "fused_rows: 4 ops in");
}

/* Batch statistics: c = x - mean_0(x); v = mean_0(c * c); y = c * rsqrt(v +
 * eps), over the two leading axes of a rank-3 tensor, the means without
 * keepdim (read back broadcast on the trailing axis). Three stages: the
 * second and third compute c again. */
static void staged(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [6, 100, 33], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'mu', 'op': 'mean', 'inputs': ['x'], 'outputs': ['t0'], 'attrs': {'axes': [0, 1]}},"
        "  {'name': 'c', 'op': 'sub', 'inputs': ['x', 't0'], 'outputs': ['t1']},"
        "  {'name': 'sq', 'op': 'mul', 'inputs': ['t1', 't1'], 'outputs': ['t2']},"
        "  {'name': 'v', 'op': 'mean', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axes': [0, 1]}},"
        "  {'name': 've', 'op': 'add', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'scalar': 1e-05}},"
        "  {'name': 'rs', 'op': 'rsqrt', 'inputs': ['t4'], 'outputs': ['t5']},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['t1', 't5'], 'outputs': ['t6']}],"
        " 'outputs': ['t6']}";
    one_group(json, 1, "fused_rows: 3 programs in turn, in 3 stages");
    one_group(json, 2, "fused_rows: 3 programs in turn, in 3 stages");
}

/* A softmax down the columns written out (max, subtract, exp, sum,
 * divide), and the sum of two column statistics beside it: the last stage
 * has outputs of two shapes, so it is two programs. */
static void column_softmax(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [257, 40], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'mx', 'op': 'amax', 'inputs': ['x'], 'outputs': ['t0'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'sh', 'op': 'sub', 'inputs': ['x', 't0'], 'outputs': ['t1']},"
        "  {'name': 'ex', 'op': 'exp', 'inputs': ['t1'], 'outputs': ['t2']},"
        "  {'name': 'su', 'op': 'sum', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'sm', 'op': 'div', 'inputs': ['t2', 't3'], 'outputs': ['t4']},"
        "  {'name': 'both', 'op': 'add', 'inputs': ['t0', 't3'], 'outputs': ['t5']}],"
        " 'outputs': ['t4', 't5']}";
    one_group(json, 1, "fused_rows: 4 programs in turn, in 3 stages");
}

/* Outputs of two shapes and no column reduction: a per-column weight
 * scaled (stored, [1, N]) and applied to x (stored, [M, N]). */
static void shapes(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [128, 64], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [1, 64], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'w2', 'op': 'mul', 'inputs': ['w'], 'outputs': ['t0'], 'attrs': {'scalar': 2.0}},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['x', 't0'], 'outputs': ['t1']},"
        "  {'name': 'cm', 'op': 'sum', 'inputs': ['t0'], 'outputs': ['t2'], 'attrs': {'axes': [0]}}],"
        " 'outputs': ['t0', 't1', 't2']}";
    one_group(json, 1, "fused_rows: 2 programs, for outputs of different shapes");
}

/* What stays op by op: axes neither leading nor trailing, and a column
 * reduction inside a matmul's epilogue. */
static void refused(void **state)
{
    (void)state;
    one_group("{'format': 'fuseeng.model/1', 'tensors': {"
              "  'x': {'shape': [4, 5, 6], 'dtype': 'f32', 'kind': 'input'}},"
              " 'nodes': [{'name': 'e', 'op': 'exp', 'inputs': ['x'], 'outputs': ['t0']},"
              "  {'name': 'm', 'op': 'sum', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0, 2]}}],"
              " 'outputs': ['t1']}",
              1, "reduces axes that are neither the leading nor the trailing ones");
    one_group("{'format': 'fuseeng.model/1', 'tensors': {"
              "  'a': {'shape': [32, 16], 'dtype': 'f32', 'kind': 'input'},"
              "  'b': {'shape': [16, 24], 'dtype': 'f32', 'kind': 'weight'}},"
              " 'nodes': [{'name': 'mm', 'op': 'matmul', 'inputs': ['a', 'b'], 'outputs': ['t0']},"
              "  {'name': 'm', 'op': 'mean', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0]}}],"
              " 'outputs': ['t1']}",
              1, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(stored_only), cmocka_unit_test(staged),
                                       cmocka_unit_test(column_softmax), cmocka_unit_test(shapes),
                                       cmocka_unit_test(refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
