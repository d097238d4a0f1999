/* test_strtab.c: the string table (core/ir/strtab.c): interning finds an
 * equal string, appending stores without looking and is never found, and
 * both survive the hash growing past many entries. */
#include <stdio.h>
#include <string.h>

#include "testlib.h"
#include "strtab.h"

static void intern_and_append(void **s)
{
    (void)s;
    fe_strtab *t = fe_strtab_new();
    assert_non_null(t);
    int32_t a = fe_strtab_intern(t, "relu", 4);
    assert_int_equal(fe_strtab_intern(t, "relu", 4), a);
    int32_t n1 = fe_strtab_append(t, "relu", 4), n2 = fe_strtab_append(t, "relu", 4);
    assert_true(n1 != a && n2 != a && n1 != n2);
    assert_string_equal(fe_strtab_str(t, n1), "relu");
    assert_int_equal(fe_strtab_len(t, n2), 4);
    assert_int_equal(fe_strtab_find(t, "relu", 4), a);
    assert_int_equal(fe_strtab_find(t, "note only", 9), -1);
    fe_strtab_append(t, "note only", 9);
    assert_int_equal(fe_strtab_find(t, "note only", 9), -1);
    /* Many of both: the hash grows (rehashing only the interned ones). */
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "name%d", i);
        int32_t id = fe_strtab_intern(t, buf, strlen(buf));
        snprintf(buf, sizeof buf, "note%d", i);
        int32_t nid = fe_strtab_append(t, buf, strlen(buf));
        assert_true(id >= 0 && nid >= 0);
        assert_string_equal(fe_strtab_str(t, nid), buf);
    }
    for (int i = 0; i < 5000; i += 7) {
        snprintf(buf, sizeof buf, "name%d", i);
        int32_t id = fe_strtab_find(t, buf, strlen(buf));
        assert_true(id >= 0);
        assert_string_equal(fe_strtab_str(t, id), buf);
        assert_int_equal(fe_strtab_len(t, id), strlen(buf));
        snprintf(buf, sizeof buf, "note%d", i);
        assert_int_equal(fe_strtab_find(t, buf, strlen(buf)), -1);
    }
    assert_int_equal(fe_strtab_intern(t, "relu", 4), a);
    assert_int_equal(fe_strtab_count(t), 1 + 3 + 10000);
    fe_strtab_free(t);
}

/* The hash reads eight bytes at a time: strings that differ in one byte
 * at any offset, or only in length, or hold any byte value, are distinct,
 * and each is found again (node sets as bytes hold zeros). */
static void every_offset_and_length(void **s)
{
    (void)s;
    fe_strtab *t = fe_strtab_new();
    assert_non_null(t);
    char buf[48];
    int32_t ids[41][41];
    for (int len = 0; len <= 40; len++) {
        for (int at = 0; at <= 40; at++) {
            memset(buf, 0, sizeof buf);
            for (int i = 0; i < len; i++)
                buf[i] = (char)(i * 37);
            if (at < len)
                buf[at] = (char)(buf[at] ^ 0x80);
            ids[len][at] = fe_strtab_intern(t, buf, (size_t)len);
            assert_true(ids[len][at] >= 0);
        }
    }
    int32_t distinct = 0;
    for (int len = 0; len <= 40; len++)
        distinct += 1 + len;   /* at >= len: the unchanged string */
    assert_int_equal(fe_strtab_count(t), distinct);
    for (int len = 0; len <= 40; len++)
        for (int at = 0; at < len; at++) {
            assert_int_equal(fe_strtab_len(t, ids[len][at]), len);
            assert_true(ids[len][at] != ids[len][len]);
        }
    fe_strtab_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(intern_and_append),
        cmocka_unit_test(every_offset_and_length),
    };
    return cmocka_run_group_tests_name("strtab", tests, NULL, NULL);
}
