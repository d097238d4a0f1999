/* test_groupsig.c: structural signatures of groups (core/plan/groupsig.c).
 *
 * A model of two identical blocks and a third whose pieces each differ in
 * one way: the same structure under other names has the same signature;
 * a shape, an attribute, an op, an escaping output, an input shared or
 * not, another split into parts, or another salt each change it. */
#include "testlib.h"
#include "groupsig.h"
#include "load.h"

/* Blocks of mul(in, w) -> add(., b) -> relu: "b" and "k" are alike (each
 * reads the relu before it); c's mul output also feeds `tap`, so it
 * escapes; d's mul reads one tensor twice. Then softmaxes e, f, g, g2 over
 * axes 1, 0, 1, 1 (g and g2 alike, each reading a softmax) and a sigmoid. */
static const char model[] =
    "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
    " \"x\": {\"shape\": [64, 64], \"dtype\": \"f32\", \"kind\": \"input\"},"
    " \"w\": {\"shape\": [64, 64], \"dtype\": \"f32\", \"kind\": \"weight\"},"
    " \"b\": {\"shape\": [64], \"dtype\": \"f32\", \"kind\": \"weight\"}},"
    " \"nodes\": ["
    "  {\"name\": \"a_mul\", \"op\": \"mul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"a1\"]},"
    "  {\"name\": \"a_add\", \"op\": \"add\", \"inputs\": [\"a1\", \"b\"], \"outputs\": [\"a2\"]},"
    "  {\"name\": \"a_relu\", \"op\": \"relu\", \"inputs\": [\"a2\"], \"outputs\": [\"a3\"]},"
    "  {\"name\": \"b_mul\", \"op\": \"mul\", \"inputs\": [\"a3\", \"w\"], \"outputs\": [\"b1\"]},"
    "  {\"name\": \"b_add\", \"op\": \"add\", \"inputs\": [\"b1\", \"b\"], \"outputs\": [\"b2\"]},"
    "  {\"name\": \"b_relu\", \"op\": \"relu\", \"inputs\": [\"b2\"], \"outputs\": [\"b3\"]},"
    "  {\"name\": \"k_mul\", \"op\": \"mul\", \"inputs\": [\"b3\", \"w\"], \"outputs\": [\"k1\"]},"
    "  {\"name\": \"k_add\", \"op\": \"add\", \"inputs\": [\"k1\", \"b\"], \"outputs\": [\"k2\"]},"
    "  {\"name\": \"k_relu\", \"op\": \"relu\", \"inputs\": [\"k2\"], \"outputs\": [\"k3\"]},"
    "  {\"name\": \"c_mul\", \"op\": \"mul\", \"inputs\": [\"k3\", \"w\"], \"outputs\": [\"c1\"]},"
    "  {\"name\": \"c_add\", \"op\": \"add\", \"inputs\": [\"c1\", \"b\"], \"outputs\": [\"c2\"]},"
    "  {\"name\": \"c_relu\", \"op\": \"relu\", \"inputs\": [\"c2\"], \"outputs\": [\"c3\"]},"
    "  {\"name\": \"tap\", \"op\": \"exp\", \"inputs\": [\"c1\"], \"outputs\": [\"tp\"]},"
    "  {\"name\": \"d_mul\", \"op\": \"mul\", \"inputs\": [\"c3\", \"c3\"], \"outputs\": [\"d1\"]},"
    "  {\"name\": \"d_add\", \"op\": \"add\", \"inputs\": [\"d1\", \"b\"], \"outputs\": [\"d2\"]},"
    "  {\"name\": \"d_relu\", \"op\": \"relu\", \"inputs\": [\"d2\"], \"outputs\": [\"d3\"]},"
    "  {\"name\": \"e\", \"op\": \"softmax\", \"inputs\": [\"d3\"], \"outputs\": [\"e1\"], \"attrs\": {\"axis\": 1}},"
    "  {\"name\": \"f\", \"op\": \"softmax\", \"inputs\": [\"e1\"], \"outputs\": [\"f1\"], \"attrs\": {\"axis\": 0}},"
    "  {\"name\": \"g\", \"op\": \"softmax\", \"inputs\": [\"f1\"], \"outputs\": [\"g1\"], \"attrs\": {\"axis\": 1}},"
    "  {\"name\": \"g2\", \"op\": \"softmax\", \"inputs\": [\"g1\"], \"outputs\": [\"g21\"], \"attrs\": {\"axis\": 1}},"
    "  {\"name\": \"h\", \"op\": \"sigmoid\", \"inputs\": [\"g21\"], \"outputs\": [\"h1\"]}"
    " ], \"outputs\": [\"h1\", \"tp\"]}";

static fe_graph *g;
static fe_groupsig *sig;

static int setup(void **s)
{
    (void)s;
    fe_error err = {0};
    g = fe_load_model_buffer(model, sizeof model - 1, "sig", NULL, &err);
    if (!g)
        fail_msg("%s", err.message);
    sig = fe_groupsig_new(g, &err);
    return sig ? 0 : -1;
}

static int teardown(void **s)
{
    (void)s;
    fe_groupsig_free(sig);
    fe_graph_free(g);
    return 0;
}

/* The signature of the named nodes, split after the first `split` of them
 * into two parts (0: one part). */
static void sig_of(const char *const *names, int n, int split, uint64_t salt, uint64_t out[2])
{
    int32_t nodes[8], len[2] = {split, n - split};
    for (int i = 0; i < n; i++) {
        nodes[i] = fe_graph_find_node(g, names[i]);
        assert_true(nodes[i] >= 0);
    }
    fe_groupsig_of(sig, salt, nodes, n, split ? len : NULL, split ? nodes : NULL, split ? 2 : 1, out);
}

static int same(const char *const *x, const char *const *y, int n, int split)
{
    uint64_t a[2], b[2];
    sig_of(x, n, split, 1, a);
    sig_of(y, n, split, 1, b);
    return a[0] == b[0] && a[1] == b[1];
}

static void structure_not_names(void **s)
{
    (void)s;
    const char *const a[] = {"b_mul", "b_add", "b_relu"}, *const b[] = {"k_mul", "k_add", "k_relu"};
    assert_true(same(a, b, 3, 0));
    assert_true(same(a, b, 3, 1));
    assert_true(same(a, b, 3, 2));
    const char *const a2[] = {"b_add", "b_relu"}, *const b2[] = {"k_add", "k_relu"};
    assert_true(same(a2, b2, 2, 1));
    const char *const g1[] = {"g"}, *const g2[] = {"g2"};
    assert_true(same(g1, g2, 1, 0));
    /* a reads the model's input where b reads a relu's output. */
    const char *const a0[] = {"a_mul", "a_add", "a_relu"};
    assert_false(same(a0, a, 3, 0));
}

static void what_changes_it(void **s)
{
    (void)s;
    const char *const b[] = {"b_mul", "b_add", "b_relu"};
    /* c's mul output also feeds `tap`: it escapes the group. */
    const char *const c[] = {"c_mul", "c_add", "c_relu"};
    assert_false(same(b, c, 3, 0));
    /* d's mul reads one tensor twice instead of an input and a weight. */
    const char *const d[] = {"d_mul", "d_add", "d_relu"};
    assert_false(same(b, d, 3, 0));
    /* Another split into parts. */
    uint64_t one[2], two[2];
    sig_of(b, 3, 1, 1, one);
    sig_of(b, 3, 2, 1, two);
    assert_false(one[0] == two[0] && one[1] == two[1]);
    sig_of(b, 3, 0, 1, two);
    assert_false(one[0] == two[0] && one[1] == two[1]);
    /* An attribute: the axes of f and g (each reads a softmax). */
    const char *const f[] = {"f"}, *const gg[] = {"g"}, *const h[] = {"h"};
    assert_false(same(f, gg, 1, 0));
    /* An op: h and g. */
    assert_false(same(gg, h, 1, 0));
    /* The salt. */
    sig_of(b, 3, 0, 1, one);
    sig_of(b, 3, 0, 2, two);
    assert_false(one[0] == two[0] && one[1] == two[1]);
    /* The order the parts come in does not matter. */
    int32_t nodes[3], len[2] = {2, 1}, parts[3];
    for (int i = 0; i < 3; i++)
        nodes[i] = fe_graph_find_node(g, b[i]);
    parts[0] = nodes[1];
    parts[1] = nodes[2];
    parts[2] = nodes[0];
    fe_groupsig_of(sig, 1, nodes, 3, len, parts, 2, one);
    sig_of(b, 3, 1, 1, two);
    assert_true(one[0] == two[0] && one[1] == two[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(structure_not_names),
        cmocka_unit_test(what_changes_it),
    };
    return cmocka_run_group_tests_name("groupsig", tests, setup, teardown);
}
