/* test_launch.c: launch kinds (core/plan/launch.c): which groups are
 * generated kernels, extern library calls or views that launch nothing,
 * decided from the op registry's flags alone. */
#include "testlib.h"
#include "launch.h"
#include "ops.h"

static const char *model =
    "{'format': 'fuseeng.model/1',"
    " 'tensors': {'a': {'shape': [8, 64], 'dtype': 'f32', 'kind': 'input'},"
    "             'w': {'shape': [64, 64], 'dtype': 'f32', 'kind': 'weight'},"
    "             'q': {'shape': [1, 2, 8, 16], 'dtype': 'f32', 'kind': 'input'}},"
    " 'nodes': [{'name': 'mm', 'op': 'matmul', 'inputs': ['a', 'w'], 'outputs': ['y']},"
    "           {'name': 'bias', 'op': 'add', 'inputs': ['y', 'a'], 'outputs': ['z']},"
    "           {'name': 'flip', 'op': 'transpose', 'inputs': ['z'], 'outputs': ['zt'],"
    "            'attrs': {'perm': [1, 0]}},"
    "           {'name': 'flat', 'op': 'reshape', 'inputs': ['zt'], 'outputs': ['zf'],"
    "            'attrs': {'shape': [512]}},"
    "           {'name': 'cut', 'op': 'slice', 'inputs': ['zf'], 'outputs': ['zs'],"
    "            'attrs': {'axis': 0, 'start': 0, 'end': 8}},"
    "           {'name': 'act', 'op': 'relu', 'inputs': ['zs'], 'outputs': ['r']},"
    "           {'name': 'att', 'op': 'sdpa', 'inputs': ['q', 'q', 'q'], 'outputs': ['o']}],"
    " 'outputs': ['r', 'o']}";

static fe_launch launch(const fe_graph *g, const char *names)
{
    int32_t ids[8];
    int n = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *t = strtok(buf, ","); t && n < 8; t = strtok(NULL, ","))
        ids[n++] = fe_graph_find_node(g, t);
    return fe_group_launch(g, ids, n);
}

static void kinds(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(model);
    assert_int_equal(launch(g, "mm"), FE_LAUNCH_EXTERN);
    assert_int_equal(launch(g, "att"), FE_LAUNCH_EXTERN);
    /* An epilogue makes a matmul generated code (a template kernel). */
    assert_int_equal(launch(g, "mm,bias"), FE_LAUNCH_KERNEL);
    assert_int_equal(launch(g, "bias"), FE_LAUNCH_KERNEL);
    /* Views alone, one or several, launch nothing; with real work they are
     * part of a kernel. */
    assert_int_equal(launch(g, "flip"), FE_LAUNCH_NONE);
    assert_int_equal(launch(g, "flip,flat,cut"), FE_LAUNCH_NONE);
    assert_int_equal(launch(g, "cut,act"), FE_LAUNCH_KERNEL);
    assert_string_equal(fe_launch_name(FE_LAUNCH_KERNEL), "kernel");
    assert_string_equal(fe_launch_name(FE_LAUNCH_EXTERN), "extern");
    assert_string_equal(fe_launch_name(FE_LAUNCH_NONE), "view");
    fe_graph_free(g);
}

/* The registry is the one owner: exactly these ops carry the flags. */
static void registry(void **state)
{
    (void)state;
    const char *views[] = {"reshape", "transpose", "slice", "expand"};
    const char *libs[] = {"matmul", "conv2d", "sdpa"};
    int nv = 0, nl = 0;
    for (int i = 0; i < FE_NOPS; i++) {
        nv += (fe_op_get(i)->flags & FE_OPF_VIEW) != 0;
        nl += (fe_op_get(i)->flags & FE_OPF_LIBRARY) != 0;
    }
    assert_int_equal(nv, 4);
    assert_int_equal(nl, 3);
    for (int i = 0; i < 4; i++)
        assert_true(fe_op_get(fe_op_find(views[i]))->flags & FE_OPF_VIEW);
    for (int i = 0; i < 3; i++)
        assert_true(fe_op_get(fe_op_find(libs[i]))->flags & FE_OPF_LIBRARY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kinds),
        cmocka_unit_test(registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
