/* test_profile.c: profile files: exact keys before compat keys, single ops
 * by their exact key, write -> read round trip, InfiniCore's plain form. */
#include <unistd.h>

#include "testlib.h"
#include "groupkey.h"
#include "profile.h"

static fe_graph *swiglu(const char *dims)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
             "\"g\": {\"shape\": %s, \"dtype\": \"f32\", \"kind\": \"input\"},"
             "\"u\": {\"shape\": %s, \"dtype\": \"f32\", \"kind\": \"input\"}},"
             " \"nodes\": [{\"name\": \"s\", \"op\": \"silu\", \"inputs\": [\"g\"], \"outputs\": [\"a\"]},"
             "            {\"name\": \"m\", \"op\": \"mul\", \"inputs\": [\"a\", \"u\"], \"outputs\": [\"y\"]}],"
             " \"outputs\": [\"y\"]}", dims, dims);
    return tl_graph(json);
}

static void keys_and_lookup(void **s)
{
    (void)s;
    fe_graph *g = swiglu("[2048, 11008]"), *h = swiglu("[16, 16]");
    int32_t both[2] = {0, 1};
    char k1[17], k2[17], kg[17];
    assert_int_equal(fe_group_exact_key(g, both, 2, k1), FE_OK);
    assert_int_equal(fe_group_exact_key(h, both, 2, k2), FE_OK);
    assert_int_equal(strlen(k1), 16);
    assert_string_not_equal(k1, k2);   /* shapes are part of the key */
    assert_int_equal(fe_group_exact_key(g, both, 1, kg), FE_OK);
    char compat[32];
    fe_group_compat_key(g, both, 2, compat, sizeof compat);
    assert_string_equal(compat, "silu+mul");

    fe_error err = {0};
    fe_profile *p = fe_profile_new(&err);
    fe_profile_add(p, 0, "silu", 1.0, NULL);
    fe_profile_add(p, 0, kg, 0.25, "silu f32[2048,11008]");   /* exact beats the op name */
    fe_profile_add(p, 0, "mul", 0.5, NULL);
    fe_profile_add(p, 1, "silu+mul", 2.0, NULL);
    fe_profile_add(p, 1, k1, 0.6, "silu+mul f32[2048,11008] f32[2048,11008]");
    fe_profile_lookup r;
    fe_profile_lookup_group(p, g, both, 2, &r);
    assert_true(r.have_separate && r.have_fused && r.fused_exact);
    assert_true(r.separate_ms == 0.75 && r.fused_ms == 0.6);
    fe_profile_lookup_group(p, h, both, 2, &r);   /* other shapes: compat keys */
    assert_true(r.have_fused && !r.fused_exact);
    assert_true(r.separate_ms == 1.5 && r.fused_ms == 2.0);

    /* Round trip through a file. */
    char path[] = "/tmp/fe_profile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(fe_profile_write(p, path, "host", &err), FE_OK);
    fe_profile *q = fe_profile_read(path, &err);
    assert_non_null(q);
    assert_int_equal(fe_profile_count(q, 0), 3);
    assert_int_equal(fe_profile_count(q, 1), 2);
    fe_profile_lookup_group(q, g, both, 2, &r);
    assert_true(r.fused_exact && r.fused_ms == 0.6 && r.separate_ms == 0.75);
    unlink(path);
    fe_profile_free(p);
    fe_profile_free(q);
    fe_graph_free(g);
    fe_graph_free(h);
}

static void infinicore_form(void **s)
{
    (void)s;
    char path[] = "/tmp/fe_profile_XXXXXX";
    int fd = mkstemp(path);
    const char *text = "{\"single\": {\"silu\": 0.012, \"mul\": 0.010}, \"fused\": {\"silu+mul\": 0.013}}";
    assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    fe_error err = {0};
    fe_profile *p = fe_profile_read(path, &err);
    assert_non_null(p);
    fe_graph *g = swiglu("[8, 8]");
    int32_t both[2] = {0, 1};
    fe_profile_lookup r;
    fe_profile_lookup_group(p, g, both, 2, &r);
    assert_true(r.have_separate && r.have_fused);
    assert_true(r.separate_ms > 0.0219 && r.separate_ms < 0.0221);
    assert_true(r.fused_ms == 0.013);
    fe_graph_free(g);
    fe_profile_free(p);
    unlink(path);
}

/* A key in both tables with a shapes text (a file may have it) is written
 * once in meta.shapes, so the file reads back. Found by tests/fuzz. */
static void key_in_both_tables(void **s)
{
    (void)s;
    char path[] = "/tmp/fe_profile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    fe_error err = {0};
    fe_profile *p = fe_profile_new(&err);
    assert_int_equal(fe_profile_add(p, 0, "ba84ea825ac906e3", 0.5, "silu f32[8]"), FE_OK);
    assert_int_equal(fe_profile_add(p, 1, "ba84ea825ac906e3", 0.7, "silu f32[8]"), FE_OK);
    assert_int_equal(fe_profile_write(p, path, "host", &err), FE_OK);
    fe_profile *q = fe_profile_read(path, &err);
    if (!q)
        fail_msg("%s", err.message);
    assert_int_equal(fe_profile_count(q, 0), 1);
    assert_int_equal(fe_profile_count(q, 1), 1);
    fe_profile_free(q);
    fe_profile_free(p);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(keys_and_lookup), cmocka_unit_test(infinicore_form),
                                       cmocka_unit_test(key_in_both_tables)};
    return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
