/* bench_sim.c: speed of the GCU simulator.
 *
 * Targets (issue: GCU simulator): >= 200,000 calls per second for groups
 * of 1..10 nodes (policies price candidates in loops), and a whole plan of
 * ~100,000 nodes simulated in <= 50 ms, unfused and fused. The call rate is
 * measured twice: fe_sim_group from C, and ctx:simulate from a Lua policy,
 * which is what a policy pays (argument checks, the node list, the result
 * table). Groups are windows of consecutive nodes of the 2,500-layer LLaMA
 * model that bench_load.c generates (build/bench/llama_100k.json; made here
 * if missing); the fused plan groups each layer's rotary, softmax, SwiGLU,
 * residual + norm and down_proj + residual nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "api.h"
#include "machine_file.h"
#include "load.h"
#include "machine.h"
#include "machine_file.h"
#include "plan.h"
#include "plan_build.h"
#include "planning.h"
#include "sandbox.h"
#include "sim.h"

#include "bench_util.h"

#define MODEL "build/bench/llama_100k.json"
#define LAYERS 2500
#define CALLS_TARGET 200000.0
#define PLAN_TARGET_S 0.050

static int ensure_model(void)
{
    struct stat st;
    char cmd[256];
    if (stat(MODEL, &st) == 0)
        return 0;
    snprintf(cmd, sizeof cmd, "lua5.4 examples/gen_models.lua --layers %d --compact --out %s",
             LAYERS, MODEL);
    printf("generating %s (%d layers)...\n", MODEL, LAYERS);
    fflush(stdout);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *const layer_groups[] = {
    "q_view,q_heads,q_cos,q_x1,q_x2,q_neg_x2,q_rot,q_rot_sin,q_rope",
    "k_view,k_heads,k_cos,k_x1,k_x2,k_neg_x2,k_rot,k_rot_sin,k_rope",
    "scores_scaled,scores_masked,probs",
    "attn_t,attn_flat",
    "attn_residual,post_attention_layernorm",
    "gate_silu,swiglu",
    "down_proj,out",
};

static fe_plan *fused_plan(const fe_graph *g, fe_error *err)
{
    int32_t *labels = malloc((size_t)g->nnodes * sizeof *labels);
    if (!labels)
        return NULL;
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = v;
    for (int layer = 0; layer < LAYERS; layer++) {
        for (size_t i = 0; i < sizeof layer_groups / sizeof layer_groups[0]; i++) {
            char buf[256], name[128];
            int32_t first = -1;
            snprintf(buf, sizeof buf, "%s", layer_groups[i]);
            for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                snprintf(name, sizeof name, "layers.%d.%s", layer, t);
                int32_t v = fe_graph_find_node(g, name);
                if (v < 0)
                    continue;
                if (first < 0)
                    first = v;
                labels[v] = first;
            }
        }
    }
    fe_plan *p = fe_plan_from_labels(g, labels, err);
    free(labels);
    if (p)
        for (int32_t i = 0; i < p->ngroups; i++)
            p->groups[i].split = 0;   /* let the simulator tile */
    return p;
}

/* Calls per second of fe_sim_group on n-node windows spread over g. */
static double group_rate(const fe_graph *g, const fe_machine *m, int n)
{
    int32_t ids[16];
    fe_sim_group_result r;
    long calls = 0;
    double sink = 0, t0 = fe_clock_s(), t;
    int32_t start = 0;
    do {
        for (int k = 0; k < 2000; k++) {
            start = (start + 977) % (g->nnodes - n);
            for (int i = 0; i < n; i++)
                ids[i] = start + i;
            fe_sim_group(g, m, ids, n, 0, &r, NULL);
            sink += r.time_s;
        }
        calls += 2000;
        t = fe_clock_s() - t0;
    } while (t < 0.2);
    if (sink < 0)
        printf("?");
    return (double)calls / t;
}

/* A policy whose plan() calls ctx:simulate `calls` times on windows of n
 * consecutive nodes (lists of node objects, as policies hold them), spread
 * over the graph as group_rate's are, and returns no groups. */
static const char lua_rate_policy[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy {\n"
    "  name = 'simulate_rate', driver = 'plan', params = { n = 1, calls = 0 },\n"
    "  plan = function(self, graph, ctx)\n"
    "    local n, calls, windows, start = self.params.n, self.params.calls, {}, 0\n"
    "    for w = 1, 1000 do\n"
    "      start = (start + 977) % (#graph - n)\n"
    "      local list = {}\n"
    "      for i = 1, n do list[i] = graph[start + i] end\n"
    "      windows[w] = list\n"
    "    end\n"
    "    local sum = 0\n"
    "    for c = 1, calls do sum = sum + ctx:simulate(windows[c % 1000 + 1]).time end\n"
    "    if sum < 0 then ctx:log('?') end\n"
    "    return {}\n"
    "  end,\n"
    "}\n";

/* Seconds of one run of the rate policy (best of 3). */
static double lua_run(fe_policy *p, const fe_graph *g, int n, long calls)
{
    char v[32];
    fe_error err = {0};
    double best = 1e9;
    snprintf(v, sizeof v, "%d", n);
    fe_policy_set_param(p, "n", v, &err);
    snprintf(v, sizeof v, "%ld", calls);
    fe_policy_set_param(p, "calls", v, &err);
    for (int rep = 0; rep < 3; rep++) {
        fe_run_stats st;
        fe_plan *plan = fe_run_policy(&p->r, g, &st, &err);
        if (!plan) {
            fprintf(stderr, "%s\n", err.message);
            return -1;
        }
        fe_plan_free(plan);
        if (st.seconds < best)
            best = st.seconds;
    }
    return best;
}

/* ctx:simulate calls per second on n-node windows: the run with the calls
 * less the same run without them (the run's own work on 100k nodes). */
static double lua_rate(fe_policy *p, const fe_graph *g, int n)
{
    const long calls = 100000;
    double base = lua_run(p, g, n, 0), with = lua_run(p, g, n, calls);
    if (base < 0 || with < 0 || with <= base)
        return -1;
    return (double)calls / (with - base);
}

/* Best of 5 runs of fe_sim_plan, in seconds. */
static double plan_time(const fe_plan *p, const fe_machine *m, fe_sim_report *keep)
{
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        fe_sim_report r;
        fe_error err = {0};
        double t0 = fe_clock_s();
        if (fe_sim_plan(p, m, &r, &err) != FE_OK) {
            fprintf(stderr, "%s\n", err.message);
            return -1;
        }
        double t = fe_clock_s() - t0;
        if (t < best)
            best = t;
        if (rep == 4)
            *keep = r;
        else
            fe_sim_report_free(&r);
    }
    return best;
}

int main(void)
{
    fe_error err = {0};
    int status = 0;
    if (ensure_model() != 0) {
        fprintf(stderr, "cannot generate %s\n", MODEL);
        return 1;
    }
    fe_sandbox *sb = fe_sandbox_new(NULL, &err);
    fe_machine m;
    if (!sb || fe_machine_load(sb, "gcu", &m, &err) != FE_OK) {
        fprintf(stderr, "%s\n", err.message);
        fe_sandbox_free(sb);
        return 1;
    }
    fe_sandbox_free(sb);
    fe_graph *g = fe_load_model_file(MODEL, NULL, &err);
    if (!g) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("machine %s, model %s: %d nodes\n", m.name, MODEL, (int)g->nnodes);

    printf("fe_sim_group, calls per second (target >= %.0f):\n", CALLS_TARGET);
    for (int n = 1; n <= 10; n++) {
        double rate = group_rate(g, &m, n);
        int met = rate >= CALLS_TARGET;
        printf("  %2d nodes: %10.0f calls/s  %s\n", n, rate, met ? "met" : "MISSED");
        status |= !met;
    }

    fe_engine *e = fe_engine_new(NULL, &err);
    size_t len = sizeof lua_rate_policy - 1;
    fe_policy *pol =
        e ? fe_engine_load_policy_buffer(e, lua_rate_policy, len, "simulate_rate", &err) : NULL;
    if (!pol) {
        fprintf(stderr, "%s\n", err.message);
        fe_engine_free(e);
        fe_graph_free(g);
        return 1;
    }
    printf("ctx:simulate from a Lua policy, calls per second (target >= %.0f):\n", CALLS_TARGET);
    for (int n = 1; n <= 10; n++) {
        double rate = lua_rate(pol, g, n);
        int met = rate >= CALLS_TARGET;
        printf("  %2d nodes: %10.0f calls/s  %s\n", n, rate, met ? "met" : "MISSED");
        status |= !met;
    }
    fe_policy_free(pol);
    fe_engine_free(e);

    fe_plan *u = fe_plan_unfused(g, &err);
    fe_plan *f = u ? fused_plan(g, &err) : NULL;
    if (!u || !f) {
        fprintf(stderr, "%s\n", err.message);
        fe_plan_free(u);
        fe_graph_free(g);
        return 1;
    }
    fe_sim_report ru, rf;
    double tu = plan_time(u, &m, &ru), tf = plan_time(f, &m, &rf);
    printf("fe_sim_plan, whole plan (target <= %.0f ms):\n", PLAN_TARGET_S * 1e3);
    printf("  unfused: %6d groups in %7.2f ms  %s  (simulated %.1f ms)\n", (int)u->ngroups,
           tu * 1e3, tu >= 0 && tu <= PLAN_TARGET_S ? "met" : "MISSED", ru.total.time_s * 1e3);
    printf("  fused:   %6d groups in %7.2f ms  %s  (simulated %.1f ms, %d tiled, speedup %.2fx)\n",
           (int)f->ngroups, tf * 1e3, tf >= 0 && tf <= PLAN_TARGET_S ? "met" : "MISSED",
           rf.total.time_s * 1e3, (int)rf.total.tiled, ru.total.time_s / rf.total.time_s);
    status |= !(tu >= 0 && tu <= PLAN_TARGET_S) || !(tf >= 0 && tf <= PLAN_TARGET_S);
    fe_sim_report_free(&ru);
    fe_sim_report_free(&rf);
    fe_plan_free(u);
    fe_plan_free(f);
    fe_graph_free(g);
    return status;
}
