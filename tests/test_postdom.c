/* test_postdom.c: the post-dominator tree (core/ir/postdom.c).
 *
 * Random DAGs against a brute-force oracle (u post-dominates v when v
 * cannot reach the sink once u is removed; the immediate one is the first
 * such u in topological order), a diamond and an output node by hand, and
 * a deep graph whose consumers sit far apart in the tree (the case a
 * parent walk per LCA makes quadratic). */
#include <time.h>

#include "testlib.h"
#include "testgraph.h"
#include "postdom.h"

/* Can v reach the sink without passing through node `cut`? */
static int reaches_sink(const fe_graph *g, int32_t v, int32_t cut, uint8_t *memo)
{
    if (v == cut)
        return 0;
    if (memo[v])
        return memo[v] == 1;
    const fe_node *nd = fe_graph_node(g, v);
    int ok = 0, readers = 0;
    for (int k = 0; k < nd->nout && !ok; k++) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, k));
        if (t->flags & FE_T_OUTPUT)
            ok = 1;
        readers += t->ncons;
        for (int32_t c = 0; c < t->ncons && !ok; c++)
            ok = reaches_sink(g, fe_tensor_consumer(g, t, c), cut, memo);
    }
    if (readers == 0)
        ok = 1;
    memo[v] = ok ? 1 : 2;
    return ok;
}

static void random_graphs(void **state)
{
    (void)state;
    for (int round = 0; round < 60; round++) {
        fe_graph *g = tl_random_graph(3 + round % 40);
        int32_t n = g->nnodes;
        int32_t *ipdom = malloc((size_t)n * sizeof *ipdom), *depth = malloc((size_t)n * sizeof *depth);
        uint8_t *memo = malloc((size_t)n);
        fe_error err = {0};
        assert_int_equal(fe_graph_postdom(g, ipdom, depth, &err), FE_OK);
        for (int32_t v = 0; v < n; v++) {
            int32_t want = FE_POSTDOM_SINK;
            for (int32_t u = v + 1; u < n && want == FE_POSTDOM_SINK; u++) {
                memset(memo, 0, (size_t)n);
                if (!reaches_sink(g, v, u, memo))
                    want = u;
            }
            if (ipdom[v] != want)
                fail_msg("graph %d, node %d: ipdom %d, oracle %d", round, v, ipdom[v], want);
            int32_t d = want == FE_POSTDOM_SINK ? 1 : depth[want] + 1;
            assert_int_equal(depth[v], d);
        }
        free(ipdom);
        free(depth);
        free(memo);
        fe_graph_free(g);
    }
}

static int32_t node_of(const fe_graph *g, const char *name)
{
    int32_t id = fe_graph_find_node(g, name);
    assert_true(id >= 0);
    return id;
}

/* a -> {b, c} -> d (output); e reads a too and is an output itself;
 * f reads d, but d writes a graph output, so d hangs under the sink. */
static void diamond(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_builder *b = fe_builder_new("diamond", &err);
    int64_t shape[2] = {4, 4};
    fe_builder_tensor(b, "x", FE_F32, FE_INPUT, 2, shape, 0);
    const char *ins[2], *outs[1];
    struct { const char *name, *op, *a, *b; } nodes[] = {
        {"a", "relu", "x", NULL}, {"b", "exp", "a", NULL}, {"c", "neg", "a", NULL},
        {"d", "add", "b", "c"}, {"f", "relu", "d", NULL}, {"h", "exp", "x", NULL},
        {"i", "add", "h", "f"},
    };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        ins[0] = nodes[i].a;
        ins[1] = nodes[i].b;
        outs[0] = nodes[i].name;
        fe_builder_node(b, nodes[i].name, nodes[i].op, ins, nodes[i].b ? 2 : 1, outs, 1, 0);
    }
    fe_builder_output(b, "d", 0);
    fe_builder_output(b, "i", 0);
    fe_graph *g = fe_builder_finish(b, &err);
    assert_non_null(g);
    int32_t ipdom[8], depth[8];
    assert_int_equal(fe_graph_postdom(g, ipdom, depth, &err), FE_OK);
    assert_int_equal(ipdom[node_of(g, "a")], node_of(g, "d"));
    assert_int_equal(ipdom[node_of(g, "b")], node_of(g, "d"));
    assert_int_equal(ipdom[node_of(g, "c")], node_of(g, "d"));
    assert_int_equal(ipdom[node_of(g, "d")], FE_POSTDOM_SINK);
    assert_int_equal(ipdom[node_of(g, "f")], node_of(g, "i"));
    assert_int_equal(ipdom[node_of(g, "h")], node_of(g, "i"));
    assert_int_equal(ipdom[node_of(g, "i")], FE_POSTDOM_SINK);
    assert_int_equal(depth[node_of(g, "a")], 2);
    assert_int_equal(depth[node_of(g, "f")], 2);
    fe_graph_free(g);
}

/* A chain of N nodes whose first LONG nodes also feed one of the last
 * LONG (node j feeds node N - LONG + j): the spans nest, so every path
 * from one of the first LONG nodes can skip all but the last node, which
 * is their immediate post-dominator. Their two consumers sit up to LONG
 * levels apart in the tree: a walk-up LCA would take LONG^2 / 2 steps,
 * binary lifting O(LONG log N). */
static void deep(void **state)
{
    (void)state;
    enum { N = 200000, LONG = N / 2 };
    fe_error err = {0};
    fe_builder *b = fe_builder_new("deep", &err);
    int64_t shape[1] = {1};
    fe_builder_tensor(b, "t0", FE_F32, FE_INPUT, 1, shape, 0);
    char name[32], in0[32], in1[32], out[32];
    const char *ins[2] = {in0, in1}, *outs[1] = {out};
    for (int i = 1; i <= N; i++) {
        snprintf(name, sizeof name, "n%d", i);
        snprintf(out, sizeof out, "t%d", i);
        snprintf(in0, sizeof in0, "t%d", i - 1);
        /* the last LONG nodes each also read one of the first LONG tensors */
        if (i > N - LONG) {
            snprintf(in1, sizeof in1, "t%d", i - (N - LONG));
            fe_builder_node(b, name, "add", ins, 2, outs, 1, 0);
        } else {
            fe_builder_node(b, name, "exp", ins, 1, outs, 1, 0);
        }
    }
    fe_builder_output(b, out, 0);
    fe_graph *g = fe_builder_finish(b, &err);
    assert_non_null(g);
    int32_t *ipdom = malloc(N * sizeof *ipdom), *depth = malloc(N * sizeof *depth);
    clock_t t0 = clock();
    assert_int_equal(fe_graph_postdom(g, ipdom, depth, &err), FE_OK);
    double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    for (int32_t v = 0; v < N - 1; v++)
        if (ipdom[v] != (v < LONG ? N - 1 : v + 1))
            fail_msg("node %d: ipdom %d", v, ipdom[v]);
    assert_int_equal(ipdom[N - 1], FE_POSTDOM_SINK);
    assert_int_equal(depth[0], 2);
    assert_true(s < 1.0);
    free(ipdom);
    free(depth);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_graphs), cmocka_unit_test(diamond),
                                       cmocka_unit_test(deep)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
