/* test_ranges.c: the ranges random integers are drawn from (core/exec/
 * ranges.c), derived backwards from every index through every kind of op,
 * and the session's refusal when an input reaches an index through a node
 * whose values cannot be followed back (BERT's token_type_ids through an
 * exported custom node drew [0, 16) for a table of 2 rows). */
#include "testlib.h"

#include "exec.h"
#include "ranges.h"

#define TAB(name, rows) "'" name "': {'shape': [" #rows ", 4], 'dtype': 'f32', 'kind': 'weight'}"
#define IDS(name, dt) "'" name "': {'shape': [6], 'dtype': '" dt "', 'kind': 'input'}"
#define ACT(name, dt) "'" name "': {'shape': [6], 'dtype': '" dt "', 'kind': 'activation'}"
#define EMB(name, tab, ids) \
    "{'name': '" name "', 'op': 'embedding', 'inputs': ['" tab "', '" ids "'], 'outputs': ['" name "_out']}"

/* ids0: custom clone, embedding of 3 rows               -> [0, 3)
 * ids1: neg, add 2, gather along 5 rows                 -> [-2, 3)
 * ids2 (i32): 10 - x (sub, scalar_index 0), 4 rows      -> [7, 11)
 * ids3 [2, 3]: reshape, concat with ids4, where (cond c), maximum 0,
 *       embedding of 5 rows                               -> [0, 5) both; c free
 * ids5: cast to bool and back, an embedding's index     -> free (0 or 1)
 * ids7: two indexes, of 3 and 5 rows                    -> [0, 3)
 * ids9: an exported aten gather's index into 4 values  -> [0, 4) */
static const char *followed =
    "{'format': 'fuseeng.model/1', 'tensors': {"
    TAB("t3", 3) "," TAB("t4", 4) "," TAB("t5", 5) "," TAB("x5", 5) ","
    IDS("ids0", "i64") "," IDS("ids1", "i64") "," IDS("ids2", "i32") ","
    "'ids3': {'shape': [2, 3], 'dtype': 'i64', 'kind': 'input'}," IDS("ids4", "i64") ","
    "'c': {'shape': [12], 'dtype': 'bool', 'kind': 'input'}," IDS("ids5", "i64") ","
    IDS("ids7", "i64") "," IDS("ids9", "i64") "," ACT("cl", "i64") ","
    "'d4': {'shape': [4], 'dtype': 'f32', 'kind': 'weight'},"
    "'g9': {'shape': [6], 'dtype': 'f32', 'kind': 'activation'}},"
    " 'nodes': ["
    "  {'name': 'clone', 'op': 'custom', 'inputs': ['ids0'], 'outputs': ['cl'],"
    "   'attrs': {'aten': 'aten.clone.default', 'pattern': 'injective'}},"
    EMB("e0", "t3", "cl") ","
    "  {'name': 'neg', 'op': 'neg', 'inputs': ['ids1'], 'outputs': ['n1']},"
    "  {'name': 'add2', 'op': 'add', 'inputs': ['n1'], 'outputs': ['a1'], 'attrs': {'scalar': 2}},"
    "  {'name': 'g1', 'op': 'gather', 'inputs': ['x5', 'a1'], 'outputs': ['g1_out'], 'attrs': {'axis': 0}},"
    "  {'name': 'rsub', 'op': 'sub', 'inputs': ['ids2'], 'outputs': ['s2'],"
    "   'attrs': {'scalar': 10, 'scalar_index': 0}},"
    EMB("e2", "t4", "s2") ","
    "  {'name': 'flat', 'op': 'reshape', 'inputs': ['ids3'], 'outputs': ['f3'], 'attrs': {'shape': [6]}},"
    "  {'name': 'cat', 'op': 'concat', 'inputs': ['f3', 'ids4'], 'outputs': ['k'], 'attrs': {'axis': 0}},"
    "  {'name': 'pick', 'op': 'where', 'inputs': ['c', 'k'], 'outputs': ['w'], 'attrs': {'scalar': 1}},"
    "  {'name': 'atleast0', 'op': 'maximum', 'inputs': ['w'], 'outputs': ['m'], 'attrs': {'scalar': 0}},"
    EMB("e3", "t5", "m") ","
    "  {'name': 'tobool', 'op': 'cast', 'inputs': ['ids5'], 'outputs': ['b5'], 'attrs': {'dtype': 'bool'}},"
    "  {'name': 'toint', 'op': 'cast', 'inputs': ['b5'], 'outputs': ['i5'], 'attrs': {'dtype': 'i64'}},"
    EMB("e5", "t3", "i5") ","
    EMB("e7", "t3", "ids7") ","
    "  {'name': 'g7', 'op': 'gather', 'inputs': ['x5', 'ids7'], 'outputs': ['g7_out'], 'attrs': {'axis': 0}},"
    "  {'name': 'tg', 'op': 'custom', 'inputs': ['d4', 'ids9'], 'outputs': ['g9'],"
    "   'attrs': {'aten': 'aten.gather.default', 'pattern': 'injective', 'args': {'dim': 0}}}],"
    " 'outputs': ['e0_out', 'g1_out', 'e2_out', 'e3_out', 'e5_out', 'e7_out', 'g7_out', 'g9']}";

static fe_graph *load(const char *quoted)
{
    return tl_graph_q(quoted);
}

static int32_t tensor(const fe_graph *g, const char *name)
{
    int32_t t = fe_graph_find_tensor(g, name);
    if (t < 0)
        fail_msg("no tensor '%s'", name);
    return t;
}

static void expect_in(const fe_graph *g, const fe_range *r, const char *name, int64_t lo, int64_t hi)
{
    const fe_range *x = &r[tensor(g, name)];
    if (x->kind != FE_RANGE_IN || x->lo != lo || x->hi != hi)
        fail_msg("%s: kind %d [%lld, %lld), expected [%lld, %lld)", name, x->kind,
                 (long long)x->lo, (long long)x->hi, (long long)lo, (long long)hi);
}

static void through_every_kind(void **state)
{
    (void)state;
    fe_graph *g = load(followed);
    fe_range *r = fe_ranges(g);
    assert_non_null(r);
    expect_in(g, r, "ids0", 0, 3);
    expect_in(g, r, "ids1", -2, 3);
    expect_in(g, r, "ids2", 7, 11);
    expect_in(g, r, "ids3", 0, 5);
    expect_in(g, r, "ids4", 0, 5);
    expect_in(g, r, "ids7", 0, 3);
    expect_in(g, r, "ids9", 0, 4);
    assert_int_equal(r[tensor(g, "c")].kind, FE_RANGE_FREE);
    assert_int_equal(r[tensor(g, "ids5")].kind, FE_RANGE_FREE);
    assert_int_equal(r[tensor(g, "t3")].kind, FE_RANGE_FREE);
    free(r);
    fe_graph_free(g);
}

/* Every index drawn in range: the reference runs (before, ids0, ids1 and
 * ids2 drew [0, 16) and the embedding stopped on an index out of range). */
static void draws_in_range(void **state)
{
    (void)state;
    fe_graph *g = load(followed);
    fe_error err = {0};
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    if (!ex)
        fail_msg("%s", err.message);
    fe_exec_result *res = NULL;
    if (fe_exec_reference(ex, &res, &err) != FE_OK)
        fail_msg("%s", err.message);
    fe_exec_result_free(res);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* An input behind arithmetic between tensors, or behind an aten op with
 * no inverse, or asked for two ranges that do not meet: refused, named. */
static void refuses_what_it_cannot_follow(void **state)
{
    (void)state;
    static const struct { const char *nodes, *want; } cases[] = {
        {"{'name': 'mix', 'op': 'mul', 'inputs': ['ids', 'other'], 'outputs': ['v']}," EMB("e", "t3", "v"),
         "input 'ids' (i64) reaches the indices of node 'e' (embedding) through node 'mix' (mul)"},
        {"{'name': 'cs', 'op': 'custom', 'inputs': ['ids'], 'outputs': ['v'],"
         " 'attrs': {'aten': 'aten.cumsum.default', 'pattern': 'opaque', 'args': {'dim': 0}}}," EMB("e", "t3", "v"),
         "through node 'cs' (aten.cumsum.default), whose values fuseeng cannot follow back"},
        {"{'name': 'up', 'op': 'add', 'inputs': ['ids'], 'outputs': ['v'], 'attrs': {'scalar': 5}},"
         EMB("e", "t3", "v") "," EMB("f", "t3", "ids"),
         "input 'ids' (i64) reaches indices that ask for ranges with no value in common"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[4096];
        snprintf(json, sizeof json,
                 "{'format': 'fuseeng.model/1', 'tensors': {" TAB("t3", 3) "," IDS("ids", "i64") ","
                 IDS("other", "i64") "," ACT("v", "i64") "}, 'nodes': [%s], 'outputs': ['e_out']}",
                 cases[i].nodes);
        fe_graph *g = load(json);
        fe_error err = {0};
        fe_exec *ex = fe_exec_new(g, NULL, &err);
        assert_null(ex);
        assert_int_equal(err.code, FE_EINPUT);
        if (!strstr(err.message, cases[i].want) || !strstr(err.message, "--inputs FILE.safetensors"))
            fail_msg("case %zu: %s", i, err.message);
        fe_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(through_every_kind),
        cmocka_unit_test(draws_in_range),
        cmocka_unit_test(refuses_what_it_cannot_follow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
