/* test_kern_ops.c: every op's reference kernel against a plain scalar
 * reference written here, on small graphs run through the whole stack
 * (model -> session -> fe_exec_reference): odd sizes, size-1 and broadcast
 * axes, NaN / Inf, scalar operands, negative axes and indices, Python
 * slicing, pad modes, pools with padding and ceil_mode, attention masks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "convert.h"
#include "elemwise.h"
#include "exec.h"
#include "injective.h"
#include "ops.h"
#include "pool.h"
#include "vmath.h"

/* ---- harness ---- */

typedef struct R {
    fe_graph *g;
    fe_exec *ex;
    fe_exec_result *res;
} R;

static char jbuf[1 << 16];

static void setup(R *r, const char *tensors, const char *nodes, const char *outputs)
{
    fe_error err = {0};
    snprintf(jbuf, sizeof jbuf,
             "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{%s},\"nodes\":[%s],"
             "\"outputs\":[%s]}", tensors, nodes, outputs);
    memset(r, 0, sizeof *r);
    r->g = tl_graph(jbuf);
    r->ex = fe_exec_new(r->g, NULL, &err);
    if (!r->ex)
        fail_msg("session: %s", err.message);
}

static void done(R *r)
{
    fe_exec_result_free(r->res);
    fe_exec_free(r->ex);
    fe_graph_free(r->g);
}

static int32_t tid(R *r, const char *name)
{
    int32_t t = fe_graph_find_tensor(r->g, name);
    if (t < 0)
        fail_msg("no tensor %s", name);
    return t;
}

static int64_t numel(R *r, const char *name)
{
    return fe_graph_tensor(r->g, tid(r, name))->numel;
}

static const int64_t *shape(R *r, const char *name, int *rank)
{
    const fe_tensor *t = fe_graph_tensor(r->g, tid(r, name));
    if (rank)
        *rank = t->rank;
    return fe_tensor_shape(r->g, t);
}

/* Overwrite an input with values (repeated cyclically). */
static void set_in(R *r, const char *name, const double *v, int n)
{
    fe_k_tensor *b = &fe_exec_buffers(r->ex)[tid(r, name)];
    int64_t m = fe_k_numel(b);
    for (int64_t i = 0; i < m; i++) {
        double x = v[i % n];
        if (fe_k_dtype_is_int(b->dtype)) {
            int64_t iv = (int64_t)x;
            fe_k_store_i64(b->data, b->dtype, i, &iv, 1);
        } else {
            float f = (float)x;
            fe_k_store_f32(b->data, b->dtype, i, &f, 1);
        }
    }
}

static void run(R *r)
{
    fe_error err = {0};
    if (fe_exec_reference(r->ex, &r->res, &err))
        fail_msg("reference run: %s", err.message);
}

static double at_buf(const fe_k_tensor *b, int64_t i)
{
    if (fe_k_dtype_is_int(b->dtype)) {
        int64_t v;
        fe_k_load_i64(b->data, b->dtype, i, &v, 1);
        return (double)v;
    }
    float f;
    fe_k_load_f32(b->data, b->dtype, i, &f, 1);
    return f;
}

static double in(R *r, const char *name, int64_t i)
{
    return at_buf(&fe_exec_buffers(r->ex)[tid(r, name)], i);
}

static double outv(R *r, const char *name, int64_t i)
{
    int32_t t = tid(r, name);
    for (int k = 0; k < r->res->noutputs; k++)
        if (r->res->tensors[k] == t)
            return at_buf(&r->res->outputs[k], i);
    fail_msg("%s is not an output", name);
    return 0;
}

/* got within atol + rtol |want|; NaN equals NaN, infinities by sign */
static int close(double got, double want, double rtol, double atol)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

#define CHECK(r, name, i, want, rtol, atol)                                                     \
    do {                                                                                        \
        double g_ = outv(r, name, i), w_ = (want);                                               \
        if (!close(g_, w_, rtol, atol))                                                         \
            fail_msg("%s[%lld] = %.9g, want %.9g (line %d)", name, (long long)(i), g_, w_,      \
                     __LINE__);                                                                 \
    } while (0)

/* Flat index into `from` (broadcast to `to`) of flat output index i. */
static int64_t bidx(R *r, const char *from, const char *to, int64_t i)
{
    int fr, tr;
    const int64_t *fs = shape(r, from, &fr), *ts = shape(r, to, &tr);
    int64_t idx[FE_MAX_RANK], off = 0, st = 1;
    for (int d = tr - 1; d >= 0; d--) {
        idx[d] = i % ts[d];
        i /= ts[d];
    }
    for (int d = fr - 1; d >= 0; d--) {
        int od = d + (tr - fr);
        off += (fs[d] == 1 ? 0 : idx[od]) * st;
        st *= fs[d];
    }
    return off;
}

static const double SPECIAL[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 1,
                                 -1, 3, -3, 10, -10, 30, -30, 88, -88, 100, -100, 1e-4, 0.3, 0.55,
                                 -0.56, 2.5, 7.3, -9.5, 20, 0.001, 12.34, -1e-3, 5e-8, 0.7, -0.2,
                                 1.9, -4.4};
#define NSPECIAL ((int)(sizeof SPECIAL / sizeof SPECIAL[0]))

/* ---- elementwise ---- */

static double ref_unary(const char *op, double x)
{
    if (!strcmp(op, "relu")) return isnan(x) ? x : x > 0 ? x : 0;
    if (!strcmp(op, "gelu")) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    if (!strcmp(op, "gelu_tanh")) {
        double z = sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
        return x / (1 + exp(-2 * z));       /* = 0.5 x (1 + tanh z), without cancellation */
    }
    if (!strcmp(op, "silu")) return x / (1 + exp(-x));
    if (!strcmp(op, "sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(op, "tanh")) return tanh(x);
    if (!strcmp(op, "exp")) return exp(x);
    if (!strcmp(op, "log")) return log(x);
    if (!strcmp(op, "neg")) return -x;
    if (!strcmp(op, "abs")) return fabs(x);
    if (!strcmp(op, "sqrt")) return sqrt(x);
    if (!strcmp(op, "rsqrt")) return 1 / sqrt(x);
    if (!strcmp(op, "reciprocal")) return 1 / x;
    if (!strcmp(op, "sin")) return sin(x);
    if (!strcmp(op, "cos")) return cos(x);
    if (!strcmp(op, "erf")) return erf(x);
    return NAN;
}

static const char *UNARY[] = {"relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "exp", "log",
                              "neg", "abs", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "erf"};
#define NUNARY 16

static void test_unary_f32(void **state)
{
    (void)state;
    char nodes[4096] = "", outs[1024] = "";
    size_t ln = 0, lo = 0;
    for (int k = 0; k < NUNARY; k++) {
        int tanhf_ = !strcmp(UNARY[k], "gelu_tanh");
        ln += (size_t)snprintf(nodes + ln, sizeof nodes - ln,
                               "%s{\"name\":\"n_%s\",\"op\":\"%s\",\"inputs\":[\"x\"],\"outputs\":[\"y_%s\"]%s}",
                               k ? "," : "", UNARY[k], tanhf_ ? "gelu" : UNARY[k], UNARY[k],
                               tanhf_ ? ",\"attrs\":{\"approximate\":\"tanh\"}" : "");
        lo += (size_t)snprintf(outs + lo, sizeof outs - lo, "%s\"y_%s\"", k ? "," : "", UNARY[k]);
    }
    R r;
    setup(&r, "\"x\":{\"shape\":[3,37],\"dtype\":\"f32\",\"kind\":\"input\"}", nodes, outs);
    set_in(&r, "x", SPECIAL, NSPECIAL);
    run(&r);
    for (int k = 0; k < NUNARY; k++) {
        char name[64];
        snprintf(name, sizeof name, "y_%s", UNARY[k]);
        for (int64_t i = 0; i < 3 * 37; i++) {
            double x = in(&r, "x", i);
            /* a few ulps, and an absolute floor for results that are ~0 */
            CHECK(&r, name, i, (float)ref_unary(UNARY[k], x), 2e-6, 1e-6);
        }
    }
    done(&r);
}

/* f16 / bf16 storage: computed in float, rounded to nearest even on store */
static void test_unary_half(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[5,7],\"dtype\":\"f16\",\"kind\":\"input\"},"
              "\"b\":{\"shape\":[5,7],\"dtype\":\"bf16\",\"kind\":\"input\"}",
          "{\"name\":\"e\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"ye\"]},"
          "{\"name\":\"s\",\"op\":\"sigmoid\",\"inputs\":[\"x\"],\"outputs\":[\"ys\"]},"
          "{\"name\":\"t\",\"op\":\"tanh\",\"inputs\":[\"b\"],\"outputs\":[\"yt\"]}",
          "\"ye\",\"ys\",\"yt\"");
    set_in(&r, "x", SPECIAL, NSPECIAL);
    set_in(&r, "b", SPECIAL + 3, NSPECIAL - 3);
    run(&r);
    for (int64_t i = 0; i < 35; i++) {
        double x = in(&r, "x", i), b = in(&r, "b", i);
        double e = fe_k_f16_to_f32(fe_k_f32_to_f16((float)exp(x)));
        double s = fe_k_f16_to_f32(fe_k_f32_to_f16((float)(1 / (1 + exp(-x)))));
        double t = fe_k_bf16_to_f32(fe_k_f32_to_bf16((float)tanh(b)));
        CHECK(&r, "ye", i, e, 1e-3, 1e-7);       /* one f16 ulp */
        CHECK(&r, "ys", i, s, 1e-3, 1e-7);
        CHECK(&r, "yt", i, t, 8e-3, 1e-7);       /* one bf16 ulp */
    }
    done(&r);
}

static void test_cast(void **state)
{
    (void)state;
    R r;
    static const double v[] = {NAN, INFINITY, -INFINITY, 2.9, -2.9, 3e9, -3e9, 0.0, -0.5, 70000,
                               1.00048828125, 300.7};
    setup(&r, "\"x\":{\"shape\":[12],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"xi\":{\"shape\":[4],\"dtype\":\"i64\",\"kind\":\"input\"},"
              "\"xb\":{\"shape\":[4],\"dtype\":\"bool\",\"kind\":\"input\"}",
          "{\"name\":\"a\",\"op\":\"cast\",\"inputs\":[\"x\"],\"outputs\":[\"i64\"],\"attrs\":{\"dtype\":\"i64\"}},"
          "{\"name\":\"b\",\"op\":\"cast\",\"inputs\":[\"x\"],\"outputs\":[\"i32\"],\"attrs\":{\"dtype\":\"i32\"}},"
          "{\"name\":\"c\",\"op\":\"cast\",\"inputs\":[\"x\"],\"outputs\":[\"bo\"],\"attrs\":{\"dtype\":\"bool\"}},"
          "{\"name\":\"d\",\"op\":\"cast\",\"inputs\":[\"x\"],\"outputs\":[\"h\"],\"attrs\":{\"dtype\":\"f16\"}},"
          "{\"name\":\"e\",\"op\":\"cast\",\"inputs\":[\"xi\"],\"outputs\":[\"fi\"],\"attrs\":{\"dtype\":\"f32\"}},"
          "{\"name\":\"f\",\"op\":\"cast\",\"inputs\":[\"xb\"],\"outputs\":[\"fb\"],\"attrs\":{\"dtype\":\"f32\"}},"
          "{\"name\":\"g\",\"op\":\"cast\",\"inputs\":[\"x\"],\"outputs\":[\"i8\"],\"attrs\":{\"dtype\":\"i8\"}}",
          "\"i64\",\"i32\",\"bo\",\"h\",\"fi\",\"fb\",\"i8\"");
    set_in(&r, "x", v, 12);
    static const double iv[] = {5, -7, 16777216, -3};
    static const double bv[] = {0, 1, 1, 0};
    set_in(&r, "xi", iv, 4);
    set_in(&r, "xb", bv, 4);
    run(&r);
    static const double want64[] = {0, 9.223372036854775807e18, -9.223372036854775808e18, 2, -2,
                                    3e9, -3e9, 0, 0, 70000, 1, 300};
    for (int i = 0; i < 12; i++) {
        double x = v[i];
        CHECK(&r, "i64", i, want64[i], 0, 0);
        CHECK(&r, "i32", i, (double)(int32_t)(uint32_t)(uint64_t)(int64_t)(i == 1 ? INT64_MAX : i == 2 ? INT64_MIN : (int64_t)want64[i]), 0, 0);
        CHECK(&r, "i8", i, (double)(int8_t)(uint8_t)(uint64_t)(int64_t)(i == 1 ? INT64_MAX : i == 2 ? INT64_MIN : (int64_t)want64[i]), 0, 0);
        CHECK(&r, "bo", i, x != 0 ? 1 : 0, 0, 0);
        CHECK(&r, "h", i, isnan(x) ? NAN : fe_k_f16_to_f32(fe_k_f32_to_f16((float)x)), 0, 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(&r, "fi", i, iv[i], 0, 0);
        CHECK(&r, "fb", i, bv[i], 0, 0);
    }
    done(&r);
}

static const char *BINARY[] = {"add", "sub", "mul", "div", "maximum", "minimum", "pow"};

static double ref_binary(const char *op, float a, float b)
{
    if (!strcmp(op, "add")) return (float)((double)a + b);
    if (!strcmp(op, "sub")) return (float)((double)a - b);
    if (!strcmp(op, "mul")) return (float)((double)a * b);
    if (!strcmp(op, "div")) return (float)((double)a / b);
    if (!strcmp(op, "maximum")) return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    if (!strcmp(op, "minimum")) return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    return pow(a, b);
}

static void test_binary_broadcast(void **state)
{
    (void)state;
    char nodes[4096] = "", outs[512] = "";
    size_t ln = 0, lo = 0;
    for (int k = 0; k < 7; k++) {
        ln += (size_t)snprintf(nodes + ln, sizeof nodes - ln,
                               "%s{\"name\":\"n_%s\",\"op\":\"%s\",\"inputs\":[\"a\",\"b\"],\"outputs\":[\"y_%s\"]}",
                               k ? "," : "", BINARY[k], BINARY[k], BINARY[k]);
        lo += (size_t)snprintf(outs + lo, sizeof outs - lo, "%s\"y_%s\"", k ? "," : "", BINARY[k]);
    }
    R r;
    setup(&r, "\"a\":{\"shape\":[3,1,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"b\":{\"shape\":[4,5],\"dtype\":\"f32\",\"kind\":\"input\"}", nodes, outs);
    set_in(&r, "a", SPECIAL, 15);
    set_in(&r, "b", SPECIAL + 7, 20);
    run(&r);
    for (int k = 0; k < 7; k++) {
        char name[32];
        snprintf(name, sizeof name, "y_%s", BINARY[k]);
        assert_int_equal(numel(&r, name), 60);
        for (int64_t i = 0; i < 60; i++) {
            float a = (float)in(&r, "a", bidx(&r, "a", name, i));
            float b = (float)in(&r, "b", bidx(&r, "b", name, i));
            CHECK(&r, name, i, (float)ref_binary(BINARY[k], a, b), k == 6 ? 2e-6 : 0, k == 6 ? 1e-30 : 0);
        }
    }
    done(&r);
}

static void test_binary_scalar_and_int(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[2,3],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"ia\":{\"shape\":[5],\"dtype\":\"i64\",\"kind\":\"input\"},"
              "\"ib\":{\"shape\":[5],\"dtype\":\"i64\",\"kind\":\"input\"},"
              "\"i32\":{\"shape\":[1],\"dtype\":\"i32\",\"kind\":\"input\"}",
          "{\"name\":\"rsub\",\"op\":\"sub\",\"inputs\":[\"x\"],\"outputs\":[\"rs\"],\"attrs\":{\"scalar\":2.5,\"scalar_index\":0}},"
          "{\"name\":\"sub\",\"op\":\"sub\",\"inputs\":[\"x\"],\"outputs\":[\"s\"],\"attrs\":{\"scalar\":2.5}},"
          "{\"name\":\"mx\",\"op\":\"maximum\",\"inputs\":[\"x\"],\"outputs\":[\"mx\"],\"attrs\":{\"scalar\":-3.4028235e38}},"
          "{\"name\":\"pi\",\"op\":\"add\",\"inputs\":[\"x\"],\"outputs\":[\"pi\"],\"attrs\":{\"scalar\":3.4028235e38}},"
          "{\"name\":\"dv\",\"op\":\"div\",\"inputs\":[\"x\"],\"outputs\":[\"dv\"],\"attrs\":{\"scalar\":0}},"
          "{\"name\":\"iadd\",\"op\":\"add\",\"inputs\":[\"ia\",\"ib\"],\"outputs\":[\"iadd\"]},"
          "{\"name\":\"imul\",\"op\":\"mul\",\"inputs\":[\"ia\",\"ib\"],\"outputs\":[\"imul\"]},"
          "{\"name\":\"imax\",\"op\":\"maximum\",\"inputs\":[\"ia\",\"i32\"],\"outputs\":[\"imax\"]},"
          "{\"name\":\"isc\",\"op\":\"mul\",\"inputs\":[\"ia\"],\"outputs\":[\"isc\"],\"attrs\":{\"scalar\":3}}",
          "\"rs\",\"s\",\"mx\",\"pi\",\"dv\",\"iadd\",\"imul\",\"imax\",\"isc\"");
    static const double xv[] = {1, -2, NAN, INFINITY, 0, -0.25};
    static const double av[] = {7, -7, 5, 9.2e18, -4};
    static const double bv[] = {2, 2, 0, 9.2e18, -1};
    static const double cv[] = {3};
    set_in(&r, "x", xv, 6);
    set_in(&r, "ia", av, 5);
    set_in(&r, "ib", bv, 5);
    set_in(&r, "i32", cv, 1);
    run(&r);
    for (int i = 0; i < 6; i++) {
        float x = (float)xv[i];
        CHECK(&r, "rs", i, 2.5f - x, 0, 0);
        CHECK(&r, "s", i, x - 2.5f, 0, 0);
        CHECK(&r, "mx", i, isnan(x) ? NAN : x, 0, 0);       /* max(x, -inf) = x */
        CHECK(&r, "pi", i, isnan(x) ? NAN : INFINITY, 0, 0);
        CHECK(&r, "dv", i, (double)(x / 0.0f), 0, 0);
    }
    for (int i = 0; i < 5; i++) {
        int64_t a = (int64_t)av[i], b = (int64_t)bv[i];
        CHECK(&r, "iadd", i, (double)(int64_t)((uint64_t)a + (uint64_t)b), 0, 0);   /* wraps */
        CHECK(&r, "imul", i, (double)(int64_t)((uint64_t)a * (uint64_t)b), 0, 0);
        CHECK(&r, "imax", i, (double)(a > 3 ? a : 3), 0, 0);
        CHECK(&r, "isc", i, (double)(int64_t)((uint64_t)a * 3u), 0, 0);
    }
    done(&r);
}

static void test_where(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"c\":{\"shape\":[4,1],\"dtype\":\"bool\",\"kind\":\"input\"},"
              "\"a\":{\"shape\":[1,6],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"b\":{\"shape\":[4,6],\"dtype\":\"f32\",\"kind\":\"input\"}",
          "{\"name\":\"w\",\"op\":\"where\",\"inputs\":[\"c\",\"a\",\"b\"],\"outputs\":[\"y\"]},"
          "{\"name\":\"fill\",\"op\":\"where\",\"inputs\":[\"c\",\"b\"],\"outputs\":[\"yf\"],"
          "\"attrs\":{\"scalar\":-3.4028235e38}},"
          "{\"name\":\"fill0\",\"op\":\"where\",\"inputs\":[\"c\",\"b\"],\"outputs\":[\"y0\"],"
          "\"attrs\":{\"scalar\":0.5,\"scalar_index\":1}}",
          "\"y\",\"yf\",\"y0\"");
    static const double cv[] = {1, 0, 0, 1};
    set_in(&r, "c", cv, 4);
    set_in(&r, "b", SPECIAL, NSPECIAL);
    run(&r);
    for (int64_t i = 0; i < 24; i++) {
        int c = in(&r, "c", bidx(&r, "c", "y", i)) != 0;
        double a = in(&r, "a", bidx(&r, "a", "y", i)), b = in(&r, "b", i);
        CHECK(&r, "y", i, c ? a : b, 0, 0);
        CHECK(&r, "yf", i, c ? b : -INFINITY, 0, 0);
        CHECK(&r, "y0", i, c ? 0.5 : b, 0, 0);
    }
    done(&r);
}

/* ---- reductions ---- */

static void test_reductions(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[3,4,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"xn\":{\"shape\":[3,4,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"xi\":{\"shape\":[6,2],\"dtype\":\"i64\",\"kind\":\"input\"}",
          "{\"name\":\"s1\",\"op\":\"sum\",\"inputs\":[\"x\"],\"outputs\":[\"s1\"],\"attrs\":{\"axes\":[1]}},"
          "{\"name\":\"s02\",\"op\":\"sum\",\"inputs\":[\"x\"],\"outputs\":[\"s02\"],\"attrs\":{\"axes\":[0,-1],\"keepdim\":true}},"
          "{\"name\":\"m\",\"op\":\"mean\",\"inputs\":[\"x\"],\"outputs\":[\"m\"],\"attrs\":{\"axes\":[-1]}},"
          "{\"name\":\"mx\",\"op\":\"amax\",\"inputs\":[\"x\"],\"outputs\":[\"mx\"],\"attrs\":{\"axes\":[1,2]}},"
          "{\"name\":\"mn\",\"op\":\"amin\",\"inputs\":[\"x\"],\"outputs\":[\"mn\"]},"
          "{\"name\":\"nx\",\"op\":\"amax\",\"inputs\":[\"xn\"],\"outputs\":[\"nx\"],\"attrs\":{\"axes\":[2]}},"
          "{\"name\":\"ns\",\"op\":\"sum\",\"inputs\":[\"xn\"],\"outputs\":[\"ns\"],\"attrs\":{\"axes\":[0]}},"
          "{\"name\":\"is\",\"op\":\"sum\",\"inputs\":[\"xi\"],\"outputs\":[\"is\"],\"attrs\":{\"axes\":[0]}}",
          "\"s1\",\"s02\",\"m\",\"mx\",\"mn\",\"nx\",\"ns\",\"is\"");
    static const double nv[] = {1, 2, NAN, 4, -INFINITY, 6, 7};
    set_in(&r, "xn", nv, 7);
    run(&r);
#define X(a, b, c) in(&r, "x", ((a) * 4 + (b)) * 5 + (c))
#define XN(a, b, c) in(&r, "xn", ((a) * 4 + (b)) * 5 + (c))
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 5; c++) {
            double s = 0;
            for (int b = 0; b < 4; b++)
                s += X(a, b, c);
            CHECK(&r, "s1", a * 5 + c, s, 1e-6, 1e-6);
        }
    for (int b = 0; b < 4; b++) {
        double s = 0;
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 5; c++)
                s += X(a, b, c);
        CHECK(&r, "s02", b, s, 1e-6, 1e-6);
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++) {
            double s = 0, mxv = -INFINITY, nxv = -INFINITY;
            int nan = 0;
            for (int c = 0; c < 5; c++) {
                s += X(a, b, c);
                double v = XN(a, b, c);
                nan |= isnan(v);
                if (v > nxv)
                    nxv = v;
            }
            CHECK(&r, "m", a * 4 + b, s / 5, 1e-6, 1e-6);
            CHECK(&r, "nx", a * 4 + b, nan ? NAN : nxv, 0, 0);
            (void)mxv;
        }
    for (int a = 0; a < 3; a++) {
        double m = -INFINITY;
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 5; c++)
                m = fmax(m, X(a, b, c));
        CHECK(&r, "mx", a, m, 0, 0);
    }
    double mn = INFINITY;
    for (int i = 0; i < 60; i++)
        mn = fmin(mn, in(&r, "x", i));
    CHECK(&r, "mn", 0, mn, 0, 0);
    for (int i = 0; i < 20; i++) {
        double s = 0;
        for (int a = 0; a < 3; a++)
            s += in(&r, "xn", a * 20 + i);
        CHECK(&r, "ns", i, s, 1e-6, 1e-6);
    }
    for (int j = 0; j < 2; j++) {
        double s = 0;
        for (int i = 0; i < 6; i++)
            s += in(&r, "xi", i * 2 + j);
        CHECK(&r, "is", j, s, 0, 0);
    }
#undef X
#undef XN
    done(&r);
}

/* Over a leading axis of a slab wider than one block of columns (the
 * kernels go across columns in vectors, 256 at a time for softmax): every
 * column against the definition, with a column of -inf (softmax NaN, as in
 * PyTorch), a NaN, and a tail of columns shorter than a vector. */
static void test_column_ops(void **state)
{
    (void)state;
    R r;
    enum { RW = 5, CL = 300 };
    setup(&r, "\"x\":{\"shape\":[5,300],\"dtype\":\"f32\",\"kind\":\"input\"}",
          "{\"name\":\"s0\",\"op\":\"softmax\",\"inputs\":[\"x\"],\"outputs\":[\"s0\"],\"attrs\":{\"axis\":0}},"
          "{\"name\":\"l0\",\"op\":\"log_softmax\",\"inputs\":[\"x\"],\"outputs\":[\"l0\"],\"attrs\":{\"axis\":0}},"
          "{\"name\":\"su\",\"op\":\"sum\",\"inputs\":[\"x\"],\"outputs\":[\"su\"],\"attrs\":{\"axes\":[0]}},"
          "{\"name\":\"mx\",\"op\":\"amax\",\"inputs\":[\"x\"],\"outputs\":[\"mx\"],\"attrs\":{\"axes\":[0]}},"
          "{\"name\":\"mn\",\"op\":\"amin\",\"inputs\":[\"x\"],\"outputs\":[\"mn\"],\"attrs\":{\"axes\":[0]}}",
          "\"s0\",\"l0\",\"su\",\"mx\",\"mn\"");
    static double v[RW * CL];
    for (int i = 0; i < RW * CL; i++)
        v[i] = sin(i * 0.37) * 6;
    for (int row = 0; row < RW; row++)
        v[row * CL + 17] = -INFINITY;     /* column 17: all -inf */
    v[2 * CL + 261] = NAN;                /* column 261 (second block): a NaN */
    set_in(&r, "x", v, RW * CL);
    run(&r);
    for (int c = 0; c < CL; c++) {
        double m = -INFINITY, mn = INFINITY, s = 0, sum = 0;
        int nan = 0;
        for (int row = 0; row < RW; row++) {
            double e = in(&r, "x", row * CL + c);
            nan |= e != e;
            m = fmax(m, e);
            mn = fmin(mn, e);
            sum += e;
        }
        for (int row = 0; row < RW; row++)
            s += exp(in(&r, "x", row * CL + c) - m);
        int bad = nan || m == -INFINITY;
        CHECK(&r, "su", c, sum, 1e-6, 1e-6);
        CHECK(&r, "mx", c, nan ? NAN : m, 0, 0);
        CHECK(&r, "mn", c, nan ? NAN : mn, 0, 0);
        for (int row = 0; row < RW; row++) {
            double e = in(&r, "x", row * CL + c);
            CHECK(&r, "s0", row * CL + c, bad ? NAN : exp(e - m) / s, 1e-5, 1e-7);
            CHECK(&r, "l0", row * CL + c, bad ? NAN : (e - m) - log(s), 1e-5, 1e-6);
        }
    }
    done(&r);
}

static void test_softmax(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[4,7],\"dtype\":\"f32\",\"kind\":\"input\"}",
          "{\"name\":\"sm\",\"op\":\"softmax\",\"inputs\":[\"x\"],\"outputs\":[\"sm\"]},"
          "{\"name\":\"s0\",\"op\":\"softmax\",\"inputs\":[\"x\"],\"outputs\":[\"s0\"],\"attrs\":{\"axis\":0}},"
          "{\"name\":\"ls\",\"op\":\"log_softmax\",\"inputs\":[\"x\"],\"outputs\":[\"ls\"],\"attrs\":{\"axis\":-1}}",
          "\"sm\",\"s0\",\"ls\"");
    /* row 2 is all -inf: softmax is NaN there, as in PyTorch */
    double v[28];
    for (int i = 0; i < 28; i++)
        v[i] = i / 7 == 2 ? -INFINITY : sin(i * 1.7) * 5;
    v[3] = -INFINITY;
    set_in(&r, "x", v, 28);
    run(&r);
    for (int row = 0; row < 4; row++) {
        double m = -INFINITY, s = 0;
        for (int j = 0; j < 7; j++)
            m = fmax(m, v[row * 7 + j]);
        for (int j = 0; j < 7; j++)
            s += exp(v[row * 7 + j] - m);
        for (int j = 0; j < 7; j++) {
            double want = row == 2 ? NAN : exp(v[row * 7 + j] - m) / s;
            double lwant = row == 2 ? NAN : (v[row * 7 + j] - m) - log(s);
            CHECK(&r, "sm", row * 7 + j, want, 1e-5, 1e-7);
            CHECK(&r, "ls", row * 7 + j, lwant, 1e-5, 1e-6);
        }
    }
    for (int j = 0; j < 7; j++) {
        double m = -INFINITY, s = 0;
        for (int row = 0; row < 4; row++)
            m = fmax(m, v[row * 7 + j]);
        for (int row = 0; row < 4; row++)
            s += exp(v[row * 7 + j] - m);
        for (int row = 0; row < 4; row++)
            CHECK(&r, "s0", row * 7 + j, exp(v[row * 7 + j] - m) / s, 1e-5, 1e-7);
    }
    done(&r);
}

static void test_norms(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[2,3,8],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"w\":{\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"weight\"},"
              "\"b\":{\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"weight\"},"
              "\"w2\":{\"shape\":[3,8],\"dtype\":\"f16\",\"kind\":\"weight\"}",
          "{\"name\":\"r1\",\"op\":\"rms_norm\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"r1\"],\"attrs\":{\"eps\":1e-5}},"
          "{\"name\":\"r0\",\"op\":\"rms_norm\",\"inputs\":[\"x\"],\"outputs\":[\"r0\"]},"
          "{\"name\":\"r2\",\"op\":\"rms_norm\",\"inputs\":[\"x\",\"w2\"],\"outputs\":[\"r2\"],\"attrs\":{\"normalized_shape\":[3,8]}},"
          "{\"name\":\"l1\",\"op\":\"layer_norm\",\"inputs\":[\"x\",\"w\",\"b\"],\"outputs\":[\"l1\"]},"
          "{\"name\":\"l0\",\"op\":\"layer_norm\",\"inputs\":[\"x\"],\"outputs\":[\"l0\"],\"attrs\":{\"eps\":0.1}}",
          "\"r1\",\"r0\",\"r2\",\"l1\",\"l0\"");
    run(&r);
    for (int row = 0; row < 6; row++) {
        double ss = 0, mean = 0, var = 0;
        for (int j = 0; j < 8; j++) {
            double x = in(&r, "x", row * 8 + j);
            ss += x * x;
            mean += x;
        }
        mean /= 8;
        for (int j = 0; j < 8; j++)
            var += pow(in(&r, "x", row * 8 + j) - mean, 2);
        var /= 8;
        for (int j = 0; j < 8; j++) {
            int64_t i = row * 8 + j;
            double x = in(&r, "x", i), w = in(&r, "w", j), b = in(&r, "b", j);
            CHECK(&r, "r1", i, x / sqrt(ss / 8 + 1e-5) * w, 1e-5, 1e-6);
            CHECK(&r, "r0", i, x / sqrt(ss / 8 + 1e-6), 1e-5, 1e-6);
            CHECK(&r, "l1", i, (x - mean) / sqrt(var + 1e-5) * w + b, 1e-5, 1e-5);
            CHECK(&r, "l0", i, (x - mean) / sqrt(var + 0.1), 1e-5, 1e-5);
        }
    }
    for (int n = 0; n < 2; n++) {
        double ss = 0;
        for (int j = 0; j < 24; j++)
            ss += pow(in(&r, "x", n * 24 + j), 2);
        for (int j = 0; j < 24; j++)
            CHECK(&r, "r2", n * 24 + j, in(&r, "x", n * 24 + j) / sqrt(ss / 24 + 1e-6) * in(&r, "w2", j),
                  1e-5, 1e-6);
    }
    done(&r);
}

/* ---- injective ---- */

static void test_reshape_transpose_slice_concat(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[3,4,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"y\":{\"shape\":[3,7],\"dtype\":\"i32\",\"kind\":\"input\"},"
              "\"c1\":{\"shape\":[2,1,3],\"dtype\":\"f16\",\"kind\":\"input\"},"
              "\"c2\":{\"shape\":[2,4,3],\"dtype\":\"f16\",\"kind\":\"input\"},"
              "\"c3\":{\"shape\":[2,2,3],\"dtype\":\"f16\",\"kind\":\"input\"}",
          "{\"name\":\"rs\",\"op\":\"reshape\",\"inputs\":[\"x\"],\"outputs\":[\"rs\"],\"attrs\":{\"shape\":[5,-1]}},"
          "{\"name\":\"tp\",\"op\":\"transpose\",\"inputs\":[\"x\"],\"outputs\":[\"tp\"],\"attrs\":{\"perm\":[2,0,1]}},"
          "{\"name\":\"tr\",\"op\":\"transpose\",\"inputs\":[\"x\"],\"outputs\":[\"tr\"]},"
          "{\"name\":\"sl\",\"op\":\"slice\",\"inputs\":[\"y\"],\"outputs\":[\"sl\"],"
          "\"attrs\":{\"axis\":1,\"start\":-4,\"end\":100,\"step\":2}},"
          "{\"name\":\"sl2\",\"op\":\"slice\",\"inputs\":[\"x\"],\"outputs\":[\"sl2\"],"
          "\"attrs\":{\"axis\":-1,\"start\":1,\"end\":-1}},"
          "{\"name\":\"sl3\",\"op\":\"slice\",\"inputs\":[\"x\"],\"outputs\":[\"sl3\"],"
          "\"attrs\":{\"axis\":0,\"start\":-100,\"end\":2}},"
          "{\"name\":\"cc\",\"op\":\"concat\",\"inputs\":[\"c1\",\"c2\",\"c3\"],\"outputs\":[\"cc\"],\"attrs\":{\"axis\":-2}}",
          "\"rs\",\"tp\",\"tr\",\"sl\",\"sl2\",\"sl3\",\"cc\"");
    run(&r);
    for (int i = 0; i < 60; i++)
        CHECK(&r, "rs", i, in(&r, "x", i), 0, 0);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 5; c++) {
                double x = in(&r, "x", (a * 4 + b) * 5 + c);
                CHECK(&r, "tp", (c * 3 + a) * 4 + b, x, 0, 0);       /* [5,3,4] */
                CHECK(&r, "tr", (c * 4 + b) * 3 + a, x, 0, 0);       /* [5,4,3] */
                if (c >= 1 && c < 4)
                    CHECK(&r, "sl2", (a * 4 + b) * 3 + c - 1, x, 0, 0);
                if (a < 2)
                    CHECK(&r, "sl3", (a * 4 + b) * 5 + c, x, 0, 0);
            }
    assert_int_equal(numel(&r, "sl"), 6);               /* columns 3 and 5 */
    for (int a = 0; a < 3; a++) {
        CHECK(&r, "sl", a * 2, in(&r, "y", a * 7 + 3), 0, 0);
        CHECK(&r, "sl", a * 2 + 1, in(&r, "y", a * 7 + 5), 0, 0);
    }
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 7; k++)
            for (int c = 0; c < 3; c++) {
                double want = k < 1 ? in(&r, "c1", (n * 1 + k) * 3 + c)
                            : k < 5 ? in(&r, "c2", (n * 4 + k - 1) * 3 + c)
                                    : in(&r, "c3", (n * 2 + k - 5) * 3 + c);
                CHECK(&r, "cc", (n * 7 + k) * 3 + c, want, 0, 0);
            }
    done(&r);
}

static int64_t reflect(int64_t i, int64_t n)
{
    while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
}

static void test_pad_expand(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[2,3,4],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"m\":{\"shape\":[3,5],\"dtype\":\"bf16\",\"kind\":\"input\"},"
              "\"e\":{\"shape\":[3,1],\"dtype\":\"i64\",\"kind\":\"input\"}",
          "{\"name\":\"pc\",\"op\":\"pad\",\"inputs\":[\"x\"],\"outputs\":[\"pc\"],\"attrs\":{\"pads\":[1,2,0,1],\"value\":9}},"
          "{\"name\":\"pr\",\"op\":\"pad\",\"inputs\":[\"m\"],\"outputs\":[\"pr\"],\"attrs\":{\"pads\":[4,3],\"mode\":\"reflect\"}},"
          "{\"name\":\"pp\",\"op\":\"pad\",\"inputs\":[\"m\"],\"outputs\":[\"pp\"],\"attrs\":{\"pads\":[1,1,2,0],\"mode\":\"replicate\"}},"
          "{\"name\":\"ex\",\"op\":\"expand\",\"inputs\":[\"e\"],\"outputs\":[\"ex\"],\"attrs\":{\"shape\":[2,-1,4]}}",
          "\"pc\",\"pr\",\"pp\",\"ex\"");
    run(&r);
    /* constant: last axis +1 / +2, middle +0 / +1 -> [2,4,7] */
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 7; c++) {
                int sb = b, sc = c - 1;
                double want = sb < 3 && sc >= 0 && sc < 4 ? in(&r, "x", (a * 3 + sb) * 4 + sc) : 9;
                CHECK(&r, "pc", (a * 4 + b) * 7 + c, want, 0, 0);
            }
    /* reflect pads [4,3] on a size-5 axis -> 12 */
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 12; c++)
            CHECK(&r, "pr", a * 12 + c, in(&r, "m", a * 5 + reflect(c - 4, 5)), 0, 0);
    /* replicate: last +1/+1, first +2/+0 -> [5,7] */
    for (int a = 0; a < 5; a++)
        for (int c = 0; c < 7; c++) {
            int sa = a - 2 < 0 ? 0 : a - 2, sc = c - 1 < 0 ? 0 : c - 1 > 4 ? 4 : c - 1;
            CHECK(&r, "pp", a * 7 + c, in(&r, "m", sa * 5 + sc), 0, 0);
        }
    for (int64_t i = 0; i < 24; i++)
        CHECK(&r, "ex", i, in(&r, "e", (i / 4) % 3), 0, 0);
    done(&r);
}

/* Negative pads crop (torch allows it for constant mode); the kernel takes
 * them even where a model's shape inference does not. */
static void test_pad_kernel_crop(void **state)
{
    (void)state;
    float x[15], y[15];
    int64_t xs[2] = {3, 5}, ys[2] = {3, 5}, pads[2] = {-1, 1};
    for (int i = 0; i < 15; i++)
        x[i] = (float)i;
    fe_k_tensor xt = fe_k_view(x, FE_F32, 2, xs), yt = fe_k_view(y, FE_F32, 2, ys);
    assert_int_equal(fe_k_pad(&xt, pads, 2, FE_K_PAD_CONSTANT, -2.0, &yt, NULL), FE_OK);
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 5; c++)
            assert_true(y[a * 5 + c] == (c < 4 ? x[a * 5 + c + 1] : -2.0f));
    /* reflect wider than the axis is refused with a message */
    int64_t big[2] = {5, 0}, ys2[2] = {3, 10};
    float y2[30];
    fe_error err = {0};
    fe_k_tensor yt2 = fe_k_view(y2, FE_F32, 2, ys2);
    assert_int_equal(fe_k_pad(&xt, big, 2, FE_K_PAD_REFLECT, 0, &yt2, &err), FE_EINPUT);
    assert_contains(err.message, "reflect");
}

/* Constant pads on random shapes and pads (negative ones crop) against
 * the definition, element by element: the kernel copies the source's run
 * of each row with one memcpy, so every edge of that run is checked, in
 * f32 and in f16 (a 2-byte fill whose bytes differ). */
static void test_pad_constant_random(void **state)
{
    (void)state;
    srand(7);
    for (int it = 0; it < 200; it++) {
        int rank = 1 + rand() % 3, dt = it % 2 ? FE_F16 : FE_F32, es = fe_dtype_size(dt);
        int64_t xs[3], ys[3], pads[6], before[3] = {0};
        for (int i = 0; i < rank; i++)
            xs[i] = 1 + rand() % 6;
        int np = 1 + rand() % rank;              /* pads for the last np axes */
        for (int k = 0; k < np; k++) {
            int ax = rank - 1 - k;
            pads[2 * k] = rand() % 4 - 1;
            pads[2 * k + 1] = rand() % 4 - 1;
            if (xs[ax] + pads[2 * k] + pads[2 * k + 1] < 1)
                pads[2 * k] = pads[2 * k + 1] = 0;
            before[ax] = pads[2 * k];
        }
        int64_t nx = 1, ny = 1;
        for (int i = 0; i < rank; i++) {
            ys[i] = xs[i];
            for (int k = 0; k < np; k++)
                if (rank - 1 - k == i)
                    ys[i] += pads[2 * k] + pads[2 * k + 1];
            nx *= xs[i];
            ny *= ys[i];
        }
        float xf[216], yf[1000], v = -1.5f;
        unsigned char xb[216 * 4], yb[1000 * 4];
        for (int64_t i = 0; i < nx; i++)
            xf[i] = (float)(i + 1);
        fe_k_store_f32(xb, dt, 0, xf, nx);
        fe_k_tensor xt = fe_k_view(xb, dt, rank, xs), yt = fe_k_view(yb, dt, rank, ys);
        assert_int_equal(fe_k_pad(&xt, pads, 2 * np, FE_K_PAD_CONSTANT, v, &yt, NULL), FE_OK);
        fe_k_load_f32(yb, dt, 0, yf, ny);
        for (int64_t i = 0; i < ny; i++) {
            int64_t rem = i, src = 0, mul = 1, inside = 1;
            for (int a = rank - 1; a >= 0; a--) {
                int64_t j = rem % ys[a] - before[a];
                rem /= ys[a];
                inside &= j >= 0 && j < xs[a];
                src += j * mul;
                mul *= xs[a];
            }
            if (yf[i] != (inside ? xf[src] : v))
                fail_msg("pad case %d (rank %d, %d-byte): element %lld is %g", it, rank, es,
                         (long long)i, yf[i]);
        }
    }
}

/* Max pool on random planes, windows, strides, dilations and paddings,
 * with NaNs, against the definition: the kernel goes tap by tap over
 * output ranges it computes, so each range's ends are what this checks. */
static void test_max_pool_random(void **state)
{
    (void)state;
    srand(11);
    for (int it = 0; it < 300; it++) {
        fe_k_pool p = {0};
        int64_t H = 1 + rand() % 9, W = 1 + rand() % 9;
        for (int a = 0; a < 2; a++) {
            p.kernel[a] = 1 + rand() % 3;
            p.stride[a] = 1 + rand() % 3;
            p.dil[a] = 1 + rand() % 2;
            p.pad[a] = rand() % (p.kernel[a] / 2 + 1);
        }
        int64_t OH = (H + 2 * p.pad[0] - p.dil[0] * (p.kernel[0] - 1) - 1) / p.stride[0] + 1;
        int64_t OW = (W + 2 * p.pad[1] - p.dil[1] * (p.kernel[1] - 1) - 1) / p.stride[1] + 1;
        if (OH < 1 || OW < 1)
            continue;
        OH += it % 3 == 0;                        /* a ceil_mode-like extra window */
        float x[2 * 81], y[2 * 12 * 12];
        for (int i = 0; i < 2 * H * W; i++)
            x[i] = rand() % 7 == 0 ? NAN : (float)(rand() % 100) - 50;
        int64_t xs[4] = {1, 2, H, W}, ys[4] = {1, 2, OH, OW};
        fe_k_tensor xt = fe_k_view(x, FE_F32, 4, xs), yt = fe_k_view(y, FE_F32, 4, ys);
        assert_int_equal(fe_k_max_pool2d(&xt, &p, &yt, NULL), FE_OK);
        for (int c = 0; c < 2; c++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    float m = -INFINITY;
                    int nan = 0;
                    for (int64_t ky = 0; ky < p.kernel[0]; ky++)
                        for (int64_t kx = 0; kx < p.kernel[1]; kx++) {
                            int64_t iy = oy * p.stride[0] - p.pad[0] + ky * p.dil[0];
                            int64_t ix = ox * p.stride[1] - p.pad[1] + kx * p.dil[1];
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            float e = x[c * H * W + iy * W + ix];
                            nan |= e != e;
                            m = e > m ? e : m;
                        }
                    float got = y[(c * OH + oy) * OW + ox];
                    if (nan ? got == got : got != m)
                        fail_msg("max_pool case %d: (%d, %lld, %lld) is %g, expected %g", it, c,
                                 (long long)oy, (long long)ox, got, nan ? NAN : m);
                }
    }
}

static void test_gather_embedding(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"d\":{\"shape\":[4,5,6],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"ix\":{\"shape\":[2,3],\"dtype\":\"i64\",\"kind\":\"input\"},"
              "\"w\":{\"shape\":[10,4],\"dtype\":\"f16\",\"kind\":\"weight\"},"
              "\"tok\":{\"shape\":[3],\"dtype\":\"i32\",\"kind\":\"input\"}",
          "{\"name\":\"g\",\"op\":\"gather\",\"inputs\":[\"d\",\"ix\"],\"outputs\":[\"g\"],\"attrs\":{\"axis\":1}},"
          "{\"name\":\"e\",\"op\":\"embedding\",\"inputs\":[\"w\",\"tok\"],\"outputs\":[\"e\"]}",
          "\"g\",\"e\"");
    /* the session drew indices in range */
    for (int i = 0; i < 6; i++)
        assert_true(in(&r, "ix", i) >= 0 && in(&r, "ix", i) < 5);
    for (int i = 0; i < 3; i++)
        assert_true(in(&r, "tok", i) >= 0 && in(&r, "tok", i) < 10);
    static const double iv[] = {0, -1, 4, -5, 2, 3};
    static const double tv[] = {9, -10, 0};
    set_in(&r, "ix", iv, 6);
    set_in(&r, "tok", tv, 3);
    run(&r);
    assert_int_equal(numel(&r, "g"), 4 * 6 * 6);
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 6; k++)
            for (int c = 0; c < 6; c++) {
                int64_t j = (int64_t)iv[k] < 0 ? (int64_t)iv[k] + 5 : (int64_t)iv[k];
                CHECK(&r, "g", (a * 6 + k) * 6 + c, in(&r, "d", (a * 5 + j) * 6 + c), 0, 0);
            }
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 4; c++) {
            int64_t j = (int64_t)tv[k] < 0 ? (int64_t)tv[k] + 10 : (int64_t)tv[k];
            CHECK(&r, "e", k * 4 + c, in(&r, "w", j * 4 + c), 0, 0);
        }
    /* out of range: a clear error naming the node */
    static const double bad[] = {0, 5, 1};
    fe_exec_result *res = NULL;
    fe_error err = {0};
    set_in(&r, "ix", bad, 3);
    assert_int_equal(fe_exec_reference(r.ex, &res, &err), FE_EINPUT);
    assert_contains(err.message, "node 'g'");
    assert_contains(err.message, "out of range");
    done(&r);
}

/* ---- matmul ---- */

static void test_matmul_shapes(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"a\":{\"shape\":[2,1,5,7],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"b\":{\"shape\":[3,7,4],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"v\":{\"shape\":[7],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"m\":{\"shape\":[5,7],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"mt\":{\"shape\":[7,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"bt\":{\"shape\":[4,7],\"dtype\":\"f16\",\"kind\":\"input\"},"
              "\"h\":{\"shape\":[5,7],\"dtype\":\"f16\",\"kind\":\"input\"},"
              "\"hb\":{\"shape\":[7,4],\"dtype\":\"f16\",\"kind\":\"input\"}",
          "{\"name\":\"bb\",\"op\":\"matmul\",\"inputs\":[\"a\",\"b\"],\"outputs\":[\"bb\"]},"
          "{\"name\":\"vb\",\"op\":\"matmul\",\"inputs\":[\"v\",\"b\"],\"outputs\":[\"vb\"]},"
          "{\"name\":\"mv\",\"op\":\"matmul\",\"inputs\":[\"m\",\"v\"],\"outputs\":[\"mv\"]},"
          "{\"name\":\"tt\",\"op\":\"matmul\",\"inputs\":[\"mt\",\"bt\"],\"outputs\":[\"tt\"],"
          "\"attrs\":{\"transpose_a\":true,\"transpose_b\":true}},"
          "{\"name\":\"hh\",\"op\":\"matmul\",\"inputs\":[\"h\",\"hb\"],\"outputs\":[\"hh\"]}",
          "\"bb\",\"vb\",\"mv\",\"tt\",\"hh\"");
    run(&r);
    int rank;
    const int64_t *s = shape(&r, "bb", &rank);
    assert_int_equal(rank, 4);
    assert_true(s[0] == 2 && s[1] == 3 && s[2] == 5 && s[3] == 4);
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 3; c++)
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 4; j++) {
                    double acc = 0;
                    for (int k = 0; k < 7; k++)
                        acc += in(&r, "a", (n * 5 + i) * 7 + k) * in(&r, "b", (c * 7 + k) * 4 + j);
                    CHECK(&r, "bb", ((n * 3 + c) * 5 + i) * 4 + j, acc, 1e-5, 1e-6);
                }
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < 4; j++) {
            double acc = 0;
            for (int k = 0; k < 7; k++)
                acc += in(&r, "v", k) * in(&r, "b", (c * 7 + k) * 4 + j);
            CHECK(&r, "vb", c * 4 + j, acc, 1e-5, 1e-6);
        }
    for (int i = 0; i < 5; i++) {
        double acc = 0, t[4] = {0}, h[4] = {0};
        for (int k = 0; k < 7; k++)
            acc += in(&r, "m", i * 7 + k) * in(&r, "v", k);
        CHECK(&r, "mv", i, acc, 1e-5, 1e-6);
        for (int j = 0; j < 4; j++) {
            for (int k = 0; k < 7; k++) {
                t[j] += in(&r, "mt", k * 5 + i) * in(&r, "bt", j * 7 + k);
                h[j] += in(&r, "h", i * 7 + k) * in(&r, "hb", k * 4 + j);
            }
            CHECK(&r, "tt", i * 4 + j, t[j], 1e-5, 1e-6);
            CHECK(&r, "hh", i * 4 + j, h[j], 1e-3, 1e-3);   /* f16 output */
        }
    }
    done(&r);
}

/* ---- conv / pools ---- */

static double conv_ref(R *r, int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t C, int64_t H,
                       int64_t W, int64_t Cg, int64_t Og, int64_t kh, int64_t kw, const int64_t *st,
                       const int64_t *pd, const int64_t *dl, int bias)
{
    double acc = bias ? in(r, "bias", o) : 0;
    int64_t grp = o / Og;
    for (int64_t c = 0; c < Cg; c++)
        for (int64_t ky = 0; ky < kh; ky++)
            for (int64_t kx = 0; kx < kw; kx++) {
                int64_t iy = oy * st[0] - pd[0] + ky * dl[0], ix = ox * st[1] - pd[1] + kx * dl[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                    continue;
                acc += in(r, "x", ((n * C + grp * Cg + c) * H + iy) * W + ix) *
                       in(r, "w", ((o * Cg + c) * kh + ky) * kw + kx);
            }
    return acc;
}

static void conv_case(const char *wshape, const char *attrs, int64_t O, int64_t Cg, int64_t kh,
                      int64_t kw, const int64_t *st, const int64_t *pd, const int64_t *dl, int bias)
{
    char t[1024], nd[512];
    R r;
    snprintf(t, sizeof t, "\"x\":{\"shape\":[2,16,9,8],\"dtype\":\"f32\",\"kind\":\"input\"},"
             "\"w\":{\"shape\":%s,\"dtype\":\"f32\",\"kind\":\"weight\"},"
             "\"bias\":{\"shape\":[%lld],\"dtype\":\"f32\",\"kind\":\"weight\"}", wshape, (long long)O);
    snprintf(nd, sizeof nd, "{\"name\":\"cv\",\"op\":\"conv2d\",\"inputs\":[\"x\",\"w\"%s],"
             "\"outputs\":[\"y\"],\"attrs\":%s}", bias ? ",\"bias\"" : "", attrs);
    setup(&r, t, nd, "\"y\"");
    run(&r);
    int rank;
    const int64_t *s = shape(&r, "y", &rank);
    int64_t OH = s[2], OW = s[3];
    assert_int_equal(s[1], O);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++)
                    CHECK(&r, "y", ((n * O + o) * OH + oy) * OW + ox,
                          conv_ref(&r, n, o, oy, ox, 16, 9, 8, Cg, O / (16 / Cg), kh, kw, st, pd, dl, bias),
                          1e-5, 1e-5);
    done(&r);
}

static void test_conv2d(void **state)
{
    (void)state;
    int64_t s1[2] = {1, 1}, s21[2] = {2, 1}, p0[2] = {0, 0}, p12[2] = {1, 2}, d1[2] = {1, 1},
            d12[2] = {1, 2};
    /* grouped, strided, padded, dilated, with bias (the GEMM path: 12 channels per group) */
    conv_case("[24,8,3,3]", "{\"stride\":[2,1],\"padding\":[1,2],\"dilation\":[1,2],\"groups\":2}",
              24, 8, 3, 3, s21, p12, d12, 1);
    /* depthwise (the direct path) */
    conv_case("[16,1,3,3]", "{\"padding\":1,\"groups\":16}", 16, 1, 3, 3, s1, (int64_t[2]){1, 1}, d1, 0);
    /* 1x1 without bias */
    conv_case("[10,16,1,1]", "{}", 10, 16, 1, 1, s1, p0, d1, 0);
}

static void test_pools(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[2,3,7,6],\"dtype\":\"f32\",\"kind\":\"input\"}",
          "{\"name\":\"mp\",\"op\":\"max_pool2d\",\"inputs\":[\"x\"],\"outputs\":[\"mp\"],"
          "\"attrs\":{\"kernel\":3,\"stride\":2,\"padding\":1,\"ceil_mode\":true}},"
          "{\"name\":\"md\",\"op\":\"max_pool2d\",\"inputs\":[\"x\"],\"outputs\":[\"md\"],"
          "\"attrs\":{\"kernel\":[2,2],\"stride\":1,\"dilation\":2}},"
          "{\"name\":\"ap\",\"op\":\"avg_pool2d\",\"inputs\":[\"x\"],\"outputs\":[\"ap\"],"
          "\"attrs\":{\"kernel\":3,\"stride\":2,\"padding\":1,\"ceil_mode\":true}},"
          "{\"name\":\"an\",\"op\":\"avg_pool2d\",\"inputs\":[\"x\"],\"outputs\":[\"an\"],"
          "\"attrs\":{\"kernel\":[3,2],\"stride\":[2,2],\"padding\":[1,1],\"count_include_pad\":false}}",
          "\"mp\",\"md\",\"ap\",\"an\"");
    double v[2 * 3 * 7 * 6];
    for (int i = 0; i < 252; i++)
        v[i] = sin(i * 0.37) * 3;
    v[40] = NAN;       /* plane 0: NaN wins its windows */
    set_in(&r, "x", v, 252);
    run(&r);
    struct { const char *name; int max; int64_t k[2], s[2], p[2], d[2]; int cip; } cs[] = {
        {"mp", 1, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},
        {"md", 1, {2, 2}, {1, 1}, {0, 0}, {2, 2}, 1},
        {"ap", 0, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},
        {"an", 0, {3, 2}, {2, 2}, {1, 1}, {1, 1}, 0},
    };
    for (int c = 0; c < 4; c++) {
        int rank;
        const int64_t *s = shape(&r, cs[c].name, &rank);
        int64_t OH = s[2], OW = s[3];
        if (c == 0)   /* ceil_mode: (7 + 2 - 3) / 2 rounded up + 1 = 4, (6 + 2 - 3) / 2 -> 4 */
            assert_true(OH == 4 && OW == 4);
        for (int64_t pl = 0; pl < 6; pl++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    int64_t y0 = oy * cs[c].s[0] - cs[c].p[0], x0 = ox * cs[c].s[1] - cs[c].p[1];
                    double m = -INFINITY, sum = 0;
                    int cnt = 0, nan = 0;
                    for (int64_t ky = 0; ky < cs[c].k[0]; ky++)
                        for (int64_t kx = 0; kx < cs[c].k[1]; kx++) {
                            int64_t iy = y0 + ky * cs[c].d[0], ix = x0 + kx * cs[c].d[1];
                            if (iy < 0 || iy >= 7 || ix < 0 || ix >= 6)
                                continue;
                            double e = v[(pl * 7 + iy) * 6 + ix];
                            nan |= isnan(e);
                            m = fmax(m, e);
                            sum += e;
                            cnt++;
                        }
                    double want;
                    if (cs[c].max) {
                        want = nan ? NAN : m;
                    } else {
                        /* divisor: the window clipped to the padded input, or the valid count */
                        int64_t y1 = y0 + cs[c].k[0], x1 = x0 + cs[c].k[1];
                        if (y1 > 7 + cs[c].p[0])
                            y1 = 7 + cs[c].p[0];
                        if (x1 > 6 + cs[c].p[1])
                            x1 = 6 + cs[c].p[1];
                        want = sum / (cs[c].cip ? (double)((y1 - y0) * (x1 - x0)) : cnt);
                    }
                    CHECK(&r, cs[c].name, (pl * OH + oy) * OW + ox, want, 1e-6, 1e-6);
                }
    }
    done(&r);
}

/* ---- attention and the rest ---- */

static void sdpa_check(R *r, const char *out, const char *mask, int mask_bool, int causal,
                       double scale)
{
    int L = 5, S = 6, E = 8, Ev = 4;
    for (int b = 0; b < 6; b++)
        for (int i = 0; i < L; i++) {
            double s[6], m = -INFINITY, sum = 0;
            for (int j = 0; j < S; j++) {
                double acc = 0;
                for (int e = 0; e < E; e++)
                    acc += in(r, "q", (b * L + i) * E + e) * in(r, "k", (b * S + j) * E + e);
                s[j] = acc * scale;
                if (mask) {
                    double mv = in(r, mask, i * S + j);
                    if (mask_bool)
                        s[j] = mv != 0 ? s[j] : -INFINITY;
                    else
                        s[j] += mv;
                }
                if (causal && j > i)
                    s[j] = -INFINITY;
                m = fmax(m, s[j]);
            }
            for (int j = 0; j < S; j++)
                sum += exp(s[j] - m);
            for (int e = 0; e < Ev; e++) {
                double acc = 0;
                for (int j = 0; j < S; j++)
                    acc += exp(s[j] - m) / sum * in(r, "v", (b * S + j) * Ev + e);
                CHECK(r, out, (b * L + i) * Ev + e, m == -INFINITY ? NAN : acc, 1e-5, 1e-6);
            }
        }
}

static void test_sdpa(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"q\":{\"shape\":[2,3,5,8],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"k\":{\"shape\":[2,3,6,8],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"v\":{\"shape\":[2,3,6,4],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"mb\":{\"shape\":[5,6],\"dtype\":\"bool\",\"kind\":\"input\"},"
              "\"mf\":{\"shape\":[5,6],\"dtype\":\"f32\",\"kind\":\"input\"}",
          "{\"name\":\"a0\",\"op\":\"sdpa\",\"inputs\":[\"q\",\"k\",\"v\"],\"outputs\":[\"a0\"]},"
          "{\"name\":\"ab\",\"op\":\"sdpa\",\"inputs\":[\"q\",\"k\",\"v\",\"mb\"],\"outputs\":[\"ab\"]},"
          "{\"name\":\"af\",\"op\":\"sdpa\",\"inputs\":[\"q\",\"k\",\"v\",\"mf\"],\"outputs\":[\"af\"],\"attrs\":{\"scale\":0.5}},"
          "{\"name\":\"ac\",\"op\":\"sdpa\",\"inputs\":[\"q\",\"k\",\"v\"],\"outputs\":[\"ac\"],\"attrs\":{\"causal\":true}}",
          "\"a0\",\"ab\",\"af\",\"ac\"");
    /* row 3 of the bool mask keeps nothing: NaN, as PyTorch */
    double mb[30];
    for (int i = 0; i < 30; i++)
        mb[i] = i / 6 == 3 ? 0 : (i * 7) % 3 != 0;
    set_in(&r, "mb", mb, 30);
    run(&r);
    double sc = 1 / sqrt(8.0);
    sdpa_check(&r, "a0", NULL, 0, 0, sc);
    sdpa_check(&r, "ab", "mb", 1, 0, sc);
    sdpa_check(&r, "af", "mf", 0, 0, 0.5);
    sdpa_check(&r, "ac", NULL, 0, 1, sc);
    done(&r);
}

static void test_batchnorm_allreduce_custom(void **state)
{
    (void)state;
    R r;
    setup(&r, "\"x\":{\"shape\":[2,3,5],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"w\":{\"shape\":[3],\"dtype\":\"f32\",\"kind\":\"weight\"},"
              "\"b\":{\"shape\":[3],\"dtype\":\"f32\",\"kind\":\"weight\"},"
              "\"rm\":{\"shape\":[3],\"dtype\":\"f32\",\"kind\":\"weight\"},"
              "\"rv\":{\"shape\":[3],\"dtype\":\"f32\",\"kind\":\"weight\"}",
          "{\"name\":\"bn\",\"op\":\"batch_norm\",\"inputs\":[\"x\",\"w\",\"b\",\"rm\",\"rv\"],\"outputs\":[\"bn\"]},"
          "{\"name\":\"ar\",\"op\":\"all_reduce\",\"inputs\":[\"x\"],\"outputs\":[\"ar\"],\"attrs\":{\"world_size\":4}}",
          "\"bn\",\"ar\"");
    for (int c = 0; c < 3; c++)   /* running variances are drawn valid (>= 0.5) */
        assert_true(in(&r, "rv", c) >= 0.5 && in(&r, "rv", c) <= 1.5);
    run(&r);
    for (int64_t i = 0; i < 30; i++) {
        int c = (int)((i / 5) % 3);
        double x = in(&r, "x", i);
        CHECK(&r, "bn", i, (x - in(&r, "rm", c)) / sqrt(in(&r, "rv", c) + 1e-5) * in(&r, "w", c) +
                               in(&r, "b", c), 1e-5, 1e-6);
        CHECK(&r, "ar", i, x * 4, 0, 0);
    }
    done(&r);

    setup(&r, "\"x\":{\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"y\":{\"shape\":[4],\"dtype\":\"f32\"}",
          "{\"name\":\"weird\",\"op\":\"custom\",\"inputs\":[\"x\"],\"outputs\":[\"y\"],"
          "\"attrs\":{\"aten\":\"aten::frobnicate\",\"pattern\":\"elemwise\"}}",
          "\"y\"");
    fe_error err = {0};
    assert_int_equal(fe_exec_reference(r.ex, &r.res, &err), FE_EINPUT);
    assert_contains(err.message, "weird");
    assert_contains(err.message, "aten::frobnicate");
    done(&r);
}

/* ---- vector math against libm ---- */

#ifdef FE_K_AVX2
typedef __m256 (*vfn)(__m256);
static __m256 v_sigmoid(__m256 x) { return fe_k_v8_sigmoid(x); }
static __m256 v_silu(__m256 x) { return fe_k_v8_silu(x); }
static __m256 v_gelu(__m256 x) { return fe_k_v8_gelu_tanh(x); }
static __m256 v_tanh(__m256 x) { return fe_k_v8_tanh(x); }
static __m256 v_exp(__m256 x) { return fe_k_v8_exp(x); }
static __m256 v_exp_nonpos(__m256 x) { return fe_k_v8_exp_nonpos(x); }

static double r_gelu(double x)
{
    double z = sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
    return x / (1 + exp(-2 * z));
}
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_silu(double x) { return x / (1 + exp(-x)); }

static float v1(vfn f, float x)
{
    float out[8];
    _mm256_storeu_ps(out, f(_mm256_set1_ps(x)));
    return out[0];
}

/* float ulps between got and the exact want */
static double ulps(double got, double want)
{
    int e;
    double a = fabs(want) < 1.1754943508222875e-38 ? 1.1754943508222875e-38 : fabs(want);
    frexp(a, &e);
    return fabs(got - want) / ldexp(1.0, e - 24);
}

/* Max error of f over [lo, hi] (every 1021st float of either sign: half a
 * million points spread evenly in the exponents), results below 1e-30
 * skipped (they only need the absolute floor that the op tests check). */
static double max_ulps(vfn f, double (*ref)(double), float lo, float hi, float *worst)
{
    double m = 0;
    for (uint32_t b = 0; b < 0x7f800000u; b += 1021)
        for (int s = 0; s < 2; s++) {
            float x;
            memcpy(&x, &b, 4);
            x = s ? -x : x;
            if (x < lo || x > hi)
                continue;
            double want = ref(x);
            if (fabs(want) < 1e-30)
                continue;
            double u = ulps(v1(f, x), want);
            if (u > m) {
                m = u;
                *worst = x;
            }
        }
    return m;
}

static void test_vmath_accuracy(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        vfn f;
        double (*ref)(double);
        float lo, hi;
        double max_ulp;
    } C[] = {
        {"sigmoid", v_sigmoid, r_sigmoid, -87, 87, 5},
        {"silu", v_silu, r_silu, -87, 87, 6},
        /* for x < -2 the float argument 2z (|2z| > 4) carries its own
         * rounding error, which e^-2z turns into a relative error of the
         * result growing with |2z| (1.2e-5 at x = -9, where the result is
         * 1e-28); the previous formula had the same */
        {"gelu_tanh", v_gelu, r_gelu, -2, 1e30f, 8},
        {"gelu_tanh (tail)", v_gelu, r_gelu, -9, -2, 160},
        /* a rational function whose result sits near 1 for most of the
         * range: its roundings add up to 4.94 ulps over every float */
        {"tanh", v_tanh, tanh, -20, 20, 5},
        {"exp", v_exp, exp, -87, 88.7f, 4},
        {"exp_nonpos", v_exp_nonpos, exp, -87, 0, 4},
    };
    for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
        float worst = 0;
        double m = max_ulps(C[k].f, C[k].ref, C[k].lo, C[k].hi, &worst);
        if (m > C[k].max_ulp)
            fail_msg("%s: %.2f ulps at %.9g (limit %g)", C[k].name, m, worst, C[k].max_ulp);
    }
}

/* NaN, infinities, huge and tiny inputs: what the functions give there */
static void test_vmath_special(void **state)
{
    (void)state;
    static const float X[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f, 88.5f, -88.5f,
                              89.5f, -89.5f, 1e30f, -1e30f, 3.4e38f, -3.4e38f};
    for (size_t i = 0; i < sizeof X / sizeof X[0]; i++) {
        double x = X[i];
        double want[5] = {(float)r_sigmoid(x), (float)r_silu(x), (float)r_gelu(x), (float)tanh(x),
                          (float)exp(x)};
        vfn f[5] = {v_sigmoid, v_silu, v_gelu, v_tanh, v_exp};
        static const char *names[5] = {"sigmoid", "silu", "gelu_tanh", "tanh", "exp"};
        /* huge |x| overflows the double formulas the same way the float ones
         * do, except gelu's x^3 (finite in double): its limit is x or -0 */
        if (fabs(x) >= 1e30 && !isinf(x))
            want[2] = x > 0 ? x : -0.0;
        for (int k = 0; k < 5; k++) {
            double got = v1(f[k], X[i]);
            int ok = isnan(want[k]) ? isnan(got)
                     : isinf(want[k]) ? got == want[k]
                     : fabs(got - want[k]) <= 1e-36 + 4e-7 * fabs(want[k]);
            if (!ok)
                fail_msg("%s(%g) = %g, want %g", names[k], x, got, want[k]);
        }
        /* softmax's exp: exactly 0 for -inf and far below, NaN stays NaN */
        if (x <= 0 || isnan(x)) {
            double got = v1(v_exp_nonpos, X[i]), w = x < -87.5 ? 0.0 : exp(x);
            if (isnan(x) ? !isnan(got) : fabs(got - w) > 4e-7 * w)
                fail_msg("exp_nonpos(%g) = %g, want %g", x, got, w);
        }
    }
    /* a NaN with payload bits in the low mantissa stays NaN (the sigmoid
     * core scales with a multiply, not by adding to the exponent bits) */
    uint32_t nb = 0x7fc001ffu;
    float pn;
    memcpy(&pn, &nb, 4);
    assert_true(isnan(v1(v_sigmoid, pn)));
    assert_true(isnan(v1(v_gelu, pn)));
    assert_true(isnan(v1(v_exp_nonpos, pn)));
}

/* fe_k_sinf / fe_k_cosf (the vector code): within 2 ulps of the double
 * result wherever that is at least 1e-3 in magnitude, and within 1e-7
 * everywhere, over a dense sweep of [-10, 10] and a sparse one of
 * [-8192, 8192] (where the Cody-Waite reduction ends); past it libm's
 * value exactly; NaN and +-inf give NaN. */
static int64_t f_order(float f)
{
    int32_t i;
    memcpy(&i, &f, 4);
    return i < 0 ? (int64_t)INT32_MIN - i : i;
}

static void test_sin_cos(void **state)
{
    (void)state;
    for (int k = 0; k < 400000; k++) {
        float x = k < 200000 ? (float)((k - 100000) * 1e-4) : (float)((k - 300000) * 0.08192);
        for (int c = 0; c < 2; c++) {
            float got = c ? fe_k_cosf(x) : fe_k_sinf(x);
            double want = c ? cos((double)x) : sin((double)x);
            int64_t ulps = llabs(f_order(got) - f_order((float)want));
            if (fabs(got - want) > 1e-7 || (fabs(want) >= 1e-3 && ulps > 2))
                fail_msg("%s(%.9g) = %.9g, want %.9g (%lld ulps)", c ? "cos" : "sin", x, got, want,
                         (long long)ulps);
        }
    }
    static const float big[] = {8192.5f, -9000.25f, 1e5f, -3.3e7f, 1e30f};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        assert_true(fe_k_sinf(big[i]) == sinf(big[i]));
        assert_true(fe_k_cosf(big[i]) == cosf(big[i]));
    }
    assert_true(isnan(fe_k_sinf(NAN)) && isnan(fe_k_cosf(NAN)));
    assert_true(isnan(fe_k_sinf(INFINITY)) && isnan(fe_k_cosf(-INFINITY)));
    /* the per-op kernel over a length with a tail: the same values */
    float xs[37], ys[37];
    for (int i = 0; i < 37; i++)
        xs[i] = (float)i * 0.7f - 12.0f + (i == 5 ? 9000.0f : 0.0f);
    fe_k_unary_f32(FE_OP_SIN, 0, xs, ys, 37);
    for (int i = 0; i < 37; i++)
        assert_true(ys[i] == fe_k_sinf(xs[i]));
}
#else
static void test_sin_cos(void **state)
{
    (void)state;
    skip();
}

static void test_vmath_accuracy(void **state)
{
    (void)state;
    skip();
}

static void test_vmath_special(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_f32),
        cmocka_unit_test(test_unary_half),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_binary_scalar_and_int),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_column_ops),
        cmocka_unit_test(test_norms),
        cmocka_unit_test(test_reshape_transpose_slice_concat),
        cmocka_unit_test(test_pad_expand),
        cmocka_unit_test(test_pad_kernel_crop),
        cmocka_unit_test(test_pad_constant_random),
        cmocka_unit_test(test_max_pool_random),
        cmocka_unit_test(test_gather_embedding),
        cmocka_unit_test(test_matmul_shapes),
        cmocka_unit_test(test_conv2d),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_sdpa),
        cmocka_unit_test(test_batchnorm_allreduce_custom),
        cmocka_unit_test(test_vmath_accuracy),
        cmocka_unit_test(test_vmath_special),
        cmocka_unit_test(test_sin_cos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
