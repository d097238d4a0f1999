/* test_paired.c: the paired timing of core/exec/paired.c: medians, the
 * paired ratio and its bootstrap interval on known samples, and rounds
 * that run every plan once per round. */
#include "testlib.h"

#include "exec.h"
#include "paired.h"

static void medians(void **state)
{
    (void)state;
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    assert_float_equal(fe_paired_median(odd, 3), 3, 0);
    assert_float_equal(fe_paired_median(even, 4), 2.5, 0);
}

static void ratios(void **state)
{
    (void)state;
    fe_error err = {0};
    double base[40], x[40], est, lo, hi;
    /* the same times: every ratio is 1, and so is the interval */
    for (int k = 0; k < 40; k++)
        base[k] = x[k] = 1 + k % 7;
    assert_int_equal(fe_paired_ratio(base, x, 40, &est, &lo, &hi, &err), FE_OK);
    assert_float_equal(est, 1, 0);
    assert_float_equal(lo, 1, 0);
    assert_float_equal(hi, 1, 0);
    /* the plan twice as fast in every round, whatever the round's drift */
    for (int k = 0; k < 40; k++)
        x[k] = base[k] / 2;
    assert_int_equal(fe_paired_ratio(base, x, 40, &est, &lo, &hi, &err), FE_OK);
    assert_float_equal(est, 2, 1e-12);
    assert_float_equal(lo, 2, 1e-12);
    assert_float_equal(hi, 2, 1e-12);
    /* ratios spread around 1.5: the interval holds the estimate, not 1,
     * and is narrower than the spread of the ratios */
    for (int k = 0; k < 40; k++)
        x[k] = base[k] / (1.3 + 0.4 * (k % 5) / 4.0);
    assert_int_equal(fe_paired_ratio(base, x, 40, &est, &lo, &hi, &err), FE_OK);
    assert_true(lo <= est && est <= hi);
    assert_true(lo > 1.3 && hi < 1.7);
    /* ratios on both sides of 1: the interval holds 1 (the noise case) */
    for (int k = 0; k < 40; k++)
        x[k] = base[k] / (k % 2 ? 1.05 : 0.95);
    assert_int_equal(fe_paired_ratio(base, x, 40, &est, &lo, &hi, &err), FE_OK);
    assert_true(lo <= 1 && hi >= 1);
}

/* relu then exp on 64x64 floats, a session on it and its unfused plan. */
static fe_graph *two_ops(fe_exec **ex, fe_plan **u)
{
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [64, 64], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'a', 'op': 'relu', 'inputs': ['x'], 'outputs': ['ta']},"
        "  {'name': 'b', 'op': 'exp', 'inputs': ['ta'], 'outputs': ['tb']}],"
        " 'outputs': ['tb']}");
    fe_error err = {0};
    *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(*ex);
    *u = fe_plan_unfused(g, &err);
    assert_non_null(*u);
    return g;
}

static void rounds(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_exec *ex;
    fe_plan *u;
    fe_graph *g = two_ops(&ex, &u);
    fe_plan *pl[2] = {u, u};
    double *ms = NULL;
    int n = 0;
    assert_int_equal(fe_paired_rounds(ex, pl, 2, 0, 7, &ms, &n, &err), FE_OK);
    assert_int_equal(n, 7);
    for (int k = 0; k < 2 * n; k++)
        assert_true(ms[k] > 0);
    free(ms);
    /* sized by the budget: at least 5 rounds */
    assert_int_equal(fe_paired_rounds(ex, pl, 2, 0.001, 0, &ms, &n, &err), FE_OK);
    assert_true(n >= 5 && n <= 200);
    free(ms);
    assert_int_equal(fe_paired_rounds(ex, pl, 0, 0, 3, &ms, &n, &err), FE_EINPUT);
    assert_null(ms);
    fe_plan_free(u);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* The budget bounds the rounds: a slow round cuts them below 5, to what
 * fits in max(budget, 10 s), never below 1; fast rounds keep 5 to 200. */
static void budget_bound(void **state)
{
    (void)state;
    assert_int_equal(fe_paired_count(0.5, 1.0, 2), 200);       /* 1 ms rounds */
    assert_int_equal(fe_paired_count(0.5, 100.0, 2), 10);
    assert_int_equal(fe_paired_count(0.5, 1000.0, 2), 5);      /* 5 s: the minimum holds */
    assert_int_equal(fe_paired_count(0.5, 4000.0, 2), 2);      /* 20 s for 5: 2 fit in 10 s */
    assert_int_equal(fe_paired_count(0.5, 40000.0, 2), 1);     /* a 7B pass: one round */
    assert_int_equal(fe_paired_count(60, 4000.0, 2), 15);      /* a long budget runs more */
    assert_int_equal(fe_paired_count(0, 8000.0, 2), 1);

    /* a slow check run is the warm-up (none more), groups and peaks kept */
    fe_error err = {0};
    fe_exec *ex;
    fe_plan *u;
    fe_graph *g = two_ops(&ex, &u);
    fe_plan *pl[2] = {u, u};
    double first[2] = {40000, 40000}, gm[2] = {-1, -1}, gm0[2] = {-1, -1}, *ms = NULL;
    double *gms[2] = {NULL, gm};   /* plan 1's groups only */
    int64_t peak[2] = {0, 0};
    fe_paired_opts o = {.budget = 0.5, .first_ms = first, .group_ms = gms, .peak = peak};
    int n = 0;
    assert_int_equal(fe_paired_rounds_opts(ex, pl, 2, &o, &ms, &n, &err), FE_OK);
    assert_int_equal(n, 1);
    assert_true(gm[0] >= 0 && gm[1] >= 0);
    free(ms);
    /* both plans' groups */
    gms[0] = gm0;
    assert_int_equal(fe_paired_rounds_opts(ex, pl, 2, &o, &ms, &n, &err), FE_OK);
    assert_true(gm0[0] >= 0 && gm0[1] >= 0);
    /* ta and tb live together: 2 x 64 x 64 floats */
    assert_int_equal(peak[0], 2 * 64 * 64 * 4);
    assert_int_equal(peak[1], 2 * 64 * 64 * 4);
    free(ms);

    /* one round of long passes: a plan whose run before was warm takes it
     * as its sample, groups and all; the other plan runs */
    double warm_groups[2] = {123, 456};
    const double *fg[2] = {NULL, warm_groups};
    int kept = 0;
    o.first_group_ms = fg;
    o.nkept = &kept;
    assert_int_equal(fe_paired_rounds_opts(ex, pl, 2, &o, &ms, &n, &err), FE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(kept, 1);
    assert_float_equal(ms[1], 40000, 0);
    assert_true(ms[0] > 0 && ms[0] < 40000);
    assert_float_equal(gm[0], 123, 0);
    assert_float_equal(gm[1], 456, 0);
    assert_true(gm0[0] >= 0 && gm0[0] < 123);
    free(ms);
    /* passes that leave room for more rounds: every sample is a new run */
    first[0] = first[1] = 2;
    kept = 0;
    assert_int_equal(fe_paired_rounds_opts(ex, pl, 2, &o, &ms, &n, &err), FE_OK);
    assert_true(n >= 5);
    assert_int_equal(kept, 0);
    assert_true(gm[0] < 123 && gm[1] < 456);
    free(ms);
    fe_plan_free(u);
    fe_exec_free(ex);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(medians), cmocka_unit_test(ratios),
                                       cmocka_unit_test(rounds), cmocka_unit_test(budget_bound)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
