/* bench_policy.c: the policy runtime on a ~100k-node model: planning time
 * for fuse_all, for tvm_fuseops (a Lua plan() over the whole graph) and for
 * a Lua greedy policy with a non-trivial score and decide, Lua decide calls
 * per second, and peak RSS.
 *
 * Targets (issue: Lua policy runtime): each plan in at most 2 s; at least
 * 1,000,000 simple decide calls per second. The rate is measured around the
 * calls themselves (group object, protected call, verdict, log entry). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "engine.h"
#include "load.h"
#include "planning.h"

static const char smart[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy {\n"
    "  name = 'smart', driver = 'greedy', params = { max_nodes = 24, max_reductions = 1 },\n"
    "  -- Inductor-like: memory saved first, nearer pairs next.\n"
    "  score = function(self, a, b, ctx)\n"
    "    local shared = 0\n"
    "    for _, t in ipairs(a.outputs) do\n"
    "      for _, c in ipairs(t.consumers) do if b:contains(c) then shared = shared + t.bytes break end end\n"
    "    end\n"
    "    return shared / (1 + math.abs(a.first.index - b.first.index))\n"
    "  end,\n"
    "  decide = function(self, g, ctx)\n"
    "    if #g > self.params.max_nodes then return false, 'too big' end\n"
    "    local k = g.kinds\n"
    "    if k.reduction > self.params.max_reductions then return false, 'two reductions' end\n"
    "    if g.internal_bytes == 0 then return false, 'saves nothing' end\n"
    "    return true, 'saves ' .. fe.fmt_bytes(g.internal_bytes)\n"
    "  end,\n"
    "}\n";

static const char simple[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy { name = 'simple', driver = 'greedy',\n"
    "  decide = function(self, g, ctx) return false, 'no' end }\n";

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(void)
{
    const char *path = "build/bench/llama_100k.json";
    struct stat st;
    if (stat(path, &st) != 0 &&
        system("lua5.4 examples/gen_models.lua --layers 2500 --compact --out build/bench/llama_100k.json") != 0) {
        fprintf(stderr, "cannot generate %s\n", path);
        return 1;
    }
    fe_error err = {0};
    fe_graph *g = fe_load_model_file(path, NULL, &err);
    fe_engine *e = g ? fe_engine_new(NULL, &err) : NULL;
    if (!e) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("model %s: %d nodes\n", path, g->nnodes);
    printf("%-12s %8s %8s %12s %14s %12s  %s\n", "policy", "plan s", "kernels", "hook calls",
           "calls/s (Lua)", "Lua memory", "target");
    int bad = 0;
    struct { const char *name, *src; double max_s; double min_rate; } runs[] = {
        {"fuse_all", NULL, 2.0, 0},
        {"tvm_fuseops", NULL, 2.0, 0},   /* plan driver, graph:postdom() + graph:arrays() */
        {"smart", smart, 2.0, 0},
        {"simple", simple, 1e9, 1e6},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        fe_policy *p = runs[i].src
                           ? fe_engine_load_policy_buffer(e, runs[i].src, strlen(runs[i].src), runs[i].name, &err)
                           : fe_engine_load_policy(e, runs[i].name, &err);
        fe_run_stats s;
        fe_plan *plan = p ? fe_run_policy(e, p, g, &s, &err) : NULL;
        if (!plan) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double rate = s.hook_seconds > 0 ? (double)s.hook_calls / s.hook_seconds : 0;
        int ok = s.seconds <= runs[i].max_s && rate >= runs[i].min_rate;
        bad |= !ok;
        char target[64];
        if (runs[i].min_rate > 0)
            snprintf(target, sizeof target, ">= 1e6 decide calls/s: %s", ok ? "met" : "MISSED");
        else
            snprintf(target, sizeof target, "plan <= 2 s: %s", ok ? "met" : "MISSED");
        printf("%-12s %8.3f %8d %12lld %14.0f %10.1f MiB  %s\n", runs[i].name, s.seconds, plan->ngroups,
               (long long)s.hook_calls, rate, (double)s.lua_bytes / 1048576.0, target);
        fe_plan_free(plan);
        fe_policy_free(p);
    }
    printf("peak RSS %.1f MiB\n", (double)peak_rss_kib() / 1024.0);
    fe_engine_free(e);
    fe_graph_free(g);
    return bad;
}
