/* test_exec_views.c: groups of reshapes run as no kernel (core/exec/exec.c,
 * fe_exec_view_source): their outputs are their source's memory, the
 * source lives as long as any view of it is read, and the results equal
 * the unfused reference, views of views and views that are graph outputs
 * included. */
#include "testlib.h"
#include "execlib.h"

#include "compare.h"
#include "exec.h"
#include "plan.h"
#include "plan_build.h"

/* in [4, 6] -> a (relu) -> v1 (reshape [6, 4]) -> v2 (reshape [24]);
 * b (exp of in) is made after v1 and v2, when a's buffer would be free
 * again if the views did not hold it; out = v2 + reshape(b); v1 is also a
 * graph output. */
static fe_graph *model(void)
{
    return tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'in': {'shape': [4, 6], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'a', 'op': 'relu', 'inputs': ['in'], 'outputs': ['ta']},"
        "  {'name': 'v1', 'op': 'reshape', 'inputs': ['ta'], 'outputs': ['tv1'], 'attrs': {'shape': [6, 4]}},"
        "  {'name': 'v2', 'op': 'reshape', 'inputs': ['tv1'], 'outputs': ['tv2'], 'attrs': {'shape': [24]}},"
        "  {'name': 'b', 'op': 'exp', 'inputs': ['in'], 'outputs': ['tb']},"
        "  {'name': 'vb', 'op': 'reshape', 'inputs': ['tb'], 'outputs': ['tvb'], 'attrs': {'shape': [24]}},"
        "  {'name': 'out', 'op': 'add', 'inputs': ['tv2', 'tvb'], 'outputs': ['tout']}],"
        " 'outputs': ['tout', 'tv1']}");
}

/* Run the plan with the given labels (by node, in node order) against the
 * reference; the group of node `at` must have run as `how` says. */
static void agree(const fe_graph *g, const int32_t *labels, const char *at, const char *how)
{
    fe_error err = {0};
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    if (!p)
        fail_msg("%s", err.message);
    tl_agree(g, p, at, how);
    fe_plan_free(p);
}

static void sources(void **state)
{
    (void)state;
    fe_graph *g = model();
    int32_t v1 = tl_node(g, "v1"), v2 = tl_node(g, "v2"), a = tl_node(g, "a");
    int32_t src = fe_exec_view_source(g, (int32_t[]){v1}, 1);
    assert_int_equal(src, fe_node_output(g, fe_graph_node(g, a), 0));
    /* a chain of views is a view of the chain's first input */
    int32_t chain[2] = {v1 < v2 ? v1 : v2, v1 < v2 ? v2 : v1};
    assert_int_equal(fe_exec_view_source(g, chain, 2), src);
    /* a group with anything but reshapes is not */
    int32_t mixed[2] = {a < v1 ? a : v1, a < v1 ? v1 : a};
    assert_int_equal(fe_exec_view_source(g, mixed, 2), -1);
    /* two reshapes of different tensors are two buffers, not one view */
    int32_t two[2] = {v1, tl_node(g, "vb")};
    assert_int_equal(fe_exec_view_source(g, two, 2), -1);
    fe_graph_free(g);
}

static void executes(void **state)
{
    (void)state;
    fe_graph *g = model();
    int32_t labels[6];
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = v;
    /* every node alone: each reshape is a view */
    agree(g, labels, "v1", "view: its output is its input's memory");
    agree(g, labels, "v2", "view:");
    /* the two chained reshapes as one group: still a view */
    labels[tl_node(g, "v2")] = labels[tl_node(g, "v1")];
    agree(g, labels, "v2", "view:");
    /* a reshape grouped with its producer runs in that group's kernel */
    labels[tl_node(g, "v1")] = labels[tl_node(g, "v2")] = labels[tl_node(g, "a")];
    fe_error err = {0};
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    assert_non_null(p);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_exec_result *got = NULL;
    assert_int_equal(fe_exec_plan(ex, p, &got, &err), FE_OK);
    assert_null(strstr(got->how[p->group_of[tl_node(g, "a")]], "view:"));
    fe_exec_result_free(got);
    fe_exec_free(ex);
    fe_plan_free(p);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(sources), cmocka_unit_test(executes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
