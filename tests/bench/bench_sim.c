/* bench_sim.c: speed of the GCU simulator.
 *
 * Targets (issue: GCU simulator): fe_sim_group >= 200,000 calls per second
 * for groups of 1..10 nodes (policies call it in loops), and a whole plan of
 * ~100,000 nodes simulated in <= 50 ms, unfused and fused. Groups are
 * windows of consecutive nodes of the 2,500-layer LLaMA model that
 * bench_load.c generates (build/bench/llama_100k.json; made here if
 * missing); the fused plan groups each layer's rotary, softmax, SwiGLU,
 * residual + norm and down_proj + residual nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "load.h"
#include "machine.h"
#include "plan.h"
#include "sandbox.h"
#include "sim.h"

#define MODEL "build/bench/llama_100k.json"
#define LAYERS 2500
#define CALLS_TARGET 200000.0
#define PLAN_TARGET_S 0.050

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
    double sink = 0, t0 = now(), t;
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
        t = now() - t0;
    } while (t < 0.2);
    if (sink < 0)
        printf("?");
    return (double)calls / t;
}

/* Best of 5 runs of fe_sim_plan, in seconds. */
static double plan_time(const fe_plan *p, const fe_machine *m, fe_sim_report *keep)
{
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        fe_sim_report r;
        fe_error err = {0};
        double t0 = now();
        if (fe_sim_plan(p, m, &r, &err) != FE_OK) {
            fprintf(stderr, "%s\n", err.message);
            return -1;
        }
        double t = now() - t0;
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
