/* test_json.c: the pull reader (jsonr) and the streaming writer (jsonw):
 * escapes, UTF-8, numbers, nesting limits, positions, round-trip numbers. */
#include <math.h>

#include "testlib.h"
#include "jsonr.h"
#include "jsonw.h"

static void strings(void **s)
{
    (void)s;
    fe_jr r;
    fe_jr_str v;
    const char *text = "\"plain\" \"a\\\"b\\\\c\\n\" \"\\u00e9\\ud83d\\ude00\" \"\xc3\xa9\"";
    fe_jr_init(&r, text, strlen(text));
    assert_int_equal(fe_jr_string(&r, &v), 0);
    assert_int_equal(v.n, 5);
    assert_memory_equal(v.s, "plain", 5);
    assert_true(v.s >= text && v.s < text + strlen(text));   /* no copy without escapes */
    assert_int_equal(fe_jr_string(&r, &v), 0);
    assert_int_equal(v.n, 6);
    assert_memory_equal(v.s, "a\"b\\c\n", 6);
    assert_int_equal(fe_jr_string(&r, &v), 0);
    assert_int_equal(v.n, 6);
    assert_memory_equal(v.s, "\xc3\xa9\xf0\x9f\x98\x80", 6);
    assert_int_equal(fe_jr_string(&r, &v), 0);
    assert_memory_equal(v.s, "\xc3\xa9", 2);
    assert_true(fe_jr_at_end(&r));
    fe_jr_free(&r);
}

static const char *error_of(const char *text)
{
    static char msg[300];
    fe_jr r;
    size_t a, e;
    fe_jr_init(&r, text, strlen(text));
    int rc = fe_jr_skip(&r, &a, &e);
    snprintf(msg, sizeof msg, "%d:%d: %s", r.err_line, r.err_col, rc ? r.err : "(ok)");
    fe_jr_free(&r);
    return msg;
}

static void malformed(void **s)
{
    (void)s;
    assert_string_equal(error_of("\"abc"), "1:1: unterminated string");
    assert_string_equal(error_of("\"a\tb\""), "1:3: control character 0x09 inside a string (escape it)");
    assert_string_equal(error_of("\"\xff\""), "1:2: invalid UTF-8 in a string");
    assert_string_equal(error_of("\"\xc0\xaf\""), "1:2: invalid UTF-8 in a string");   /* overlong */
    assert_string_equal(error_of("\"\\ud800x\""), "1:8: unpaired UTF-16 surrogate in a \\u escape");
    assert_string_equal(error_of("\"\\q\""), "1:2: invalid escape '\\q'");
    assert_string_equal(error_of("012"), "1:1: a number may not have leading zeros");
    assert_string_equal(error_of("1."), "1:3: expected a digit after '.'");
    assert_string_equal(error_of("99999999999999999999"), "1:1: integer 99999999999999999999 does not fit in 64 bits");
    assert_string_equal(error_of("[1,\n 2,]"), "2:4: expected a value, found ']'");
    assert_string_equal(error_of("{\"a\" 1}"), "1:6: expected ':' after a key, found '1'");
    assert_string_equal(error_of("{\"a\": 1 \"b\": 2}"), "1:9: expected ',' or '}' in an object, found '\"'");
    assert_string_equal(error_of("[1, 2"), "1:6: the file ends inside an array");
    assert_string_equal(error_of("nul"), "1:1: expected null, found 'n'");
    assert_string_equal(error_of("\x01"), "1:1: expected a value, found byte 0x01");
    char deep[2000];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    assert_string_equal(error_of(deep), "1:512: maximum nesting depth (512) reached");
}

static void numbers(void **s)
{
    (void)s;
    fe_jr r;
    int is_int;
    int64_t i;
    double d;
    const char *text = "-9223372036854775808 9223372036854775807 0 -0.5e-3 1E2 3.4028235e38";
    fe_jr_init(&r, text, strlen(text));
    assert_int_equal(fe_jr_number(&r, &is_int, &i, &d), 0);
    assert_true(is_int);
    assert_true(i == INT64_MIN);
    assert_int_equal(fe_jr_number(&r, &is_int, &i, &d), 0);
    assert_true(i == INT64_MAX);
    assert_int_equal(fe_jr_number(&r, &is_int, &i, &d), 0);
    assert_true(is_int && i == 0);
    assert_int_equal(fe_jr_number(&r, &is_int, &i, &d), 0);
    assert_false(is_int);
    assert_true(d == -0.5e-3);
    assert_int_equal(fe_jr_number(&r, &is_int, &i, &d), 0);
    assert_false(is_int);
    assert_true(d == 100.0);
    assert_int_equal(fe_jr_number(&r, &is_int, &i, &d), 0);
    assert_true(d == 3.4028235e38);
    fe_jr_free(&r);
}

static void containers_and_positions(void **s)
{
    (void)s;
    fe_jr r;
    fe_jr_str key;
    const char *text = "{\n  \"a\": [1, {\"x\": null}],\n  \"b\": true\n}";
    fe_jr_init(&r, text, strlen(text));
    assert_int_equal(fe_jr_obj_begin(&r), 0);
    assert_int_equal(fe_jr_obj_next(&r, &key), 1);
    assert_int_equal(r.key_line, 2);
    assert_int_equal(r.key_col, 3);
    size_t a, e;
    assert_int_equal(fe_jr_skip(&r, &a, &e), 0);
    assert_int_equal(e - a, strlen("[1, {\"x\": null}]"));
    assert_int_equal(fe_jr_obj_next(&r, &key), 1);
    assert_int_equal(r.key_line, 3);
    int b;
    assert_int_equal(fe_jr_bool(&r, &b), 0);
    assert_true(b);
    assert_int_equal(fe_jr_obj_next(&r, &key), 0);
    assert_int_equal(r.depth, 0);
    assert_true(fe_jr_at_end(&r));
    fe_jr_free(&r);
}

static void writer(void **s)
{
    (void)s;
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    fe_jw w;
    fe_jw_init(&w, f, 0);
    fe_jw_obj(&w);
    fe_jw_key(&w, "s");
    fe_jw_str(&w, "q\"\\\n\x01");
    fe_jw_key(&w, "n");
    fe_jw_arr(&w);
    fe_jw_num(&w, 0.1);
    fe_jw_num(&w, 1e-6);
    fe_jw_num(&w, 2.0);
    fe_jw_num(&w, INFINITY);
    fe_jw_int(&w, -7);
    fe_jw_end(&w);
    fe_jw_key(&w, "e");
    fe_jw_obj(&w);
    fe_jw_end(&w);
    fe_jw_end(&w);
    fclose(f);
    assert_string_equal(buf, "{\"s\":\"q\\\"\\\\\\n\\u0001\",\"n\":[0.1,1e-06,2.0,3.4028235e38,-7],\"e\":{}}");
    free(buf);

    /* Every double survives format -> strtod. */
    char t[40];
    double vals[] = {1.0 / 3, 1e-300, 6.02214076e23, -0.0, 5e-324, 1.7976931348623157e308};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        fe_jw_format_double(vals[i], t, sizeof t);
        assert_true(strtod(t, NULL) == vals[i]);
    }
}

static void indented(void **s)
{
    (void)s;
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    fe_jw w;
    fe_jw_init(&w, f, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "list");
    fe_jw_arr(&w);
    fe_jw_obj_flat(&w);
    fe_jw_key(&w, "a");
    fe_jw_arr(&w);
    fe_jw_int(&w, 1);
    fe_jw_int(&w, 2);
    fe_jw_end(&w);
    fe_jw_end(&w);
    fe_jw_end(&w);
    fe_jw_end(&w);
    fclose(f);
    assert_string_equal(buf, "{\n  \"list\": [\n    {\"a\": [1, 2]}\n  ]\n}\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings), cmocka_unit_test(malformed), cmocka_unit_test(numbers),
        cmocka_unit_test(containers_and_positions), cmocka_unit_test(writer), cmocka_unit_test(indented),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
