/* test_radix.c: the radix sort of 64-bit keys (core/ir/radix.c) against
 * qsort: random keys over every bit range a digit can skip, duplicates
 * kept in their order (stable), and the trivial sizes. */
#include <stdlib.h>

#include "testlib.h"
#include "radix.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int by_key_then_val(const void *x, const void *y)
{
    const fe_kv *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->val > b->val) - (a->val < b->val);
}

/* n keys masked to mask, val = the item's first position: sorted by key,
 * equal keys must keep ascending vals. */
static void sorts(size_t n, uint64_t mask, uint64_t seed)
{
    fe_kv *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b),
          *t = malloc((n + 1) * sizeof *t);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] = (fe_kv){rnd(&seed) & mask, i};
    fe_radix_sort_kv(a, t, n);
    qsort(b, n, sizeof *b, by_key_then_val);
    for (size_t i = 0; i < n; i++) {
        assert_true(a[i].key == b[i].key);
        assert_true(a[i].val == b[i].val);
    }
    free(a);
    free(b);
    free(t);
}

static void against_qsort(void **s)
{
    (void)s;
    sorts(0, ~0ull, 1);
    sorts(1, ~0ull, 2);
    sorts(2, ~0ull, 3);
    sorts(1000, ~0ull, 4);                    /* every digit varies */
    sorts(50000, 0xfffffull, 5);              /* small ids: high digits skipped */
    sorts(50000, 0x1fffff001fffffull, 6);     /* two ids of 21 bits, as pair keys */
    sorts(50000, 0xff, 7);                    /* many duplicates: stability */
    sorts(3000, 0x8000000000000000ull, 8);    /* only the top bit */
    sorts(3000, 0, 9);                        /* all equal */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(against_qsort),
    };
    return cmocka_run_group_tests_name("radix", tests, NULL, NULL);
}
