/* test_fallback.c: a legal plan always executes. A grouped conv2d whose
 * epilogue needs whole rows (batch_norm, relu, then a mean over each
 * row, as RegNet's squeeze-excite blocks have it) on rows wider than a
 * GEMM column block runs fused (the GEMM hands it whole rows); a fused
 * kernel that fails at run time falls back to the group's ops one by one
 * and says so; and an epilogue that refuses a block says why. */
#include <math.h>
#include <string.h>

#include "testlib.h"
#include "execlib.h"

#include "choice.h"
#include "exec.h"
#include "fused.h"
#include "gemm.h"
#include "group.h"
#include "group_impl.h"

/* 32 x 32 output pixels: rows of 1024 columns, wider than any column
 * block of the GEMM (fe_k_gemm_blocking's nc) this test runs with. */
static fe_graph *se_block(void)
{
    return tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [1, 16, 32, 32], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [16, 8, 3, 3], 'dtype': 'f32', 'kind': 'weight'},"
        "  'g': {'shape': [16], 'dtype': 'f32', 'kind': 'weight'},"
        "  'b': {'shape': [16], 'dtype': 'f32', 'kind': 'weight'},"
        "  'm': {'shape': [16], 'dtype': 'f32', 'kind': 'weight'},"
        "  'v': {'shape': [16], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'conv', 'op': 'conv2d', 'inputs': ['x', 'w'], 'outputs': ['c'],"
        "            'attrs': {'padding': [1, 1], 'groups': 2}},"
        "  {'name': 'bn', 'op': 'batch_norm', 'inputs': ['c', 'g', 'b', 'm', 'v'], 'outputs': ['n'],"
        "   'attrs': {'eps': 1e-5}},"
        "  {'name': 'act', 'op': 'relu', 'inputs': ['n'], 'outputs': ['r']},"
        "  {'name': 'pool', 'op': 'mean', 'inputs': ['r'], 'outputs': ['s'],"
        "   'attrs': {'axes': [2, 3], 'keepdim': true}}],"
        " 'outputs': ['r', 's']}");
}

static void whole_rows_wider_than_a_block(void **state)
{
    (void)state;
    int mr, nr, mc, kc, nc;
    fe_k_gemm_blocking(&mr, &nr, &mc, &kc, &nc);
    if (nc >= 32 * 32)
        skip();   /* rows fit one column block: nothing to show here */
    fe_graph *g = se_block();
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_MATMUL_BLOCKED, 1);
    char how[2048];
    tl_agree_how(g, p, "conv", how, sizeof how);
    assert_contains(how, "epilogue (3 ops: batch_norm, relu, mean) on each output block in cache "
                         "(whole rows)");
    if (strstr(how, "fell back"))
        fail_msg("the fused kernel failed: %s", how);
    fe_plan_free(p);
    fe_graph_free(g);
}

/* Run gr on ex's buffers and compare its outputs with the reference's. */
static void run_agrees(fe_graph *g, fe_k_group *gr, fe_exec *ex, const fe_exec_result *ref)
{
    fe_error err = {0};
    fe_k_tensor *bufs = fe_exec_buffers(ex);
    const char *outs[2] = {"r", "s"};
    for (int k = 0; k < 2; k++)
        assert_int_equal(fe_exec_alloc(ex, fe_graph_find_tensor(g, outs[k]), &err), FE_OK);
    if (fe_k_group_run(gr, bufs, &err) != FE_OK)
        fail_msg("run: %s", err.message);
    for (int k = 0; k < 2; k++) {
        int32_t t = fe_graph_find_tensor(g, outs[k]);
        const float *got = bufs[t].data, *want = ref->outputs[k].data;
        for (int64_t i = 0; i < fe_graph_tensor(g, t)->numel; i++)
            assert_true(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])));
        fe_exec_release(ex, t);
    }
}

/* A fused kernel that failed gives way to the ops one by one, which give
 * the reference's values, and its description keeps the cause and what
 * it ran before. */
static void falls_back_and_says_so(void **state)
{
    (void)state;
    fe_graph *g = se_block();
    fe_error err = {0};
    int32_t nodes[4] = {0, 1, 2, 3};
    fe_k_group *gr = fe_k_group_new(g, nodes, 4, 1, FE_K_CHOICE_MATMUL_BLOCKED, &err);
    assert_non_null(gr);
    assert_true(fe_k_group_is_fused(gr));
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_exec_result *ref = NULL;
    assert_int_equal(fe_exec_reference(ex, &ref, &err), FE_OK);
    run_agrees(g, gr, ex, ref);
    assert_false(fe_k_group_fell_back(gr));
    assert_int_equal(fe_k_group_fall_back(gr, "the cause a kernel gave", &err), FE_OK);
    assert_true(fe_k_group_fell_back(gr));
    assert_false(fe_k_group_is_fused(gr));
    const char *how = fe_k_group_how(gr);
    assert_contains(how, "fell back at run time");
    assert_contains(how, "the cause a kernel gave");
    assert_contains(how, "it was matmul_blocked: conv2d as packed");
    run_agrees(g, gr, ex, ref);
    fe_exec_result_free(ref);
    fe_exec_free(ex);
    fe_k_group_free(gr);
    fe_graph_free(g);
}

/* The epilogue program of the group refuses a block that is not whole
 * rows, and keeps why for the error the kernel then gives; a reset
 * forgets it. */
static void a_refused_block_keeps_its_cause(void **state)
{
    (void)state;
    fe_graph *g = se_block();
    fe_error err = {0};
    int32_t nodes[4] = {0, 1, 2, 3};
    fe_k_group *gr = fe_k_group_new(g, nodes, 4, 1, FE_K_CHOICE_MATMUL_BLOCKED, &err);
    assert_non_null(gr);
    assert_non_null(gr->epi);
    assert_true(fe_k_prog_full_rows(gr->epi));
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    float blk[16 * 512];
    memset(blk, 0, sizeof blk);
    fe_k_prog_reset(gr->epi);
    assert_null(fe_k_prog_failure(gr->epi));
    assert_int_not_equal(fe_k_prog_run_block(gr->epi, fe_exec_buffers(ex), 0, 16, 0, 512, blk, 512, 0), 0);
    assert_non_null(fe_k_prog_failure(gr->epi));
    assert_contains(fe_k_prog_failure(gr->epi), "needs whole rows of 1024 columns");
    assert_contains(fe_k_prog_failure(gr->epi), "columns 0..512");
    /* chained after the kernel's own words */
    fe_error_set(&err, FE_ERUNTIME, "matmul: epilogue failed");
    fe_error_cause(&err, "%s", fe_k_prog_failure(gr->epi));
    assert_string_equal(err.message, "matmul: epilogue failed: the program needs whole rows of 1024 "
                                     "columns; the kernel handed columns 0..512");
    fe_k_prog_reset(gr->epi);
    assert_null(fe_k_prog_failure(gr->epi));
    fe_exec_free(ex);
    fe_k_group_free(gr);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(whole_rows_wider_than_a_block),
                                       cmocka_unit_test(falls_back_and_says_so),
                                       cmocka_unit_test(a_refused_block_keeps_its_cause)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
