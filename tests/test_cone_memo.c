/* test_cone_memo.c: expression matches remembered by cone (core/script/
 * cone_memo.c). Three blocks y = x * sigmoid(x) * u: the first two alike,
 * the third scaling by another constant. A match kept at one root names
 * the same nodes of an alike block, another constant or another height
 * finds nothing kept, a node outside the cone is not kept, and a cone
 * past FE_CONE_MAX nodes is not made. */
#include <stdio.h>
#include <stdlib.h>

#include "testlib.h"
#include "cone_memo.h"
#include "load.h"

/* Block P reads x_P (a relu of the input) and u (shared); s_P scales its
 * result by a constant: 2 in a and b, 3 in c. */
#define BLOCK(P, IN, K)                                                                                \
    "  {\"name\": \"" P "_x\", \"op\": \"relu\", \"inputs\": [\"" IN "\"], \"outputs\": [\"" P "x\"]},"  \
    "  {\"name\": \"" P "_sig\", \"op\": \"sigmoid\", \"inputs\": [\"" P "x\"], \"outputs\": [\"" P "s\"]}," \
    "  {\"name\": \"" P "_silu\", \"op\": \"mul\", \"inputs\": [\"" P "x\", \"" P "s\"], \"outputs\": [\"" P "g\"]}," \
    "  {\"name\": \"" P "_y\", \"op\": \"mul\", \"inputs\": [\"" P "g\", \"u\"], \"outputs\": [\"" P "y\"]}," \
    "  {\"name\": \"" P "_k\", \"op\": \"mul\", \"inputs\": [\"" P "y\"], \"outputs\": [\"" P "k\"], \"attrs\": {\"scalar\": " K "}},"

static const char model[] =
    "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
    " \"in\": {\"shape\": [16], \"dtype\": \"f32\", \"kind\": \"input\"},"
    " \"u\": {\"shape\": [16], \"dtype\": \"f32\", \"kind\": \"input\"}},"
    " \"nodes\": ["
    BLOCK("a", "in", "2.0") BLOCK("b", "ak", "2.0") BLOCK("c", "bk", "3.0")
    "  {\"name\": \"end\", \"op\": \"exp\", \"inputs\": [\"ck\"], \"outputs\": [\"out\"]}"
    " ], \"outputs\": [\"out\"]}";

static fe_graph *g;

static int setup(void **s)
{
    (void)s;
    g = tl_graph(model);
    return 0;
}

static int teardown(void **s)
{
    (void)s;
    fe_graph_free(g);
    return 0;
}

static void alike_blocks_share(void **s)
{
    (void)s;
    fe_error err = {0};
    /* Height 4 from the scaling mul: k <- y <- silu <- sig, x read by both. */
    fe_cone_memo *m = fe_cone_memo_new(g, 4, &err);
    assert_non_null(m);
    int32_t out[FE_CONE_MAX];
    assert_int_equal(fe_cone_memo_at(m, tl_node(g, "b_k")), 1);
    /* "No match" is the first thing kept. */
    assert_int_equal(fe_cone_memo_put(m, 9, NULL, 0), 0);
    assert_int_equal(fe_cone_memo_get(m, 9, out), 0);
    assert_int_equal(fe_cone_memo_get(m, 7, out), -1);
    int32_t match[] = {tl_node(g, "b_sig"), tl_node(g, "b_silu"), tl_node(g, "b_y"), tl_node(g, "b_k")};
    assert_int_equal(fe_cone_memo_put(m, 7, match, 4), 0);
    assert_int_equal(fe_cone_memo_get(m, 7, out), 4);
    /* Pattern 8 is not known at the same cone. */
    assert_int_equal(fe_cone_memo_get(m, 8, out), -1);
    assert_int_equal(fe_cone_memo_put(m, 8, NULL, 0), 0);
    assert_int_equal(fe_cone_memo_get(m, 8, out), 0);

    /* Block c reads block b as b reads a, but scales by 3: not alike. */
    assert_int_equal(fe_cone_memo_at(m, tl_node(g, "c_k")), 1);
    assert_int_equal(fe_cone_memo_get(m, 7, out), -1);
    /* Block a reads the model's input where b reads a's output: not alike
     * either, at a height that reaches the relu's input. */
    assert_int_equal(fe_cone_memo_at(m, tl_node(g, "a_k")), 1);
    assert_int_equal(fe_cone_memo_get(m, 7, out), -1);
    fe_cone_memo_free(m);

    /* At height 3 the relus are out of the cones: a's and b's are alike,
     * and b's match names b's nodes when asked at a. */
    m = fe_cone_memo_new(g, 3, &err);
    assert_non_null(m);
    int32_t inner[] = {tl_node(g, "b_silu"), tl_node(g, "b_y"), tl_node(g, "b_k")};
    assert_int_equal(fe_cone_memo_at(m, tl_node(g, "b_k")), 1);
    assert_int_equal(fe_cone_memo_put(m, 1, inner, 3), 0);
    assert_int_equal(fe_cone_memo_at(m, tl_node(g, "a_k")), 1);
    assert_int_equal(fe_cone_memo_get(m, 1, out), 3);
    assert_int_equal(out[0], tl_node(g, "a_silu"));
    assert_int_equal(out[1], tl_node(g, "a_y"));
    assert_int_equal(out[2], tl_node(g, "a_k"));
    /* A node outside the cone (the pattern was taller than it said). */
    int32_t outside[] = {tl_node(g, "a_x"), tl_node(g, "a_k")};
    assert_int_equal(fe_cone_memo_put(m, 2, outside, 2), 1);
    assert_int_equal(fe_cone_memo_get(m, 2, out), -1);
    fe_cone_memo_free(m);
}

/* A chain of negs: the cone of the last is as many nodes as its height,
 * past FE_CONE_MAX at a greater one. */
static void too_large(void **s)
{
    (void)s;
    int n = FE_CONE_MAX + 10;
    size_t cap = (size_t)n * 160 + 512, len = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    len += (size_t)snprintf(json + len, cap - len, "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
                            "\"t0\": {\"shape\": [4], \"dtype\": \"f32\", \"kind\": \"input\"}}, \"nodes\": [");
    for (int i = 1; i <= n; i++)
        len += (size_t)snprintf(json + len, cap - len, "%s{\"name\": \"n%d\", \"op\": \"neg\", "
                                "\"inputs\": [\"t%d\"], \"outputs\": [\"t%d\"]}", i > 1 ? "," : "", i,
                                i - 1, i);
    len += (size_t)snprintf(json + len, cap - len, "], \"outputs\": [\"t%d\"]}", n);
    fe_error err = {0};
    fe_graph *chain = tl_graph(json);
    free(json);
    fe_cone_memo *m = fe_cone_memo_new(chain, 64, &err);
    assert_non_null(m);
    int32_t last = fe_graph_find_node(chain, "n266");
    assert_int_equal(fe_cone_memo_at(m, last), 1);   /* 64 nodes */
    fe_cone_memo_free(m);
    m = fe_cone_memo_new(chain, FE_CONE_MAX + 5, &err);
    assert_non_null(m);
    assert_int_equal(fe_cone_memo_at(m, last), 0);
    int32_t out[FE_CONE_MAX];
    assert_int_equal(fe_cone_memo_get(m, 1, out), -1);
    assert_int_equal(fe_cone_memo_put(m, 1, &last, 1), 1);
    fe_cone_memo_free(m);
    fe_graph_free(chain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alike_blocks_share),
        cmocka_unit_test(too_large),
    };
    return cmocka_run_group_tests_name("cone_memo", tests, setup, teardown);
}
