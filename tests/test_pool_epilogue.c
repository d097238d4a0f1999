/* test_pool_epilogue.c: pooling with an elementwise/broadcast epilogue.
 *
 * Legality's pool class (core/plan/legality.c) and the CPU executor's pool
 * path (kernels/group.c, kernels/pool.c): a group of one max_pool2d or
 * avg_pool2d and the elementwise/broadcast ops after it is legal and runs
 * as one kernel whose result equals the unfused reference; data movement,
 * reductions, a second pool, a conv2d or an op before the pool (a
 * prologue) in the group are not legal. */
#include "testlib.h"

#include "exec.h"
#include "compare.h"
#include "legality.h"
#include "plan.h"

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
    assert_string_equal(why, "a pooling kernel takes only an elementwise/broadcast epilogue");
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
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_exec_result *ref = NULL, *got = NULL;
    assert_int_equal(fe_exec_reference(ex, &ref, &err), FE_OK);
    if (fe_exec_plan(ex, p, &got, &err) != FE_OK)
        fail_msg("%s", err.message);
    fe_cmp cmp;
    assert_int_equal(fe_exec_compare(g, ref, got, &cmp, &err), FE_OK);
    assert_true(cmp.ok);
    int32_t gi = p->group_of[tl_node(g, "pool")];
    assert_int_equal(p->groups[gi].klass, FE_CLASS_POOL);
    assert_contains(got->how[gi], how);
    fe_cmp_free(&cmp);
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_exec_free(ex);
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(classes), cmocka_unit_test(executes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
