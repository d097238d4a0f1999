/* test_limits.c: the sandbox's limits hold on every Lua path, through the
 * public header alone and with no watchdog: each script below spends its
 * instruction budget or its time inside a message handler, a __close
 * metamethod, a coroutine or an error raised while handling an error, and
 * every C call that runs Lua (fe_script_run, policy loading, a policy's
 * decide through fe_engine_plan, machine files) must come back on its own
 * with the limit named as in the plain case (docs/policy-guide.md, the
 * sandbox). A call that does not come back fails the test when an alarm
 * fires (FE_TEST_HANG_S seconds, 60 by default) instead of hanging it;
 * FE_TEST_CASE=N runs case N only (0 to NCASES - 1: CASES in each path;
 * NCASES: later_run; NCASES + 1: no_finalizers), to see each case fail
 * without the fix (the first that hangs ends the program). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fuseeng_cli.h"

#define BUDGET 1000000
#define BUDGET_MSG "instruction budget of 1000000 exceeded"
#define TIME_MSG "time limit of 1 s exceeded"

/* Two elementwise nodes: the greedy driver asks decide about the pair. */
static const char MODEL[] =
    "{\"format\": \"fuseeng.model/1\", \"name\": \"pair\","
    " \"tensors\": {\"x\": {\"shape\": [64, 64], \"dtype\": \"f32\", \"kind\": \"input\"},"
    "  \"y\": {\"shape\": [64, 64], \"dtype\": \"f32\", \"kind\": \"activation\"},"
    "  \"z\": {\"shape\": [64, 64], \"dtype\": \"f32\", \"kind\": \"activation\"}},"
    " \"nodes\": [{\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]},"
    "  {\"name\": \"b\", \"op\": \"exp\", \"inputs\": [\"y\"], \"outputs\": [\"z\"]}],"
    " \"outputs\": [\"z\"]}";

/* A script body that must be stopped, and the limit that stops it. */
typedef struct lua_case {
    const char *name;
    const char *body;   /* one line: the same line number in every path */
    int timed;          /* stopped by the clock (1 s, no budget to speak of) */
} lua_case;

static const lua_case CASES[] = {
    {"xpcall with a looping handler", "xpcall(error, function() while true do end end)", 0},
    {"xpcall whose handler loops on slow C calls",
     "xpcall(error, function() while true do local s = string.rep('x', 1 << 20) end end)", 1},
    {"xpcall whose handler and function loop",
     "xpcall(function() while true do end end, function() while true do end end)", 0},
    {"errors raised inside the handler, then a loop there",
     "local n = 0 xpcall(error, function(e) n = n + 1 if n < 5 then error(e) end "
     "while true do end end)", 0},
    {"a handler that raises until Lua gives up (error in error handling), then a loop",
     "xpcall(error, function(e) error(e) end) while true do end", 0},
    {"deep recursion in the handler, then a loop",
     "local function dive(n) if n > 0 then return dive(n - 1) + 1 end while true do end end "
     "xpcall(error, function() return dive(150) end)", 0},
    {"a stack overflow in the handler, then a loop",
     "local function deep() return 1 + deep() end xpcall(error, deep) while true do end", 0},
    {"an error object whose __tostring loops",
     "error(setmetatable({}, {__tostring = function() while true do end end}))", 0},
    {"... handled by xpcall with tostring",
     "xpcall(error, tostring, setmetatable({}, {__tostring = function() while true do end end}))",
     0},
    {"a __close that loops as the stop unwinds",
     "do local x <close> = setmetatable({}, {__close = function() while true do end end}) "
     "while true do end end", 0},
    {"a __close that loops in a wrapped coroutine the stop ends",
     "coroutine.wrap(function() local x <close> = setmetatable({}, {__close = function() "
     "while true do end end}) while true do end end)()", 0},
    {"pcall inside that __close",
     "coroutine.wrap(function() local x <close> = setmetatable({}, {__close = function() "
     "while true do pcall(function() while true do end end) end end}) while true do end end)()",
     0},
    {"xpcall with a looping handler inside a coroutine",
     "coroutine.wrap(function() xpcall(error, function() while true do end end) end)()", 0},
    {"coroutines resumed inside the handler",
     "xpcall(error, function() while true do pcall(coroutine.wrap(function() while true do end "
     "end)) end end)", 0},
    {"coroutine.resume inside the handler, then a loop",
     "xpcall(error, function() coroutine.resume(coroutine.create(function() while true do end "
     "end)) while true do end end)", 0},
};

#define NCASES (sizeof CASES / sizeof *CASES)

static char dir[64];
static const char *current = "";
static int hang_s = 60;
static int only = -1;

/* Case i is to run (FE_TEST_CASE). */
static int wanted(size_t i)
{
    return only < 0 || (size_t)only == i;
}

static void hung(int sig)
{
    (void)sig;
    char msg[512];
    int n = snprintf(msg, sizeof msg, "not ok - %s: no answer in %d s (the limit did not hold)\n",
                     current, hang_s);
    ssize_t w = write(STDOUT_FILENO, msg, n > 0 ? (size_t)n : 0);
    (void)w;
    _exit(1);
}

static int setup(void **state)
{
    (void)state;
    const char *h = getenv("FE_TEST_HANG_S");
    if (h && atoi(h) > 0)
        hang_s = atoi(h);
    const char *one = getenv("FE_TEST_CASE");
    if (one && *one)
        only = atoi(one);
    signal(SIGALRM, hung);
    snprintf(dir, sizeof dir, "/tmp/test_limits.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static fe_engine_options limits(const lua_case *c)
{
    fe_engine_options o = {.max_instructions = c->timed ? INT64_C(1) << 50 : BUDGET,
                           .max_seconds = c->timed ? 1 : 60};
    return o;
}

/* An engine under case c's limits (caller frees with fe_engine_free). */
static fe_engine *case_engine(const lua_case *c)
{
    fe_engine_options o = limits(c);
    fe_error err = {0};
    fe_engine *e = fe_engine_new(&o, &err);
    if (!e)
        fail_msg("engine: %s", err.message);
    return e;
}

/* Start watching one call: name it for the alarm and arm it. */
static double watch(const lua_case *c, const char *path)
{
    static char name[300];
    snprintf(name, sizeof name, "%s (%s)", c->name, path);
    current = name;
    alarm((unsigned)hang_s);
    return now();
}

/* The call came back in time with FE_EINPUT naming the limit at file:line. */
static void stopped(const lua_case *c, int rc, const fe_error *err, double t0, const char *file,
                    int line)
{
    double took = now() - t0;
    alarm(0);
    if (rc != FE_EINPUT)
        fail_msg("%s: returned %d (%s), expected FE_EINPUT", current, rc, err->message);
    char want[128];
    snprintf(want, sizeof want, "%s:%d: %s", file, line, c->timed ? TIME_MSG : BUDGET_MSG);
    if (!strstr(err->message, want))
        fail_msg("%s: '%s' does not name the limit ('%s')", current, err->message, want);
    /* The budget takes a fraction of a second, the clock its 1 s. */
    if (took > (c->timed ? 10.0 : 5.0))
        fail_msg("%s: took %.1f s", current, took);
}

static void scripts(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const lua_case *c = &CASES[i];
        if (!wanted(i))
            continue;
        char src[1024];
        snprintf(src, sizeof src, "%s\nreturn 0\n", c->body);
        const char *path = write_file("script.lua", src);
        fe_engine_options o = limits(c);
        fe_error err = {0};
        int status = -1;
        double t0 = watch(c, "fe_script_run");
        int rc = fe_script_run(path, 0, NULL, &o, &status, &err);
        stopped(c, rc, &err, t0, "script.lua", 1);
    }
}

static void policy_loading(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const lua_case *c = &CASES[i];
        if (!wanted(i))
            continue;
        fe_error err = {0};
        fe_engine *e = case_engine(c);
        char src[1024];
        snprintf(src, sizeof src, "%s\nreturn {name = 'top', driver = 'greedy'}\n", c->body);
        double t0 = watch(c, "fe_engine_load_policy_buffer");
        fe_policy *p = fe_engine_load_policy_buffer(e, src, strlen(src), "top.lua", &err);
        assert_null(p);
        stopped(c, FE_EINPUT, &err, t0, "top.lua", 1);
        fe_engine_free(e);
    }
}

static void planning(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_model *m = fe_model_load_buffer(MODEL, strlen(MODEL), "pair.json", NULL, &err);
    if (!m)
        fail_msg("model: %s", err.message);
    for (size_t i = 0; i < NCASES; i++) {
        const lua_case *c = &CASES[i];
        if (!wanted(i))
            continue;
        fe_engine *e = case_engine(c);
        char src[1024];
        snprintf(src, sizeof src,
                 "local fe = require 'fuseeng' return fe.policy {name = 'd', driver = 'greedy',\n"
                 "decide = function(self, group, ctx)\n"
                 "%s\nend}\n", c->body);
        fe_policy *p = fe_engine_load_policy_buffer(e, src, strlen(src), "decide.lua", &err);
        if (!p)
            fail_msg("policy: %s", err.message);
        assert_int_equal(fe_engine_use(e, p, &err), FE_OK);
        double t0 = watch(c, "fe_engine_plan");
        fe_plan *plan = fe_engine_plan(e, m, &err);
        assert_null(plan);
        stopped(c, FE_EINPUT, &err, t0, "decide.lua", 3);
        fe_policy_free(p);
        fe_engine_free(e);
    }
    fe_model_free(m);
}

static void machine_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const lua_case *c = &CASES[i];
        if (!wanted(i))
            continue;
        fe_error err = {0};
        fe_engine *e = case_engine(c);
        char src[1024];
        snprintf(src, sizeof src, "%s\nreturn {}\n", c->body);
        const char *path = write_file("machine.lua", src);
        double t0 = watch(c, "fe_engine_set_machine");
        int rc = fe_engine_set_machine(e, path, &err);
        stopped(c, rc, &err, t0, "machine.lua", 1);
        fe_engine_free(e);
    }
}

/* A coroutine ended by a stop dies inside the hook with Lua's hooks off
 * for good; closing it in a later run would run its __close beyond every
 * limit. The sandbox leaves that __close unrun: the second plan is made. */
static void later_run(void **state)
{
    (void)state;
    if (!wanted(NCASES))
        return;
    static const char src[] =
        "local fe, co = require 'fuseeng'\n"
        "return fe.policy {name = 'later', driver = 'greedy', decide = function(self, group, ctx)\n"
        "  if co then local ok, why = coroutine.close(co) return false, why end\n"
        "  co = coroutine.create(function()\n"
        "    local x <close> = setmetatable({}, {__close = function() while true do end end})\n"
        "    while true do end\n"
        "  end)\n"
        "  coroutine.resume(co)\n"
        "end}\n";
    static const lua_case c = {"coroutine.close in a later run of a coroutine a stop ended", "", 0};
    fe_error err = {0};
    fe_model *m = fe_model_load_buffer(MODEL, strlen(MODEL), "pair.json", NULL, &err);
    assert_non_null(m);
    fe_engine *e = case_engine(&c);
    fe_policy *p = fe_engine_load_policy_buffer(e, src, sizeof src - 1, "later.lua", &err);
    if (!p)
        fail_msg("policy: %s", err.message);
    assert_int_equal(fe_engine_use(e, p, &err), FE_OK);
    double t0 = watch(&c, "fe_engine_plan, first run");
    assert_null(fe_engine_plan(e, m, &err));
    stopped(&c, FE_EINPUT, &err, t0, "later.lua", 6);
    watch(&c, "fe_engine_plan, second run");
    fe_plan *plan = fe_engine_plan(e, m, &err);
    alarm(0);
    if (!plan)
        fail_msg("second run: %s", err.message);
    char *json = fe_plan_to_json(plan, &err);
    assert_non_null(json);
    if (!strstr(json, "ended by the sandbox's limits"))
        fail_msg("the decision log does not give coroutine.close's answer: %.400s", json);
    fe_free(json);
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_engine_free(e);
    fe_model_free(m);
}

/* No finalizer of a script ever exists: Lua would run it with hooks off. */
static void no_finalizers(void **state)
{
    (void)state;
    if (!wanted(NCASES + 1))
        return;
    static const lua_case c = {"__gc", "", 0};
    const char *path = write_file("gc.lua", "setmetatable({}, {__gc = function() while true do "
                                  "end end})\nreturn 0\n");
    fe_engine_options o = limits(&c);
    fe_error err = {0};
    int status = -1;
    watch(&c, "fe_script_run");
    assert_int_equal(fe_script_run(path, 0, NULL, &o, &status, &err), FE_EINPUT);
    alarm(0);
    if (!strstr(err.message, "gc.lua:1: setmetatable: metatables with __gc are not allowed"))
        fail_msg("'%s'", err.message);
    path = write_file("collect.lua", "collectgarbage()\nreturn 0\n");
    assert_int_equal(fe_script_run(path, 0, NULL, &o, &status, &err), FE_EINPUT);
    if (!strstr(err.message, "collect.lua:1: undefined global 'collectgarbage'"))
        fail_msg("'%s'", err.message);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scripts), cmocka_unit_test(policy_loading), cmocka_unit_test(planning),
        cmocka_unit_test(machine_files), cmocka_unit_test(later_run),
        cmocka_unit_test(no_finalizers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
