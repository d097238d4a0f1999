/* test_guard.c: AUTO's guard (group_pick.c, fe_k_group_auto_guard). Every
 * fused group big enough to time is measured against its ops one by one,
 * and its "how" line says which won and by how much; op by op is kept only
 * when faster by more than 5%. Which one wins depends on the host, so the
 * tests check that the line and the figures agree with the rule, not who
 * won; groups too small to time, and forced kernels, are left alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "execlib.h"

#include "choice.h"

/* tanh(relu(x * a + b) * c) + x on [rows, 1024] f32, issue 16's chain. */
static fe_graph *chain(int rows)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [%d, 1024], 'dtype': 'f32', 'kind': 'input'},"
        "  'a': {'shape': [1024], 'dtype': 'f32', 'kind': 'weight'},"
        "  'b': {'shape': [1024], 'dtype': 'f32', 'kind': 'weight'},"
        "  'c': {'shape': [1024], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'm', 'op': 'mul', 'inputs': ['x', 'a'], 'outputs': ['t0']},"
        "  {'name': 'p', 'op': 'add', 'inputs': ['t0', 'b'], 'outputs': ['t1']},"
        "  {'name': 'r', 'op': 'relu', 'inputs': ['t1'], 'outputs': ['t2']},"
        "  {'name': 'q', 'op': 'mul', 'inputs': ['t2', 'c'], 'outputs': ['t3']},"
        "  {'name': 't', 'op': 'tanh', 'inputs': ['t3'], 'outputs': ['t4']},"
        "  {'name': 'y', 'op': 'add', 'inputs': ['t4', 'x'], 'outputs': ['t5']}],"
        " 'outputs': ['t5']}", rows);
    return tl_graph_q(json);
}

/* The whole graph as one group under kernel; its how line into how. */
static void run_one(fe_graph *g, int kernel, char *how, size_t size)
{
    fe_plan *p = tl_one_group(g, kernel, 1);
    tl_agree_how(g, p, "m", how, size);
    fe_plan_free(p);
}

/* 4M elements: timed; the line names the winner, and the figures agree. */
static void timed(void **state)
{
    (void)state;
    char how[2048];
    double f, o;
    fe_graph *g = chain(1024);
    run_one(g, FE_K_CHOICE_AUTO, how, sizeof how);
    const char *kept = strstr(how, "; kept over per_op: ");
    const char *lost = strstr(how, "measured slower fused than its ops one by one: ");
    if (kept) {
        assert_true(strncmp(how, "fused_rows: ", 12) == 0);
        assert_int_equal(sscanf(kept, "; kept over per_op: %lf vs %lf ms", &f, &o), 2);
        assert_true(o >= 0.95 * f);
    } else {
        if (!lost)
            fail_msg("neither kept nor replaced: %s", how);
        assert_true(strncmp(how, "per_op: 6 ops run one by one", 28) == 0);
        assert_int_equal(sscanf(lost, "measured slower fused than its ops one by one: %lf vs %lf ms",
                                &f, &o), 2);
        assert_true(o < 0.95 * f);
        assert_contains(how, "(fused, it ran fused_rows: ");
    }
    assert_true(f > 0 && o > 0);
    /* measured once per shape in the process: the same figures again */
    char again[2048];
    run_one(g, FE_K_CHOICE_AUTO, again, sizeof again);
    assert_string_equal(how, again);
    fe_graph_free(g);
}

/* Under a million elements, or under a forced kernel: not timed. */
static void untimed(void **state)
{
    (void)state;
    char how[2048];
    fe_graph *g = chain(64);
    run_one(g, FE_K_CHOICE_AUTO, how, sizeof how);
    assert_true(strncmp(how, "fused_rows: ", 12) == 0);
    assert_null(strstr(how, "per_op"));
    fe_graph_free(g);
    g = chain(1024);
    run_one(g, FE_K_CHOICE_FUSED, how, sizeof how);
    assert_true(strncmp(how, "fused_rows: ", 12) == 0);
    assert_null(strstr(how, "per_op"));
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(timed), cmocka_unit_test(untimed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
