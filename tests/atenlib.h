/* atenlib.h: one custom node with an aten kernel, called directly, for the
 * C tests of kernels/aten*.c (header-only): load a one-node model (inputs
 * "x"... declared with IN, the output "y" with OUT), set inputs (SET), run
 * and compare every element (EXPECT), or expect a refusal by check and run
 * (refused) or a failure at run time (run_fails). */
#ifndef FE_ATENLIB_H
#define FE_ATENLIB_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "aten.h"
#include "convert.h"
#include "ops.h"

#define IN(nm, shape, dt) "\"" nm "\":{\"shape\":" shape ",\"dtype\":\"" dt "\",\"kind\":\"input\"},"
#define OUT(shape, dt) "\"y\":{\"shape\":" shape ",\"dtype\":\"" dt "\"}"

typedef struct K {
    fe_graph *g;
    const fe_node *n;
    fe_k_tensor in[8], out;
} K;

static inline fe_k_tensor kbuf(const fe_graph *g, int32_t t)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    return fe_k_graph_view(g, t, calloc(1, (size_t)tt->bytes + 8));
}

/* Model with one custom node "n": tensors (IN... then OUT), its input names
 * (JSON list items) and its attrs (JSON object members). */
static inline void kload(K *k, const char *tensors, const char *inputs, const char *attrs)
{
    static char jbuf[1 << 15];
    snprintf(jbuf, sizeof jbuf,
             "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{%s},\"nodes\":[{"
             "\"name\":\"n\",\"op\":\"custom\",\"inputs\":[%s],\"outputs\":[\"y\"],"
             "\"attrs\":{%s}}],\"outputs\":[\"y\"]}", tensors, inputs, attrs);
    memset(k, 0, sizeof *k);
    k->g = tl_graph(jbuf);
    k->n = fe_graph_node(k->g, fe_graph_find_node(k->g, "n"));
    assert_true(k->n->nin <= 8);
    for (int i = 0; i < k->n->nin; i++)
        k->in[i] = kbuf(k->g, fe_node_input(k->g, k->n, i));
    k->out = kbuf(k->g, fe_node_output(k->g, k->n, 0));
}

static inline void kfree(K *k)
{
    for (int i = 0; i < k->n->nin; i++)
        free(k->in[i].data);
    free(k->out.data);
    fe_graph_free(k->g);
}

static inline void store(fe_k_tensor *t, const double *v, int64_t n)
{
    assert_int_equal(n, fe_k_numel(t));
    for (int64_t i = 0; i < n; i++) {
        if (fe_k_dtype_is_int(t->dtype)) {
            int64_t iv = (int64_t)v[i];
            fe_k_store_i64(t->data, t->dtype, i, &iv, 1);
        } else {
            float f = (float)v[i];
            fe_k_store_f32(t->data, t->dtype, i, &f, 1);
        }
    }
}

#define SET(k, i, ...)                                                                          \
    do {                                                                                        \
        const double v_[] = {__VA_ARGS__};                                                      \
        store(&(k)->in[i], v_, (int64_t)(sizeof v_ / sizeof v_[0]));                             \
    } while (0)

static inline double at(const fe_k_tensor *t, int64_t i)
{
    if (fe_k_dtype_is_int(t->dtype)) {
        int64_t v;
        fe_k_load_i64(t->data, t->dtype, i, &v, 1);
        return (double)v;
    }
    float f;
    fe_k_load_f32(t->data, t->dtype, i, &f, 1);
    return f;
}

static inline void run_ok(K *k)
{
    fe_error err = {0};
    assert_int_equal(fe_k_aten_supported(k->g, k->n), 1);
    if (fe_k_aten_run(k->g, k->n, k->in, &k->out, &err))
        fail_msg("run: %s", err.message);
}

/* Every output element equals want (exactly; NaN equals NaN). */
static inline void expect(K *k, const double *want, int64_t n, int line)
{
    if (n != fe_k_numel(&k->out))
        fail_msg("line %d: output has %lld elements, want %lld", line,
                 (long long)fe_k_numel(&k->out), (long long)n);
    for (int64_t i = 0; i < n; i++) {
        double g = at(&k->out, i);
        if (!(g == want[i] || (isnan(g) && isnan(want[i]))))
            fail_msg("line %d: y[%lld] = %.9g, want %.9g", line, (long long)i, g, want[i]);
    }
}

#define EXPECT(k, ...)                                                                          \
    do {                                                                                        \
        const double w_[] = {__VA_ARGS__};                                                      \
        run_ok(k);                                                                              \
        expect(k, w_, (int64_t)(sizeof w_ / sizeof w_[0]), __LINE__);                            \
    } while (0)

/* The node is refused, by check and by run, with a message naming the node
 * and the aten op and containing what. */
static inline void refused(K *k, const char *what)
{
    fe_error err = {0};
    const char *aten = fe_node_attr_str(k->g, k->n, "aten", "?");
    assert_int_equal(fe_k_aten_supported(k->g, k->n), 0);
    assert_int_equal(fe_k_aten_check(k->g, k->n, &err), FE_EINPUT);
    assert_contains(err.message, "node 'n'");
    assert_contains(err.message, aten);
    assert_contains(err.message, what);
    memset(&err, 0, sizeof err);
    assert_int_equal(fe_k_aten_run(k->g, k->n, k->in, &k->out, &err), FE_EINPUT);
    assert_contains(err.message, what);
}

/* The one-node model (kload's arguments) is refused as refused() says. */
static inline void refused_node(const char *tensors, const char *inputs, const char *attrs,
                                const char *what)
{
    K k;
    kload(&k, tensors, inputs, attrs);
    refused(&k, what);
    kfree(&k);
}

/* A node that passes the check but fails at run time (index values). */
static inline void run_fails(K *k, const char *what)
{
    fe_error err = {0};
    assert_int_equal(fe_k_aten_supported(k->g, k->n), 1);
    assert_int_equal(fe_k_aten_run(k->g, k->n, k->in, &k->out, &err), FE_EINPUT);
    assert_contains(err.message, "node 'n' (aten ");
    assert_contains(err.message, what);
}

#endif
