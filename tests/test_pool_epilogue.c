/* test_pool_epilogue.c: pooling with an elementwise/broadcast epilogue.
 *
 * Legality's pool class (core/plan/legality.c) and the CPU executor's pool
 * path (kernels/cpu/group.c, kernels/ops/pool.c): a group of one max_pool2d or
 * avg_pool2d and the elementwise/broadcast ops after it is legal and runs
 * as one kernel whose result equals the unfused reference; data movement,
 * reductions, a second pool, a conv2d or an op before the pool (a
 * prologue) in the group are not legal. A pad read only by a conv2d or a
 * pool, as its input, may join their kernel (the OPU's pad -> conv2d and
 * pool_pad -> pool); read by anything else, or before a matmul, it may not. */
#include "testlib.h"
#include "execlib.h"

#include "exec.h"
#include "compare.h"
#include "legality.h"
#include "plan.h"
#include "plan_build.h"

/* x [2, 3, 9, 9] -> pre (relu) -> pool (max 3x3 s2 p1, or avg) -> plus
 * (add per-channel bias) -> act (relu) -> out; view (reshape) and rows
 * (sum) read act; the pool's output also leaves the group when `leak`. */
static fe_graph *model(const char *pool, const char *dtype, int leak)
{
    char json[4096];
    snprintf(json, sizeof json,
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [2, 3, 9, 9], 'dtype': '%s', 'kind': 'input'},"
        "  'b': {'shape': [1, 3, 1, 1], 'dtype': '%s', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'pre', 'op': 'relu', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 'pool', 'op': '%s', 'inputs': ['t0'], 'outputs': ['t1'],"
        "   'attrs': {'kernel': 3, 'stride': 2, 'padding': 1}},"
        "  {'name': 'plus', 'op': 'add', 'inputs': ['t1', 'b'], 'outputs': ['t2']},"
        "  {'name': 'act', 'op': 'sigmoid', 'inputs': ['t2'], 'outputs': ['t3']},"
        "  {'name': 'view', 'op': 'reshape', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'shape': [6, 25]}},"
        "  {'name': 'rows', 'op': 'sum', 'inputs': ['t3'], 'outputs': ['t5'], 'attrs': {'axes': [3]}},"
        "  {'name': 'again', 'op': 'max_pool2d', 'inputs': ['t3'], 'outputs': ['t6'], 'attrs': {'kernel': 2}}],"
        " 'outputs': ['t4', 't5', 't6'%s]}",
        dtype, dtype, pool, leak ? ", 't1'" : "");
    return tl_graph_q(json);
}

static int class_of(const fe_graph *g, const char **why, const char *const *names)
{
    fe_kinds k = {0};
    for (int i = 0; names[i]; i++)
        fe_kinds_add(&k, g, tl_node(g, names[i]));
    return fe_kinds_class(&k, why);
}

static void classes(void **state)
{
    (void)state;
    fe_graph *g = model("max_pool2d", "f32", 0);
    const char *why;
    assert_int_equal(class_of(g, &why, (const char *[]){"pool", "plus", "act", NULL}), FE_CLASS_POOL);
    assert_string_equal(fe_class_name(FE_CLASS_POOL), "pool");
    /* the counts allow an op before the pool; the merge check does not */
    assert_int_equal(class_of(g, &why, (const char *[]){"pre", "pool", NULL}), FE_CLASS_POOL);
    fe_error err = {0};
    int32_t labels[7] = {1, 2, 3, 4, 5, 6, 7};
    labels[tl_node(g, "pre")] = labels[tl_node(g, "pool")] = labels[tl_node(g, "plus")] = 0;
    assert_null(fe_plan_from_labels(g, labels, &err));
    assert_contains(err.message, "a pooling kernel takes only an epilogue: node 'pre' does not "
                    "follow the pool");
    /* a plan made by hand with that group fails the plan check too */
    labels[tl_node(g, "pre")] = 8;
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    assert_non_null(p);
    int32_t gi = p->group_of[tl_node(g, "pool")], gpre = p->group_of[tl_node(g, "pre")];
    assert_true(gpre < gi);
    /* move 'pre' into the pool's group: members must stay sorted, so
     * rebuild that group's member list */
    fe_group *gr = &p->groups[gi];
    assert_int_equal(gr->n, 2);
    int32_t pool = p->members[gr->off], plus = p->members[gr->off + 1];
    p->members[gr->off] = tl_node(g, "pre");
    p->members[gr->off + 1] = pool;
    p->members[p->groups[gpre].off] = plus;   /* 'plus' alone now, a bad order too */
    p->group_of[tl_node(g, "pre")] = gi;
    p->group_of[plus] = gpre;
    assert_int_equal(fe_plan_check(p, &err), FE_EINPUT);
    assert_contains(err.message, "does not follow the pool");
    fe_plan_free(p);
    assert_int_equal(class_of(g, &why, (const char *[]){"pool", "plus", "act", "view", NULL}), -1);
    assert_string_equal(why, "a pooling kernel takes only an elementwise/broadcast epilogue (and one "
                        "pad before it)");
    assert_int_equal(class_of(g, &why, (const char *[]){"pool", "plus", "act", "rows", NULL}), -1);
    assert_int_equal(class_of(g, &why, (const char *[]){"pool", "plus", "act", "again", NULL}), -1);
    assert_string_equal(why, "one kernel holds at most one matmul, conv2d, all_reduce or pool");
    fe_graph_free(g);
}

/* Run the plan {pool, plus, act} and the reference; the outputs must agree
 * and the group must have run as `how` says. */
static void run_case(const char *pool, const char *dtype, int leak, const char *how)
{
    fe_graph *g = model(pool, dtype, leak);
    fe_error err = {0};
    int32_t labels[7];
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = v + 1;
    labels[tl_node(g, "plus")] = labels[tl_node(g, "act")] = labels[tl_node(g, "pool")] = 0;
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    if (!p)
        fail_msg("%s", err.message);
    assert_int_equal(p->groups[p->group_of[tl_node(g, "pool")]].klass, FE_CLASS_POOL);
    tl_agree(g, p, "pool", how);
    fe_plan_free(p);
    fe_graph_free(g);
}

static void executes(void **state)
{
    (void)state;
    const char *fused = "fused_rows: max_pool2d plane by plane; epilogue (2 ops: add, sigmoid)";
    run_case("max_pool2d", "f32", 0, fused);
    run_case("max_pool2d", "f32", 1, fused);    /* the pooled tensor is stored too */
    run_case("max_pool2d", "f16", 0, fused);    /* rounded as the unfused store would */
    run_case("avg_pool2d", "f32", 1,
             "fused_rows: avg_pool2d plane by plane; epilogue (2 ops: add, sigmoid)");
}

/* labels: the named nodes share group 0, every other node is alone */
static int merge_ok(const fe_graph *g, const char *const *names, char *why)
{
    fe_error err = {0};
    int32_t *labels = malloc((size_t)g->nnodes * sizeof *labels);
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = v + 1;
    for (int i = 0; names[i]; i++)
        labels[tl_node(g, names[i])] = 0;
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    free(labels);
    snprintf(why, 512, "%.500s", p ? "" : err.message);
    if (p)
        assert_int_equal(fe_plan_check(p, &err), FE_OK);
    fe_plan_free(p);
    return p != NULL;
}

static void pads(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [1, 4, 8, 8], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [4, 4, 3, 3], 'dtype': 'f32', 'kind': 'weight'},"
        "  'm': {'shape': [5, 5], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'pre', 'op': 'relu', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 'pad', 'op': 'pad', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'pads': [1, 1, 1, 1]}},"
        "  {'name': 'conv', 'op': 'conv2d', 'inputs': ['t1', 'w'], 'outputs': ['t2']},"
        "  {'name': 'act', 'op': 'relu', 'inputs': ['t2'], 'outputs': ['t3']},"
        "  {'name': 'ppad', 'op': 'pad', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'pads': [1, 1, 1, 1]}},"
        "  {'name': 'pool', 'op': 'max_pool2d', 'inputs': ['t4'], 'outputs': ['t5'], 'attrs': {'kernel': 3}},"
        "  {'name': 'post', 'op': 'neg', 'inputs': ['t5'], 'outputs': ['t6']},"
        "  {'name': 'spad', 'op': 'pad', 'inputs': ['t6'], 'outputs': ['t7'], 'attrs': {'pads': [1, 1, 1, 1]}},"
        "  {'name': 'mm', 'op': 'matmul', 'inputs': ['t7', 'm'], 'outputs': ['t8']},"
        "  {'name': 'tap', 'op': 'exp', 'inputs': ['t1'], 'outputs': ['t9']}],"
        " 'outputs': ['t8', 't9']}");
    char why[512];
    /* 'pad' is also read by 'tap': it cannot fold into the conv */
    assert_false(merge_ok(g, (const char *[]){"pad", "conv", "act", NULL}, why));
    assert_contains(why, "pad 'pad' is read elsewhere");
    assert_true(merge_ok(g, (const char *[]){"ppad", "pool", "post", NULL}, why));
    assert_true(merge_ok(g, (const char *[]){"conv", "act", NULL}, why));
    /* a pad before a matmul, or two pads, do not fold */
    assert_false(merge_ok(g, (const char *[]){"spad", "mm", NULL}, why));
    assert_contains(why, "but one pad before a conv2d");
    /* a pad after the pool is no prologue */
    assert_false(merge_ok(g, (const char *[]){"pool", "post", "spad", NULL}, why));
    assert_contains(why, "pad 'spad' is read elsewhere");
    fe_graph_free(g);

    /* Without the tap, pad -> conv folds, with the relu before it as a
     * prologue; the CPU runs that group through oneDNN, the pad folded into
     * the conv's padding, or (in fused parts) around the pad, whichever it
     * measured faster, and agrees with the reference; either line names the
     * fold. The pool's -FLT_MAX pad folds into the
     * pool's padding. */
    g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [1, 4, 8, 8], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [4, 4, 3, 3], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'pre', 'op': 'relu', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 'pad', 'op': 'pad', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'pads': [1, 1, 1, 1]}},"
        "  {'name': 'conv', 'op': 'conv2d', 'inputs': ['t1', 'w'], 'outputs': ['t2']},"
        "  {'name': 'act', 'op': 'relu', 'inputs': ['t2'], 'outputs': ['t3']},"
        "  {'name': 'ppad', 'op': 'pad', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'pads': [1, 1, 1, 1], 'value': -3.4028235e38}},"
        "  {'name': 'pool', 'op': 'max_pool2d', 'inputs': ['t4'], 'outputs': ['t5'], 'attrs': {'kernel': 3}},"
        "  {'name': 'post', 'op': 'neg', 'inputs': ['t5'], 'outputs': ['t6']}],"
        " 'outputs': ['t6']}");
    assert_true(merge_ok(g, (const char *[]){"pre", "pad", "conv", "act", NULL}, why));
    /* but not a relu before a pool's pad */
    assert_false(merge_ok(g, (const char *[]){"act", "ppad", "pool", NULL}, why));
    assert_contains(why, "node 'act' does not follow the pool");
    fe_error err = {0};
    int32_t labels[7] = {0, 0, 0, 0, 1, 1, 1};
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    assert_non_null(p);
    tl_agree(g, p, "conv", "(pad 'pad' folded in)");
    tl_agree(g, p, "pool", "max_pool2d plane by plane (pad 'ppad' folded into its padding); "
             "epilogue (1 ops: neg)");
    fe_plan_free(p);
    fe_graph_free(g);
}

/* A pad before a max pool folds into the pool's padding only when its
 * value never wins (-inf or the lowest float), it pads H and W alone, and
 * no window is left without an input element; else the group runs op by
 * op. Every case agrees with the reference. */
static void pool_pads(void **state)
{
    (void)state;
    const struct {
        const char *pad, *pool, *how;
    } cases[] = {
        {"'pads': [1, 1, 1, 1], 'value': -3.4028235e38", "'kernel': 3, 'stride': 2",
         "(pad 'ppad' folded into its padding)"},
        {"'pads': [0, 2, 1, 0], 'value': -1e39", "'kernel': 3, 'stride': 2",
         "(pad 'ppad' folded into its padding)"},   /* -inf once read as f32 */
        {"'pads': [1, 1, 1, 1, 0, 0], 'value': -3.4028235e38", "'kernel': [3, 2]",
         "(pad 'ppad' folded into its padding)"},
        {"'pads': [1, 1, 1, 1]", "'kernel': 3, 'stride': 2", "per_op"},   /* zeros can win */
        {"'pads': [3, 3, 3, 3], 'value': -3.4028235e38", "'kernel': 3", "per_op"},   /* empty windows */
        {"'pads': [1, 1, 1, 1], 'value': -3.4028235e38", "'kernel': 3, 'padding': 1", "per_op"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{'format': 'fuseeng.model/1', 'tensors': {"
            "  'x': {'shape': [2, 3, 9, 8], 'dtype': 'f32', 'kind': 'input'}},"
            " 'nodes': [{'name': 'pre', 'op': 'neg', 'inputs': ['x'], 'outputs': ['t0']},"
            "  {'name': 'ppad', 'op': 'pad', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {%s}},"
            "  {'name': 'pool', 'op': 'max_pool2d', 'inputs': ['t1'], 'outputs': ['t2'], 'attrs': {%s}},"
            "  {'name': 'post', 'op': 'relu', 'inputs': ['t2'], 'outputs': ['t3']}],"
            " 'outputs': ['t3']}", cases[i].pad, cases[i].pool);
        fe_graph *g = tl_graph_q(json);
        fe_error err = {0};
        int32_t labels[4] = {1, 0, 0, 0};
        fe_plan *p = fe_plan_from_labels(g, labels, &err);
        if (!p)
            fail_msg("case %zu: %s", i, err.message);
        tl_agree(g, p, "pool", cases[i].how);
        fe_plan_free(p);
        fe_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(classes), cmocka_unit_test(executes),
                                       cmocka_unit_test(pads), cmocka_unit_test(pool_pads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
