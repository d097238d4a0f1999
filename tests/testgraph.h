/* testgraph.h: random DAGs for the legality tests (header-only). */
#ifndef FE_TESTGRAPH_H
#define FE_TESTGRAPH_H

#include "build.h"
#include "testlib.h"

static uint64_t tl_rng = 88172645463325252ull;

/* xorshift64: small, fast, the same numbers on every machine. */
static inline uint32_t tl_rnd(uint32_t n)
{
    tl_rng ^= tl_rng << 13;
    tl_rng ^= tl_rng >> 7;
    tl_rng ^= tl_rng << 17;
    return (uint32_t)(tl_rng % n);
}

/* A random DAG: node i reads 1-2 earlier tensors (or the input). Ops are
 * drawn from every role so kernel classes matter. */
static inline fe_graph *tl_random_graph(int n)
{
    static const char *const unary[] = {"relu", "exp", "reshape", "softmax", "max_pool2d_like",
                                        "all_reduce", "batch_norm_like"};
    fe_error err = {0};
    fe_builder *b = fe_builder_new("random", &err);
    int64_t shape[2] = {8, 8};
    fe_builder_tensor(b, "x", FE_F32, FE_INPUT, 2, shape, 0);
    fe_builder_tensor(b, "w", FE_F32, FE_WEIGHT, 2, shape, 0);
    char name[32], out[32], in0[32], in1[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "n%d", i);
        snprintf(out, sizeof out, "t%d", i);
        if (i == 0)
            snprintf(in0, sizeof in0, "x");
        else
            snprintf(in0, sizeof in0, "t%u", tl_rnd((uint32_t)i));
        uint32_t kind = tl_rnd(10);
        const char *ins[2] = {in0, in1};
        const char *outs[1] = {out};
        int32_t node;
        if (kind < 3 && i > 0) {
            snprintf(in1, sizeof in1, "t%u", tl_rnd((uint32_t)i));
            node = fe_builder_node(b, name, kind == 0 ? "matmul" : "add", ins, 2, outs, 1, 0);
        } else if (kind == 3) {
            snprintf(in1, sizeof in1, "w");
            node = fe_builder_node(b, name, "matmul", ins, 2, outs, 1, 0);
        } else {
            const char *op = unary[tl_rnd(7)];
            if (strcmp(op, "max_pool2d_like") == 0) {
                node = fe_builder_node(b, name, "custom", ins, 1, outs, 1, 0);
                fe_builder_attr_str(b, node, "pattern", "opaque");
                fe_builder_tensor(b, out, FE_F32, FE_ACTIVATION, 2, shape, 0);
            } else if (strcmp(op, "batch_norm_like") == 0) {
                node = fe_builder_node(b, name, "transpose", ins, 1, outs, 1, 0);
            } else {
                node = fe_builder_node(b, name, op, ins, 1, outs, 1, 0);
                if (strcmp(op, "reshape") == 0)
                    fe_builder_attr_ints(b, node, "shape", shape, 2);
                if (strcmp(op, "all_reduce") == 0)
                    fe_builder_attr_int(b, node, "world_size", 4);
            }
        }
    }
    snprintf(out, sizeof out, "t%d", n - 1);
    fe_builder_output(b, out, 0);
    fe_graph *g = fe_builder_finish(b, &err);
    if (!g)
        fail_msg("random graph: %s", err.message);
    return g;
}

#endif
