/* test_kern_exec.c: whole-graph execution: liveness and buffer reuse, peak
 * memory, refusing runs the machine cannot hold, seeded inputs with valid
 * index ranges, the numeric comparison rule and the timing harness. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testlib.h"

#include "choice.h"
#include "compare.h"
#include "convert.h"
#include "exec.h"
#include "plan.h"
#include "plan_build.h"
#include "group_timing.h"
#include "timing.h"

static char jbuf[1 << 14];

static fe_graph *model(const char *tensors, const char *nodes, const char *outputs)
{
    snprintf(jbuf, sizeof jbuf,
             "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{%s},\"nodes\":[%s],"
             "\"outputs\":[%s]}", tensors, nodes, outputs);
    return tl_graph(jbuf);
}

static const char *CHAIN_T = "\"x\":{\"shape\":[1000],\"dtype\":\"f32\",\"kind\":\"input\"}";
static const char *CHAIN_N =
    "{\"name\":\"a\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"a\"]},"
    "{\"name\":\"b\",\"op\":\"neg\",\"inputs\":[\"a\"],\"outputs\":[\"b\"]},"
    "{\"name\":\"c\",\"op\":\"relu\",\"inputs\":[\"b\"],\"outputs\":[\"c\"]},"
    "{\"name\":\"d\",\"op\":\"sin\",\"inputs\":[\"c\"],\"outputs\":[\"d\"]},"
    "{\"name\":\"e\",\"op\":\"add\",\"inputs\":[\"d\",\"x\"],\"outputs\":[\"e\"]}";

static void test_liveness_and_reuse(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model(CHAIN_T, CHAIN_N, "\"e\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_exec_result *r = NULL;
    assert_non_null(ex);
    assert_int_equal(fe_exec_reference(ex, &r, &err), FE_OK);
    /* a chain needs two activations at a time; released ones are reused */
    assert_int_equal(r->static_bytes, 4000);
    assert_true(r->peak_bytes >= 8000 && r->peak_bytes <= 8000 + 2 * 4096);
    assert_true(r->pool_bytes <= 3 * 4096);
    assert_int_equal(fe_exec_need_bytes(ex, NULL), 8000);
    /* the values are right: e = sin(relu(-exp(x))) + x = sin(0) + x = x */
    for (int i = 0; i < 1000; i++)
        assert_true(((float *)r->outputs[0].data)[i] == ((float *)fe_exec_buffers(ex)[0].data)[i]);
    /* a fused plan holds only the output */
    int32_t lab[5] = {0, 0, 0, 0, 0};
    fe_plan *p = fe_plan_from_labels(g, lab, &err);
    fe_exec_result *f = NULL;
    assert_non_null(p);
    assert_int_equal(fe_exec_plan(ex, p, &f, &err), FE_OK);
    assert_true(f->peak_bytes <= 4096);
    assert_int_equal(f->ngroups, 1);
    assert_int_equal(f->nfused, 1);
    assert_int_equal(fe_exec_need_bytes(ex, p), 4000 * 5);   /* per-op upper bound */
    fe_exec_result_free(f);
    fe_exec_result_free(r);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void test_refuses_absurd_sizes(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model("\"x\":{\"shape\":[100000,100000,64],\"dtype\":\"f32\",\"kind\":\"input\"}",
                        "{\"name\":\"a\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"a\"]}", "\"a\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_null(ex);
    assert_int_equal(err.code, FE_EINPUT);
    assert_contains(err.message, "needs");
    assert_contains(err.message, "GiB");
    assert_contains(err.message, "this machine has");
    fe_graph_free(g);
}

static void test_seeded_inputs(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model("\"x\":{\"shape\":[5000],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"h\":{\"shape\":[300],\"dtype\":\"f16\",\"kind\":\"input\"},"
                        "\"m\":{\"shape\":[4000],\"dtype\":\"bool\",\"kind\":\"input\"},"
                        "\"d\":{\"shape\":[7,3],\"dtype\":\"f32\",\"kind\":\"weight\"},"
                        "\"ix\":{\"shape\":[400],\"dtype\":\"i64\",\"kind\":\"input\"},"
                        "\"n\":{\"shape\":[50],\"dtype\":\"i32\",\"kind\":\"input\"}",
                        "{\"name\":\"r\",\"op\":\"reshape\",\"inputs\":[\"ix\"],\"outputs\":[\"r\"],\"attrs\":{\"shape\":[20,20]}},"
                        "{\"name\":\"c\",\"op\":\"cast\",\"inputs\":[\"r\"],\"outputs\":[\"c\"],\"attrs\":{\"dtype\":\"i32\"}},"
                        "{\"name\":\"g\",\"op\":\"gather\",\"inputs\":[\"d\",\"c\"],\"outputs\":[\"g\"]},"
                        "{\"name\":\"s\",\"op\":\"add\",\"inputs\":[\"n\"],\"outputs\":[\"s\"],\"attrs\":{\"scalar\":1}},"
                        "{\"name\":\"w\",\"op\":\"cast\",\"inputs\":[\"m\"],\"outputs\":[\"w\"],\"attrs\":{\"dtype\":\"f32\"}},"
                        "{\"name\":\"e\",\"op\":\"mul\",\"inputs\":[\"x\",\"x\"],\"outputs\":[\"e\"]},"
                        "{\"name\":\"hh\",\"op\":\"neg\",\"inputs\":[\"h\"],\"outputs\":[\"hh\"]}",
                        "\"g\",\"s\",\"e\",\"hh\"");
    fe_exec_opts o1 = {.seed = 7}, o2 = {.seed = 8};
    fe_exec *a = fe_exec_new(g, &o1, &err), *b = fe_exec_new(g, &o1, &err), *c = fe_exec_new(g, &o2, &err);
    assert_non_null(a);
    assert_non_null(c);
    fe_k_tensor *ba = fe_exec_buffers(a), *bb = fe_exec_buffers(b), *bc = fe_exec_buffers(c);
    int32_t x = fe_graph_find_tensor(g, "x"), ix = fe_graph_find_tensor(g, "ix");
    int32_t m = fe_graph_find_tensor(g, "m"), n = fe_graph_find_tensor(g, "n"), h = fe_graph_find_tensor(g, "h");
    assert_memory_equal(ba[x].data, bb[x].data, 20000);          /* same seed, same values */
    assert_true(memcmp(ba[x].data, bc[x].data, 20000) != 0);     /* another seed, others */
    double lo = 1, hi = -1, mean = 0;
    for (int i = 0; i < 5000; i++) {
        float v = ((float *)ba[x].data)[i];
        lo = fmin(lo, v);
        hi = fmax(hi, v);
        mean += v / 5000;
    }
    assert_true(lo >= -1 && hi <= 1 && lo < -0.99 && hi > 0.99 && fabs(mean) < 0.05);
    for (int i = 0; i < 300; i++) {
        float v = fe_k_f16_to_f32(((uint16_t *)ba[h].data)[i]);
        assert_true(v >= -1 && v <= 1);
    }
    int seen[7] = {0}, t = 0;
    for (int i = 0; i < 400; i++) {   /* indices of a gather, through reshape and cast */
        int64_t v = ((int64_t *)ba[ix].data)[i];
        assert_true(v >= 0 && v < 7);
        seen[v] = 1;
    }
    for (int i = 0; i < 7; i++)
        assert_true(seen[i]);
    for (int i = 0; i < 50; i++) {
        int32_t v = ((int32_t *)ba[n].data)[i];
        assert_true(v >= 0 && v < 16);
    }
    for (int i = 0; i < 4000; i++)
        t += ((uint8_t *)ba[m].data)[i];
    assert_true(t > 2800 && t < 3200);                         /* true 3/4 of the time */
    fe_exec_result *r = NULL;
    assert_int_equal(fe_exec_reference(a, &r, &err), FE_OK);   /* the gather finds its indices valid */
    fe_exec_result_free(r);
    fe_exec_free(a);
    fe_exec_free(b);
    fe_exec_free(c);
    fe_graph_free(g);
}

static void test_compare_rule(void **state)
{
    (void)state;
    fe_cmp_item it;
    float ref[6] = {1, NAN, INFINITY, -2, 0, 1e-6f}, got[6] = {1, NAN, INFINITY, -2, 0, 1e-6f};
    fe_cmp_buffers(ref, got, FE_F32, 6, 1e-4, &it);
    assert_true(it.ok && it.max_abs == 0);
    got[2] = -INFINITY;                                   /* inf must match in sign */
    fe_cmp_buffers(ref, got, FE_F32, 6, 1e-4, &it);
    assert_false(it.ok);
    assert_int_equal(it.worst, 2);
    got[2] = INFINITY;
    got[1] = 0;                                           /* NaN in one only */
    fe_cmp_buffers(ref, got, FE_F32, 6, 1e-4, &it);
    assert_false(it.ok);
    got[1] = NAN;
    got[5] = 1.1e-6f;    /* tiny against the output's scale: within atol = rtol * rms */
    fe_cmp_buffers(ref, got, FE_F32, 6, 1e-4, &it);
    assert_true(it.ok);
    got[0] = 1.001f;     /* 1e-3 relative on a unit value: out for f32, in for f16 */
    fe_cmp_buffers(ref, got, FE_F32, 6, 1e-4, &it);
    assert_false(it.ok);
    fe_cmp_buffers(ref, got, FE_F32, 6, 1e-2, &it);
    assert_true(it.ok);
    int64_t ia[3] = {1, 2, 3}, ib[3] = {1, 2, 4};
    fe_cmp_buffers(ia, ib, FE_I64, 3, 1e-4, &it);        /* integers: exact */
    assert_false(it.ok);
    assert_int_equal(it.bad, 1);

    /* the tolerance follows the least precise dtype on the way to an output */
    fe_error err = {0};
    fe_graph *g = model("\"x\":{\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"b\":{\"shape\":[4],\"dtype\":\"bf16\",\"kind\":\"input\"}",
                        "{\"name\":\"h\",\"op\":\"cast\",\"inputs\":[\"x\"],\"outputs\":[\"h\"],\"attrs\":{\"dtype\":\"f16\"}},"
                        "{\"name\":\"f\",\"op\":\"cast\",\"inputs\":[\"h\"],\"outputs\":[\"f\"],\"attrs\":{\"dtype\":\"f32\"}},"
                        "{\"name\":\"p\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"p\"]},"
                        "{\"name\":\"q\",\"op\":\"add\",\"inputs\":[\"p\",\"b\"],\"outputs\":[\"q\"]}",
                        "\"f\",\"p\",\"q\"");
    assert_true(fe_cmp_rtol(g, fe_graph_find_tensor(g, "p")) == 1e-4);
    assert_true(fe_cmp_rtol(g, fe_graph_find_tensor(g, "f")) == 1e-2);
    assert_true(fe_cmp_rtol(g, fe_graph_find_tensor(g, "q")) == 5e-2);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_exec_result *a = NULL, *b = NULL;
    fe_plan *p = fe_plan_unfused(g, &err);
    assert_int_equal(fe_exec_reference(ex, &a, &err), FE_OK);
    assert_int_equal(fe_exec_plan(ex, p, &b, &err), FE_OK);
    fe_cmp c;
    assert_int_equal(fe_exec_compare(g, a, b, &c, &err), FE_OK);
    assert_true(c.ok);
    assert_int_equal(c.n, 3);
    ((float *)b->outputs[1].data)[0] *= 1.01f;              /* break one value */
    fe_cmp_free(&c);
    assert_int_equal(fe_exec_compare(g, a, b, &c, &err), FE_OK);
    assert_false(c.ok);
    assert_false(c.items[1].ok);
    fe_cmp_free(&c);
    fe_exec_result_free(a);
    fe_exec_result_free(b);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static int sleep_2ms(void *ctx, fe_error *err)
{
    (void)err;
    struct timespec t = {0, 2000000};
    nanosleep(&t, NULL);
    ++*(int *)ctx;
    return FE_OK;
}

static int failing(void *ctx, fe_error *err)
{
    (void)ctx;
    return fe_error_set(err, FE_ERUNTIME, "kernel broke");
}

static void test_timing(void **state)
{
    (void)state;
    fe_bench_stats st;
    fe_error err = {0};
    fe_bench_opts o = {.budget_s = 0.05, .warmup = 2, .min_reps = 5};
    int calls = 0;
    assert_int_equal(fe_bench_run(sleep_2ms, &calls, &o, &st, &err), FE_OK);
    assert_true(st.reps >= 5 && calls >= st.reps + 2);
    assert_true(st.median_ms >= 2.0 && st.median_ms < 20.0);
    assert_true(st.min_ms <= st.median_ms && st.median_ms <= st.max_ms);
    assert_true(st.spread_ms >= 0 && st.spread_ms <= st.max_ms - st.min_ms);
    assert_int_equal(fe_bench_run(failing, NULL, &o, &st, &err), FE_ERUNTIME);
    assert_contains(err.message, "kernel broke");
    double v[5] = {5, 1, 4, 2, 3};
    fe_bench_summary(v, 5, &st);
    assert_true(st.median_ms == 3 && st.min_ms == 1 && st.max_ms == 5 && st.spread_ms == 2 &&
                st.mean_ms == 3);

    /* a group fused and member by member */
    fe_graph *g = model(CHAIN_T, CHAIN_N, "\"e\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    int32_t nodes[3] = {2, 0, 1};     /* any order */
    fe_bench_group b;
    fe_bench_opts q = {.budget_s = 0.01, .warmup = 1, .min_reps = 3};
    assert_int_equal(fe_bench_group_run(ex, nodes, 3, 1, FE_K_CHOICE_AUTO, &q, &b, &err), FE_OK);
    assert_int_equal(b.n, 3);
    assert_true(b.is_fused);
    assert_int_equal(b.kernel, FE_K_CHOICE_FUSED);
    assert_contains(b.how, "fused_rows: 3 ops");
    assert_true(b.fused.reps >= 3 && b.fused.median_ms > 0);
    for (int i = 0; i < 3; i++)
        assert_true(b.members[i].reps >= 3);
    assert_true(fabs(b.members_ms - (b.members[0].median_ms + b.members[1].median_ms +
                                     b.members[2].median_ms)) < 1e-9);
    /* intermediates it needed are gone again; inputs stay */
    assert_null(fe_exec_buffers(ex)[fe_graph_find_tensor(g, "a")].data);
    assert_non_null(fe_exec_buffers(ex)[fe_graph_find_tensor(g, "x")].data);
    fe_bench_group_free(&b);
    fe_bench_stats one, whole;
    assert_int_equal(fe_bench_node(ex, 3, &q, &one, &err), FE_OK);
    assert_true(one.reps >= 3);
    fe_plan *p = fe_plan_unfused(g, &err);
    assert_int_equal(fe_bench_plan(ex, p, &q, &whole, &err), FE_OK);
    assert_true(whole.reps >= 3 && whole.median_ms > 0);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void test_custom_in_plan(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model("\"x\":{\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"y\":{\"shape\":[4],\"dtype\":\"f32\"}",
                        "{\"name\":\"pre\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"p\"]},"
                        "{\"name\":\"mystery\",\"op\":\"custom\",\"inputs\":[\"p\"],\"outputs\":[\"y\"],"
                        "\"attrs\":{\"aten\":\"aten::special_op\"}}",
                        "\"y\"");
    assert_int_equal(fe_exec_executable(g, &err), FE_EINPUT);
    assert_contains(err.message, "mystery");
    assert_contains(err.message, "1 custom node without a kernel in all");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    int32_t lab[2] = {0, 0};
    fe_plan *p = fe_plan_from_labels(g, lab, &err);
    fe_exec_result *r = NULL;
    if (!p) {      /* a plan may refuse to group a custom op; run it unfused then */
        p = fe_plan_unfused(g, &err);
    }
    assert_int_equal(fe_exec_plan(ex, p, &r, &err), FE_EINPUT);
    assert_null(r);
    assert_contains(err.message, "mystery");
    assert_contains(err.message, "aten::special_op");
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_liveness_and_reuse),
        cmocka_unit_test(test_refuses_absurd_sizes),
        cmocka_unit_test(test_seeded_inputs),
        cmocka_unit_test(test_compare_rule),
        cmocka_unit_test(test_timing),
        cmocka_unit_test(test_custom_in_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
