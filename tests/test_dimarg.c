/* test_dimarg.c: the one parser of "NAME=V" and "NAME=V1,V2,..." dims
 * (core/ir/dimarg.c): what it takes, each bad input with its message and
 * the limits (a name of 127 bytes, 64 values, 64-bit values), and the C
 * API's dims text ("B=8,S=4096"), which parses each NAME=V with it. */
#include <stdio.h>

#include "testlib.h"
#include "dimarg.h"
#include "fuseeng_cli.h"

static int parse(const char *text, fe_dimarg *d, fe_error *err)
{
    *err = (fe_error){0};
    return fe_dimarg_parse(text, strlen(text), d, err);
}

static void good(void **s)
{
    (void)s;
    fe_dimarg d;
    fe_error err;
    assert_int_equal(parse("S=4096", &d, &err), FE_OK);
    assert_string_equal(d.name, "S");
    assert_int_equal(d.n, 1);
    assert_true(d.values[0] == 4096);
    assert_int_equal(parse("batch=1,8, 32 ", &d, &err), FE_OK);   /* spaces around values */
    assert_string_equal(d.name, "batch");
    assert_int_equal(d.n, 3);
    assert_true(d.values[0] == 1 && d.values[1] == 8 && d.values[2] == 32);
    assert_int_equal(parse("B=9223372036854775807", &d, &err), FE_OK);   /* INT64_MAX */
    assert_true(d.values[0] == INT64_MAX);
    assert_int_equal(parse("a=b=3", &d, &err), FE_EINPUT);   /* the name ends at the first '=' */
    assert_string_equal(d.name, "a");
    /* Only len bytes are read: the C API's "B=8,S=4096" splits at commas. */
    assert_int_equal(fe_dimarg_parse("B=8,S=4096", 3, &d, &err), FE_OK);
    assert_string_equal(d.name, "B");
    assert_int_equal(d.n, 1);
    assert_true(d.values[0] == 8);
}

/* text is refused with a message holding want. */
static void refused(const char *text, const char *want)
{
    fe_dimarg d;
    fe_error err;
    if (parse(text, &d, &err) != FE_EINPUT || !strstr(err.message, want))
        fail_msg("'%s': expected an error with '%s', got '%s'", text, want, err.message);
}

static void bad(void **s)
{
    (void)s;
    refused("S", "expected NAME=V or NAME=V1,V2,..., e.g. S=4096");
    refused("", "expected NAME=V");
    refused("=5", "expected NAME=V");
    refused("S=", "the value must be a positive integer");
    refused("S=x", "the value must be a positive integer");
    refused("S=0", "the value must be a positive integer");
    refused("S=-3", "the value must be a positive integer");
    refused("S=+3", "the value must be a positive integer");
    refused("S=3x", "the value must be a positive integer");
    refused("S=1 2", "the value must be a positive integer");
    refused("S=9223372036854775808", "the value must be a positive integer");   /* INT64_MAX + 1 */
    refused("S=99999999999999999999999", "the value must be a positive integer");
    refused("B=1,,8", "value 2 is empty; give positive integers separated by commas, e.g. B=1,8,32");
    refused("B=1,8,", "value 3 is empty");
    refused("B=,1", "value 1 is empty");
    refused("B=1,x", "value 2 is not a positive integer");
    refused("B=1,0", "value 2 is not a positive integer");
    refused("B=1,9223372036854775808", "value 2 is not a positive integer");
    char text[1024];
    memset(text, 'n', 127);
    snprintf(text + 127, sizeof text - 127, "=1");
    fe_dimarg d;
    fe_error err;
    assert_int_equal(parse(text, &d, &err), FE_OK);   /* a name of 127 bytes */
    assert_int_equal((int)strlen(d.name), 127);
    memset(text, 'n', 128);
    snprintf(text + 128, sizeof text - 128, "=1");
    refused(text, "the name is longer than 127 bytes");
    int at = snprintf(text, sizeof text, "S=1");
    for (int k = 2; k <= 64; k++)
        at += snprintf(text + at, sizeof text - (size_t)at, ",%d", k);
    assert_int_equal(parse(text, &d, &err), FE_OK);   /* 64 values */
    assert_int_equal(d.n, 64);
    assert_true(d.values[63] == 64);
    snprintf(text + at, sizeof text - (size_t)at, ",65");
    refused(text, "at most 64 values");
    assert_int_equal(fe_dimarg_parse(NULL, 0, &d, &err), FE_EINPUT);
}

/* A model's dims text: each comma-separated NAME=V through the parser,
 * the error naming the whole text. */
static void model_dims(void **s)
{
    (void)s;
    static const char json[] =
        "{\"format\": \"fuseeng.model/1\", \"dims\": {\"B\": 2, \"S\": 4},"
        " \"tensors\": {\"x\": {\"shape\": [\"B\", \"S\"], \"dtype\": \"f32\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    fe_error err = {0};
    fe_model *m = fe_model_load_buffer(json, strlen(json), "m", "B=8,S=16", &err);
    if (!m)
        fail_msg("%s", err.message);
    assert_true(fe_model_dim(m, "B") == 8);
    assert_true(fe_model_dim(m, "S") == 16);
    fe_model_free(m);
    const char *bad[][2] = {
        {"B=8,S", "dims 'B=8,S': expected NAME=V"},
        {"B=0", "dims 'B=0': the value must be a positive integer"},
        {"B=8,,S=4", "dims 'B=8,,S=4': expected NAME=V"},
        {"B=99999999999999999999", "dims 'B=99999999999999999999': the value must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = (fe_error){0};
        assert_null(fe_model_load_buffer(json, strlen(json), "m", bad[i][0], &err));
        assert_int_equal(err.code, FE_EINPUT);
        if (!strstr(err.message, bad[i][1]))
            fail_msg("'%s': expected '%s', got '%s'", bad[i][0], bad[i][1], err.message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good),
        cmocka_unit_test(bad),
        cmocka_unit_test(model_dims),
    };
    return cmocka_run_group_tests_name("dimarg", tests, NULL, NULL);
}
