/* test_runtime.c: the policy runtime: the public C API (load, combine, swap,
 * plan), combinators, parameters, every sandbox fault under both fallbacks,
 * the four drivers, the Lua bindings, and random policies on random graphs
 * (no illegal plan, ever). */
#include "testlib.h"
#include "testgraph.h"
#include "api.h"
#include "ops.h"
#include "plan.h"
#include "plan_json.h"
#include "planning.h"

static fe_engine *new_engine(int64_t instructions, int64_t memory, double seconds)
{
    fe_error err = {0};
    fe_engine_options o = {.max_instructions = instructions, .max_memory = memory,
                           .max_seconds = seconds};
    fe_engine *e = fe_engine_new(&o, &err);
    if (!e)
        fail_msg("engine: %s", err.message);
    return e;
}

static fe_policy *load(fe_engine *e, const char *src)
{
    fe_error err = {0};
    fe_policy *p = fe_engine_load_policy_buffer(e, src, strlen(src), "test.lua", &err);
    if (!p)
        fail_msg("policy: %s", err.message);
    return p;
}

static fe_model *model(const char *path)
{
    fe_error err = {0};
    fe_model *m = fe_model_load_file(path, NULL, &err);
    if (!m)
        fail_msg("model: %s", err.message);
    return m;
}

/* Plan with p; NULL and err on failure. */
static fe_plan *plan_with(fe_engine *e, fe_policy *p, fe_model *m, fe_error *err)
{
    if (fe_engine_use(e, p, err) != FE_OK)
        return NULL;
    fe_plan *plan = fe_engine_plan(e, m, err);
    if (plan) {
        fe_error check = {0};
        if (fe_plan_check(plan, &check) != FE_OK)
            fail_msg("an illegal plan came out: %s", check.message);
    }
    return plan;
}

/* Does some decision's reason contain text? */
static int logged(const fe_plan *p, const char *text)
{
    for (int32_t d = 0; d < p->ndecisions; d++)
        if (p->decisions[d].reason >= 0 && strstr(fe_strtab_str(p->strs, p->decisions[d].reason), text))
            return 1;
    return 0;
}

#define LLAMA "examples/models/llama2_7b_layer.json"

/* x -> relu -> exp -> neg: three fusable elementwise nodes. */
static const char chain3[] =
    "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"x\": {\"shape\": [64, 64], \"dtype\": \"f32\", \"kind\": \"input\"}},"
    " \"nodes\": [{\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"ta\"]},"
    "            {\"name\": \"b\", \"op\": \"exp\", \"inputs\": [\"ta\"], \"outputs\": [\"tb\"]},"
    "            {\"name\": \"c\", \"op\": \"neg\", \"inputs\": [\"tb\"], \"outputs\": [\"tc\"]}],"
    " \"outputs\": [\"tc\"]}";

static fe_model *chain_model(void)
{
    fe_error err = {0};
    fe_model *m = fe_model_load_buffer(chain3, strlen(chain3), "chain3", NULL, &err);
    if (!m)
        fail_msg("%s", err.message);
    return m;
}

static void swap_policies(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(LLAMA);
    fe_error err = {0};
    fe_policy *rules = fe_engine_load_policy(e, "static_rules", &err);
    fe_policy *all = fe_engine_load_policy(e, "policies/fuse_all.lua", &err);
    assert_non_null(rules);
    assert_non_null(all);
    fe_plan *p1 = plan_with(e, rules, m, &err);
    fe_plan *p2 = plan_with(e, all, m, &err);
    fe_plan *p3 = plan_with(e, rules, m, &err);   /* swapped back */
    assert_non_null(p1);
    assert_non_null(p2);
    assert_non_null(p3);
    assert_true(fe_plan_groups(p2) < fe_plan_groups(p1));
    assert_int_equal(fe_plan_groups(p1), 36);
    assert_int_equal(fe_plan_groups(p3), fe_plan_groups(p1));
    /* Same inputs, same JSON. */
    char *j1 = fe_plan_to_json(p1, &err), *j3 = fe_plan_to_json(p3, &err);
    assert_string_equal(j1, j3);
    fe_free(j1);
    fe_free(j3);
    assert_string_equal(fe_policy_driver(rules), "patterns");
    fe_plan_free(p1);
    fe_plan_free(p2);
    fe_plan_free(p3);
    fe_policy_free(rules);
    fe_policy_free(all);
    fe_model_free(m);
    fe_engine_free(e);
}

#define GREEDY(name, verdict) \
    "local fe = require 'fuseeng'\nreturn fe.policy{name = '" name "', driver = 'greedy', " \
    "decide = function() return " verdict ", '" name " says " verdict "' end}"

static void combinators(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = chain_model();
    fe_policy *yes = load(e, GREEDY("yes", "true")), *no = load(e, GREEDY("no", "false"));
    fe_policy *none = load(e, GREEDY("none", "nil"));
    /* Without decide a policy fuses every legal candidate, alone or combined. */
    fe_policy *bare = load(e, "local fe = require 'fuseeng'\n"
                              "return fe.policy{name = 'bare', driver = 'greedy'}");
    fe_error err = {0};
    struct { const char *how; fe_policy *list[3]; int n, groups; const char *reason; } cases[] = {
        {"all", {yes, no}, 2, 3, "all -> no"},
        {"all", {yes, none}, 2, 1, "all -> yes"},
        {"any", {no, yes}, 2, 1, "any -> yes"},
        {"any", {none, none}, 2, 3, "any -> no opinion"},
        {"chain", {none, no, yes}, 3, 3, "chain -> no"},
        {"chain", {none, yes, no}, 3, 1, "chain -> yes; none: no opinion (none says nil); yes: yes (yes says true)"},
        {"vote", {yes, yes, no}, 3, 1, "vote -> yes"},
        {"vote", {yes, no}, 2, 3, "vote -> no"},   /* a tie does not fuse */
        {"all", {bare, bare}, 2, 1, "all -> yes; bare: yes (no decide hook: fuses every legal candidate)"},
        {"all", {bare, no}, 2, 3, "all -> no"},
        {"any", {bare, no}, 2, 1, "any -> yes"},
        {"chain", {bare, no}, 2, 1, "chain -> yes; bare: yes"},
        {"chain", {none, bare}, 2, 1, "chain -> yes"},
        {"vote", {bare, none}, 2, 1, "vote -> yes"},
        {"vote", {bare, no, no}, 3, 3, "vote -> no"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_policy *c = fe_engine_combine(e, cases[i].how, cases[i].list, cases[i].n, &err);
        assert_non_null(c);
        fe_plan *p = plan_with(e, c, m, &err);
        assert_non_null(p);
        if (fe_plan_groups(p) != cases[i].groups || !logged(p, cases[i].reason))
            fail_msg("case %zu (%s): %d groups; want %d with reason '%s'", i, cases[i].how,
                     fe_plan_groups(p), cases[i].groups, cases[i].reason);
        fe_plan_free(p);
        fe_policy_free(c);
    }
    assert_null(fe_engine_combine(e, "most", cases[0].list, 2, &err));
    assert_contains(err.message, "unknown combinator 'most'");
    /* Combinations of combinations, from Lua. */
    fe_policy *nested = load(e,
        "local fe = require 'fuseeng'\n"
        "local y = fe.policy{name = 'y', driver = 'greedy', decide = function() return true, 'y' end}\n"
        "local n = fe.policy{name = 'n', driver = 'greedy', decide = function() return false, 'n' end}\n"
        "return fe.any{ fe.all{y, n}, fe.chain{n, y} }\n");
    fe_plan *p = plan_with(e, nested, m, &err);
    assert_non_null(p);
    assert_int_equal(fe_plan_groups(p), 3);
    assert_string_equal(fe_policy_name(nested), "any(all(y,n),chain(n,y))");
    fe_plan_free(p);
    fe_policy_free(nested);
    fe_policy_free(yes);
    fe_policy_free(no);
    fe_policy_free(none);
    fe_policy_free(bare);
    fe_model_free(m);
    fe_engine_free(e);
}

static void params(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = chain_model();
    fe_error err = {0};
    fe_policy *p = load(e,
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'cap', driver = 'greedy',\n"
        "  params = {max_nodes = 2, enabled = true, ops = fe.set{'relu', 'exp', 'neg'}, label = 'x'},\n"
        "  decide = function(self, g)\n"
        "    if not self.params.enabled then return false, 'disabled' end\n"
        "    for i = 1, #g do if not self.params.ops[g[i].op] then return false, 'op' end end\n"
        "    return #g <= self.params.max_nodes, 'size ' .. #g end}\n");
    fe_plan *plan = plan_with(e, p, m, &err);
    assert_int_equal(fe_plan_groups(plan), 2);
    fe_plan_free(plan);
    assert_int_equal(fe_policy_set_param(p, "max_nodes", "3", &err), FE_OK);
    assert_string_equal(fe_policy_name(p), "cap{max_nodes=3}");
    plan = plan_with(e, p, m, &err);
    assert_int_equal(fe_plan_groups(plan), 1);
    fe_plan_free(plan);
    assert_int_equal(fe_policy_set_param(p, "ops", "relu", &err), FE_OK);
    plan = plan_with(e, p, m, &err);
    assert_int_equal(fe_plan_groups(plan), 3);
    fe_plan_free(plan);
    assert_int_equal(fe_policy_set_param(p, "enabled", "false", &err), FE_OK);
    assert_int_equal(fe_policy_set_param(p, "max_nodes", "two", &err), FE_EINPUT);
    assert_contains(err.message, "param 'max_nodes' of policy");
    assert_contains(err.message, "is a number; 'two' is not");
    assert_int_equal(fe_policy_set_param(p, "max_nodes", "2.5", &err), FE_EINPUT);
    assert_contains(err.message, "is an integer");
    assert_int_equal(fe_policy_set_param(p, "enabled", "maybe", &err), FE_EINPUT);
    assert_contains(err.message, "give true or false, not 'maybe'");
    assert_int_equal(fe_policy_set_param(p, "margin", "1", &err), FE_EINPUT);
    assert_contains(err.message, "has no param 'margin'; its params are: enabled, label, max_nodes, ops");
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* A greedy policy whose decide runs body; fallback "stop" or "unfused". */
static char *faulty(const char *body, const char *fallback)
{
    static char src[2048];
    snprintf(src, sizeof src,
             "local fe = require 'fuseeng'\n"
             "return fe.policy{name = 'faulty', driver = 'greedy', fallback_on_error = '%s',\n"
             "  decide = function(self, group, ctx)\n"
             "    %s\n"
             "  end}\n", fallback, body);
    return src;
}

static void faults(void **s)
{
    (void)s;
    struct { const char *what, *body, *message; } cases[] = {
        {"runtime error", "local t = nil; return t.x", "test.lua:4: attempt to index a nil value (local 't')"},
        {"error()", "error('policy broke')", "test.lua:4: policy broke"},
        {"wrong return type", "return 42", "decide returned a number; it must return true, false or nil"},
        {"infinite loop", "while true do end", "test.lua:4: instruction budget of 20000000 exceeded"},
        {"pcall cannot swallow the stop", "while true do pcall(function() while true do end end) end",
         "instruction budget of 20000000 exceeded"},
        {"memory bomb", "local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(64) .. i end",
         "memory cap of 24 MiB exceeded"},
        {"forbidden os", "os.execute('true')", "test.lua:4: undefined global 'os'"},
        {"forbidden io", "local f = io.open('/etc/passwd')", "test.lua:4: undefined global 'io'"},
        {"forbidden require", "require 'io'", "module 'io' not found"},
        {"forbidden debug", "debug.sethook()", "test.lua:4: undefined global 'debug'"},
        {"no binary chunks", "return load(string.dump(print))", "attempt to call a nil value (field 'dump')"},
        {"no loadfile", "loadfile('/etc/passwd')", "undefined global 'loadfile'"},
        {"global assignment", "leaked = 1", "test.lua:4: assignment to undeclared global 'leaked'"},
        {"no string.dump through a string's methods", "return ('').dump(print)",
         "test.lua:4: attempt to call a nil value (field 'dump')"},
        {"a finalizer (Lua runs them beyond every limit)",
         "setmetatable({}, {__gc = function() while true do end end})",
         "test.lua:4: setmetatable: metatables with __gc are not allowed"},
        {"setmetatable's other errors name the script", "setmetatable(ctx, nil)",
         "test.lua:4: cannot change a protected metatable"},
        {"error(42) gets a place", "error(42)", "test.lua:4: 42"},
        {"error(msg, 0) gets a place", "error('plain', 0)", "test.lua:4: plain"},
        {"a level pointing at C gets a place", "error('up', 2)", "test.lua:4: up"},
        {"an error object", "error({})", "test.lua:4: (error object is a table value)"},
        {"a C function's error gets a place", "coroutine.yield(1)",
         "test.lua:4: attempt to yield from outside a coroutine"},
        {"an error through coroutine.wrap is placed once", "coroutine.wrap(function() error('inner') end)()",
         "test.lua:4: inner"},
        {"a stop inside a coroutine is placed once", "coroutine.wrap(function() while true do end end)()",
         "test.lua:4: instruction budget of 20000000 exceeded"},
        {"a memory bomb in one call, before the hook ran", "local s = string.rep('x', 1e8, ',')",
         "test.lua:3: memory cap of 24 MiB exceeded"},
        {"a loop of slow C calls (time limit)", "while true do local s = string.rep('x', 1 << 20) end",
         "test.lua:4: time limit of 1 s exceeded"},
        {"pcall cannot swallow the time limit", "while true do pcall(string.rep, 'x', 1 << 20) end",
         "time limit of 1 s exceeded"},
    };
    fe_model *m = chain_model();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* The time-limit cases get 1 s, the others the default. */
        double seconds = strstr(cases[i].message, "time limit") ? 1 : 0;
        fe_engine *e = new_engine(20000000, 24 << 20, seconds);
        fe_error err = {0};
        /* stop: the run fails with the script's place, given once. */
        fe_policy *p = load(e, faulty(cases[i].body, "stop"));
        fe_plan *plan = plan_with(e, p, m, &err);
        if (plan || err.code != FE_EINPUT || !strstr(err.message, cases[i].message) ||
            strstr(err.message, "test.lua:4: test.lua"))
            fail_msg("%s (stop): got '%s'; want '%s'", cases[i].what, err.message, cases[i].message);
        fe_policy_free(p);
        /* unfused: the run goes on without the policy's fusions. */
        p = load(e, faulty(cases[i].body, "unfused"));
        memset(&err, 0, sizeof err);
        plan = plan_with(e, p, m, &err);
        if (!plan)
            fail_msg("%s (unfused): the run failed: %s", cases[i].what, err.message);
        assert_int_equal(fe_plan_groups(plan), 3);
        if (!logged(plan, cases[i].message) || !logged(plan, "fallback_on_error = \"unfused\""))
            fail_msg("%s (unfused): the decision log lacks the error", cases[i].what);
        fe_plan_free(plan);
        fe_policy_free(p);
        /* The engine is still usable after the fault. */
        fe_policy *ok = fe_engine_load_policy(e, "fuse_all", &err);
        assert_non_null(ok);
        plan = plan_with(e, ok, m, &err);
        assert_non_null(plan);
        assert_int_equal(fe_plan_groups(plan), 1);
        fe_plan_free(plan);
        fe_policy_free(ok);
        fe_engine_free(e);
    }
    fe_model_free(m);
}

/* Faults in every hook and in what hooks return, each under both
 * fallbacks: "stop" fails the run naming the file and line (the hook's
 * definition line when the fault has none of its own); "unfused" gives
 * the plan without any of the policy's fusions, even those decided before
 * the fault (split and kernel run last), with the fault in the log and in
 * stats.fault for the CLI's warning. %s is the fallback. */
static void hook_faults(void **s)
{
    (void)s;
#define HEAD "local fe = require 'fuseeng'\n"
#define GREEDY_YES "return fe.policy{name = 'h', driver = 'greedy', fallback_on_error = '%s',\n" \
                   "  decide = function() return true, 'yes' end,\n"
    struct { const char *what, *src, *message; } cases[] = {
        {"split raises", HEAD GREEDY_YES "  split = function() error('split broke') end}",
         "test.lua:4: split broke"},
        {"split returns 0", HEAD GREEDY_YES "  split = function() return 0 end}",
         "test.lua:4: split returned 0; it must return an integer from 1 to 16777216"},
        {"kernel returns an unknown name", HEAD GREEDY_YES "  kernel = function() return 'warp9' end}",
         "test.lua:4: kernel returned 'warp9'; it must return one of: auto"},
        {"decide returns a number",
         HEAD "return fe.policy{name = 'h', driver = 'greedy', fallback_on_error = '%s',\n"
              "  decide = function() return 42 end}",
         "test.lua:3: decide returned a number; it must return true, false or nil"},
        {"score returns a numeric string",
         HEAD "return fe.policy{name = 'h', driver = 'greedy', fallback_on_error = '%s',\n"
              "  score = function() return '12' end}",
         "test.lua:3: score returned a string; it must return a number"},
        {"plan returns a number",
         HEAD "return fe.policy{name = 'h', driver = 'plan', fallback_on_error = '%s',\n"
              "  plan = function() return 42 end}",
         "test.lua:3: plan returned a number; it must return a list of groups"},
        {"plan raises",
         HEAD "return fe.policy{name = 'h', driver = 'plan', fallback_on_error = '%s',\n"
              "  plan = function() error('no plan') end}",
         "test.lua:3: no plan"},
        {"a chain pattern's match longer than its path",
         HEAD "return fe.policy{name = 'h', driver = 'patterns', fallback_on_error = '%s',\n"
              "  patterns = {{kind = 'chain', match = function() return 1000, false end}}}",
         "test.lua:3: patterns[1]: match returned 1000 for a path of 1 node; it must return a length "
         "from 0 to 1, or nil"},
        {"... still growing",
         HEAD "return fe.policy{name = 'h', driver = 'patterns', fallback_on_error = '%s',\n"
              "  patterns = {{kind = 'chain', match = function(self, seq) return #seq + 3, true end}}}",
         "test.lua:3: patterns[1]: match returned 4 for a path of 1 node"},
        {"a hand-made data flow raises",
         HEAD "return fe.policy{name = 'h', driver = 'dataflow', fallback_on_error = '%s',\n"
              "  dataflow = {maps = function() return true end, find_match = function() error('df broke') end}}",
         "test.lua:3: df broke"},
        {"a child's decide in a combination returns a number",
         HEAD "local a = fe.policy{name = 'a', driver = 'greedy', fallback_on_error = '%s',\n"
              "  decide = function() return 7, 'seven' end}\n"
              "return fe.all{a, a}",
         "test.lua:3: policy 'a': decide returned a number; expected true, false or nil"},
    };
#undef HEAD
#undef GREEDY_YES
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = chain_model();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int unfused = 0; unfused < 2; unfused++) {
            char src[2048];
            snprintf(src, sizeof src, cases[i].src, unfused ? "unfused" : "stop");
            fe_policy *p = load(e, src);
            fe_error err = {0};
            fe_run_stats st;
            fe_plan *plan = fe_run_policy(&p->r, m->g, &st, &err);
            if (!unfused && (plan || !strstr(err.message, cases[i].message)))
                fail_msg("%s (stop): got '%s'; want '%s'", cases[i].what, err.message, cases[i].message);
            if (unfused && !plan)
                fail_msg("%s (unfused): the run failed: %s", cases[i].what, err.message);
            if (unfused && (fe_plan_groups(plan) != 3 || !strstr(st.fault, cases[i].message) ||
                            !logged(plan, cases[i].message)))
                fail_msg("%s (unfused): %d groups, fault '%s'; want 3 and '%s' in the fault and the log",
                         cases[i].what, fe_plan_groups(plan), st.fault, cases[i].message);
            fe_plan_free(plan);
            fe_policy_free(p);
        }
    }
    fe_model_free(m);
    fe_engine_free(e);
}

/* The time limit stops what the instruction budget cannot see: C calls
 * in a loop (here a huge budget would take minutes). */
static void time_limit(void **s)
{
    (void)s;
    fe_engine *e = new_engine(INT64_C(1) << 50, 0, 1);
    fe_model *m = chain_model();
    fe_error err = {0};
    fe_policy *p = load(e, faulty("for i = 1, 1e12 do pcall(error, 'x') end", "stop"));
    assert_null(plan_with(e, p, m, &err));
    assert_contains(err.message, "test.lua:4: time limit of 1 s exceeded");
    fe_policy_free(p);
    /* Loading is metered too. */
    const char *top = "for i = 1, 1e12 do pcall(error, 'x') end";
    assert_null(fe_engine_load_policy_buffer(e, top, strlen(top), "top.lua", &err));
    assert_contains(err.message, "top.lua:1: time limit of 1 s exceeded");
    fe_model_free(m);
    fe_engine_free(e);
}

static void load_faults(void **s)
{
    (void)s;
    struct { const char *src, *message; } cases[] = {
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'greedy',\n  decide = function( end}",
         "test.lua:3: "},
        {"return 42", "test.lua: a policy file must return fe.policy{...}"},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'sideways'}",
         "test.lua: policy 'x': driver 'sideways' is unknown"},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'greedy', decidee = 1}",
         "test.lua: policy 'x': unknown field 'decidee'"},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'patterns', patterns = {'add -> -> mul'}}",
         "pattern 1:1:8: expected"},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'greedy', params = {f = print}}",
         "param 'f' is a function"},
        {"error('at load')", "test.lua:1: at load"},
        {"while true do end", "instruction budget of 20000000 exceeded"},
        {"\x1bLua", "binary (precompiled) chunks are not accepted"},
        {"setmetatable({}, {__gc = function() while true do end end})\nreturn 1",
         "test.lua:1: setmetatable: metatables with __gc are not allowed"},
        {"local x = 1\nerror(42)", "test.lua:2: 42"},
        /* The policy marker can be forged; what the engine reads is checked. */
        {"return setmetatable({name = 'f', driver = 'nonsense'}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': driver 'nonsense' is unknown"},
        {"return setmetatable({name = 'f', driver = 'patterns', patterns = 7}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': 'patterns' is a number; expected a table"},
        {"return setmetatable({name = 'f', driver = 'patterns', patterns = {7}}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': patterns[1] is not a compiled pattern"},
        {"return setmetatable({name = 'f', driver = 'patterns'}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': the patterns driver needs 'patterns'"},
        {"return setmetatable({name = 'f', driver = 'greedy', decide = 5}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': 'decide' is a number; expected a function"},
        {"return setmetatable({name = {}, driver = 'greedy'}, {__fuseeng_policy = true})",
         "'name' is a table; expected a string"},
        {"return setmetatable({driver = 'greedy'}, {__fuseeng_policy = true})",
         "test.lua: a policy needs a non-empty 'name'"},
        {"return setmetatable({name = 'f', driver = 'dataflow', dataflow = 7}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': 'dataflow' is a number; expected a table"},
        {"return setmetatable({name = 'f', driver = 'greedy', fallback_on_error = 'maybe'}, "
         "{__fuseeng_policy = true})", "fallback_on_error must be \"stop\" or \"unfused\""},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'greedy', tiling = 'sometimes'}",
         "test.lua: policy 'x': tiling is 'sometimes'; expected \"none\" or \"auto\""},
        {"return setmetatable({name = 'f', driver = 'greedy', tiling = 'always'}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': tiling must be \"none\" or \"auto\""},
        {"return setmetatable({name = 'f', driver = 'greedy', tiling = 4}, {__fuseeng_policy = true})",
         "test.lua: policy 'f': 'tiling' is a number; expected a string"},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'greedy', memo = 'yes'}",
         "policy 'x': 'memo' is a string; expected a boolean"},
        {"local fe = require 'fuseeng'\nreturn fe.policy{name = 'x', driver = 'greedy', reask = 1}",
         "policy 'x': 'reask' is a number; expected a boolean"},
    };
    fe_engine *e = new_engine(20000000, 0, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fe_error err = {0};
        fe_policy *p = fe_engine_load_policy_buffer(e, cases[i].src, strlen(cases[i].src), "test.lua", &err);
        if (p || err.code != FE_EINPUT || !strstr(err.message, cases[i].message))
            fail_msg("case %zu: got '%s'; want '%s'", i, err.message, cases[i].message);
    }
    fe_error err = {0};
    assert_null(fe_engine_load_policy(e, "no_such_policy", &err));
    assert_contains(err.message, "policy 'no_such_policy' not found");

    /* A policy is the script's own table: one that breaks itself during a
     * run is stopped at the next. */
    fe_model *m = chain_model();
    fe_policy *p = load(e, "local fe = require 'fuseeng'\n"
                           "return fe.policy{name = 'mutant', driver = 'plan',\n"
                           "  plan = function(self) rawset(self, 'plan', 5) return {} end}");
    fe_plan *plan = plan_with(e, p, m, &err);
    assert_non_null(plan);
    fe_plan_free(plan);
    assert_null(plan_with(e, p, m, &err));
    assert_contains(err.message, "test.lua: policy 'mutant': 'plan' is a number; expected a function");
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

static void plan_driver(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(LLAMA);
    fe_error err = {0};
    fe_policy *p = load(e,
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'hand', driver = 'plan', plan = function(self, g, ctx)\n"
        "  return {\n"
        "    {'gate_silu', 'swiglu', reason = 'SwiGLU by hand'},\n"
        "    {'swiglu', 'down_proj'},                       -- swiglu is taken\n"
        "    {'nosuch', 'input_layernorm'},                 -- unknown\n"
        "    {'q_proj', 'k_proj'},                          -- two matmuls\n"
        "    {'attn_residual', 'out'},                      -- not convex\n"
        "    {g:node('q_cos'), 'q_rope', split = 4, kernel = 'per_op'},\n"
        "    42,\n"
        "  } end}\n");
    fe_plan *plan = plan_with(e, p, m, &err);
    assert_non_null(plan);
    assert_true(logged(plan, "node 'swiglu' is already in group 1"));
    assert_true(logged(plan, "item 1 ('nosuch') is not a node of this graph"));
    assert_true(logged(plan, "one kernel holds at most one matmul"));
    assert_true(logged(plan, "not convex"));
    assert_true(logged(plan, "group 7 is a number, not a list of nodes"));
    assert_true(logged(plan, "nodes are in no group"));
    fe_plan_counts c;
    fe_plan_summary_counts(plan, &c);
    assert_int_equal(c.fused_groups, 2);
    assert_int_equal(c.rejected, 5);
    assert_int_equal(c.tiled_groups, 1);
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

static void dataflow_driver(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model("examples/models/opu_convnet.json");
    fe_error err = {0};
    fe_policy *p = load(e,
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'opu', driver = 'dataflow', dataflow = [[\n"
        "  concat -> add_pre -> mul_pre -> pad -> ipa -> mul -> add -> {compare, pool_pad, res_add}\n"
        "  pool_pad -> pool\n"
        "  compare -> {pool, res_add, upsample}\n"
        "  pool -> {compare, res_add, upsample}\n"
        "  res_add -> {compare, pool, upsample}\n"
        "  ipa = conv2d; add_pre = add; mul_pre = mul; pool_pad = pad; res_add = add\n"
        "  compare = relu | maximum; pool = max_pool2d | avg_pool2d\n"
        "]]}\n");
    fe_plan *plan = plan_with(e, p, m, &err);
    if (!plan)
        fail_msg("%s", err.message);
    /* Each group the flow made holds at most one conv (the flow has one
     * ipa step and legality allows one), and fusion happened. */
    fe_plan_counts c;
    fe_plan_summary_counts(plan, &c);
    assert_true(c.fused_groups >= 5);
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        int convs = 0, pads = 0;
        const fe_group *gr = &plan->groups[gi];
        for (int32_t k = 0; k < gr->n; k++) {
            const char *op = fe_node_op_name(fe_graph_node(m->g, fe_group_nodes(plan, gr)[k]));
            convs += strcmp(op, "conv2d") == 0;
            pads += strcmp(op, "pad") == 0;
        }
        assert_true(convs <= 1);
        if (convs == 1)
            assert_true(pads <= 2);
    }
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

static void patterns_driver(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(LLAMA);
    fe_error err = {0};
    fe_policy *p = load(e,
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'pats', driver = 'patterns',\n"
        "  patterns = {'silu(g) * u', 'add -> rms_norm', 'mul -> add'},\n"
        "  decide = function(self, group) return true, 'matched ' .. group.key end}\n");
    fe_plan *plan = plan_with(e, p, m, &err);
    assert_non_null(plan);
    assert_true(logged(plan, "matched silu+mul"));
    assert_true(logged(plan, "matched add+rms_norm"));
    assert_true(logged(plan, "matched mul+add"));
    fe_plan_free(plan);
    fe_policy_free(p);

    /* Any number of patterns: the one after 70 that never match still does. */
    p = load(e,
        "local fe = require 'fuseeng'\n"
        "local pats = {}\n"
        "for i = 1, 70 do pats[i] = 'sigmoid -> sigmoid' end\n"
        "pats[71] = 'silu -> mul'\n"
        "return fe.policy{name = 'many', driver = 'patterns', patterns = pats,\n"
        "  decide = function(self, group) return true, 'matched ' .. group.key end}\n");
    plan = plan_with(e, p, m, &err);
    assert_non_null(plan);
    assert_true(logged(plan, "matched silu+mul"));
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* A chain of N unmapped ops before a mapped one: the dataflow driver pulls
 * them all into its group (TVM's CollectInputs) without recursing once per
 * node, which overflowed the C stack at about 15,000. */
static void dataflow_deep_chain(void **s)
{
    (void)s;
    enum { N = 20000 };
    size_t cap = (size_t)N * 100 + 1000, len = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    len += (size_t)snprintf(json + len, cap - len,
                            "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"x\": {\"shape\": [4], "
                            "\"dtype\": \"f32\", \"kind\": \"input\"}}, \"nodes\": [");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(json + len, cap - len, "{\"name\": \"n%d\", \"op\": \"neg\", "
                                "\"inputs\": [\"%s%d\"], \"outputs\": [\"t%d\"]},",
                                i, i ? "t" : "x", i ? i - 1 : 0, i);
    snprintf(json + len, cap - len, "{\"name\": \"sum\", \"op\": \"add\", \"inputs\": [\"t%d\", \"x\"], "
             "\"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}", N - 1);
    /* x0 is not a tensor: the first neg reads x. */
    char *x0 = strstr(json, "\"x0\"");
    memcpy(x0, "\"x\" ", 4);
    fe_error err = {0};
    fe_model *m = fe_model_load_buffer(json, strlen(json), "deep", NULL, &err);
    free(json);
    if (!m)
        fail_msg("%s", err.message);
    fe_engine *e = new_engine(0, 0, 0);
    fe_policy *p = load(e, "local fe = require 'fuseeng'\n"
                           "return fe.policy{name = 'deep', driver = 'dataflow', dataflow = 'add -> mul'}");
    fe_plan *plan = plan_with(e, p, m, &err);
    if (!plan)
        fail_msg("%s", err.message);
    assert_int_equal(fe_plan_groups(plan), 1);
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* A plan-driver policy that checks the bindings and fails loudly if any
 * field is wrong. */
static void bindings(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(LLAMA);
    fe_error err = {0};
    fe_policy *p = load(e,
        "local fe = require 'fuseeng'\n"
        "local function eq(a, b, what) if a ~= b then error(what .. ': ' .. tostring(a) .. ' ~= ' .. tostring(b), 2) end end\n"
        "return fe.policy{name = 'probe', driver = 'plan', plan = function(self, g, ctx)\n"
        "  eq(#g, 40, '#g'); eq(g.nnodes, 40, 'nnodes'); eq(g.name, 'llama2-7b-layer', 'name')\n"
        "  eq(g.dims.S, 2048, 'dims')\n"
        "  local n = g:node('swiglu')\n"
        "  eq(n.op, 'mul', 'op'); eq(n.pattern, 'broadcast', 'pattern'); eq(n.dtype, 'f16', 'dtype')\n"
        "  eq(#n.inputs, 2, 'inputs'); eq(n.inputs[1].producer.op, 'silu', 'producer')\n"
        "  eq(n.shape[3], 11008, 'shape'); eq(n.numel, 2048 * 11008, 'numel')\n"
        "  eq(n.bytes, 3 * 2048 * 11008 * 2, 'bytes'); eq(n.flops, 2048 * 11008, 'flops')\n"
        "  eq(n.consumers[1].name, 'down_proj', 'consumers'); eq(n.producers[1].name, 'gate_silu', 'producers')\n"
        "  eq(g[n.index], n, 'index'); eq(g:node(n.index), n, 'node by index')\n"
        "  eq(g[n.index + 0.0], n, 'integral float index'); eq(g[1.5], nil, 'fractional index')\n"
        "  eq(g:node(n.index * 1.0), n, 'node by integral float'); eq(pcall(function() return g['1'] end), false, 'no string index')\n"
        "  eq(g:node('q_rot_scale') == nil or true, true, 'absent node')\n"
        "  local t = g:tensor('x'); eq(t.kind, 'input', 'kind'); eq(t.producer, nil, 'no producer')\n"
        "  eq(g:node('scores_scaled').attrs.scalar > 0, true, 'attrs')\n"
        "  local ok, msg = pcall(function() n.op = 'relu' end)\n"
        "  eq(ok, false, 'read-only'); eq(msg:find('read%-only') ~= nil, true, 'read-only message')\n"
        "  ok, msg = pcall(function() return n.nosuchfield end)\n"
        "  eq(msg:find(\"no field 'nosuchfield'\") ~= nil, true, 'unknown field')\n"
        "  ok, msg = pcall(function() ctx.x = 1 end)\n"
        "  eq(msg:find('ctx is read%-only') ~= nil, true, 'ctx read-only')\n"
        "  ctx.state.seen = true\n"
        "  ctx:log('probe ran on', g.name)\n"
        "  eq(getmetatable(n), false, 'metatable hidden')\n"
        "  return {{'gate_silu', 'swiglu'}}\n"
        "end}\n");
    fe_plan *plan = plan_with(e, p, m, &err);
    if (!plan)
        fail_msg("%s", err.message);
    assert_true(logged(plan, "probe ran on llama2-7b-layer"));
    fe_plan_free(plan);
    fe_policy_free(p);

    /* Groups: inputs, outputs, keys, bytes, as decide sees them. */
    p = load(e,
        "local fe = require 'fuseeng'\n"
        "local function eq(a, b, what) if a ~= b then error(what .. ': ' .. tostring(a) .. ' ~= ' .. tostring(b), 2) end end\n"
        "return fe.policy{name = 'gprobe', driver = 'patterns', patterns = {'silu -> mul'},\n"
        "  decide = function(self, grp, ctx)\n"
        "    eq(#grp, 2, '#grp'); eq(grp.key, 'silu+mul', 'key'); eq(#grp.exact_key, 16, 'exact key')\n"
        "    eq(#grp.inputs, 2, 'external inputs'); eq(#grp.outputs, 1, 'external outputs')\n"
        "    eq(#grp.internal, 1, 'internal'); eq(grp.internal_bytes, 2048 * 11008 * 2, 'internal bytes')\n"
        "    eq(grp.bytes, 3 * 2048 * 11008 * 2, 'bytes'); eq(grp.kinds.elemwise, 1, 'kinds')\n"
        "    eq(grp:contains(grp[1]), true, 'contains'); eq(grp:contains('q_proj'), false, 'contains name')\n"
        "    eq(grp.first.op, 'silu', 'first'); eq(grp.last.op, 'mul', 'last')\n"
        "    eq(#grp.parts, 2, 'parts'); eq(grp.parts[1][1].op, 'silu', 'part 1'); eq(#grp.parts[2], 1, 'part 2')\n"
        "    eq(grp[2.0], grp[2], 'integral float index'); eq(grp[2.5], nil, 'fractional index')\n"
        "    ctx.state.group = grp\n"
        "    return true, 'ok' end}\n");
    plan = plan_with(e, p, m, &err);
    if (!plan)
        fail_msg("%s", err.message);
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* Random graphs, randomly proposing policies: zero illegal plans. */
static void random_policies(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    const char *srcs[] = {
        /* greedy with random scores and verdicts */
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'coin', driver = 'greedy', params = {window = 8},\n"
        "  score = function() return math.random() end,\n"
        "  decide = function(self, g) return math.random() < 0.7, 'coin' end}\n",
        /* plan driver proposing random groups of random nodes */
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'darts', driver = 'plan', plan = function(self, g)\n"
        "  local groups = {}\n"
        "  for i = 1, #g do\n"
        "    local grp = {}\n"
        "    for k = 1, math.random(1, 4) do grp[#grp + 1] = math.random(1, #g) end\n"
        "    if math.random() < 0.05 then grp[#grp + 1] = 'nonexistent' end\n"
        "    groups[#groups + 1] = grp\n"
        "  end\n"
        "  return groups end}\n",
        /* patterns over anything */
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'any chain', driver = 'patterns', patterns = {'.+', '@elemwise -> .'},\n"
        "  decide = function(self, g) return math.random() < 0.8, 'maybe' end}\n",
    };
    int rejected = 0, fused = 0;
    for (int trial = 0; trial < 25; trial++) {
        fe_model m = {tl_random_graph(10 + (int)tl_rnd(50))};
        for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
            fe_policy *p = load(e, srcs[i]);
            fe_error err = {0};
            fe_plan *plan = plan_with(e, p, &m, &err);   /* checks legality */
            if (!plan)
                fail_msg("trial %d policy %zu: %s", trial, i, err.message);
            fe_plan_counts c;
            fe_plan_summary_counts(plan, &c);
            rejected += c.rejected;
            fused += c.fused_groups;
            fe_plan_free(plan);
            fe_policy_free(p);
        }
        fe_graph_free(m.g);
    }
    /* The proposals must have been both accepted and refused, or the test
     * says nothing. */
    assert_true(rejected > 50);
    assert_true(fused > 50);
    print_message("# %d groups fused, %d proposals rejected by the engine, 0 illegal plans\n", fused,
                  rejected);
    fe_engine_free(e);
}

static void kept_ctx(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = chain_model();
    fe_error err = {0};
    /* The policy keeps ctx and the graph in an upvalue and uses them in the
     * next run: both must fail cleanly, not touch freed memory. */
    fe_policy *p = load(e,
        "local fe = require 'fuseeng'\n"
        "local old\n"
        "return fe.policy{name = 'keeper', driver = 'plan', plan = function(self, g, ctx)\n"
        "  if old then old.graph:node(1) end\n"
        "  old = ctx\n"
        "  return {} end}\n");
    fe_plan *plan = plan_with(e, p, m, &err);
    assert_non_null(plan);
    fe_plan_free(plan);
    plan = plan_with(e, p, m, &err);
    assert_null(plan);
    assert_contains(err.message, "the graph is no longer loaded");
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* Plan the model at path with the policy src: it must succeed and log note. */
static void plan_ok(const char *path, const char *note, const char *src)
{
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(path);
    fe_error err = {0};
    fe_policy *p = load(e, src);
    fe_plan *plan = plan_with(e, p, m, &err);
    if (!plan)
        fail_msg("%s", err.message);
    assert_true(logged(plan, note));
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_model_free(m);
    fe_engine_free(e);
}

/* ctx:simulate_parts prices a candidate's parts as separate kernels: the
 * sums of ctx:simulate over group.parts; a group that merges nothing (or
 * a list of nodes) is its own only part; wrong arguments are Lua errors. */
static void simulate_parts(void **s)
{
    (void)s;
    plan_ok(LLAMA, "probed",
        "local fe = require 'fuseeng'\n"
        "local function eq(a, b, what) if a ~= b then error(what .. ': ' .. tostring(a) .. ' ~= ' .. tostring(b), 2) end end\n"
        "local function bad(ctx, what, text, ...)\n"
        "  local ok, msg = pcall(ctx.simulate_parts, ctx, ...)\n"
        "  eq(ok, false, what)\n"
        "  if not msg:find(text, 1, true) then error(what .. ': ' .. msg, 2) end\n"
        "end\n"
        "return fe.policy{name = 'parts', driver = 'greedy', params = {max_rounds = 1},\n"
        "  decide = function(self, grp, ctx)\n"
        "    local sum = {time = 0, l3_bytes = 0, flops = 0, l2_peak = 0}\n"
        "    for _, part in ipairs(grp.parts) do\n"
        "      local f = ctx:simulate(part)\n"
        "      sum.time, sum.l3_bytes, sum.flops = sum.time + f.time, sum.l3_bytes + f.l3_bytes, sum.flops + f.flops\n"
        "      sum.l2_peak = math.max(sum.l2_peak, f.l2_peak)\n"
        "    end\n"
        "    local got = ctx:simulate_parts(grp)\n"
        "    eq(got.parts, #grp.parts, 'parts'); eq(got.time, sum.time, 'time')\n"
        "    eq(got.l3_bytes, sum.l3_bytes, 'l3_bytes'); eq(got.flops, sum.flops, 'flops')\n"
        "    eq(got.l2_peak, sum.l2_peak, 'l2_peak (the largest)')\n"
        "    local asked = 0\n"
        "    local whole = ctx:simulate_parts(grp, {split = function(part) asked = asked + 1; return 1 end})\n"
        "    eq(asked, #grp.parts, 'split asked per part')\n"
        "    eq(whole.time, ctx:simulate_parts(grp, {split = 1}).time, 'split function = split')\n"
        "    local list = {}\n"
        "    for i = 1, #grp do list[i] = grp[i].name end\n"
        "    eq(ctx:simulate_parts(list).parts, 1, 'a list is one part')\n"
        "    eq(ctx:simulate_parts(list).time, ctx:simulate(list).time, 'a list costs as one kernel')\n"
        "    bad(ctx, 'not a group', 'expected a group or a list of nodes, got a number', 42)\n"
        "    bad(ctx, 'options', 'simulate_parts: options must be a table such as {split = 4}, got 5', grp, 5)\n"
        "    bad(ctx, 'option name', \"simulate_parts: unknown option 'splt'\", grp, {splt = 2})\n"
        "    bad(ctx, 'split', 'simulate_parts: split (a number or a function(part)) must be an integer from 1', grp, {split = -1})\n"
        "    bad(ctx, 'split answer', \"simulate_parts: split(part) must be an integer from 1 to 16777216 (2^24) (or 0 / nil for the default), got 'x'\",\n"
        "        grp, {split = function() return 'x' end})\n"
        "    ctx.state.asked = (ctx.state.asked or 0) + 1\n"
        "    return ctx.state.asked < 4, 'probed'\n"
        "  end,\n"
        "  split = function(self, grp, ctx)\n"
        "    local one = ctx:simulate_parts(grp)\n"
        "    eq(one.parts, 1, 'a final group is its own part')\n"
        "    eq(one.time, ctx:simulate(grp).time, 'and costs as one kernel')\n"
        "  end}\n");
}

/* The greedy driver asks decide once about a pair of unchanged groups: a
 * pair it refused is not re-asked in later rounds (stats.decide_reused),
 * unless the policy says reask = true. Both give the same plan. */
static const char reask_src[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy{name = 'ask', driver = 'greedy', reask = %s,\n"
    "  decide = function(self, grp, ctx)\n"
    "    local parts = {}\n"
    "    for i, part in ipairs(grp.parts) do\n"
    "      local names = {}\n"
    "      for j = 1, #part do names[j] = part[j].name end\n"
    "      parts[i] = table.concat(names, ',')\n"
    "    end\n"
    "    table.sort(parts)\n"
    "    local key = table.concat(parts, '|')\n"
    "    ctx.state[key] = (ctx.state[key] or 0) + 1\n"
    "    ctx.state.most = math.max(ctx.state.most or 0, ctx.state[key])\n"
    "    if ctx.state.most > 1 and not self.reask then error('asked twice: ' .. key) end\n"
    "    for i = 1, #grp do if grp[i].op == 'matmul' then return false, 'matmul' end end\n"
    "    return #grp <= 3, 'size'\n"
    "  end}\n";

/* Plan m with the policy src_fmt % arg; its stats into st. */
static fe_plan *plan_src(fe_engine *e, fe_model *m, const char *src_fmt, const char *arg,
                         fe_plan_stats *st)
{
    char src[2048];
    snprintf(src, sizeof src, src_fmt, arg);
    fe_error err = {0};
    fe_policy *p = load(e, src);
    fe_plan *plan = fe_policy_plan(p, m, st, &err);
    if (!plan)
        fail_msg("%s", err.message);
    fe_policy_free(p);
    return plan;
}

static void reask(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(LLAMA);
    fe_plan_stats once = {0}, again = {0};
    fe_plan *a = plan_src(e, m, reask_src, "false", &once), *b = plan_src(e, m, reask_src, "true", &again);
    assert_true(once.decide_reused > 0);
    assert_int_equal(again.decide_reused, 0);
    /* A reused refusal may be of a pair that this round's earlier merges
     * make stale, which the re-asking run then skips unasked. */
    assert_true(again.decide_calls > once.decide_calls);
    assert_true(again.decide_calls <= once.decide_calls + once.decide_reused);
    assert_int_equal(a->ngroups, b->ngroups);
    for (int32_t i = 0; i < a->ngroups; i++) {
        assert_int_equal(a->groups[i].n, b->groups[i].n);
        assert_memory_equal(a->members + a->groups[i].off, b->members + b->groups[i].off,
                            (size_t)a->groups[i].n * sizeof *a->members);
    }
    fe_plan_free(a);
    fe_plan_free(b);
    fe_model_free(m);
    fe_engine_free(e);
}

/* memo = true: a candidate of a structure asked about before gets the
 * first answer without a call; plan and decision log are those of the run
 * that asks every time, and the calls saved are the answers reused. */
static const char memo_src[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy{name = 'memo', driver = 'greedy', memo = %s,\n"
    "  decide = function(self, grp, ctx)\n"
    "    for i = 1, #grp do if grp[i].op == 'matmul' then return false, 'a matmul' end end\n"
    "    local s = ctx:simulate(grp)\n"
    "    return #grp <= 4 and s.fits, ('%%d nodes, working set %%d'):format(#grp, s.working_set)\n"
    "  end}\n";

static void memo(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model(LLAMA);
    fe_plan_stats on = {0}, off = {0};
    fe_plan *a = plan_src(e, m, memo_src, "true", &on), *b = plan_src(e, m, memo_src, "false", &off);
    assert_true(on.hook_memo > 0);
    assert_int_equal(off.hook_memo, 0);
    assert_int_equal(off.decide_calls, on.decide_calls + on.hook_memo);
    fe_error err = {0};
    char *la = fe_plan_format(a, NULL, NULL, NULL, FE_FORMAT_DECISIONS, &err);
    char *lb = fe_plan_format(b, NULL, NULL, NULL, FE_FORMAT_DECISIONS, &err);
    assert_non_null(la);
    assert_non_null(lb);
    assert_string_equal(la, lb);
    fe_free(la);
    fe_free(lb);
    fe_plan_free(a);
    fe_plan_free(b);
    fe_model_free(m);
    fe_engine_free(e);
}

/* ctx:signature(group): 32 hex digits, the same for a group given as
 * nodes, names or indices, the same for q_proj and k_proj (matmuls of the
 * same shapes reading the same normalised input), another for a different
 * op; bad arguments are errors at the policy's line. */
static void signature(void **s)
{
    (void)s;
    plan_ok(LLAMA, "signed",
        "local fe = require 'fuseeng'\n"
        "return fe.policy{name = 'sig', driver = 'plan',\n"
        "  plan = function(self, graph, ctx)\n"
        "    local q, k, norm = graph:node('q_proj'), graph:node('k_proj'), graph:node('input_layernorm')\n"
        "    local a = ctx:signature({q})\n"
        "    assert(#a == 32 and a:match('^%x+$'), a)\n"
        "    assert(ctx:signature({'q_proj'}) == a, 'by name')\n"
        "    assert(ctx:signature({q.index}) == a, 'by index')\n"
        "    assert(ctx:signature({k}) == a, 'k_proj is q_proj again')\n"
        "    assert(ctx:signature({norm}) ~= a, 'another op')\n"
        "    assert(ctx:signature({norm, q}) == ctx:signature({norm, k}), 'norm with q or with k: alike')\n"
        "    assert(ctx:signature({norm, q}) ~= ctx:signature({q}), 'a member more')\n"
        "    local ok, msg = pcall(ctx.signature, ctx, 42)\n"
        "    assert(not ok and msg:find('expected a group or a list of nodes', 1, true), msg)\n"
        "    ctx:log('signed')\n"
        "    return {}\n"
        "  end}\n");
}

/* The patterns driver asks a chain pattern about each sequence of (op,
 * kind) once, however often the model repeats it, and an expression
 * pattern with a root_op only at nodes of that op, and with root_needs
 * only where a producer of the root's inputs has one of the needed ops
 * (the swiglu mul, which gate_silu feeds, is asked and matches). */
static void patterns_asked_once(void **s)
{
    (void)s;
    plan_ok(LLAMA, "probed swiglu",
        "local fe = require 'fuseeng'\n"
        "local seen = {}\n"
        "local chain = { kind = 'chain', match = function(self, seq)\n"
        "  local t = {}\n"
        "  for i, n in ipairs(seq) do t[i] = n.op .. ':' .. n.pattern end\n"
        "  local key = table.concat(t, ';')\n"
        "  if seen[key] then error('asked twice about ' .. key) end\n"
        "  seen[key] = true\n"
        "  return #seq >= 2 and 2 or nil, #seq < 3\n"
        "end }\n"
        "local expr = { kind = 'expr', root_op = 'rms_norm', match_expr = function(self, node)\n"
        "  if node.op ~= 'rms_norm' then error('asked at ' .. node.op) end\n"
        "  return nil\n"
        "end }\n"
        "local swiglu = { kind = 'expr', root_op = 'mul', root_needs = {{'silu'}},\n"
        "  match_expr = function(self, node)\n"
        "    local made = false\n"
        "    for _, t in ipairs(node.inputs) do made = made or (t.producer and t.producer.op == 'silu') end\n"
        "    if not made then error('asked at ' .. node.name .. ', which no silu feeds') end\n"
        "    return {}, {node.inputs[1].producer, node}\n"
        "  end }\n"
        "return fe.policy{name = 'once', driver = 'patterns', patterns = {chain, expr, swiglu},\n"
        "  decide = function(self, grp, ctx)\n"
        "    return false, #grp == 2 and grp[2].name == 'swiglu' and 'probed swiglu' or 'probed'\n"
        "  end}\n");
}

/* The splits of the one-group plan policy p (NULL: src) makes of m: the
 * group's split, or -1 if the plan has another number of groups. */
static int32_t split_of(fe_engine *e, fe_model *m, fe_policy *p, const char *src)
{
    fe_error err = {0};
    if (!p)
        p = load(e, src);
    fe_plan *plan = plan_with(e, p, m, &err);
    if (!plan)
        fail_msg("%s", err.message);
    int32_t k = plan->ngroups == 1 ? plan->groups[0].split : -1;
    fe_plan_free(plan);
    fe_policy_free(p);
    return k;
}

/* Tiling is the policy's: fuse_all asks for none and gets none (its SwiGLU
 * group overflows the L2 and was once tiled x17 by default); tiling = "auto"
 * takes the simulator's split; a split hook's answer stands either way. */
static void tiling(void **s)
{
    (void)s;
    fe_engine *e = new_engine(0, 0, 0);
    fe_model *m = model("examples/bench/swiglu.json");
    fe_error err = {0};
    fe_policy *all = fe_engine_load_policy(e, "fuse_all", &err);
    assert_non_null(all);
    assert_int_equal(split_of(e, m, all, NULL), 1);
    assert_int_equal(split_of(e, m, NULL, "local fe = require 'fuseeng'\n"
                              "return fe.policy{name = 'auto', driver = 'greedy', tiling = 'auto'}\n"), 17);
    assert_int_equal(split_of(e, m, NULL, "local fe = require 'fuseeng'\n"
                              "return fe.policy{name = 'three', driver = 'greedy',\n"
                              "  split = function(self, group, ctx) return 3 end}\n"), 3);
    assert_int_equal(split_of(e, m, NULL, "local fe = require 'fuseeng'\n"
                              "return fe.policy{name = 'auto3', driver = 'greedy', tiling = 'auto',\n"
                              "  split = function(self, group, ctx) return 3 end}\n"), 3);
    fe_model_free(m);
    fe_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(swap_policies), cmocka_unit_test(combinators), cmocka_unit_test(params),
        cmocka_unit_test(faults), cmocka_unit_test(hook_faults), cmocka_unit_test(time_limit), cmocka_unit_test(load_faults), cmocka_unit_test(plan_driver),
        cmocka_unit_test(dataflow_driver), cmocka_unit_test(dataflow_deep_chain),
        cmocka_unit_test(patterns_driver), cmocka_unit_test(bindings),
        cmocka_unit_test(random_policies), cmocka_unit_test(kept_ctx),
        cmocka_unit_test(simulate_parts), cmocka_unit_test(tiling), cmocka_unit_test(reask), cmocka_unit_test(memo), cmocka_unit_test(signature), cmocka_unit_test(patterns_asked_once),
    };
    return cmocka_run_group_tests_name("runtime", tests, NULL, NULL);
}
