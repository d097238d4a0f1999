/* test_choices.c: the fused-choice enumeration (core/plan/choices.c).
 *
 * Small graphs whose choices are listed in full, in order: seed 001's
 * all_reduce + epilogue, a diamond (a set reachable only once both
 * branches are in), a matmul with prologue, epilogue and a sibling
 * (cross-subgraph), the kinds filter, the depth and max bounds, bad
 * options; then random DAGs, where every choice must hold the anchor, be
 * legal, appear once, keep the order and be reproducible. */
#include "testlib.h"
#include "testgraph.h"
#include "choices.h"
#include "legality.h"

#define X4 "'x': {'shape': [4, 4], 'dtype': 'f32', 'kind': 'input'}"

/* The choices around node `anchor` as text: "kind:name,name ..." with kind
 * a(nchor), e(pilogue), p(rologue) or c(ross), then "+" when truncated. */
static const char *listing(fe_chooser *ch, const fe_graph *g, const char *anchor, int depth,
                           int max, int kinds)
{
    static char buf[4096];
    fe_choice_opts o = {.depth = depth, .max = max, .kinds = kinds};
    fe_choice_set s;
    fe_error err = {0};
    assert_int_equal(fe_chooser_around(ch, tl_node(g, anchor), &o, &s, &err), FE_OK);
    size_t at = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < s.n; i++) {
        const fe_choice *c = &s.items[i];
        char k = c->kind == FE_CHOICE_EPILOGUE ? 'e' : c->kind == FE_CHOICE_PROLOGUE ? 'p'
               : c->kind == FE_CHOICE_CROSS ? 'c' : 'a';
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%c:", i ? " " : "", k);
        for (int32_t j = 0; j < c->n; j++)
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", j ? "," : "",
                                   fe_node_name(g, fe_graph_node(g, s.nodes[c->off + j])));
    }
    if (s.truncated)
        snprintf(buf + at, sizeof buf - at, "+");
    return buf;
}

static fe_graph *allreduce_graph(void)
{
    return tl_graph_q("{'format': 'fuseeng.model/1', 'tensors': {" X4 ","
        "  'r': {'shape': [4, 4], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'mm', 'op': 'matmul', 'inputs': ['x', 'x'], 'outputs': ['t0']},"
        "  {'name': 'ar', 'op': 'all_reduce', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'world_size': 8}},"
        "  {'name': 'relu', 'op': 'relu', 'inputs': ['t1'], 'outputs': ['t2']},"
        "  {'name': 'scale', 'op': 'mul', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'scalar': 2.0}},"
        "  {'name': 'out', 'op': 'add', 'inputs': ['t3', 'r'], 'outputs': ['t4']},"
        "  {'name': 'tail', 'op': 'neg', 'inputs': ['t4'], 'outputs': ['t5']}],"
        " 'outputs': ['t5']}");
}

/* Seed 001's example: all_reduce + relu + scale (+ add): the epilogue grows
 * one node per level; the matmul before it never joins (one kernel holds
 * one matmul or all_reduce). Depth and max bound the list. */
static void collective_epilogue(void **state)
{
    (void)state;
    fe_graph *g = allreduce_graph();
    fe_error err = {0};
    fe_chooser *ch = fe_chooser_new(g, &err);
    assert_non_null(ch);
    assert_string_equal(listing(ch, g, "ar", 3, 64, FE_CHOICE_ALL),
                        "a:ar e:ar,relu e:ar,relu,scale e:ar,relu,scale,out");
    /* A 4-deep epilogue at depth 3 stops at 3; at depth 4 it takes tail. */
    assert_string_equal(listing(ch, g, "ar", 4, 64, FE_CHOICE_ALL),
                        "a:ar e:ar,relu e:ar,relu,scale e:ar,relu,scale,out "
                        "e:ar,relu,scale,out,tail");
    assert_string_equal(listing(ch, g, "ar", 0, 64, FE_CHOICE_ALL), "a:ar");
    assert_string_equal(listing(ch, g, "ar", 3, 2, FE_CHOICE_ALL), "a:ar e:ar,relu+");
    assert_string_equal(listing(ch, g, "mm", 3, 64, FE_CHOICE_ALL), "a:mm");
    /* From the middle of the chain: epilogues, prologues and both. */
    assert_string_equal(listing(ch, g, "scale", 2, 64, FE_CHOICE_ALL),
                        "a:scale e:scale,out p:relu,scale e:scale,out,tail p:ar,relu,scale "
                        "c:relu,scale,out");
    assert_string_equal(listing(ch, g, "scale", 2, 64, FE_CHOICE_PROLOGUE),
                        "a:scale p:relu,scale p:ar,relu,scale");
    assert_string_equal(listing(ch, g, "scale", 2, 64, FE_CHOICE_CROSS), "a:scale");
    fe_chooser_free(ch);
    fe_graph_free(g);
}

/* a -> b -> d and a -> c -> d: {a, b, d} and {a, c, d} are not convex, so
 * d joins only once both branches are in. */
static void diamond(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q("{'format': 'fuseeng.model/1', 'tensors': {" X4 "},"
        " 'nodes': [{'name': 'a', 'op': 'relu', 'inputs': ['x'], 'outputs': ['ta']},"
        "  {'name': 'b', 'op': 'exp', 'inputs': ['ta'], 'outputs': ['tb']},"
        "  {'name': 'c', 'op': 'neg', 'inputs': ['ta'], 'outputs': ['tc']},"
        "  {'name': 'd', 'op': 'add', 'inputs': ['tb', 'tc'], 'outputs': ['td']}],"
        " 'outputs': ['td']}");
    fe_error err = {0};
    fe_chooser *ch = fe_chooser_new(g, &err);
    fe_choice_opts o = {.depth = 3, .max = 64, .kinds = FE_CHOICE_ALL};
    fe_choice_set s;
    assert_string_equal(listing(ch, g, "a", 3, 64, FE_CHOICE_ALL),
                        "a:a e:a,b e:a,c e:a,b,c e:a,b,c,d");
    assert_int_equal(fe_chooser_around(ch, tl_node(g, "a"), &o, &s, &err), FE_OK);
    assert_int_equal(s.illegal, 2);   /* {a,b,d} and {a,c,d}, each once */
    /* From a branch: its sibling joins through the shared producer or the
     * shared consumer, a cross-subgraph choice either way. */
    assert_string_equal(listing(ch, g, "b", 3, 64, FE_CHOICE_ALL),
                        "a:b e:b,d p:a,b c:a,b,c c:b,c,d c:a,b,c,d");
    fe_chooser_free(ch);
    fe_graph_free(g);
}

/* A matmul with a prologue (pre), an epilogue (act) and a sibling of its
 * prologue (side): side is neither upstream nor downstream of mm. */
static void prologue_and_cross(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q("{'format': 'fuseeng.model/1', 'tensors': {" X4 "},"
        " 'nodes': [{'name': 'pre', 'op': 'relu', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 'mm', 'op': 'matmul', 'inputs': ['t0', 'x'], 'outputs': ['t1']},"
        "  {'name': 'side', 'op': 'exp', 'inputs': ['t0'], 'outputs': ['t2']},"
        "  {'name': 'act', 'op': 'relu', 'inputs': ['t1'], 'outputs': ['t3']},"
        "  {'name': 'rs', 'op': 'reshape', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'shape': [16]}}],"
        " 'outputs': ['t4', 't2']}");
    fe_error err = {0};
    fe_chooser *ch = fe_chooser_new(g, &err);
    /* rs (data movement) never joins a matmul kernel. */
    assert_string_equal(listing(ch, g, "mm", 3, 64, FE_CHOICE_ALL),
                        "a:mm e:mm,act p:pre,mm c:pre,mm,side c:pre,mm,act c:pre,mm,side,act");
    assert_string_equal(listing(ch, g, "mm", 3, 64, FE_CHOICE_EPILOGUE | FE_CHOICE_PROLOGUE),
                        "a:mm e:mm,act p:pre,mm");
    assert_string_equal(listing(ch, g, "mm", 3, 4, FE_CHOICE_ALL),
                        "a:mm e:mm,act p:pre,mm c:pre,mm,side+");
    fe_chooser_free(ch);
    fe_graph_free(g);
}

static void bad_options(void **state)
{
    (void)state;
    fe_graph *g = allreduce_graph();
    fe_error err = {0};
    fe_chooser *ch = fe_chooser_new(g, &err);
    fe_choice_set s;
    fe_choice_opts o = {.depth = -1, .max = 64, .kinds = FE_CHOICE_ALL};
    assert_int_equal(fe_chooser_around(ch, 0, &o, &s, &err), FE_EINPUT);
    assert_contains(err.message, "depth must be an integer from 0 to 64");
    o = (fe_choice_opts){.depth = 3, .max = 0, .kinds = FE_CHOICE_ALL};
    assert_int_equal(fe_chooser_around(ch, 0, &o, &s, &err), FE_EINPUT);
    assert_contains(err.message, "max must be an integer from 1 to 100000");
    o = (fe_choice_opts){.depth = 3, .max = 4, .kinds = 8};
    assert_int_equal(fe_chooser_around(ch, 0, &o, &s, &err), FE_EINPUT);
    o.kinds = FE_CHOICE_ALL;
    assert_int_equal(fe_chooser_around(ch, 99, &o, &s, &err), FE_EINPUT);
    assert_contains(err.message, "not a node");
    fe_chooser_free(ch);
    fe_graph_free(g);
}

/* The enumeration's order: size, then kind, then member ids. */
static int cmp_choices(const fe_choice_set *s, int32_t i, int32_t j)
{
    const fe_choice *a = &s->items[i], *b = &s->items[j];
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    for (int32_t k = 0; k < a->n; k++)
        if (s->nodes[a->off + k] != s->nodes[b->off + k])
            return s->nodes[a->off + k] < s->nodes[b->off + k] ? -1 : 1;
    return 0;
}

/* Random DAGs of every role: each choice holds the anchor, is legal on a
 * fresh partition, grows its parent by one node, appears once, follows
 * the order, and a second call gives the same list. */
static void random_graphs(void **state)
{
    (void)state;
    for (int round = 0; round < 30; round++) {
        fe_graph *g = tl_random_graph(12 + round % 20);
        fe_error err = {0};
        fe_chooser *ch = fe_chooser_new(g, &err);
        fe_part *p = fe_part_new(g, &err);
        for (int32_t a = 0; a < g->nnodes; a++) {
            fe_choice_opts o = {.depth = 1 + round % 4, .max = 40, .kinds = FE_CHOICE_ALL};
            fe_choice_set s;
            assert_int_equal(fe_chooser_around(ch, a, &o, &s, &err), FE_OK);
            assert_true(s.n >= 1 && s.n <= o.max);
            char first[4096];
            snprintf(first, sizeof first, "%s", listing(ch, g, fe_node_name(g, fe_graph_node(g, a)),
                                                         o.depth, o.max, o.kinds));
            assert_int_equal(fe_chooser_around(ch, a, &o, &s, &err), FE_OK);
            for (int32_t i = 0; i < s.n; i++) {
                const fe_choice *c = &s.items[i];
                const int32_t *m = s.nodes + c->off;
                int has = 0;
                for (int32_t j = 0; j < c->n; j++) {
                    has |= m[j] == a;
                    if (j > 0)
                        assert_true(m[j - 1] < m[j]);
                }
                assert_true(has);
                assert_true(c->n <= o.depth + 1);
                char why[512];
                if (c->n > 1)
                    assert_true(fe_part_can_merge(p, m, c->n, why, sizeof why));
                if (i > 0) {
                    assert_int_equal(s.items[c->parent].n, c->n - 1);
                    assert_true(cmp_choices(&s, i - 1, i) < 0);   /* ordered, so no repeats */
                }
            }
            assert_string_equal(listing(ch, g, fe_node_name(g, fe_graph_node(g, a)), o.depth,
                                        o.max, o.kinds), first);
        }
        fe_part_free(p);
        fe_chooser_free(ch);
        fe_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(collective_epilogue),
                                       cmocka_unit_test(diamond),
                                       cmocka_unit_test(prologue_and_cross),
                                       cmocka_unit_test(bad_options),
                                       cmocka_unit_test(random_graphs)};
    return cmocka_run_group_tests_name("choices", tests, NULL, NULL);
}
