/* test_plan.c: legality of groups and plans, and plan files.
 *
 * Random DAGs of mixed ops; random merge proposals are checked by
 * fe_part_can_merge and by a brute-force oracle written here (transitive
 * closure over nodes, cycle search over groups): both must agree on every
 * proposal, and every plan built must pass fe_plan_check and the oracle.
 * Small graphs then exercise each rule of legality.c by name, and a plan
 * goes through its file and back unchanged. */
#include <unistd.h>

#include "testlib.h"
#include "testgraph.h"
#include "choice.h"
#include "ops.h"
#include "legality.h"
#include "plan.h"
#include "plan_build.h"
#include "plan_json.h"

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
        /* The same partition through labels gives the same plan, its
         * groups in the same order (the labels' order, a dependency one):
         * a plan file read back runs as written. */
        fe_plan *again = fe_plan_from_labels(g, label, &err);
        assert_non_null(again);
        assert_int_equal(again->ngroups, plan->ngroups);
        for (int32_t gi = 0; gi < plan->ngroups; gi++) {
            assert_int_equal(again->groups[gi].n, plan->groups[gi].n);
            assert_memory_equal(fe_group_nodes(again, &again->groups[gi]),
                                fe_group_nodes(plan, &plan->groups[gi]),
                                (size_t)plan->groups[gi].n * sizeof(int32_t));
        }
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
    assert_contains(err.message, "at most one matmul, conv2d, all_reduce or pool");
    int32_t mv[3] = {0, 1, 1};
    assert_null(fe_plan_from_labels(g, mv, &err));
    assert_contains(err.message, "no data movement");
    fe_graph_free(g);
}

/* fe_part_can_merge on the groups holding the named nodes (a NULL-ended
 * list); why gets the reason. */
static int can_merge(fe_part *p, char *why, size_t size, ...)
{
    int32_t gids[8];
    int n = 0;
    va_list ap;
    va_start(ap, size);
    for (const char *name; (name = va_arg(ap, const char *)) != NULL;)
        gids[n++] = p->gid[tl_node(p->g, name)];
    va_end(ap);
    why[0] = '\0';
    return fe_part_can_merge(p, gids, n, why, size);
}

/* The class legality gives the named nodes as one group (-1 if none),
 * with the reason in *why. */
static int class_of(const fe_graph *g, const char **why, ...)
{
    fe_kinds k = {0};
    va_list ap;
    va_start(ap, why);
    for (const char *name; (name = va_arg(ap, const char *)) != NULL;)
        fe_kinds_add(&k, g, tl_node(g, name));
    va_end(ap);
    return fe_kinds_class(&k, why);
}

#define X4 "'x': {'shape': [4, 4], 'dtype': 'f32', 'kind': 'input'}"

/* a -> b -> c and a -> c: the pair {a, c} is not convex, asked directly. */
static void non_convex_pair(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q("{'format': 'fuseeng.model/1', 'tensors': {" X4 "},"
        " 'nodes': [{'name': 'a', 'op': 'relu', 'inputs': ['x'], 'outputs': ['ta']},"
        "  {'name': 'b', 'op': 'exp', 'inputs': ['ta'], 'outputs': ['tb']},"
        "  {'name': 'c', 'op': 'add', 'inputs': ['ta', 'tb'], 'outputs': ['tc']}],"
        " 'outputs': ['tc']}");
    fe_error err = {0};
    fe_part *p = fe_part_new(g, &err);
    char why[512];
    assert_false(can_merge(p, why, sizeof why, "a", "c", NULL));
    assert_string_equal(why, "not convex: a path leaves the group through node 'b' and comes "
                             "back into node 'c'");
    /* Taking b in makes it convex; so do the pairs along the path. */
    assert_true(can_merge(p, why, sizeof why, "a", "b", NULL));
    assert_true(can_merge(p, why, sizeof why, "a", "b", "c", NULL));
    fe_part_free(p);
    fe_graph_free(g);
}

/* A = {a1, a2} and B = {b1, b2} with a1 -> b1 and b2 -> a2: each convex on
 * its own, but each needs the other's output. The merge check refuses the
 * second group, and a plan made by hand with both is caught. */
static void group_cycle(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q("{'format': 'fuseeng.model/1', 'tensors': {" X4 "},"
        " 'nodes': [{'name': 'a1', 'op': 'relu', 'inputs': ['x'], 'outputs': ['ta1']},"
        "  {'name': 'b1', 'op': 'exp', 'inputs': ['ta1'], 'outputs': ['tb1']},"
        "  {'name': 'b2', 'op': 'neg', 'inputs': ['x'], 'outputs': ['tb2']},"
        "  {'name': 'a2', 'op': 'sigmoid', 'inputs': ['tb2'], 'outputs': ['ta2']}],"
        " 'outputs': ['tb1', 'ta2']}");
    fe_error err = {0};
    fe_part *p = fe_part_new(g, &err);
    char why[512];
    assert_true(can_merge(p, why, sizeof why, "a1", "a2", NULL));
    int32_t a[2] = {p->gid[tl_node(g, "a1")], p->gid[tl_node(g, "a2")]};
    fe_part_merge(p, a, 2);
    assert_false(can_merge(p, why, sizeof why, "b1", "b2", NULL));
    assert_contains(why, "not convex");
    fe_part_free(p);

    /* By hand: two groups, both pointwise, listed in some order. */
    fe_plan *plan = fe_plan_new(g, 2, &err);
    assert_non_null(plan);
    const char *groups[2][2] = {{"a1", "a2"}, {"b1", "b2"}};
    for (int gi = 0; gi < 2; gi++) {
        int32_t u = tl_node(g, groups[gi][0]), v = tl_node(g, groups[gi][1]);
        plan->members[2 * gi] = u < v ? u : v;
        plan->members[2 * gi + 1] = u < v ? v : u;
        plan->group_of[u] = plan->group_of[v] = gi;
        plan->groups[gi] = (fe_group){.off = 2 * gi, .n = 2, .reason = -1,
                                      .klass = FE_CLASS_POINTWISE};
    }
    assert_int_equal(fe_plan_check(plan, &err), FE_EINPUT);
    assert_contains(err.message, "groups 0 and 1 depend on each other");
    assert_contains(err.message, "a group is not convex or the groups form a cycle");
    fe_plan_free(plan);
    int32_t labels[4];
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = fe_node_name(g, fe_graph_node(g, v))[0] == 'a' ? 0 : 1;
    assert_null(fe_plan_from_labels(g, labels, &err));
    assert_contains(err.message, "is illegal: not convex");
    fe_graph_free(g);
}

/* The kernel classes, rule by rule. */
static void classes(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q("{'format': 'fuseeng.model/1', 'tensors': {" X4 ","
        "  'q': {'shape': [1, 1, 4, 8], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'pre', 'op': 'add', 'inputs': ['x', 'x'], 'outputs': ['t0']},"
        "  {'name': 'm1', 'op': 'matmul', 'inputs': ['t0', 'x'], 'outputs': ['t1']},"
        "  {'name': 'act', 'op': 'relu', 'inputs': ['t1'], 'outputs': ['t2']},"
        "  {'name': 'norm', 'op': 'softmax', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axis': -1}},"
        "  {'name': 'm2', 'op': 'matmul', 'inputs': ['t3', 'x'], 'outputs': ['t4']},"
        "  {'name': 'ar', 'op': 'all_reduce', 'inputs': ['t4'], 'outputs': ['t5'], 'attrs': {'world_size': 2}},"
        "  {'name': 'bias', 'op': 'add', 'inputs': ['t5', 'x'], 'outputs': ['t6']},"
        "  {'name': 'rows', 'op': 'sum', 'inputs': ['t6'], 'outputs': ['t7'], 'attrs': {'axes': [1]}},"
        "  {'name': 'view', 'op': 'reshape', 'inputs': ['t6'], 'outputs': ['t8'], 'attrs': {'shape': [2, 8]}},"
        "  {'name': 'flip', 'op': 'transpose', 'inputs': ['t8'], 'outputs': ['t9'], 'attrs': {'perm': [1, 0]}},"
        "  {'name': 'att', 'op': 'sdpa', 'inputs': ['q', 'q', 'q'], 'outputs': ['ta']},"
        "  {'name': 'after', 'op': 'exp', 'inputs': ['ta'], 'outputs': ['tb']}],"
        " 'outputs': ['t7', 't9', 'tb']}");
    const char *why;
    /* Any one node is single, even an opaque one. */
    assert_int_equal(class_of(g, &why, "att", NULL), FE_CLASS_SINGLE);
    assert_int_equal(class_of(g, &why, "ar", NULL), FE_CLASS_SINGLE);
    /* A matmul with an elementwise prologue and a reduction epilogue. */
    assert_int_equal(class_of(g, &why, "pre", "m1", "act", "norm", NULL), FE_CLASS_GEMM);
    assert_string_equal(fe_class_name(FE_CLASS_GEMM), "gemm");
    /* Two matmuls never share a kernel, nor a matmul and an all_reduce. */
    assert_int_equal(class_of(g, &why, "m1", "act", "norm", "m2", NULL), -1);
    assert_string_equal(why, "one kernel holds at most one matmul, conv2d, all_reduce or pool");
    assert_int_equal(class_of(g, &why, "m2", "ar", NULL), -1);
    /* A collective takes an elementwise/broadcast epilogue, nothing else. */
    assert_int_equal(class_of(g, &why, "ar", "bias", NULL), FE_CLASS_COLLECTIVE);
    assert_int_equal(class_of(g, &why, "ar", "bias", "rows", NULL), -1);
    assert_string_equal(why, "an all_reduce kernel takes only an elementwise/broadcast epilogue");
    assert_int_equal(class_of(g, &why, "ar", "bias", "view", NULL), -1);
    /* Pure views fuse as a pointwise group; not around a matmul. */
    assert_int_equal(class_of(g, &why, "view", "flip", NULL), FE_CLASS_POINTWISE);
    assert_null(why);
    assert_int_equal(class_of(g, &why, "bias", "view", "flip", NULL), FE_CLASS_POINTWISE);
    /* Opaque ops run alone. */
    assert_int_equal(class_of(g, &why, "att", "after", NULL), -1);
    assert_string_equal(why, "an opaque op (sdpa, opaque custom) runs alone");

    /* The merge check gives the class rule's reason; plans carry the class. */
    fe_error err = {0};
    fe_part *p = fe_part_new(g, &err);
    char buf[512];
    assert_false(can_merge(p, buf, sizeof buf, "m2", "ar", NULL));
    assert_string_equal(buf, "one kernel holds at most one matmul, conv2d, all_reduce or pool");
    assert_true(can_merge(p, buf, sizeof buf, "ar", "bias", NULL));
    fe_part_free(p);
    int32_t *labels = malloc((size_t)g->nnodes * sizeof *labels);
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = v;
    labels[tl_node(g, "flip")] = labels[tl_node(g, "view")];
    labels[tl_node(g, "bias")] = labels[tl_node(g, "ar")];
    fe_plan *plan = fe_plan_from_labels(g, labels, &err);
    if (!plan)
        fail_msg("%s", err.message);
    assert_int_equal(plan->groups[plan->group_of[tl_node(g, "view")]].klass, FE_CLASS_POINTWISE);
    assert_int_equal(plan->groups[plan->group_of[tl_node(g, "ar")]].klass, FE_CLASS_COLLECTIVE);
    assert_int_equal(plan->groups[plan->group_of[tl_node(g, "att")]].klass, FE_CLASS_SINGLE);
    assert_int_equal(fe_plan_check(plan, &err), FE_OK);
    fe_plan_free(plan);
    free(labels);
    fe_graph_free(g);
}

/* fe_plan_extra's callbacks: group figures and summary fields. */
static void extra_group(fe_jw *w, int32_t gi, void *ctx)
{
    (*(int *)ctx)++;
    fe_jw_obj_flat(w);
    fe_jw_key(w, "seen");
    fe_jw_int(w, gi);
    fe_jw_end(w);
}

static void extra_summary(fe_jw *w, void *ctx)
{
    fe_jw_key(w, "groups_written");
    fe_jw_int(w, *(int *)ctx);
}

static char *plan_text(const fe_plan *p, const fe_plan_extra *extra)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(fe_plan_write(p, f, 1, extra, NULL), FE_OK);
    fclose(f);
    return text;
}

/* A plan written to its file and read back is the same plan: the same
 * text when written again. Bad kernel names list the registry's names. */
static void plan_file_round_trip(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q("{'format': 'fuseeng.model/1', 'dims': {'B': 4},"
        " 'tensors': {'x': {'shape': ['B', 4], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [4, 4], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'mm', 'op': 'matmul', 'inputs': ['x', 'w'], 'outputs': ['t1']},"
        "  {'name': 'act', 'op': 'silu', 'inputs': ['t1'], 'outputs': ['t2']},"
        "  {'name': 'out', 'op': 'mul', 'inputs': ['t2', 'x'], 'outputs': ['t3']}],"
        " 'outputs': ['t3']}");
    fe_error err = {0};
    int32_t labels[3] = {0, 0, 1};
    labels[tl_node(g, "out")] = 1;
    labels[tl_node(g, "mm")] = labels[tl_node(g, "act")] = 0;
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    assert_non_null(p);
    p->policy = fe_plan_str(p, "hand");
    p->machine = fe_plan_str(p, "gcu");
    int32_t gm = p->group_of[tl_node(g, "mm")], go = p->group_of[tl_node(g, "out")];
    p->groups[gm].kernel = FE_K_CHOICE_MATMUL_BLAS;
    p->groups[gm].split = 2;
    p->groups[go].split = 1;
    fe_plan_set_reason(p, gm, "a \"quoted\" reason");
    int32_t mine[1] = {tl_node(g, "out")};
    assert_int_equal(fe_plan_log(p, mine, 1, 0, "hand", "kept apart"), FE_OK);

    char dir[] = "/tmp/fe_test_planfile.XXXXXX", path[80], bad[80];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/plan.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fe_plan_write(p, f, 1, NULL, &err), FE_OK);
    fclose(f);
    char *first = plan_text(p, NULL);
    assert_contains(first, "\"kernel\": \"matmul_blas\"");

    fe_plan_file pf;
    assert_int_equal(fe_plan_file_open(path, &pf, &err), FE_OK);
    assert_string_equal(pf.machine, "gcu");
    assert_int_equal(pf.ndims, 1);
    assert_string_equal(pf.dim_names[0], "B");
    fe_plan *back = fe_plan_file_plan(&pf, g, &err);
    fe_plan_file_close(&pf);
    if (!back)
        fail_msg("%s", err.message);
    back->machine = fe_plan_str(back, "gcu");
    /* The decision log is the run's, not the plan file's: copy it over. */
    assert_int_equal(fe_plan_log(back, mine, 1, 0, "hand", "kept apart"), FE_OK);
    char *again = plan_text(back, NULL);
    assert_string_equal(again, first);

    /* Callbacks add a "sim" value to every group and fields to the summary. */
    int calls = 0;
    fe_plan_extra extra = {extra_group, extra_summary, &calls};
    char *with = plan_text(back, &extra);
    assert_int_equal(calls, back->ngroups);
    assert_contains(with, "\"sim\": {\"seen\": 1}");
    assert_contains(with, "\"groups_written\": 2");

    /* A kernel the registry does not know: the message lists its names. */
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    f = fopen(bad, "w");
    fprintf(f, "{\"format\": \"fuseeng.plan/1\", \"groups\": [{\"nodes\": [\"mm\", \"act\", \"out\"], "
               "\"kernel\": \"warp\"}]}");
    fclose(f);
    assert_null(fe_plan_read(g, bad, &err));
    assert_contains(err.message, "group 0: kernel warp is not one of: "
                                 "auto, fused_rows, matmul_blocked, matmul_blas, per_op, onednn");
    assert_string_equal(fe_k_choice_names(), "auto, fused_rows, matmul_blocked, matmul_blas, per_op, onednn");
    assert_string_equal(fe_k_choice_name(FE_K_CHOICE_PER_OP), "per_op");
    assert_string_equal(fe_k_choice_name(FE_K_NCHOICES), "auto");

    unlink(bad);
    unlink(path);
    rmdir(dir);
    free(first);
    free(again);
    free(with);
    fe_plan_free(back);
    fe_plan_free(p);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(cases), cmocka_unit_test(random_merges),
                                       cmocka_unit_test(non_convex_pair),
                                       cmocka_unit_test(group_cycle), cmocka_unit_test(classes),
                                       cmocka_unit_test(plan_file_round_trip)};
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
