/* test_optimal.c: the exact search (core/plan: candidates.c, optimal.c,
 * milp.c) against brute force.
 *
 *   - the candidates of a window are exactly the sets a plain walk over
 *     all 2^n subsets finds connected (through shared tensors; any, with
 *     horizontal), of at most k nodes, and legal by fe_part_can_merge;
 *   - on small random DAGs, the solver's optimum equals the least cost of
 *     every legal partition (fe_plan_from_labels, the legality owner,
 *     building it: convex groups, no cycle between them) whose groups are
 *     candidates, over random costs per group (so plans with a cycle
 *     between groups are often the cheapest, and must be cut) and over
 *     the simulator's costs (each plan priced by fe_sim_plan, each group
 *     at split 1 or the default, whichever is less);
 *   - the solution is a legal plan, and fe_sim_plan prices it at the
 *     solver's value;
 *   - two convex groups that need each other, the cheapest pair, are cut
 *     (the random graphs seldom make such a pair the cheapest choice);
 *   - a solve stopped at its time limit returns a legal plan whose value
 *     and bound enclose the optimum.
 */
#include <math.h>

#include "api.h"
#include "candidates.h"
#include "legality.h"
#include "optimal.h"
#include "plan_build.h"
#include "sim.h"
#include "testgraph.h"

#define MAXN 10

/* The engine's gcu machine, as plans are priced. */
static const fe_machine *machine(void)
{
    static fe_engine *e;
    fe_error err = {0};
    if (!e && !(e = fe_engine_new(NULL, &err)))
        fail_msg("engine: %s", err.message);
    return fe_api_machine(e);
}

/* Do nodes a and b share a tensor (one reads what the other writes, or
 * both read it)? Written apart from candidates.c on purpose. */
static int share(const fe_graph *g, int32_t a, int32_t b)
{
    const fe_node *na = fe_graph_node(g, a), *nb = fe_graph_node(g, b);
    for (int i = 0; i < na->nin + na->nout; i++)
        for (int j = 0; j < nb->nin + nb->nout; j++) {
            int32_t ta = g->io[na->io_off + i], tb = g->io[nb->io_off + j];
            int a_out = i >= na->nin, b_out = j >= nb->nin;
            if (ta == tb && !(a_out && b_out))
                return 1;
        }
    return 0;
}

/* Is the set mask (bit i: node i) connected through shared tensors? */
static int connected(const fe_graph *g, unsigned mask)
{
    unsigned seen = mask & -mask, grow = 1;
    while (grow) {
        grow = 0;
        for (int a = 0; a < g->nnodes; a++)
            for (int b = 0; (seen >> a & 1) && b < g->nnodes; b++)
                if ((mask >> b & 1) && !(seen >> b & 1) && share(g, a, b)) {
                    seen |= 1u << b;
                    grow = 1;
                }
    }
    return seen == mask;
}

static int mask_nodes(unsigned mask, int32_t *out)
{
    int n = 0;
    for (int v = 0; v < 32; v++)
        if (mask >> v & 1)
            out[n++] = v;
    return n;
}

/* The candidates of the whole graph as masks: found[mask] = index + 1. */
static fe_cands enumerate(const fe_graph *g, int k, int horizontal, fe_cand_space *sp, int *found)
{
    int32_t win[MAXN];
    for (int v = 0; v < g->nnodes; v++)
        win[v] = v;
    fe_cands c = {0};
    fe_cand_opts o = {.max_group = k, .siblings = 1, .horizontal = horizontal,
                      .max_candidates = 1 << 20};
    fe_error err = {0};
    assert_int_equal(fe_cands_enumerate(sp, win, g->nnodes, &o, &c, NULL, &err), FE_OK);
    memset(found, 0, sizeof(int) << g->nnodes);
    for (int64_t j = 0; j < c.n; j++) {
        unsigned m = 0;
        for (int64_t e = c.off[j]; e < c.off[j + 1]; e++)
            m |= 1u << c.nodes[e];
        if (found[m])
            fail_msg("candidate set %#x listed twice", m);
        found[m] = (int)j + 1;
    }
    return c;
}

/* Every subset walked: the candidates are exactly the connected legal
 * sets of at most k nodes (with horizontal, the legal ones). */
static void candidates_are_the_legal_connected_sets(void **state)
{
    (void)state;
    tl_rng = 7;
    int found[1 << MAXN];
    for (int trial = 0; trial < 60; trial++) {
        fe_graph *g = tl_random_graph(3 + (int)tl_rnd(MAXN - 2));
        fe_error err = {0};
        fe_cand_space *sp = fe_cand_space_new(g, &err);
        int k = 1 + (int)tl_rnd((uint32_t)g->nnodes), horizontal = trial % 3 == 0;
        fe_cands c = enumerate(g, k, horizontal, sp, found);
        int32_t nodes[MAXN];
        for (unsigned m = 1; m < 1u << g->nnodes; m++) {
            int n = mask_nodes(m, nodes);
            int want = n <= k && (horizontal || connected(g, m)) &&
                       (n == 1 || fe_cand_legal(sp, nodes, n, NULL, 0));
            if (want != (found[m] != 0))
                fail_msg("trial %d, k %d: set %#x is %s but %s listed", trial, k, m,
                         want ? "a legal connected set" : "not one", found[m] ? "was" : "was not");
        }
        fe_cands_free(&c);
        fe_cand_space_free(sp);
        fe_graph_free(g);
    }
}

/* ---- brute force over partitions ---- */

typedef struct brute {
    const fe_graph *g;
    const int *found;       /* mask -> candidate + 1 */
    const double *cost;     /* per candidate; NULL: price each plan with fe_sim_plan */
    int32_t label[MAXN];
    double best;
    int64_t legal;
} brute;

/* The plan of labels, priced: the sum of its groups' costs (each a
 * candidate), or fe_sim_plan's with each group at its cheaper split. */
static void price_partition(brute *b, int ngroups)
{
    const fe_graph *g = b->g;
    unsigned masks[MAXN] = {0};
    for (int v = 0; v < g->nnodes; v++)
        masks[b->label[v]] |= 1u << v;
    for (int i = 0; i < ngroups; i++)
        if (!b->found[masks[i]])
            return;   /* not a candidate (too large, or not connected) */
    fe_error err = {0};
    fe_plan *p = fe_plan_from_labels(g, b->label, &err);
    if (!p)
        return;   /* illegal: a group not convex, or a cycle between groups */
    assert_int_equal(fe_plan_check(p, &err), FE_OK);
    b->legal++;
    double total = 0;
    if (b->cost) {
        for (int i = 0; i < ngroups; i++)
            total += b->cost[b->found[masks[i]] - 1];
    } else {
        fe_sim_report whole, tiled;
        for (int32_t i = 0; i < p->ngroups; i++)
            p->groups[i].split = 1;
        assert_int_equal(fe_sim_plan(p, machine(), &whole, &err), FE_OK);
        for (int32_t i = 0; i < p->ngroups; i++)
            p->groups[i].split = 0;
        assert_int_equal(fe_sim_plan(p, machine(), &tiled, &err), FE_OK);
        for (int32_t i = 0; i < p->ngroups; i++)
            total += fmin(whole.groups[i].time_s, tiled.groups[i].time_s);
        fe_sim_report_free(&whole);
        fe_sim_report_free(&tiled);
    }
    if (total < b->best)
        b->best = total;
    fe_plan_free(p);
}

/* Every partition as a restricted growth string. */
static void partitions(brute *b, int v, int ngroups)
{
    if (v == b->g->nnodes) {
        price_partition(b, ngroups);
        return;
    }
    for (int l = 0; l <= ngroups; l++) {
        b->label[v] = l;
        partitions(b, v + 1, l == ngroups ? ngroups + 1 : ngroups);
    }
}

/* The solver's answer on g with costs cost (per candidate of c), checked
 * to be a legal plan of that value; returns the value. */
static double solve(const fe_graph *g, const fe_cands *c, const double *cost, const int32_t *split,
                    double limit, fe_opt_result *res)
{
    int32_t win[MAXN];
    for (int v = 0; v < g->nnodes; v++)
        win[v] = v;
    fe_opt_problem p = {.g = g, .win = win, .nw = g->nnodes, .cands = c, .cost = cost,
                        .time_limit = limit};
    fe_error err = {0};
    if (fe_opt_solve(&p, res, &err) != FE_OK)
        fail_msg("solve: %s", err.message);
    int32_t label[MAXN];
    double sum = 0;
    for (int64_t i = 0; i < res->nchosen; i++) {
        int64_t j = res->chosen[i];
        sum += cost[j];
        for (int64_t e = c->off[j]; e < c->off[j + 1]; e++)
            label[c->nodes[e]] = (int32_t)i;
    }
    fe_plan *pl = fe_plan_from_labels(g, label, &err);
    if (!pl)
        fail_msg("the solution is not a legal plan: %s", err.message);
    assert_true(fabs(sum - res->value) <= 1e-9 * fmax(1, sum));
    if (split) {
        for (int32_t gi = 0; gi < pl->ngroups; gi++) {
            int32_t v = fe_group_nodes(pl, &pl->groups[gi])[0];
            pl->groups[gi].split = split[res->chosen[label[v]]];
        }
        fe_sim_report rep;
        assert_int_equal(fe_sim_plan(pl, machine(), &rep, &err), FE_OK);
        if (fabs(rep.total.time_s - res->value) > 1e-9 * res->value)
            fail_msg("the plan simulates at %.9g s, the solver said %.9g s", rep.total.time_s,
                     res->value);
        fe_sim_report_free(&rep);
    }
    fe_plan_free(pl);
    return res->value;
}

static void optimum_matches_brute_force(void **state)
{
    (void)state;
    tl_rng = 11;
    int found[1 << MAXN];
    for (int trial = 0; trial < 80; trial++) {
        fe_graph *g = tl_random_graph(3 + (int)tl_rnd(6));   /* 3..8 nodes: Bell(8) = 4140 */
        fe_error err = {0};
        fe_cand_space *sp = fe_cand_space_new(g, &err);
        int k = 2 + (int)tl_rnd((uint32_t)g->nnodes - 1);
        fe_cands c = enumerate(g, k, trial % 4 < 2, sp, found);
        double *cost = malloc((size_t)c.n * sizeof *cost);
        int32_t *split = malloc((size_t)c.n * sizeof *split);
        int random = trial % 2 == 0;
        for (int64_t j = 0; j < c.n; j++) {
            int n = (int)(c.off[j + 1] - c.off[j]);
            if (random) {
                /* groups cheaper than their nodes, often, so that the
                 * cheapest choice may hold a cycle */
                cost[j] = (double)n * (0.3 + 0.7 * tl_rnd(1000) / 1000.0);
                split[j] = 0;
                continue;
            }
            fe_sim_group_result whole, tiled;
            fe_sim_group(g, machine(), c.nodes + c.off[j], n, 1, &whole, &err);
            fe_sim_group(g, machine(), c.nodes + c.off[j], n, 0, &tiled, &err);
            cost[j] = fmin(whole.time_s, tiled.time_s);
            split[j] = tiled.time_s < whole.time_s ? tiled.split : 1;
        }
        brute b = {.g = g, .found = found, .cost = random ? cost : NULL, .best = INFINITY};
        partitions(&b, 0, 0);
        assert_true(b.legal > 0);
        fe_opt_result res;
        double got = solve(g, &c, cost, random ? NULL : split, 30, &res);
        assert_int_equal(res.status, FE_MILP_OPTIMAL);
        if (fabs(got - b.best) > 1e-9 * fmax(1e-9, b.best))
            fail_msg("trial %d (%d nodes, k %d, %s costs%s): the solver's optimum %.12g, brute "
                     "force %.12g over %lld legal plans", trial, g->nnodes, k,
                     random ? "random" : "simulated", trial % 4 < 2 ? ", horizontal" : "", got,
                     b.best, (long long)b.legal);
        assert_true(res.bound <= res.value * (1 + 1e-9));
        free(res.chosen);
        free(cost);
        free(split);
        fe_cands_free(&c);
        fe_cand_space_free(sp);
        fe_graph_free(g);
    }
}

/* Two convex groups that need each other are never both chosen: a = {a1,
 * a2}, b = {b1, b2} with a1 -> b1 and b2 -> a2, the cheapest pair of
 * groups, make a cycle; the optimum keeps one of them. */
static void cycle_is_cut(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'name': 'cycle',"
        " 'tensors': {'x': {'shape': [8, 8], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'a1', 'op': 'relu', 'inputs': ['x'], 'outputs': ['ta1']},"
        "           {'name': 'b2', 'op': 'exp', 'inputs': ['x'], 'outputs': ['tb2']},"
        "           {'name': 'b1', 'op': 'add', 'inputs': ['ta1', 'tb2'], 'outputs': ['tb1']},"
        "           {'name': 'a2', 'op': 'mul', 'inputs': ['tb2', 'x'], 'outputs': ['ta2']}],"
        " 'outputs': ['tb1', 'ta2']}");
    fe_error err = {0};
    fe_cand_space *sp = fe_cand_space_new(g, &err);
    int found[1 << MAXN];
    fe_cands c = enumerate(g, 2, 0, sp, found);
    int32_t a1 = tl_node(g, "a1"), a2 = tl_node(g, "a2"), b1 = tl_node(g, "b1"), b2 = tl_node(g, "b2");
    unsigned a = 1u << a1 | 1u << a2, b = 1u << b1 | 1u << b2;
    assert_true(found[a] && found[b]);
    double *cost = malloc((size_t)c.n * sizeof *cost);
    for (int64_t j = 0; j < c.n; j++)
        cost[j] = c.off[j + 1] - c.off[j] == 1 ? 1.0 : 1.9;
    cost[found[a] - 1] = cost[found[b] - 1] = 1.0;
    fe_opt_result res;
    double got = solve(g, &c, cost, NULL, 30, &res);
    assert_true(res.cuts >= 1);
    assert_true(fabs(got - 3.0) < 1e-9);   /* one of the two, and two nodes alone */
    free(res.chosen);
    free(cost);
    fe_cands_free(&c);
    fe_cand_space_free(sp);
    fe_graph_free(g);
}

/* A solve stopped at its time limit: a legal plan, and value >= optimum
 * >= bound, with the optimum from a solve that was not stopped. */
static void time_limit_gives_an_honest_gap(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = fe_load_model_file("examples/models/hub_conflict.json", NULL, &err);
    if (!g)
        fail_msg("%s", err.message);
    fe_cand_space *sp = fe_cand_space_new(g, &err);
    int32_t *win = malloc((size_t)g->nnodes * sizeof *win);
    for (int v = 0; v < g->nnodes; v++)
        win[v] = v;
    fe_cands c = {0};
    fe_cand_opts o = {.max_group = 8, .siblings = 1, .max_candidates = 1 << 22};
    assert_int_equal(fe_cands_enumerate(sp, win, g->nnodes, &o, &c, NULL, &err), FE_OK);
    double *cost = malloc((size_t)c.n * sizeof *cost);
    for (int64_t j = 0; j < c.n; j++) {
        fe_sim_group_result whole, tiled;
        int n = (int)(c.off[j + 1] - c.off[j]);
        fe_sim_group(g, machine(), c.nodes + c.off[j], n, 1, &whole, &err);
        fe_sim_group(g, machine(), c.nodes + c.off[j], n, 0, &tiled, &err);
        cost[j] = fmin(whole.time_s, tiled.time_s);
    }
    fe_opt_problem p = {.g = g, .win = win, .nw = g->nnodes, .cands = &c, .cost = cost,
                        .time_limit = 0.005};
    fe_opt_result cut, full;
    assert_int_equal(fe_opt_solve(&p, &cut, &err), FE_OK);
    p.time_limit = 600;
    assert_int_equal(fe_opt_solve(&p, &full, &err), FE_OK);
    assert_int_equal(full.status, FE_MILP_OPTIMAL);
    assert_int_equal(cut.status, FE_MILP_LIMIT);
    double eps = 1e-9 * full.value;
    if (!(cut.bound <= full.value + eps && full.value <= cut.value + eps))
        fail_msg("at the limit: bound %.9g, value %.9g; the optimum %.9g is not between them",
                 cut.bound, cut.value, full.value);
    int32_t *label = malloc((size_t)g->nnodes * sizeof *label);
    for (int64_t i = 0; i < cut.nchosen; i++)
        for (int64_t e = c.off[cut.chosen[i]]; e < c.off[cut.chosen[i] + 1]; e++)
            label[c.nodes[e]] = (int32_t)i;
    fe_plan *pl = fe_plan_from_labels(g, label, &err);
    if (!pl)
        fail_msg("the plan found at the limit is not legal: %s", err.message);
    fe_plan_free(pl);
    free(label);
    free(cut.chosen);
    free(full.chosen);
    free(cost);
    free(win);
    fe_cands_free(&c);
    fe_cand_space_free(sp);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(candidates_are_the_legal_connected_sets),
                                       cmocka_unit_test(optimum_matches_brute_force),
                                       cmocka_unit_test(cycle_is_cut),
                                       cmocka_unit_test(time_limit_gives_an_honest_gap)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
