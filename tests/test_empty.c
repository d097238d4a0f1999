/* test_empty.c: the empty cases that random graphs reached under UBSan: a
 * graph with no shaped tensor and no attribute (its shape, attribute and
 * blob arrays were NULL, and &g->shape[0] "applied a zero offset to a null
 * pointer" in core/ir/build_finish.c and graph.h's accessors), and a fused
 * program of no instructions (fused_vm.c copied zero instructions into its
 * NULL code array: memcpy(NULL, ..., 0)). Under `make test SANITIZE=1`
 * the second fails with gcc's UBSan before the fix; the first is checked
 * as the invariant that removes it (clang's UBSan also reports the null
 * offset; gcc 12's does not check it). */
#include "testlib.h"
#include "execlib.h"

#include "choice.h"
#include "exec.h"
#include "fused.h"
#include "plan.h"
#include "save.h"

/* Rank-0 tensors only, and no node has an attribute. */
static const char *scalars =
    "{'format': 'fuseeng.model/1', 'tensors': {"
    "  'a': {'shape': [], 'dtype': 'f32', 'kind': 'input'},"
    "  'b': {'shape': [], 'dtype': 'f32', 'kind': 'weight'}},"
    " 'nodes': [{'name': 'add', 'op': 'add', 'inputs': ['a', 'b'], 'outputs': ['s']},"
    "  {'name': 'relu', 'op': 'relu', 'inputs': ['s'], 'outputs': ['r']},"
    "  {'name': 'neg', 'op': 'neg', 'inputs': ['r'], 'outputs': ['y']}],"
    " 'outputs': ['y']}";

static void graph_arrays_never_null(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(scalars);
    assert_int_equal(g->nshape, 0);
    assert_int_equal(g->nattrs, 0);
    assert_non_null(g->shape);
    assert_non_null(g->shape_sym);
    assert_non_null(g->attrs);
    assert_non_null(g->ints);
    assert_non_null(g->blob);
    assert_non_null(g->io);
    assert_non_null(g->cons);
    assert_non_null(g->nodes);
    assert_non_null(g->outputs);
    for (int32_t t = 0; t < g->ntensors; t++)
        assert_non_null(fe_tensor_shape(g, fe_graph_tensor(g, t)));
    /* and it saves and loads back */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fe_error err = {0};
    assert_non_null(f);
    assert_int_equal(fe_save_model(g, f, 1, &err), FE_OK);
    fclose(f);
    fe_graph *h = tl_graph(buf);
    assert_int_equal(h->nnodes, g->nnodes);
    fe_graph_free(h);
    free(buf);
    fe_graph_free(g);
}

/* The scalar chain runs fused, against the reference. */
static void scalars_run_fused(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(scalars);
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_FUSED, 1);
    tl_agree(g, p, "add", "fused_rows");
    fe_plan_free(p);
    fe_graph_free(g);
}

/* A program of no nodes and no stores: it compiles to no instructions
 * (or is refused with a reason) and runs as nothing. */
static void program_of_nothing(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(scalars);
    fe_error err = {0};
    int32_t none = 0;
    fe_k_prog *p = fe_k_prog_compile_nodes(g, &none, 0, &none, 0, &err);
    if (p) {
        fe_exec *ex = fe_exec_new(g, NULL, &err);
        assert_non_null(ex);
        assert_int_equal(fe_k_prog_run_all(p, fe_exec_buffers(ex), 1, &err), FE_OK);
        fe_exec_free(ex);
        fe_k_prog_free(p);
    } else {
        assert_int_equal(err.code, FE_EINPUT);
        assert_true(err.message[0] != '\0');
    }
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(graph_arrays_never_null),
        cmocka_unit_test(scalars_run_fused),
        cmocka_unit_test(program_of_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
