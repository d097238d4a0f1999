/* test_api.c: the calls of the public headers that the fuseeng command is
 * built on (core/api), through fuseeng_cli.h alone: models and ops, planning
 * with statistics, plan text and JSON, plan files read back for a model,
 * simulation, execution, timing and profiles, A/B comparison, scripts;
 * and every kind of bad input (NULL arguments, a missing file, a plan for
 * another model, an illegal plan, an unknown format) giving FE_EINPUT with
 * a message naming what is wrong. */
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

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_api.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp(const char *name)
{
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The call failed with FE_EINPUT and a message containing text. */
static void assert_input_error(const fe_error *err, const char *text)
{
    assert_int_equal(err->code, FE_EINPUT);
    if (!strstr(err->message, text))
        fail_msg("message '%s' does not contain '%s'", err->message, text);
}

static fe_model *llama(int64_t s)
{
    const char *names[] = {"S"};
    int64_t values[] = {s};
    fe_error err = {0};
    fe_model *m = fe_model_load_dims(LLAMA, 1, names, values, &err);
    if (!m)
        fail_msg("model: %s", err.message);
    return m;
}

static fe_engine *engine(void)
{
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        fail_msg("engine: %s", err.message);
    return e;
}

static fe_plan *plan_with(fe_engine *e, const char *policy, const fe_model *m, fe_plan_stats *st)
{
    fe_error err = {0};
    fe_policy *p = fe_engine_load_policy(e, policy, &err);
    if (!p)
        fail_msg("policy: %s", err.message);
    fe_plan *plan = fe_policy_plan(p, m, st, &err);
    if (!plan)
        fail_msg("plan: %s", err.message);
    fe_policy_free(p);
    return plan;
}

static void models(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_model *m = llama(64);
    assert_int_equal(fe_model_dim(m, "S"), 64);
    assert_int_equal(fe_model_dim(m, "B"), 1);
    assert_int_equal(fe_model_dim(m, "nosuch"), 0);
    assert_string_equal(fe_model_file(m), LLAMA);
    char *text = fe_model_format(m, FE_FORMAT_TEXT, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, ": ok\n  model        llama2-7b-layer\n"));
    fe_free(text);
    char *json = fe_model_format(m, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"model\": \"llama2-7b-layer\""));
    fe_free(json);
    assert_null(fe_model_format(m, FE_FORMAT_SVG, &err));
    assert_input_error(&err, "neither text nor JSON");
    fe_model_free(m);

    assert_null(fe_model_load_dims(tmp("nosuch.json"), 0, NULL, NULL, &err));
    assert_input_error(&err, "nosuch.json");
    assert_null(fe_model_load_dims(NULL, 0, NULL, NULL, &err));
    assert_input_error(&err, "fe_model_load_dims: the path is NULL");
    assert_null(fe_model_load_dims(LLAMA, 1, NULL, NULL, &err));
    assert_input_error(&err, "without names and values");
    assert_null(fe_model_format(NULL, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "the model is NULL");
    assert_int_equal(fe_model_dim(NULL, "S"), 0);
}

static void ops(void **state)
{
    (void)state;
    fe_error err = {0};
    char *all = fe_ops_format(NULL, &err), *one = fe_ops_format("rms_norm", &err);
    assert_non_null(all);
    assert_non_null(one);
    assert_non_null(strstr(all, "\nsilu "));
    assert_non_null(strstr(one, "\nrms_norm "));
    assert_null(strstr(one, "\nsilu "));
    fe_free(all);
    fe_free(one);
    assert_null(fe_ops_format("nosuch", &err));
    assert_input_error(&err, "no op 'nosuch'; known ops are: ");
}

static void planning(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_model *m = llama(64);
    fe_plan_stats st;
    memset(&st, 0xff, sizeof st);
    fe_plan *p = plan_with(e, "static_rules", m, &st);
    assert_true(st.hook_calls > 0);
    assert_string_equal(st.fault, "");
    assert_string_equal(fe_plan_policy(p), "static_rules");
    assert_true(fe_plan_groups(p) < fe_model_nodes(m));

    /* Without extras, the JSON is fe_plan_to_json's. */
    char *a = fe_plan_to_json(p, &err), *b = fe_plan_format(p, NULL, NULL, NULL, FE_FORMAT_JSON, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    fe_free(a);
    fe_free(b);
    char *text = fe_plan_format(p, &st, NULL, NULL, FE_FORMAT_TEXT | FE_WITH_STATS, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "policy     static_rules\n"));
    assert_non_null(strstr(text, "\nstats      "));
    fe_free(text);
    char *log = fe_plan_format(p, NULL, NULL, NULL, FE_FORMAT_DECISIONS, &err);
    assert_non_null(log);
    assert_memory_equal(log, "decisions (", 11);
    fe_free(log);
    char *dot = fe_plan_format(p, NULL, NULL, NULL, FE_FORMAT_DOT, &err);
    assert_non_null(dot);
    assert_memory_equal(dot, "digraph plan {", 14);
    fe_free(dot);
    assert_null(fe_plan_format(p, NULL, NULL, NULL, FE_FORMAT_CSV, &err));
    assert_input_error(&err, "fe_plan_format: format 2");

    fe_plan *u = fe_model_unfused(m, &err);
    assert_non_null(u);
    assert_int_equal(fe_plan_groups(u), fe_model_nodes(m));
    assert_null(fe_plan_policy(u));
    fe_plan_free(u);

    assert_null(fe_policy_plan(NULL, m, NULL, &err));
    assert_input_error(&err, "fe_policy_plan: the policy is NULL");
    assert_null(fe_model_unfused(NULL, &err));
    assert_input_error(&err, "the model is NULL");
    assert_null(fe_plan_format(NULL, NULL, NULL, NULL, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "the plan is NULL");
    fe_plan_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

static void simulation(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_model *m = llama(2048);
    fe_plan *p = plan_with(e, "gcu_tlf", m, NULL);
    assert_string_equal(fe_engine_machine(e), "gcu");
    assert_non_null(fe_engine_machine_description(e));
    fe_report *r = fe_engine_simulate(e, p, &err);
    assert_non_null(r);
    fe_figures fig, base;
    fe_report_figures(r, 0, &fig);
    fe_report_figures(r, 1, &base);
    assert_int_equal(fig.kernels + fig.extern_calls + fig.views, fe_plan_groups(p));
    assert_int_equal(base.kernels + base.extern_calls + base.views, fe_model_nodes(m));
    assert_true(base.extern_calls > 0 && base.views > 0);   /* matmuls; reshapes */
    assert_true(fig.time_s > 0 && fig.time_s < base.time_s);
    assert_true(fig.l3_bytes > 0 && fig.l3_bytes < base.l3_bytes);

    char *text = fe_report_format(r, NULL, FE_FORMAT_TEXT | FE_WITH_GROUPS, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "\ngroups\n"));
    fe_free(text);
    char *json = fe_report_format(r, NULL, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"versus_unfused\""));
    assert_null(strstr(json, "\"setup\""));
    fe_free(json);
    char *trace = fe_report_format(r, NULL, FE_FORMAT_TRACE, &err);
    assert_non_null(trace);
    assert_non_null(strstr(trace, "traceEvents"));
    fe_free(trace);
    assert_null(fe_report_format(r, NULL, FE_FORMAT_DOT, &err));
    assert_input_error(&err, "fe_report_format: format 5");

    /* A plan file carries the simulated figures in its summary. */
    char *file = fe_plan_format(p, NULL, r, NULL, FE_FORMAT_JSON | FE_WITH_VERSUS, &err);
    assert_non_null(file);
    assert_non_null(strstr(file, "\"sim_us\""));
    assert_non_null(strstr(file, "\"versus_unfused\""));
    fe_free(file);

    fe_plan *u = fe_model_unfused(m, &err);
    assert_null(fe_plan_format(u, NULL, r, NULL, FE_FORMAT_JSON, &err));
    assert_input_error(&err, "fe_plan_format: the report is of another plan");
    fe_plan_free(u);
    assert_null(fe_engine_simulate(e, NULL, &err));
    assert_input_error(&err, "fe_engine_simulate: the plan is NULL");
    assert_null(fe_report_format(NULL, NULL, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "the report is NULL");
    fe_report_figures(NULL, 0, &fig);
    assert_int_equal(fig.kernels, 0);
    fe_report_free(r);
    fe_plan_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* Write p of m to path as a plan file (with its figures). */
static void save(fe_engine *e, const fe_plan *p, const char *path)
{
    fe_error err = {0};
    fe_report *r = fe_engine_simulate(e, p, &err);
    assert_non_null(r);
    char *json = fe_plan_format(p, NULL, r, NULL, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_int_equal(fe_write_file(path, "the plan", json, &err), FE_OK);
    fe_free(json);
    fe_report_free(r);
}

static void plan_files(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_model *m = llama(256);
    fe_plan *p = plan_with(e, "gcu_tlf", m, NULL);
    const char *path = tmp("plan.json");
    save(e, p, path);

    /* Read back: the model at the plan's dims (S=256, not the file's 2048). */
    fe_engine *e2 = engine();
    fe_saved_plan *s = fe_saved_plan_read(e2, path, LLAMA, NULL, &err);
    if (!s)
        fail_msg("read: %s", err.message);
    assert_int_equal(fe_model_dim(fe_saved_plan_model(s), "S"), 256);
    assert_int_equal(fe_plan_groups(fe_saved_plan_plan(s)), fe_plan_groups(p));
    assert_null(fe_saved_plan_made_for(s));
    char *a = fe_plan_to_json(p, &err), *b = fe_plan_to_json(fe_saved_plan_plan(s), &err);
    assert_non_null(a);
    assert_non_null(b);
    /* The same groups; the decisions stay behind (a plan file holds none). */
    char *ga = strstr(a, "\"groups\""), *gb = strstr(b, "\"groups\"");
    char *da = strstr(ga, "\"decisions\""), *db = strstr(gb, "\"decisions\"");
    assert_int_equal(da - ga, db - gb);
    assert_memory_equal(ga, gb, (size_t)(da - ga));
    fe_free(a);
    fe_free(b);
    char *setup = fe_saved_plan_format(s, FE_FORMAT_TEXT, &err);
    assert_non_null(setup);
    assert_non_null(strstr(setup, "dims       B=1, S=256, as the plan records\n"));
    assert_non_null(strstr(setup, "machine    gcu, as the plan records\n"));
    fe_free(setup);
    fe_report *r = fe_engine_simulate(e2, fe_saved_plan_plan(s), &err);
    assert_non_null(r);
    char *json = fe_report_format(r, s, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"setup\""));
    assert_non_null(strstr(json, "\"machine_from\": \"plan\""));
    fe_free(json);
    fe_report_free(r);
    fe_saved_plan_free(s);

    /* The caller's dims and machine override the plan's. */
    const char *dn[] = {"S"};
    int64_t dv[] = {128};
    fe_read_options o = {1, dn, dv, "gcu_big", 0};
    s = fe_saved_plan_read(e2, path, LLAMA, &o, &err);
    if (!s)
        fail_msg("read: %s", err.message);
    assert_int_equal(fe_model_dim(fe_saved_plan_model(s), "S"), 128);
    assert_string_equal(fe_engine_machine(e2), "gcu_big");
    fe_saved_plan_free(s);

    /* A plan for another model is refused, unless asked; then the name it
     * was made for is reported (node names still have to match). */
    assert_null(fe_saved_plan_read(e2, path, GPT2, NULL, &err));
    assert_input_error(&err, "the plan is for model 'llama2-7b-layer', not 'gpt2-block'");
    FILE *in = fopen(LLAMA, "r");
    assert_non_null(in);
    static char src[1 << 16];
    size_t n = fread(src, 1, sizeof src - 1, in);
    fclose(in);
    src[n] = '\0';
    char *at = strstr(src, "\"llama2-7b-layer\"");
    assert_non_null(at);
    memcpy(at, "\"llama2-7b-other\"", 17);
    const char *renamed = tmp("renamed.json");
    write_text(renamed, src);
    assert_null(fe_saved_plan_read(e2, path, renamed, NULL, &err));
    assert_input_error(&err, "--ignore-model-name");
    fe_read_options force = {.ignore_model_name = 1};
    s = fe_saved_plan_read(e2, path, renamed, &force, &err);
    if (!s)
        fail_msg("read: %s", err.message);
    assert_string_equal(fe_saved_plan_made_for(s), "llama2-7b-layer");
    fe_saved_plan_free(s);

    /* An illegal plan (a node in no group), a missing file, bad JSON. */
    const char *bad = tmp("illegal.json");
    write_text(bad, "{\"format\": \"fuseeng.plan/1\", \"model\": \"llama2-7b-layer\",\n"
                    " \"groups\": [{\"id\": 0, \"nodes\": [\"input_layernorm\"]}]}\n");
    assert_null(fe_saved_plan_read(e2, bad, LLAMA, NULL, &err));
    assert_input_error(&err, "illegal.json");
    assert_null(fe_saved_plan_read(e2, tmp("nosuch.json"), LLAMA, NULL, &err));
    assert_input_error(&err, "nosuch.json: cannot open");
    const char *broken = tmp("broken.json");
    write_text(broken, "{\"format\": \"fuseeng.plan/1\",\n \"groups\": [\n");
    assert_null(fe_saved_plan_read(e2, broken, LLAMA, NULL, &err));
    assert_input_error(&err, "broken.json:");
    const char *mach = tmp("machine.json");
    write_text(mach, "{\"format\": \"fuseeng.plan/1\", \"machine\": \"../../etc/passwd\", \"groups\": []}\n");
    assert_null(fe_saved_plan_read(e2, mach, LLAMA, NULL, &err));
    assert_input_error(&err, "\"machine\"");

    assert_null(fe_saved_plan_read(NULL, path, LLAMA, NULL, &err));
    assert_input_error(&err, "the engine is NULL");
    assert_null(fe_saved_plan_read(e2, NULL, LLAMA, NULL, &err));
    assert_input_error(&err, "the plan file's path is NULL");
    assert_null(fe_saved_plan_read(e2, path, NULL, NULL, &err));
    assert_input_error(&err, "the model file's path is NULL");
    fe_read_options nameless = {1, NULL, dv, NULL, 0};
    assert_null(fe_saved_plan_read(e2, path, LLAMA, &nameless, &err));
    assert_input_error(&err, "fe_saved_plan_read: 1 dims");
    assert_null(fe_saved_plan_format(NULL, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "the saved plan is NULL");
    assert_null(fe_saved_plan_model(NULL));

    assert_int_equal(fe_write_file(tmp("nosuch/dir/p.json"), "the plan", "{}", &err), FE_EINPUT);
    assert_input_error(&err, "cannot write the plan");
    assert_int_equal(fe_write_file(NULL, "the plan", "{}", &err), FE_EINPUT);
    assert_input_error(&err, "fe_write_file: the path is NULL");

    fe_plan_free(p);
    fe_model_free(m);
    fe_engine_free(e2);
    fe_engine_free(e);
}

static void execution(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_model *m = llama(8);
    fe_plan *p = plan_with(e, "fuse_all", m, NULL);
    fe_execute_options o = {.seed = 3, .no_timing = 1};
    fe_result *x = fe_plan_execute(p, &o, &err);
    if (!x)
        fail_msg("execute: %s", err.message);
    assert_true(fe_result_ok(x));
    assert_int_equal(fe_result_check(x, &err), FE_OK);
    assert_true(fe_result_ms(x, 0) == 0);
    char *text = fe_result_format(x, FE_FORMAT_TEXT, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "seed 3)"));
    assert_non_null(strstr(text, " ok\n"));
    fe_free(text);
    char *json = fe_result_format(x, FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"ok\": true"));
    fe_free(json);
    char *file = fe_plan_format(p, NULL, NULL, x, FE_FORMAT_JSON, &err);
    assert_non_null(file);
    assert_non_null(strstr(file, "\"executed\""));
    fe_free(file);
    fe_result_free(x);

    /* Timed, with defaults but a short budget. */
    fe_execute_options timed = {.budget = 0.01};
    x = fe_plan_execute(p, &timed, &err);
    assert_non_null(x);
    assert_true(fe_result_ms(x, 0) > 0 && fe_result_ms(x, 1) > 0);
    /* The result belongs to its plan. */
    fe_plan *other = fe_model_unfused(m, &err);
    assert_null(fe_plan_format(other, NULL, NULL, x, FE_FORMAT_JSON, &err));
    assert_input_error(&err, "the result is of another plan");
    fe_plan_free(other);
    fe_result_free(x);

    fe_execute_options bad = {.rtol = 2};
    assert_null(fe_plan_execute(p, &bad, &err));
    assert_input_error(&err, "rtol 2");
    fe_execute_options nodev = {.device = 7};
    assert_null(fe_plan_execute(p, &nodev, &err));
    assert_input_error(&err, "device 7 FE_DEVICE_CPU or FE_DEVICE_CUDA");
    /* The GPU through the same call: where the driver cannot be opened (CI),
     * an input error naming it, and no result; on a GPU machine, a result
     * whose outputs agree with the CPU's reference. */
    fe_execute_options gpu = {.no_timing = 1, .device = FE_DEVICE_CUDA};
    fe_result *xg = fe_plan_execute(p, &gpu, &err);
    if (xg) {
        assert_true(fe_result_ok(xg));
        fe_result_free(xg);
    } else {
        assert_input_error(&err, "--device cuda: ");
    }
    assert_null(fe_plan_execute(NULL, NULL, &err));
    assert_input_error(&err, "fe_plan_execute: the plan is NULL");
    assert_int_equal(fe_result_check(NULL, &err), FE_EINPUT);
    assert_false(fe_result_ok(NULL));
    fe_plan_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

static void timing(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_model *m = llama(8);
    fe_plan *p = plan_with(e, "static_rules", m, NULL);
    fe_timing_options o = {.budget = 0.005, .totals = 1};
    fe_timing *t = fe_plan_time(p, &o, &err);
    if (!t)
        fail_msg("time: %s", err.message);
    char *text = fe_timing_format(t, NULL, FE_FORMAT_TEXT, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "plan       static_rules ("));
    assert_non_null(strstr(text, "\ntotals\n"));
    fe_free(text);
    char *json = fe_timing_format(t, "mine", FE_FORMAT_JSON, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"format\": \"fuseeng.bench/1\""));
    assert_non_null(strstr(json, "\"plan\": \"mine\""));
    fe_free(json);
    fe_profile_info info = {0};
    assert_int_equal(fe_timing_write_profile(t, tmp("profile.json"), &info, &err), FE_OK);
    assert_true(info.single > 0 && info.fused > 0 && info.groups > 0);
    assert_int_equal(fe_engine_set_profile(e, tmp("profile.json"), &err), FE_OK);
    assert_int_equal(fe_timing_write_profile(t, tmp("nosuch/p.json"), NULL, &err), FE_EINPUT);
    assert_non_null(strstr(fe_threads(), "thread"));
    fe_timing_free(t);

    fe_timing_options bad = {.budget = -1};
    assert_null(fe_plan_time(p, &bad, &err));
    assert_input_error(&err, "fe_plan_time: budget -1");
    assert_null(fe_plan_time(NULL, NULL, &err));
    assert_input_error(&err, "the plan is NULL");
    assert_null(fe_timing_format(NULL, NULL, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "the timing is NULL");
    fe_plan_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

static void ab(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_policy *pols[2];
    assert_non_null(pols[0] = fe_engine_load_policy(e, "no_fusion", &err));
    assert_non_null(pols[1] = fe_engine_load_policy(e, "fuse_all", &err));
    const char *models[] = {LLAMA, GPT2};
    const char *dn[] = {"S", "B"};
    int64_t dv[] = {64, 1};
    fe_ab_options o = {2, models, 2, pols, 2, dn, dv, 0, 0};
    fe_ab *a = fe_engine_ab(e, &o, &err);
    if (!a)
        fail_msg("ab: %s", err.message);
    assert_int_equal(fe_ab_wrong(a), 0);
    assert_int_equal(fe_ab_faults(a), 0);
    assert_null(fe_ab_fault(a, 0));
    char *text = fe_ab_format(a, FE_FORMAT_TEXT, &err);
    assert_non_null(text);
    assert_non_null(strstr(text, "machine gcu: "));
    assert_non_null(strstr(text, "\ngpt2-block (unfused "));
    fe_free(text);
    char *csv = fe_ab_format(a, FE_FORMAT_CSV, &err), *svg = fe_ab_format(a, FE_FORMAT_SVG, &err),
         *json = fe_ab_format(a, FE_FORMAT_JSON, &err);
    assert_non_null(csv);
    assert_non_null(svg);
    assert_non_null(json);
    assert_memory_equal(csv, "model,policy,kernels", 20);
    assert_memory_equal(svg, "<svg", 4);
    assert_non_null(strstr(json, "\"policy\": \"fuse_all\""));
    fe_free(csv);
    fe_free(svg);
    fe_free(json);
    assert_null(fe_ab_format(a, FE_FORMAT_TRACE, &err));
    assert_input_error(&err, "fe_ab_format: format 4");
    fe_ab_free(a);

    const char *missing[] = {tmp("nosuch.json")};
    fe_ab_options bad_model = {1, missing, 2, pols, 0, NULL, NULL, 0, 0};
    assert_null(fe_engine_ab(e, &bad_model, &err));
    assert_input_error(&err, "nosuch.json");
    fe_ab_options no_policy = {1, models, 0, pols, 0, NULL, NULL, 0, 0};
    assert_null(fe_engine_ab(e, &no_policy, &err));
    assert_input_error(&err, "at least one model and one policy");
    assert_null(fe_engine_ab(e, NULL, &err));
    assert_input_error(&err, "fe_engine_ab: the options struct is NULL");
    fe_policy_free(pols[0]);
    fe_policy_free(pols[1]);
    fe_engine_free(e);
}

/* Suites: lists or a file, sharded and merged back to the same JSON, and
 * the diff of two policies' plans. */
static void ab_suite(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    const char *models[] = {LLAMA, GPT2}, *pols[] = {"no_fusion", "fuse_all",
                                                     "static_rules{max_graph_size=2}"};
    const char *dims[] = {"S=64,128", "B=1"}, *machines[] = {"gcu", "gcu_big"};
    fe_ab_suite_options so = {2, models, 3, pols, 0, NULL, 2, dims, 2, machines, NULL};
    fe_ab_suite *s = fe_ab_suite_new(e, &so, &err);
    if (!s)
        fail_msg("suite: %s", err.message);
    assert_int_equal(fe_ab_suite_rows(s), 8);   /* 2 models x 2 S x 2 machines */
    assert_int_equal(fe_ab_suite_cols(s), 3);
    fe_ab *whole = fe_engine_ab_suite(e, s, NULL, &err);
    assert_non_null(whole);
    assert_int_equal(fe_ab_failed(whole), 0);
    char *md = fe_ab_format(whole, FE_FORMAT_MD, &err), *page = fe_ab_format(whole, FE_FORMAT_HTML, &err);
    assert_non_null(strstr(md, "| model | policy |"));
    assert_memory_equal(page, "<!DOCTYPE html>", 15);
    fe_free(md);
    fe_free(page);
    char *want = fe_ab_format(whole, FE_FORMAT_JSON, &err);
    assert_non_null(strstr(want, "\"dims\": \"S=128\""));
    assert_non_null(strstr(want, "\"geomean\""));
    const char *paths[3] = {tmp("p1.json"), tmp("p2.json"), tmp("p3.json")};
    char p1[4096], p2[4096], p3[4096];
    snprintf(p1, sizeof p1, "%s", paths[0]);
    snprintf(p2, sizeof p2, "%s", paths[1]);
    snprintf(p3, sizeof p3, "%s", paths[2]);
    const char *parts[3] = {p3, p1, p2};
    for (int i = 0; i < 3; i++) {
        fe_ab_run_options ro = {.shard = i + 1, .nshards = 3};
        fe_ab *a = fe_engine_ab_suite(e, s, &ro, &err);
        assert_non_null(a);
        char *t = fe_ab_format(a, FE_FORMAT_PART, &err);
        assert_int_equal(fe_write_file(i == 0 ? p1 : i == 1 ? p2 : p3, "a shard", t, &err), FE_OK);
        fe_free(t);
        fe_ab_free(a);
    }
    fe_ab *merged = fe_ab_merge(3, parts, &err);
    if (!merged)
        fail_msg("merge: %s", err.message);
    char *got = fe_ab_format(merged, FE_FORMAT_JSON, &err);
    assert_string_equal(got, want);
    fe_free(got);
    fe_free(want);
    fe_ab_free(merged);
    assert_null(fe_ab_merge(2, parts, &err));
    assert_input_error(&err, "is missing");
    fe_ab_run_options bad = {.shard = 4, .nshards = 3};
    assert_null(fe_engine_ab_suite(e, s, &bad, &err));
    assert_input_error(&err, "shard 4/3");
    /* truth files: a count without paths, or with a shard, is refused; a
     * path that is no truth file names itself */
    fe_ab_run_options nopaths = {.ntruths = 1};
    assert_null(fe_engine_ab_suite(e, s, &nopaths, &err));
    assert_input_error(&err, "truth files");
    char tpath[256];
    snprintf(tpath, sizeof tpath, "%s", tmp("nosuch.truth.json"));
    const char *truths[1] = {tpath};
    fe_ab_run_options sharded = {.shard = 1, .nshards = 3, .ntruths = 1, .truths = truths};
    assert_null(fe_engine_ab_suite(e, s, &sharded, &err));
    assert_input_error(&err, "no shard");
    fe_ab_run_options missing = {.ntruths = 1, .truths = truths};
    assert_null(fe_engine_ab_suite(e, s, &missing, &err));
    assert_input_error(&err, "nosuch.truth.json");
    fe_ab_free(whole);
    fe_ab_suite_free(s);

    fe_policy *a = fe_engine_load_policy(e, "no_fusion", &err), *b = fe_engine_load_policy(e, "fuse_all", &err);
    char *d = fe_engine_ab_diff(e, LLAMA, "S=64", a, b, FE_FORMAT_TEXT, &err);
    assert_non_null(d);
    assert_non_null(strstr(d, "region 1: "));
    fe_free(d);
    assert_null(fe_engine_ab_diff(e, LLAMA, NULL, a, NULL, FE_FORMAT_TEXT, &err));
    assert_input_error(&err, "policy b is NULL");
    fe_policy_free(a);
    fe_policy_free(b);
    const char *bad_pols[] = {"fuse_all", "nosuch_policy"};
    fe_ab_suite_options bo = {1, models, 2, bad_pols, 0, NULL, 0, NULL, 0, NULL, NULL};
    assert_null(fe_ab_suite_new(e, &bo, &err));
    assert_input_error(&err, "the command line: --policy: policy 'nosuch_policy' not found");
    assert_null(fe_ab_suite_read(e, tmp("nosuch_suite.json"), NULL, &err));
    assert_input_error(&err, "nosuch_suite.json");
    fe_engine_free(e);
}

/* A policy names its source; a combination leaves it to its children. */
static void sources(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    fe_policy *pols[2];
    assert_non_null(pols[0] = fe_engine_load_policy(e, "gcu_tlf", &err));
    assert_non_null(pols[1] = fe_engine_load_policy(e, "static_rules", &err));
    assert_non_null(strstr(fe_policy_source(pols[0]), "seed 004"));
    assert_non_null(strstr(fe_policy_source(pols[1]), "seed 000"));
    fe_policy *both = fe_engine_combine(e, "all", pols, 2, &err);
    assert_non_null(both);
    assert_string_equal(fe_policy_source(both), "");
    static const char bare[] = "local fe = require 'fuseeng'\n"
                               "return fe.policy { name = 'bare', driver = 'greedy' }\n";
    fe_policy *b = fe_engine_load_policy_buffer(e, bare, sizeof bare - 1, "bare.lua", &err);
    assert_non_null(b);
    assert_string_equal(fe_policy_source(b), "");
    static const char wrong[] = "local fe = require 'fuseeng'\n"
                                "return fe.policy { name = 'w', driver = 'greedy', source = 4 }\n";
    assert_null(fe_engine_load_policy_buffer(e, wrong, sizeof wrong - 1, "w.lua", &err));
    assert_input_error(&err, "source");
    fe_policy_free(b);
    fe_policy_free(both);
    fe_policy_free(pols[0]);
    fe_policy_free(pols[1]);
    fe_engine_free(e);
}

static void scripts(void **state)
{
    (void)state;
    fe_error err = {0};
    const char *ok = tmp("ok.lua"), *bad = tmp("bad.lua");
    write_text(ok, "local fe = require 'fuseeng'\nassert(arg[1] == 'x' and arg[2] == 'y')\nreturn 3\n");
    write_text(bad, "local x = 1\nerror('broken on purpose')\n");
    const char *args[] = {"x", "y"};
    int status = -1;
    assert_int_equal(fe_script_run(ok, 2, args, NULL, &status, &err), FE_OK);
    assert_int_equal(status, 3);
    assert_int_equal(fe_script_run(bad, 0, NULL, NULL, &status, &err), FE_EINPUT);
    assert_input_error(&err, "bad.lua:2: broken on purpose");
    assert_int_equal(fe_script_run(tmp("nosuch.lua"), 0, NULL, NULL, &status, &err), FE_EINPUT);
    assert_input_error(&err, "nosuch.lua");
    assert_int_equal(fe_script_run(NULL, 0, NULL, NULL, &status, &err), FE_EINPUT);
    assert_input_error(&err, "fe_script_run: the path is NULL");
    assert_int_equal(fe_script_run(ok, 2, NULL, NULL, &status, &err), FE_EINPUT);
    assert_input_error(&err, "2 arguments without an array");
}

static void engines(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_engine *e = engine();
    assert_non_null(fe_engine_home(e));
    assert_null(fe_engine_home(NULL));
    assert_int_equal(fe_engine_set_machine(e, "nosuch_machine", &err), FE_EINPUT);
    assert_input_error(&err, "nosuch_machine");
    assert_int_equal(fe_engine_set_profile(e, tmp("nosuch.json"), &err), FE_EINPUT);
    assert_input_error(&err, "nosuch.json");
    err.code = FE_EINPUT;
    snprintf(err.message, sizeof err.message, "bad");
    fe_error_prepend(&err, "model.json: ");
    assert_string_equal(err.message, "model.json: bad");
    fe_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(models), cmocka_unit_test(ops), cmocka_unit_test(planning),
        cmocka_unit_test(simulation), cmocka_unit_test(plan_files), cmocka_unit_test(execution),
        cmocka_unit_test(timing), cmocka_unit_test(ab), cmocka_unit_test(ab_suite), cmocka_unit_test(sources),
        cmocka_unit_test(scripts),
        cmocka_unit_test(engines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
