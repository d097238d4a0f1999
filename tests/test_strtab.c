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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(intern_and_append),
    };
    return cmocka_run_group_tests_name("strtab", tests, NULL, NULL);
}
