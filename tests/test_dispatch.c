/* test_dispatch.c: dispatch tables through the public header (seed 004's
 * DAFE): a table of plans made at S=128 and S=512 written as
 * fuseeng.dispatch/1, read back by fe_saved_plan_read for several values of
 * S (the bucket that serves each, the model loaded at the value), its text
 * report, and bad input: NULLs, buckets out of order, a report of another
 * plan, a plan of another model, an unknown format, a plain plan read with
 * fe_plan_read-style callers that cannot pick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fuseeng_cli.h"

#define LLAMA "examples/models/llama2_7b_layer.json"
#define GPT2 "examples/models/gpt2_block.json"

static char path[64];

static void assert_input_error(const fe_error *err, const char *text)
{
    assert_int_equal(err->code, FE_EINPUT);
    if (!strstr(err->message, text))
        fail_msg("message '%s' does not contain '%s'", err->message, text);
}

static fe_model *load(const char *file, const char *dim, int64_t v)
{
    fe_error err = {0};
    fe_model *m = fe_model_load_dims(file, 1, &dim, &v, &err);
    if (!m)
        fail_msg("model: %s", err.message);
    return m;
}

/* One bucket: the model at S=v, planned by gcu_tlf, and its report. */
typedef struct made {
    fe_model *m;
    fe_plan *p;
    fe_report *r;
} made;

static made plan_at(fe_engine *e, fe_policy *pol, const char *file, int64_t v)
{
    fe_error err = {0};
    made b = {load(file, "S", v), NULL, NULL};
    if (!(b.p = fe_policy_plan(pol, b.m, NULL, &err)) || !(b.r = fe_engine_simulate(e, b.p, &err)))
        fail_msg("plan: %s", err.message);
    return b;
}

static void made_free(made *b)
{
    fe_report_free(b->r);
    fe_plan_free(b->p);
    fe_model_free(b->m);
}

static void table(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    assert_non_null(e);
    fe_policy *pol = fe_engine_load_policy(e, "gcu_tlf", &err);
    assert_non_null(pol);
    made b128 = plan_at(e, pol, LLAMA, 128), b512 = plan_at(e, pol, LLAMA, 512);
    made gpt = plan_at(e, pol, GPT2, 128);

    fe_dispatch *d = fe_dispatch_new("S", &err);
    assert_non_null(d);
    assert_int_equal(fe_dispatch_add(d, 128, b128.p, b512.r, &err), FE_EINPUT);
    assert_input_error(&err, "the report is of another plan");
    assert_int_equal(fe_dispatch_add(d, 128, b128.p, b128.r, &err), FE_OK);
    assert_int_equal(fe_dispatch_add(d, 128, b512.p, b512.r, &err), FE_EINPUT);
    assert_input_error(&err, "must be positive and above the bucket before it");
    assert_int_equal(fe_dispatch_add(d, 512, gpt.p, gpt.r, &err), FE_EINPUT);
    assert_input_error(&err, "every bucket's plan must be of model 'llama2-7b-layer'");
    assert_int_equal(fe_dispatch_add(d, 512, b512.p, b512.r, &err), FE_OK);
    assert_null(fe_dispatch_format(d, FE_FORMAT_CSV, &err));
    assert_input_error(&err, "is not text or JSON");

    char *text = fe_dispatch_format(d, FE_FORMAT_TEXT, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "dispatch   2 buckets of S on gcu"));
    assert_non_null(strstr(text, "  S=512        129..512"));
    fe_free(text);
    char *json = fe_dispatch_format(d, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"format\": \"fuseeng.dispatch/1\""));
    assert_int_equal(fe_write_file(path, "the table", json, &err), FE_OK);
    fe_free(json);

    /* Each value reads the plan of the bucket that serves it, at the value. */
    const int64_t values[] = {1, 128, 129, 300, 512};
    const int64_t want[] = {128, 128, 512, 512, 512};
    for (int i = 0; i < 5; i++) {
        const char *name = "S", *dim = NULL;
        fe_read_options o = {1, &name, &values[i], NULL, 0};
        fe_engine *e2 = fe_engine_new(NULL, &err);
        fe_saved_plan *s = fe_saved_plan_read(e2, path, LLAMA, &o, &err);
        if (!s)
            fail_msg("read S=%lld: %s", (long long)values[i], err.message);
        assert_int_equal(fe_saved_plan_bucket(s, &dim), want[i]);
        assert_string_equal(dim, "S");
        assert_int_equal(fe_model_dim(fe_saved_plan_model(s), "S"), values[i]);
        const fe_plan *want_plan = want[i] == 128 ? b128.p : b512.p;
        assert_int_equal(fe_plan_groups(fe_saved_plan_plan(s)), fe_plan_groups(want_plan));
        fe_saved_plan_free(s);
        fe_engine_free(e2);
    }
    {
        const char *name = "S";
        int64_t big = 513;
        fe_read_options o = {1, &name, &big, NULL, 0};
        assert_null(fe_saved_plan_read(e, path, LLAMA, &o, &err));
        assert_input_error(&err, "no bucket serves S=513: the largest bucket is S=512");
        assert_null(fe_saved_plan_read(e, path, "examples/bench/swiglu.json", NULL, &err));
        assert_input_error(&err, "the buckets are values of dim 'S', which model 'swiglu' does not have");
    }
    fe_dispatch_free(d);
    made_free(&b128);
    made_free(&b512);
    made_free(&gpt);
    fe_policy_free(pol);
    fe_engine_free(e);
}

static void nulls(void **state)
{
    (void)state;
    fe_error err = {0};
    assert_null(fe_dispatch_new(NULL, &err));
    assert_input_error(&err, "fe_dispatch_new: the dim's name is NULL");
    assert_null(fe_dispatch_new("", &err));
    assert_input_error(&err, "the dim's name must have 1 to 127 bytes");
    fe_dispatch *d = fe_dispatch_new("B", &err);
    assert_int_equal(fe_dispatch_add(d, 1, NULL, NULL, &err), FE_EINPUT);
    assert_null(fe_dispatch_format(d, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "the table has no bucket");
    assert_null(fe_dispatch_format(NULL, FE_FORMAT_TEXT, &err));
    assert_int_equal(fe_saved_plan_bucket(NULL, NULL), 0);
    fe_dispatch_free(d);
    fe_dispatch_free(NULL);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/test_dispatch.%d.json", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table),
        cmocka_unit_test(nulls),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    return rc;
}
