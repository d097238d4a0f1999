/* test_reason.c: reasons that name a candidate's parts (core/script/reason.c)
 * and the memo key that keeps them right (core/script/memo.c): "{partK}"
 * becomes part K's names in Inductor's set notation, anything else stays
 * as written, and a memo key tells the orders of the same parts apart
 * while the signature does not. */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "load.h"
#include "memo.h"
#include "reason.h"

static const char model[] =
    "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
    " \"x\": {\"shape\": [8], \"dtype\": \"f32\", \"kind\": \"input\"}},"
    " \"nodes\": ["
    "  {\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"a1\"]},"
    "  {\"name\": \"b\", \"op\": \"exp\", \"inputs\": [\"a1\"], \"outputs\": [\"b1\"]},"
    "  {\"name\": \"c\", \"op\": \"relu\", \"inputs\": [\"b1\"], \"outputs\": [\"c1\"]},"
    "  {\"name\": \"d\", \"op\": \"exp\", \"inputs\": [\"c1\"], \"outputs\": [\"d1\"]},"
    "  {\"name\": \"e\", \"op\": \"relu\", \"inputs\": [\"d1\"], \"outputs\": [\"e1\"]},"
    "  {\"name\": \"f\", \"op\": \"exp\", \"inputs\": [\"e1\"], \"outputs\": [\"f1\"]}"
    " ], \"outputs\": [\"f1\"]}";

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

/* reason with parts of lengths len[0..np) over nodes 0, 1, 2, ... in order. */
static const char *with(const char *reason, const int32_t *len, int np, char **buf, size_t *cap)
{
    static const int32_t members[] = {0, 1, 2, 3, 4};
    const char *s = fe_reason_with_parts(g, reason, len, members, np, buf, cap);
    assert_non_null(s);
    return s;
}

static void names_each_part(void **s)
{
    (void)s;
    char *buf = NULL;
    size_t cap = 0;
    int32_t one_four[] = {1, 4}, two_three[] = {2, 3};
    assert_string_equal(with("fusing {part1} with {part2}", one_four, 2, &buf, &cap),
                        "fusing {'a'} with {'b', ..., 'e'} (4 nodes)");
    assert_string_equal(with("{part2}{part1}!", two_three, 2, &buf, &cap),
                        "{'c', ..., 'e'} (3 nodes){'a', 'b'}!");
    /* Past the parts, not a part, or not closed: as written. */
    assert_string_equal(with("{part3} {part0} {part10} {part {parts} {part1", two_three, 2, &buf, &cap),
                        "{part3} {part0} {part10} {part {parts} {part1");
    /* A name is not read again for placeholders. */
    int32_t all[] = {5};
    assert_string_equal(with("{{part1}}", all, 1, &buf, &cap), "{{'a', ..., 'e'} (5 nodes)}");
    /* A long reason grows the buffer. */
    char long_reason[3000];
    memset(long_reason, 'x', sizeof long_reason - 8);
    strcpy(long_reason + sizeof long_reason - 8, "{part1}");
    const char *out = with(long_reason, one_four, 2, &buf, &cap);
    assert_int_equal(strlen(out), sizeof long_reason - 8 + 5);
    assert_string_equal(out + sizeof long_reason - 8, "{'a'}");
    free(buf);
}

static void finds_placeholders(void **s)
{
    (void)s;
    assert_true(fe_reason_names_parts("x {part1}"));
    assert_true(fe_reason_names_parts("{{part9}"));
    assert_false(fe_reason_names_parts("{part0} {part10} {part {'a'}"));
    assert_false(fe_reason_names_parts(""));
}

static void memo_key_keeps_part_order(void **s)
{
    (void)s;
    fe_error err = {0};
    fe_memo *m = fe_memo_new(g, &err);
    assert_non_null(m);
    /* exp -> relu twice over (b, c and d, e: each exp reads a relu, each
     * relu feeds an exp outside). */
    int32_t bc[] = {1, 2}, cb[] = {2, 1}, de[] = {3, 4}, ed[] = {4, 3}, len[] = {1, 1};
    uint64_t k_bc[2], k_cb[2], k_de[2], k_ed[2];
    fe_memo_key(m, FE_MEMO_DECIDE, bc, 2, len, bc, 2, k_bc);
    fe_memo_key(m, FE_MEMO_DECIDE, bc, 2, len, cb, 2, k_cb);
    fe_memo_key(m, FE_MEMO_DECIDE, de, 2, len, de, 2, k_de);
    fe_memo_key(m, FE_MEMO_DECIDE, de, 2, len, ed, 2, k_ed);
    assert_true(k_bc[0] == k_de[0] && k_bc[1] == k_de[1]);
    assert_true(k_cb[0] == k_ed[0] && k_cb[1] == k_ed[1]);
    assert_false(k_bc[0] == k_cb[0] && k_bc[1] == k_cb[1]);
    fe_memo_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_each_part),
        cmocka_unit_test(finds_placeholders),
        cmocka_unit_test(memo_key_keeps_part_order),
    };
    return cmocka_run_group_tests_name("reason", tests, setup, teardown);
}
