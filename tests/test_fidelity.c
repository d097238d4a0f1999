/* test_fidelity.c: fuseeng fidelity's figures (core/api/api_fidelity.c) on
 * comparisons filled by hand: Spearman's rho with tied ranks, plans the
 * simulator cannot tell apart counted once, failed cells left out, models
 * within noise set apart, the simulator's pick judged by the intervals,
 * the median relative error, and the three formats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "api_ab.h"

/* Cell (r, c): simulated and measured ms, ratio interval to column 0. */
static void cell(fe_ab *ab, int r, int c, double sim, double meas, double lo, double hi)
{
    fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
    x->status = FE_AB_OK;
    x->fig.time_s = sim * 1e-3;
    x->fig.kernels = c + 1;
    x->fig.l3_bytes = 1000 * (c + 1);
    x->cpu_ms = meas;
    x->reps = 9;
    x->ratio = (lo + hi) / 2;
    x->lo = lo;
    x->hi = hi;
}

static fe_ab *make(int nrows, int ncols)
{
    fe_error err = {0};
    fe_ab *ab = fe_ab_alloc(nrows, ncols, &err);
    assert_non_null(ab);
    ab->measure = 1;
    for (int r = 0; r < nrows; r++) {
        ab->rows[r].ran = 1;
        snprintf(ab->rows[r].model, sizeof ab->rows[r].model, "m%d", r);
        snprintf(ab->rows[r].machine, sizeof ab->rows[r].machine, "host");
    }
    for (int c = 0; c < ncols; c++)
        snprintf(ab->cnames[c], sizeof ab->cnames[c], "p%d", c);
    return ab;
}

static void perfect_and_reversed(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_ab *ab = make(2, 4);
    /* model 0: the same order both ways; model 1: reversed */
    double sim[4] = {10, 8, 6, 4};
    for (int c = 0; c < 4; c++) {
        double r = 10.0 / (10 - 2 * c);
        cell(ab, 0, c, sim[c], 2 * sim[c], c ? r * 0.98 : 1, c ? r * 1.02 : 1);
        double m = 4 + 2 * c;   /* measured: 4, 6, 8, 10 */
        cell(ab, 1, c, sim[c], m, c ? 4 / m * 0.98 : 1, c ? 4 / m * 1.02 : 1);
    }
    fe_fidelity *f = fe_ab_fidelity(ab, &err);
    assert_non_null(f);
    fe_fidelity_summary s;
    fe_fidelity_summarise(f, &s);
    assert_int_equal(s.models, 2);
    assert_int_equal(s.plans, 8);
    assert_int_equal(s.rho_models, 2);
    assert_float_equal(s.mean_rho, 0, 1e-12);   /* +1 and -1 */
    assert_int_equal(s.pick_models, 2);
    assert_int_equal(s.pick_hits, 1);           /* model 0's pick is the best, model 1's the worst */
    char *json = fe_fidelity_format(f, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"rho\": 1"));
    assert_non_null(strstr(json, "\"rho\": -1"));
    assert_non_null(strstr(json, "\"format\": \"fuseeng.fidelity/1\""));
    fe_free(json);
    char *svg = fe_fidelity_format(f, FE_FORMAT_SVG, &err);
    assert_non_null(svg);
    assert_int_equal(strncmp(svg, "<svg", 4), 0);
    assert_non_null(strstr(svg, "<circle"));
    fe_free(svg);
    char *text = fe_fidelity_format(f, FE_FORMAT_TEXT, &err);
    assert_non_null(strstr(text, "mean rank correlation      0.000 over 2 models"));
    assert_non_null(strstr(text, "median |relative error|    50.0%"));   /* sim = meas / 2 */
    fe_free(text);
    assert_null(fe_fidelity_format(f, FE_FORMAT_CSV, &err));
    assert_int_equal(err.code, FE_EINPUT);
    fe_fidelity_free(f);
    fe_ab_free(ab);
}

static void ties_duplicates_failures(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_ab *ab = make(1, 6);
    cell(ab, 0, 0, 10, 10, 1, 1);
    cell(ab, 0, 1, 5, 6, 1.6, 1.7);
    cell(ab, 0, 2, 5, 5, 1.9, 2.1);     /* tied with column 1 in simulation */
    cell(ab, 0, 3, 8, 8, 1.2, 1.3);
    cell(ab, 0, 4, 8, 7, 1.4, 1.5);     /* the same plan as column 3: merged */
    ab->cells[4].fig = ab->cells[3].fig;
    ab->cells[5].status = FE_AB_FAILED; /* left out */
    fe_fidelity *f = fe_ab_fidelity(ab, &err);
    assert_non_null(f);
    fe_fidelity_summary s;
    fe_fidelity_summarise(f, &s);
    assert_int_equal(s.plans, 4);
    assert_int_equal(s.failed, 1);
    /* sim 10, 5, 5, 8 -> ranks 4, 1.5, 1.5, 3; measured 10, 6, 5, 8 -> 4, 2, 1, 3:
       Pearson of the ranks */
    double rs[4] = {4, 1.5, 1.5, 3}, rm[4] = {4, 2, 1, 3}, mx = 2.5, my = 2.5, sxy = 0, sxx = 0,
           syy = 0;
    for (int i = 0; i < 4; i++)
        sxy += (rs[i] - mx) * (rm[i] - my), sxx += (rs[i] - mx) * (rs[i] - mx),
            syy += (rm[i] - my) * (rm[i] - my);
    assert_float_equal(s.mean_rho, sxy / sqrt(sxx * syy), 1e-12);
    /* the pick (column 1, the first of the tie) reaches the best's interval? 1.7 < 1.9: no */
    assert_int_equal(s.pick_hits, 0);
    char *text = fe_fidelity_format(f, FE_FORMAT_TEXT, &err);
    assert_non_null(strstr(text, "same plan: p4"));
    assert_non_null(strstr(text, "1 policy without a measured plan"));
    fe_free(text);
    fe_fidelity_free(f);
    fe_ab_free(ab);
}

static void within_noise(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_ab *ab = make(1, 3);
    cell(ab, 0, 0, 10, 10, 1, 1);
    cell(ab, 0, 1, 5, 10.1, 0.9, 1.1);
    cell(ab, 0, 2, 7, 9.9, 0.95, 1.05);
    fe_fidelity *f = fe_ab_fidelity(ab, &err);
    fe_fidelity_summary s;
    fe_fidelity_summarise(f, &s);
    assert_int_equal(s.tied, 1);
    assert_int_equal(s.rho_models, 0);
    assert_int_equal(s.pick_models, 0);
    assert_true(isnan(s.mean_rho));
    char *json = fe_fidelity_format(f, FE_FORMAT_JSON, &err);
    assert_non_null(strstr(json, "\"mean_rho\": null"));
    assert_non_null(strstr(json, "\"tied\": true"));
    fe_free(json);
    fe_fidelity_free(f);
    /* an unmeasured comparison is refused */
    ab->measure = 0;
    assert_null(fe_ab_fidelity(ab, &err));
    assert_int_equal(err.code, FE_EINPUT);
    assert_null(fe_ab_fidelity(NULL, &err));
    fe_ab_free(ab);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(perfect_and_reversed),
                                       cmocka_unit_test(ties_duplicates_failures),
                                       cmocka_unit_test(within_noise)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
