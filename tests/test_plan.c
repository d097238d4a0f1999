/* test_plan.c: legality of groups and plans.
 *
 * Random DAGs of mixed ops; random merge proposals are checked by
 * fe_part_can_merge and by a brute-force oracle written here (transitive
 * closure over nodes, cycle search over groups): both must agree on every
 * proposal, and every plan built must pass fe_plan_check and the oracle. */
#include "testlib.h"
#include "testgraph.h"
#include "ops.h"
#include "partition.h"
#include "plan.h"

/* reach[a*n+b]: a path of length >= 1 from node a to node b. */
static uint8_t *closure(const fe_graph *g)
{
    int n = g->nnodes;
    uint8_t *r = calloc((size_t)n * n, 1);
    for (int v = n - 1; v >= 0; v--) {
        const fe_node *nd = fe_graph_node(g, v);
        for (int k = 0; k < nd->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, k));
            for (int c = 0; c < t->ncons; c++) {
                int u = fe_tensor_consumer(g, t, c);
                r[v * n + u] = 1;
                for (int w = 0; w < n; w++)
                    r[v * n + w] |= r[u * n + w];
            }
        }
    }
    return r;
}

/* Oracle: is the partition label[] legal (convex groups, acyclic group
 * DAG, a kernel class for each group)? */
static int oracle_legal(const fe_graph *g, const uint8_t *reach, const int32_t *label)
{
    int n = g->nnodes;
    /* Class per group. */
    for (int l = 0; l < n; l++) {
        fe_kinds k = {0};
        for (int v = 0; v < n; v++)
            if (label[v] == l)
                fe_kinds_add(&k, g, v);
        if (k.n > 0 && fe_kinds_class(&k, NULL) < 0)
            return 0;
    }
    /* Convex: no a, b in G and c outside with a ~> c ~> b. */
    for (int a = 0; a < n; a++)
        for (int c = 0; c < n; c++) {
            if (label[c] == label[a] || !reach[a * n + c])
                continue;
            for (int b = 0; b < n; b++)
                if (label[b] == label[a] && reach[c * n + b])
                    return 0;
        }
    /* Group DAG acyclic: group edges, then a DFS with colours. */
    uint8_t *edge = calloc((size_t)n * n, 1);
    for (int v = 0; v < n; v++) {
        const fe_node *nd = fe_graph_node(g, v);
        for (int k = 0; k < nd->nin; k++) {
            int p = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
            if (p >= 0 && label[p] != label[v])
                edge[label[p] * n + label[v]] = 1;
        }
    }
    /* Floyd-Warshall style closure on groups, then look for self-reach. */
    for (int m = 0; m < n; m++)
        for (int i = 0; i < n; i++)
            if (edge[i * n + m])
                for (int j = 0; j < n; j++)
                    edge[i * n + j] |= edge[m * n + j];
    int ok = 1;
    for (int i = 0; i < n && ok; i++)
        ok = !edge[i * n + i];
    free(edge);
    return ok;
}

static void random_merges(void **state)
{
    (void)state;
    int agreed = 0, legal = 0, illegal = 0;
    for (int trial = 0; trial < 40; trial++) {
        fe_graph *g = tl_random_graph(8 + (int)tl_rnd(40));
        uint8_t *reach = closure(g);
        fe_error err = {0};
        fe_part *p = fe_part_new(g, &err);
        int n = g->nnodes;
        int32_t *label = malloc((size_t)n * sizeof *label);
        for (int step = 0; step < 4 * n; step++) {
            /* Propose merging 2 or 3 random groups. */
            int32_t gids[3];
            int k = 2 + (int)tl_rnd(2), m = 0;
            while (m < k) {
                int32_t gid = p->gid[tl_rnd((uint32_t)n)];
                int dup = 0;
                for (int i = 0; i < m; i++)
                    dup |= gids[i] == gid;
                if (!dup)
                    gids[m++] = gid;
                if (p->ngroups < k)
                    break;
            }
            if (m < 2)
                break;
            for (int v = 0; v < n; v++) {
                label[v] = p->gid[v];
                for (int i = 1; i < m; i++)
                    if (label[v] == gids[i])
                        label[v] = gids[0];
            }
            char why[512];
            int says = fe_part_can_merge(p, gids, m, why, sizeof why);
            int truth = oracle_legal(g, reach, label);
            if (says != truth) {
                for (int v = 0; v < n; v++) {
                    const fe_node *nd = fe_graph_node(g, v);
                    fprintf(stderr, "# node %d %s (%s) group %d -> label %d inputs:", v, fe_node_name(g, nd),
                            fe_node_op_name(nd), p->gid[v], label[v]);
                    for (int q = 0; q < nd->nin; q++)
                        fprintf(stderr, " %d", fe_graph_tensor(g, fe_node_input(g, nd, q))->producer);
                    fprintf(stderr, "\n");
                }
                for (int i = 0; i < m; i++)
                    fprintf(stderr, "# merging group %d\n", gids[i]);
            }
            if (says != truth)
                fail_msg("trial %d step %d: can_merge says %d, oracle says %d (%s)", trial, step,
                         says, truth, says ? "" : why);
            agreed++;
            if (says) {
                fe_part_merge(p, gids, m);
                legal++;
            } else {
                illegal++;
            }
        }
        fe_plan *plan = fe_part_to_plan(p, &err);
        assert_non_null(plan);
        if (fe_plan_check(plan, &err) != FE_OK)
            fail_msg("plan check: %s", err.message);
        for (int v = 0; v < n; v++)
            label[v] = plan->group_of[v];
        assert_true(oracle_legal(g, reach, label));
        /* The same partition through labels gives the same plan. */
        fe_plan *again = fe_plan_from_labels(g, label, &err);
        assert_non_null(again);
        assert_int_equal(again->ngroups, plan->ngroups);
        fe_plan_free(again);
        fe_plan_free(plan);
        free(label);
        free(reach);
        fe_part_free(p);
        fe_graph_free(g);
    }
    /* The test is only meaningful if both answers occur often. */
    assert_true(legal > 100);
    assert_true(illegal > 100);
    print_message("# %d proposals agreed with the oracle (%d legal, %d illegal)\n", agreed, legal,
                  illegal);
}

/* Concrete cases with messages. */
static void cases(void **state)
{
    (void)state;
    /* a -> b -> c and a -> c: {a, c} is not convex. */
    fe_graph *g = tl_graph(
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"x\": {\"shape\": [4], \"dtype\": \"f32\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"ta\"]},"
        "            {\"name\": \"b\", \"op\": \"exp\", \"inputs\": [\"ta\"], \"outputs\": [\"tb\"]},"
        "            {\"name\": \"c\", \"op\": \"add\", \"inputs\": [\"ta\", \"tb\"], \"outputs\": [\"tc\"]}],"
        " \"outputs\": [\"tc\"]}");
    fe_error err = {0};
    int32_t labels[3] = {0, 1, 0};
    assert_null(fe_plan_from_labels(g, labels, &err));
    assert_contains(err.message, "not convex: a path leaves the group through node 'b' and comes back into node 'c'");
    int32_t ok[3] = {0, 0, 0};
    fe_plan *p = fe_plan_from_labels(g, ok, &err);
    assert_non_null(p);
    assert_int_equal(p->ngroups, 1);
    assert_int_equal(p->groups[0].klass, FE_CLASS_POINTWISE);
    /* A hand-made bad plan is caught by the checker. */
    p->groups[0].klass = FE_CLASS_GEMM;
    assert_int_not_equal(fe_plan_check(p, &err), FE_OK);
    fe_plan_free(p);
    fe_graph_free(g);

    /* Two matmuls cannot share a kernel; reshape cannot join a matmul. */
    g = tl_graph(
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"x\": {\"shape\": [4, 4], \"dtype\": \"f32\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"m1\", \"op\": \"matmul\", \"inputs\": [\"x\", \"x\"], \"outputs\": [\"t1\"]},"
        "            {\"name\": \"m2\", \"op\": \"matmul\", \"inputs\": [\"t1\", \"x\"], \"outputs\": [\"t2\"]},"
        "            {\"name\": \"r\", \"op\": \"reshape\", \"inputs\": [\"t2\"], \"outputs\": [\"t3\"], \"attrs\": {\"shape\": [16]}}],"
        " \"outputs\": [\"t3\"]}");
    int32_t two[3] = {0, 0, 1};
    assert_null(fe_plan_from_labels(g, two, &err));
    assert_contains(err.message, "at most one matmul, conv2d or all_reduce");
    int32_t mv[3] = {0, 1, 1};
    assert_null(fe_plan_from_labels(g, mv, &err));
    assert_contains(err.message, "no data movement");
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(cases), cmocka_unit_test(random_merges)};
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
