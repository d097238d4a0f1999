/* test_hard_ops.c: hardsigmoid and hardswish, PyTorch's definitions
 * (hardsigmoid(x) = min(max(x + 3, 0), 6) / 6, hardswish(x) = x * that):
 * values worked out by hand at the breakpoints -3, 0, 3 and beyond, NaN
 * and infinities, through the per-op kernel at every tail length; the
 * registry's facts (kind, FLOPs, live values, inference) and the
 * simulator's price; a fused group holding both against the group run op
 * by op, bit for bit; and the exported `custom` forms (hardswish.default,
 * hardsigmoid_, ...), which must give the first-class op's bits. */
#include <math.h>

#include "atenlib.h"
#include "choice.h"
#include "elemwise.h"
#include "exec.h"
#include "plan.h"
#include "plan_build.h"
#include "sim.h"
#include "vecprog.h"

/* The definitions as PyTorch's CPU kernels compute them, one float
 * operation at a time, for bit-for-bit comparisons: std::max(a, b) is
 * a < b ? b : a and std::min(a, b) is b < a ? b : a, so NaN comes through
 * (fmaxf and fminf would drop it). */
static float hard6(float x)
{
    float t = x + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    return 6.0f < t ? 6.0f : t;
}

static float hsig(float x)
{
    return hard6(x) / 6.0f;
}

static float hswish(float x)
{
    return x * hard6(x) / 6.0f;
}

static int same_bits(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* x, hardsigmoid(x), hardswish(x), worked out by hand */
static const float hand[][3] = {
    {-3.0f, 0.0f, -0.0f},      /* the lower breakpoint: -3 * 0 / 6 */
    {3.0f, 1.0f, 3.0f},        /* the upper one */
    {0.0f, 0.5f, 0.0f},
    {-1.5f, 0.25f, -0.375f},
    {1.5f, 0.75f, 1.125f},
    {-4.0f, 0.0f, -0.0f},
    {4.0f, 1.0f, 4.0f},
    {-6.0f, 0.0f, -0.0f},
    {100.0f, 1.0f, 100.0f},
    {1.0f, 4.0f / 6.0f, 4.0f / 6.0f},
    {-1.0f, 2.0f / 6.0f, -2.0f / 6.0f},
    {-2.9999998f, 2.3841858e-07f / 6.0f, -2.9999998f * 2.3841858e-07f / 6.0f},
    {INFINITY, 1.0f, INFINITY},
    {-INFINITY, 0.0f, NAN},    /* -inf * 0, as in torch */
    {NAN, NAN, NAN},
};
#define NHAND ((int)(sizeof hand / sizeof hand[0]))

/* Every hand value at every position of arrays of 1 to 41 elements (the
 * vector body, the 4-vector unroll and the masked tail), and in place. */
static void test_values(void **state)
{
    (void)state;
    float x[41], y[41];
    for (int op = 0; op < 2; op++) {
        int id = op ? FE_OP_HARDSWISH : FE_OP_HARDSIGMOID;
        for (int n = 1; n <= 41; n++)
            for (int rot = 0; rot < NHAND; rot++) {
                for (int i = 0; i < n; i++)
                    x[i] = hand[(i + rot) % NHAND][0];
                fe_k_unary_f32(id, 0, x, y, n);
                fe_k_unary_f32(id, 0, x, x, n);
                for (int i = 0; i < n; i++) {
                    float want = hand[(i + rot) % NHAND][1 + op];
                    if (!same_bits(y[i], want) || !same_bits(x[i], want))
                        fail_msg("%s(%g) at %d of %d: %.9g (in place %.9g), want %.9g",
                                 op ? "hardswish" : "hardsigmoid",
                                 hand[(i + rot) % NHAND][0], i, n, y[i], x[i], want);
                }
            }
    }
}

/* A sweep over [-8, 8] in steps of 2^-10 and a wide random sample: the
 * vector code equals the scalar definition bit for bit. */
static void test_sweep(void **state)
{
    (void)state;
    enum { N = 16384 + 1 + 20000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    uint32_t s = 12345;
    for (int i = 0; i <= 16384; i++)
        x[i] = -8.0f + (float)i / 1024.0f;
    for (int i = 16385; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        uint32_t bits = s;
        memcpy(&x[i], &bits, sizeof bits);   /* any float, NaNs and subnormals too */
    }
    for (int op = 0; op < 2; op++) {
        fe_k_unary_f32(op ? FE_OP_HARDSWISH : FE_OP_HARDSIGMOID, 0, x, y, N);
        for (int i = 0; i < N; i++) {
            float want = op ? hswish(x[i]) : hsig(x[i]);
            if (!same_bits(y[i], want))
                fail_msg("%s(%.9g) = %.9g, want %.9g", op ? "hardswish" : "hardsigmoid", x[i],
                         y[i], want);
        }
    }
    free(x);
    free(y);
}

static void test_registry(void **state)
{
    (void)state;
    int hs = fe_op_find("hardswish"), hg = fe_op_find("hardsigmoid");
    assert_int_equal(hs, FE_OP_HARDSWISH);
    assert_int_equal(hg, FE_OP_HARDSIGMOID);
    assert_int_equal(fe_op_get(hs)->pattern, FE_ELEMWISE);
    assert_int_equal(fe_op_get(hg)->pattern, FE_ELEMWISE);
    assert_int_equal(fe_op_get(hs)->flops, 5);
    assert_int_equal(fe_op_get(hg)->flops, 4);
    assert_int_equal(fe_op_get(hs)->live, 2);
    assert_int_equal(fe_op_get(hg)->live, 1);
    assert_contains(fe_op_names(), "hardsigmoid, hardswish");

    fe_graph *g = tl_graph(
        "{\"format\":\"fuseeng.model/1\",\"tensors\":{"
        "\"x\":{\"shape\":[\"B\",24],\"dtype\":\"f16\",\"kind\":\"input\"}},\"dims\":{\"B\":4},"
        "\"nodes\":[{\"name\":\"a\",\"op\":\"hardswish\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]},"
        "{\"name\":\"b\",\"op\":\"hardsigmoid\",\"inputs\":[\"y\"],\"outputs\":[\"z\"]}],"
        "\"outputs\":[\"z\"]}");
    const fe_node *a = fe_graph_node(g, tl_node(g, "a")), *b = fe_graph_node(g, tl_node(g, "b"));
    const fe_tensor *z = fe_graph_tensor(g, fe_node_output(g, b, 0));
    assert_int_equal(z->dtype, FE_F16);
    assert_int_equal(z->rank, 2);
    assert_int_equal(fe_tensor_shape(g, z)[0], 4);
    assert_int_equal(fe_tensor_shape(g, z)[1], 24);
    assert_int_equal(a->flops, 5 * 96);
    assert_int_equal(b->flops, 4 * 96);
    assert_int_equal(a->bytes_read, 96 * 2);
    assert_int_equal(b->bytes_written, 96 * 2);

    /* the simulator prices them as vector work: FLOPs at the vector peak */
    fe_machine m = {.name = "t", .l2_bytes = 16 << 20, .memory_bytes = INT64_C(32) << 30,
                    .l2_bandwidth = 1e12, .l3_bandwidth = 100e9, .local_bandwidth = 200e9,
                    .launch_us = 10, .tile_us = 1, .registers = 255, .reserved_registers = 24,
                    .elements_per_thread = 8, .link_bandwidth = 50e9, .link_latency_us = 5};
    m.matrix_flops[FE_F32] = 32e12;
    m.vector_flops[FE_F32] = 8e12;
    fe_error err = {0};
    if (fe_machine_check(&m, "t", &err))
        fail_msg("%s", err.message);
    int32_t both[2] = {tl_node(g, "a"), tl_node(g, "b")};
    fe_sim_group_result r;
    assert_int_equal(fe_sim_group(g, &m, both, 2, 1, &r, &err), FE_OK);
    assert_int_equal(r.flops, 9 * 96);
    assert_true(fabs(r.compute_s - 9 * 96 / 8e12) < 1e-18);
    assert_int_equal(r.l3_read, 96 * 2);    /* y stays inside */
    fe_graph_free(g);

    assert_contains(tl_graph_error("{\"format\":\"fuseeng.model/1\",\"tensors\":{"
                                   "\"x\":{\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"input\"}},"
                                   "\"nodes\":[{\"name\":\"a\",\"op\":\"hardswish\",\"inputs\":"
                                   "[\"x\",\"x\"],\"outputs\":[\"y\"]}],\"outputs\":[\"y\"]}"),
                    "node 'a' (hardswish) takes 1 input; it has 2");
}

/* One fused group against op by op: hardswish -> mul w -> hardsigmoid ->
 * add x, hardswish's output also leaving the group; x holds the
 * breakpoints, NaN and infinities, at widths around the vector and strip
 * sizes. Where the build has vector programs the group runs in registers;
 * either way it gives the reference's bits, which are the definitions'. */
static void test_fused_group(void **state)
{
    (void)state;
    static const int W[] = {1, 7, 8, 9, 33, 64, 1037};
    for (size_t k = 0; k < sizeof W / sizeof W[0]; k++) {
        char json[2048];
        int w = W[k];
        snprintf(json, sizeof json,
                 "{\"format\":\"fuseeng.model/1\",\"tensors\":{"
                 "\"x\":{\"shape\":[3,%d],\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"w\":{\"shape\":[%d],\"dtype\":\"f32\",\"kind\":\"weight\"}},\"nodes\":["
                 "{\"name\":\"hs\",\"op\":\"hardswish\",\"inputs\":[\"x\"],\"outputs\":[\"a\"]},"
                 "{\"name\":\"sc\",\"op\":\"mul\",\"inputs\":[\"a\",\"w\"],\"outputs\":[\"b\"]},"
                 "{\"name\":\"hg\",\"op\":\"hardsigmoid\",\"inputs\":[\"b\"],\"outputs\":[\"c\"]},"
                 "{\"name\":\"res\",\"op\":\"add\",\"inputs\":[\"c\",\"x\"],\"outputs\":[\"o\"]}],"
                 "\"outputs\":[\"o\",\"a\"]}", w, w);
        fe_graph *g = tl_graph(json);
        fe_error err = {0};
        fe_exec *ex = fe_exec_new(g, NULL, &err);
        assert_non_null(ex);
        float *x = fe_exec_buffers(ex)[fe_graph_find_tensor(g, "x")].data;
        float *wv = fe_exec_buffers(ex)[fe_graph_find_tensor(g, "w")].data;
        for (int i = 0; i < 3 * w; i++)
            x[i] = i % 2 ? hand[(i / 2) % NHAND][0] : x[i] * 5.0f;
        int32_t *lab = calloc((size_t)g->nnodes, sizeof *lab);   /* one group */
        fe_plan *p = fe_plan_from_labels(g, lab, &err);
        assert_non_null(p);
        fe_exec_result *ref = NULL, *got = NULL;
        if (fe_exec_reference(ex, &ref, &err) || fe_exec_plan(ex, p, &got, &err))
            fail_msg("run: %s", err.message);
        if (fe_k_vform_ok(FE_V_LD, 1))
            assert_contains(got->how[0], "register pass");
        else
            assert_contains(got->how[0], "fused_rows");
        for (int o = 0; o < 2; o++) {
            const float *r = ref->outputs[o].data, *f = got->outputs[o].data;
            for (int i = 0; i < 3 * w; i++) {
                float a = hswish(x[i]);
                float want = o == 1 ? a : hsig(a * wv[i % w]) + x[i];
                if (!same_bits(r[i], want) || !same_bits(f[i], want))
                    fail_msg("width %d output %d [%d] x = %g: reference %.9g, fused %.9g, want "
                             "%.9g (%s)", w, o, i, x[i], r[i], f[i], want, got->how[0]);
            }
        }
        fe_exec_result_free(ref);
        fe_exec_result_free(got);
        fe_plan_free(p);
        free(lab);
        fe_exec_free(ex);
        fe_graph_free(g);
    }
}

/* The exported forms run the same kernel: hand values, and refusals. */
static void test_aten_forms(void **state)
{
    (void)state;
    static const char *const names[] = {"hardsigmoid.default", "hardsigmoid_", "hardswish.default",
                                        "aten::hardswish_.default", "hardswish"};
    K k;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char attrs[96];
        snprintf(attrs, sizeof attrs, "\"aten\":\"%s\",\"pattern\":\"elemwise\"", names[i]);
        kload(&k, IN("x", "[2,4]", "f32") OUT("[2,4]", "f32"), "\"x\"", attrs);
        SET(&k, 0, -3, 3, 0, -1.5, 1.5, -4, 4, 1);
        if (i < 2)
            EXPECT(&k, 0, 1, 0.5, 0.25, 0.75, 0, 1, 4.0f / 6.0f);
        else
            EXPECT(&k, 0, 3, 0, -0.375, 1.125, 0, 4, 4.0f / 6.0f);
        kfree(&k);
    }
    /* f16 computes in float and rounds: hardswish(1) = 0.6667 -> 0.66650390625 */
    kload(&k, IN("x", "[2]", "f16") OUT("[2]", "f16"), "\"x\"", "\"aten\":\"hardswish.default\"");
    SET(&k, 0, 1, -2);
    EXPECT(&k, 0.66650390625, -0.333251953125);
    kfree(&k);

    refused_node(IN("x", "[3]", "i64") OUT("[3]", "i64"), "\"x\"", "\"aten\":\"hardswish.default\"",
                 "takes a floating-point input, not i64 (as torch does)");
    refused_node(IN("x", "[3]", "f32") OUT("[3]", "bf16"), "\"x\"", "\"aten\":\"hardsigmoid\"",
                 "the graph's output is bf16 but the op gives f32");
    refused_node(IN("x", "[3]", "f32") OUT("[3]", "f32"), "\"x\"",
                 "\"aten\":\"hardsigmoid.default\",\"args\":{\"inplace\":true}",
                 "unsupported argument args.inplace");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_fused_group),
        cmocka_unit_test(test_aten_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
