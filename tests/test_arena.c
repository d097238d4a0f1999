/* test_arena.c: placement by lifetime (core/exec/arena.c), which the GPU
 * executor's arena of activations relies on: two tensors alive at the
 * same step never share a byte, tensors whose lives do not meet reuse
 * bytes, offsets keep the alignment, and random lifetimes never pack
 * tighter than the busiest step's bytes (a bound no placement beats). */
#include <stdlib.h>

#include "arena.h"
#include "testlib.h"

static int meet(const fe_life *a, const fe_life *b)
{
    return !(a->last < b->def || b->last < a->def);
}

static int overlap(const fe_life *a, const fe_life *b, int64_t align)
{
    int64_t ea = a->off + (a->bytes + align - 1) / align * align;
    int64_t eb = b->off + (b->bytes + align - 1) / align * align;
    return a->off < eb && b->off < ea;
}

static void disjoint_lives_share(void **s)
{
    (void)s;
    /* a chain: each tensor read by the next step only */
    fe_life lv[3] = {{0, 0, 1, 1000, -1}, {1, 1, 2, 1000, -1}, {2, 2, 3, 1000, -1}};
    int64_t top = fe_arena_place(lv, 3, 256);
    /* 0 and 2 never meet: two blocks of 1024 suffice */
    assert_int_equal(top, 2048);
    for (int i = 0; i < 3; i++)
        assert_int_equal(lv[i].off % 256, 0);
    fe_life one = {5, 0, 0, 0, -1};
    assert_int_equal(fe_arena_place(&one, 1, 256), 0);
    assert_int_equal(one.off, 0);
    assert_int_equal(fe_arena_place(NULL, 0, 256), 0);
}

static void random_lives(void **s)
{
    (void)s;
    srand(7);
    for (int round = 0; round < 200; round++) {
        int n = 1 + rand() % 60, steps = 1 + rand() % 20;
        int64_t align = round % 2 ? 256 : 1;
        fe_life lv[60];
        for (int i = 0; i < n; i++) {
            int a = rand() % steps, b = rand() % steps;
            lv[i] = (fe_life){i, a < b ? a : b, a < b ? b : a, 1 + rand() % 5000, -1};
        }
        int64_t top = fe_arena_place(lv, n, align);
        int64_t busiest = 0;
        for (int st = 0; st < steps; st++) {
            int64_t b = 0;
            for (int i = 0; i < n; i++)
                if (lv[i].def <= st && st <= lv[i].last)
                    b += (lv[i].bytes + align - 1) / align * align;
            busiest = b > busiest ? b : busiest;
        }
        assert_true(top >= busiest);
        for (int i = 0; i < n; i++) {
            assert_true(lv[i].off >= 0 && lv[i].off % align == 0);
            assert_true(lv[i].off + lv[i].bytes <= top);
            for (int j = i + 1; j < n; j++)
                if (meet(&lv[i], &lv[j]))
                    assert_false(overlap(&lv[i], &lv[j], align));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disjoint_lives_share),
        cmocka_unit_test(random_lives),
    };
    return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
