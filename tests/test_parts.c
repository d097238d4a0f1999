/* test_parts.c: a group no fused kernel takes whole runs in fused parts
 * around the members no fused program runs (group_parts.c), under AUTO.
 * Each case runs the plan against the unfused reference (the outputs must
 * agree) and checks the group's "how" line: how many parts, which members
 * ran alone, what fused. The graphs are under a million elements, so the
 * guard does not time them and the lines do not depend on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "execlib.h"

#include "choice.h"

static void agree(fe_graph *g, int kernel, int split, const char *at, char *how, size_t size)
{
    fe_plan *p = tl_one_group(g, kernel, split);
    tl_agree_how(g, p, at, how, size);
    fe_plan_free(p);
}

/* A log_softmax over the leading axis between two elementwise chains:
 * fused, log_softmax alone, fused; and with a TLF split, the same. */
static void between_chains(void **state)
{
    (void)state;
    char how[4096];
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [64, 96], 'dtype': 'f32', 'kind': 'input'},"
        "  'a': {'shape': [96], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'm', 'op': 'mul', 'inputs': ['x', 'a'], 'outputs': ['t0']},"
        "  {'name': 't', 'op': 'tanh', 'inputs': ['t0'], 'outputs': ['t1']},"
        "  {'name': 'ls', 'op': 'log_softmax', 'inputs': ['t1'], 'outputs': ['t2'], 'attrs': {'axis': 0}},"
        "  {'name': 'e', 'op': 'exp', 'inputs': ['t2'], 'outputs': ['t3']},"
        "  {'name': 'y', 'op': 'add', 'inputs': ['t3', 't0'], 'outputs': ['t4']}],"
        " 'outputs': ['t4']}");
    agree(g, FE_K_CHOICE_AUTO, 1, "m", how, sizeof how);
    assert_contains(how, "fused_rows: 3 parts in turn, 4 ops in 2 fused parts around the members "
                         "no fused program runs (log_softmax), each on its own kernel");
    assert_contains(how, "whole, it does not fuse because node 'ls' (log_softmax): only a softmax "
                         "over the last axis fuses");
    agree(g, FE_K_CHOICE_AUTO, 3, "m", how, sizeof how);
    assert_contains(how, "3 parts in turn, 4 ops in 2 fused parts (the TLF split applies to them)");
    /* a forced fused_rows is the fused executor or nothing */
    agree(g, FE_K_CHOICE_FUSED, 1, "m", how, sizeof how);
    assert_true(strncmp(how, "per_op: 5 ops run one by one", 28) == 0);
    assert_contains(how, "kernel fused_rows cannot take it");
    fe_graph_free(g);
}

/* Two solos in a row (the second reads the first at the same level) and
 * a value of the first part read by the last one, past them. */
static void solos_in_a_row(void **state)
{
    (void)state;
    char how[4096];
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [32, 48], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'n', 'op': 'neg', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 's', 'op': 'sigmoid', 'inputs': ['t0'], 'outputs': ['t1']},"
        "  {'name': 'l1', 'op': 'softmax', 'inputs': ['t1'], 'outputs': ['t2'], 'attrs': {'axis': 0}},"
        "  {'name': 'l2', 'op': 'log_softmax', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axis': 0}},"
        "  {'name': 'a', 'op': 'add', 'inputs': ['t3', 't0'], 'outputs': ['t4']},"
        "  {'name': 'r', 'op': 'relu', 'inputs': ['t4'], 'outputs': ['t5']}],"
        " 'outputs': ['t5', 't1']}");
    agree(g, FE_K_CHOICE_AUTO, 1, "n", how, sizeof how);
    assert_contains(how, "fused_rows: 4 parts in turn, 4 ops in 2 fused parts around the members "
                         "no fused program runs (softmax, log_softmax)");
    fe_graph_free(g);
}

/* Gathers feeding an add and a layer_norm (GPT-2's embeddings): the
 * gathers alone, the rest one program. */
static void gathers(void **state)
{
    (void)state;
    char how[4096];
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'ids': {'shape': [8, 16], 'dtype': 'i64', 'kind': 'input'},"
        "  'pos': {'shape': [8, 16], 'dtype': 'i64', 'kind': 'input'},"
        "  'wte': {'shape': [50, 64], 'dtype': 'f32', 'kind': 'weight'},"
        "  'wpe': {'shape': [16, 64], 'dtype': 'f32', 'kind': 'weight'},"
        "  'lw': {'shape': [64], 'dtype': 'f32', 'kind': 'weight'},"
        "  'lb': {'shape': [64], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'e1', 'op': 'embedding', 'inputs': ['wte', 'ids'], 'outputs': ['t0']},"
        "  {'name': 'e2', 'op': 'embedding', 'inputs': ['wpe', 'pos'], 'outputs': ['t1']},"
        "  {'name': 'a', 'op': 'add', 'inputs': ['t0', 't1'], 'outputs': ['t2']},"
        "  {'name': 'ln', 'op': 'layer_norm', 'inputs': ['t2', 'lw', 'lb'], 'outputs': ['t3'],"
        "   'attrs': {'normalized_shape': [64]}}],"
        " 'outputs': ['t3']}");
    agree(g, FE_K_CHOICE_AUTO, 1, "a", how, sizeof how);
    assert_contains(how, "fused_rows: 3 parts in turn, 2 ops in 1 fused part around the members no "
                         "fused program runs (embedding x2)");
    fe_graph_free(g);
}

/* A matmul beside a member that is neither its prologue nor its epilogue:
 * the matmul runs with its epilogue as one part, the other member alone.
 * When a solo of its level reads the matmul too, it runs alone instead. */
static void matmul_with_epilogue(void **state)
{
    (void)state;
    char how[4096];
    const char *fmt =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [64, 32], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [32, 48], 'dtype': 'f32', 'kind': 'weight'},"
        "  'm': {'shape': [64, 48], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'side', 'op': 'sigmoid', 'inputs': ['m'], 'outputs': ['s']},"
        "  {'name': 'mm', 'op': 'matmul', 'inputs': ['x', 'w'], 'outputs': ['t0']},"
        "  {'name': 'sc', 'op': 'mul', 'inputs': ['t0', 's'], 'outputs': ['t1']},"
        "  {'name': 'sm', 'op': 'softmax', 'inputs': ['t1'], 'outputs': ['t2'], 'attrs': {'axis': -1}}%s],"
        " 'outputs': ['t2'%s]}";
    char json[2048];
    snprintf(json, sizeof json, fmt, "", "");
    fe_graph *g = tl_graph_q(json);
    agree(g, FE_K_CHOICE_AUTO, 1, "mm", how, sizeof how);
    assert_contains(how, "fused_rows: 2 parts in turn, 3 ops in 1 fused part (matmul with its "
                         "epilogue); whole, it does not fuse because node 'side' (sigmoid) is "
                         "neither a prologue nor an epilogue of matmul 'mm'");
    fe_graph_free(g);
    snprintf(json, sizeof json, fmt,
             ", {'name': 'col', 'op': 'log_softmax', 'inputs': ['t0'], 'outputs': ['t3'], "
             "'attrs': {'axis': 0}}", ", 't3'");
    g = tl_graph_q(json);
    agree(g, FE_K_CHOICE_AUTO, 1, "mm", how, sizeof how);
    assert_contains(how, "fused_rows: 4 parts in turn, 2 ops in 1 fused part around the members no "
                         "fused program runs (matmul, log_softmax)");
    fe_graph_free(g);
}

/* A solo that fails while running (an index out of range, as a bad
 * --inputs file gives): the run stops with its error, and the buffers
 * passed between parts go back (the sanitizer build checks). */
static void solo_fails(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'ids': {'shape': [4, 8], 'dtype': 'i64', 'kind': 'input'},"
        "  'x': {'shape': [4, 8, 16], 'dtype': 'f32', 'kind': 'input'},"
        "  'tab': {'shape': [10, 16], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'm', 'op': 'mul', 'inputs': ['x', 'x'], 'outputs': ['t0']},"
        "  {'name': 's', 'op': 'sigmoid', 'inputs': ['t0'], 'outputs': ['t1']},"
        "  {'name': 'e', 'op': 'embedding', 'inputs': ['tab', 'ids'], 'outputs': ['t2']},"
        "  {'name': 'a', 'op': 'add', 'inputs': ['t2', 't1'], 'outputs': ['t3']},"
        "  {'name': 'r', 'op': 'relu', 'inputs': ['t3'], 'outputs': ['t4']}],"
        " 'outputs': ['t4']}");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_AUTO, 1);
    char how[4096];
    tl_agree_how(g, p, "m", how, sizeof how);
    assert_contains(how, "fused_rows: 3 parts in turn, 4 ops in 2 fused parts around the members no "
                         "fused program runs (embedding)");
    int64_t *ids = fe_exec_buffers(ex)[fe_graph_find_tensor(g, "ids")].data;
    ids[5] = 10;
    fe_exec_result *got = NULL;
    assert_int_not_equal(fe_exec_plan(ex, p, &got, &err), FE_OK);
    assert_null(got);
    assert_contains(err.message, "out of range");
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* Groups that stay op by op: the graph, its node to look up, the line's
 * head and what else it must say (NULL: nothing). */
static const struct {
    const char *json, *at, *head, *says;
} op_by_op[] = {
    /* nothing of several members fuses around the solo */
    {"{'format': 'fuseeng.model/1', 'tensors': {"
     "  'x': {'shape': [32, 48], 'dtype': 'f32', 'kind': 'input'}},"
     " 'nodes': [{'name': 'n', 'op': 'neg', 'inputs': ['x'], 'outputs': ['t0']},"
     "  {'name': 'l', 'op': 'log_softmax', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axis': 0}},"
     "  {'name': 'e', 'op': 'exp', 'inputs': ['t1'], 'outputs': ['t2']}],"
     " 'outputs': ['t2']}",
     "n", "per_op: 3 ops run one by one", NULL},
    /* a matmul and one member neither our GEMM nor oneDNN takes with it (a
     * column mean; oneDNN takes no f16): the only part holding both would
     * be the group again (this recursed without end once) */
    {"{'format': 'fuseeng.model/1', 'tensors': {"
     "  'x': {'shape': [64, 32], 'dtype': 'f16', 'kind': 'input'},"
     "  'w': {'shape': [32, 48], 'dtype': 'f16', 'kind': 'weight'}},"
     " 'nodes': [{'name': 'mm', 'op': 'matmul', 'inputs': ['x', 'w'], 'outputs': ['t0']},"
     "  {'name': 'cm', 'op': 'mean', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0]}}],"
     " 'outputs': ['t1']}",
     "mm", "per_op: 2 ops run one by one",
     "a column reduction does not run inside a matmul's prologue or epilogue"},
};

static void stays_op_by_op(void **state)
{
    (void)state;
    char how[4096];
    for (size_t k = 0; k < sizeof op_by_op / sizeof op_by_op[0]; k++) {
        fe_graph *g = tl_graph_q(op_by_op[k].json);
        agree(g, FE_K_CHOICE_AUTO, 1, op_by_op[k].at, how, sizeof how);
        assert_true(strncmp(how, op_by_op[k].head, strlen(op_by_op[k].head)) == 0);
        if (op_by_op[k].says)
            assert_contains(how, op_by_op[k].says);
        fe_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(between_chains), cmocka_unit_test(solos_in_a_row),
        cmocka_unit_test(gathers), cmocka_unit_test(matmul_with_epilogue),
        cmocka_unit_test(solo_fails), cmocka_unit_test(stays_op_by_op),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
