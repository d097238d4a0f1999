/* test_u64map.c: the 64-bit map (core/ir/u64map.c): puts say whether a
 * key is new, gets find every key through growth, clear empties. */
#include "testlib.h"
#include "u64map.h"

static void put_get_grow_clear(void **s)
{
    (void)s;
    fe_u64map m = {0};
    assert_null(fe_u64map_get(&m, 7));
    assert_int_equal(fe_u64map_put(&m, 7, 70), 1);
    assert_int_equal(fe_u64map_put(&m, 7, 71), 0);
    assert_int_equal(*fe_u64map_get(&m, 7), 71);
    /* Keys that share low bits, past several doublings. */
    for (uint64_t k = 1; k <= 20000; k++)
        assert_true(fe_u64map_put(&m, k << 32, k) >= 0);
    for (uint64_t k = 1; k <= 20000; k += 13) {
        const uint64_t *v = fe_u64map_get(&m, k << 32);
        assert_non_null(v);
        assert_int_equal(*v, k);
    }
    assert_null(fe_u64map_get(&m, (uint64_t)20001 << 32));
    assert_int_equal(m.n, 20001);
    fe_u64map_clear(&m);
    assert_int_equal(m.n, 0);
    assert_null(fe_u64map_get(&m, 7));
    assert_int_equal(fe_u64map_put(&m, 7, 1), 1);
    fe_u64map_free(&m);
    assert_null(fe_u64map_get(&m, 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_get_grow_clear),
    };
    return cmocka_run_group_tests_name("u64map", tests, NULL, NULL);
}
