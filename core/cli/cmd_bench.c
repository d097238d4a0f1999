/* cmd_bench.c: `fuseeng bench MODEL [--policy P]`: time every group of a
 * plan and every single op on this CPU's kernels. */
#include <omp.h>
#include <string.h>

#include "choice.h"
#include "cli.h"
#include "engine.h"
#include "execute.h"
#include "groupkey.h"
#include "jsonw.h"
#include "measure.h"
#include "ops.h"
#include "sim.h"

static const char usage[] =
    "usage: fuseeng bench MODEL [--policy P | --plan FILE] [options]\n"
    "\n"
    "Time, on this CPU's kernels, every group of the plan (as one kernel, with its\n"
    "kernel choice and split) and every single op alone, then the plan and the\n"
    "unfused plan end to end. Each item gets a warm-up and repetitions until its time\n"
    "budget; the report gives median, min, max, spread (interquartile range),\n"
    "repetitions, bytes (inputs read once + outputs written once) and the effective\n"
    "bandwidth. Without --policy or --plan every op is its own group.\n"
    "\n"
    "  --policy P         plan with P (repeat with --combine, --param as for run)\n"
    "  --plan FILE        time a saved plan (fuseeng run --plan-out), at the dims and\n"
    "                     on the machine it records unless --dim / --machine say\n"
    "                     otherwise (--ignore-model-name: made for another model)\n"
    "  --dim NAME=V       override a model dim\n"
    "  --machine M        the simulated machine the policy plans for (default gcu)\n"
    "  --profile FILE     measured times for profile-driven policies\n"
    "  --budget S         seconds of repetitions per item (default 0.2)\n"
    "  --seed N           random inputs and weights (default 1)\n"
    "  --json             print the results as JSON (fuseeng.bench/1)\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                     limits of the policy run (as for fuseeng run)\n"
    "\n"
    "Set OMP_NUM_THREADS to choose the threads. Exit status 2 for a bad model,\n"
    "policy or option, or a model with ops that have no kernel.\n";

typedef struct bench_opts {
    const char *model;
    fe_cli_plan_opts plan;
    fe_cli_measure_opts m;
    int json;
} bench_opts;

static int parse(int argc, char **argv, bench_opts *o)
{
    const char *val = NULL;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_plan_opt("bench", argc, argv, &i, &o->plan);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if ((m = fe_cli_opt("bench", argc, argv, &i, "--budget", &val))) {
            if (m == 2 || fe_cli_seconds("bench", "--budget", val, &o->m.budget))
                return 2;
        } else if ((m = fe_cli_opt("bench", argc, argv, &i, "--seed", &val))) {
            if (m == 2 || fe_cli_seed("bench", val, &o->m.seed))
                return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("bench", "unknown option '%s'", argv[i]);
        } else if (o->model) {
            return fe_cli_usage("bench", "one MODEL at a time (got '%s' and '%s')", o->model, argv[i]);
        } else {
            o->model = argv[i];
        }
    }
    if (!o->model)
        return fe_cli_usage("bench", "missing MODEL (a fuseeng.model/1 JSON file)");
    return fe_cli_plan_check("bench", &o->plan, 0);
}

static double gbps(int64_t bytes, double ms)
{
    return ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
}

static void print_text(const bench_opts *o, const fe_plan *plan, const fe_cli_measured *m,
                       const char *label)
{
    const fe_graph *g = plan->g;
    char b[32];
    printf("model      %s (%d nodes, %s)\n", g->name[0] ? g->name : "(unnamed)", g->nnodes, o->model);
    printf("plan       %s (%d groups)\n", label, plan->ngroups);
    printf("measured   on this CPU: %s, seed %llu, %.2f s of repetitions per item\n",
           fe_cli_threads(), (unsigned long long)(o->m.seed ? o->m.seed : 1),
           o->m.budget > 0 ? o->m.budget : 0.2);
    printf("\ngroups (as one kernel; separate = members one by one)\n");
    printf("  %4s  %-34s %5s  %-14s %10s %10s %10s %9s %6s %10s %7s %11s %7s\n", "#", "ops", "nodes",
           "kernel", "median ms", "min", "max", "spread", "reps", "bytes", "GB/s", "separate ms",
           "speedup");
    for (int gi = 0; gi < m->ngroups; gi++) {
        const fe_bench_group *bg = &m->groups[gi];
        char key[40];
        fe_sim_group_label(g, bg->nodes, bg->n, key, sizeof key);
        printf("  %4d  %-34.34s %5d  %-14s %10.4f %10.4f %10.4f %9.4f %6d %10s %7.1f %11.4f %6.2fx%s\n",
               gi, key, bg->n, fe_k_choice_name(bg->is_fused || bg->n == 1 ? bg->kernel : FE_K_CHOICE_PER_OP),
               bg->fused.median_ms, bg->fused.min_ms, bg->fused.max_ms, bg->fused.spread_ms,
               bg->fused.reps, fe_fmt_bytes((double)bg->bytes, b, sizeof b),
               gbps(bg->bytes, bg->fused.median_ms), bg->members_ms,
               bg->fused.median_ms > 0 ? bg->members_ms / bg->fused.median_ms : 0,
               bg->is_fused || bg->n == 1 ? "" : "  (not fused: see --json how)");
    }
    printf("\nsingle ops (each alone)\n");
    printf("  %-32s %-14s %5s %10s %10s %10s %9s %6s %10s %7s\n", "node", "op", "group", "median ms",
           "min", "max", "spread", "reps", "bytes", "GB/s");
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_bench_stats *s = &m->node_ms[v];
        printf("  %-32.32s %-14.14s %5d %10.4f %10.4f %10.4f %9.4f %6d %10s %7.1f\n",
               fe_node_name(g, fe_graph_node(g, v)), fe_node_op_name(fe_graph_node(g, v)),
               plan->group_of[v], s->median_ms, s->min_ms, s->max_ms, s->spread_ms, s->reps,
               fe_fmt_bytes((double)m->node_bytes[v], b, sizeof b), gbps(m->node_bytes[v], s->median_ms));
    }
    double gsum = 0, osum = 0;
    for (int gi = 0; gi < m->ngroups; gi++)
        gsum += m->groups[gi].fused.median_ms;
    for (int32_t v = 0; v < g->nnodes; v++)
        osum += m->node_ms[v].median_ms;
    printf("\ntotals\n");
    printf("  plan, end to end        %10.4f ms (min %.4f, max %.4f, spread %.4f, %d runs)\n",
           m->plan_st.median_ms, m->plan_st.min_ms, m->plan_st.max_ms, m->plan_st.spread_ms,
           m->plan_st.reps);
    printf("  unfused, end to end     %10.4f ms (min %.4f, max %.4f, spread %.4f, %d runs)\n",
           m->unfused_st.median_ms, m->unfused_st.min_ms, m->unfused_st.max_ms,
           m->unfused_st.spread_ms, m->unfused_st.reps);
    printf("  speedup                 %10.2fx\n",
           m->plan_st.median_ms > 0 ? m->unfused_st.median_ms / m->plan_st.median_ms : 0);
    printf("  sum of group medians    %10.4f ms; sum of single-op medians %.4f ms\n", gsum, osum);
}

static void print_json(const bench_opts *o, const fe_plan *plan, const fe_cli_measured *m,
                       const char *label)
{
    const fe_graph *g = plan->g;
    fe_jw w;
    fe_jw_init(&w, stdout, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "format");
    fe_jw_str(&w, "fuseeng.bench/1");
    fe_jw_key(&w, "model");
    fe_jw_str(&w, g->name);
    fe_jw_key(&w, "plan");
    fe_jw_str(&w, label);
    fe_jw_key(&w, "threads");
    fe_jw_int(&w, omp_get_max_threads());
    fe_jw_key(&w, "seed");
    fe_jw_int(&w, (int64_t)(o->m.seed ? o->m.seed : 1));
    fe_jw_key(&w, "budget_s");
    fe_jw_num(&w, o->m.budget > 0 ? o->m.budget : 0.2);
    fe_jw_key(&w, "groups");
    fe_jw_arr(&w);
    for (int gi = 0; gi < m->ngroups; gi++) {
        const fe_bench_group *bg = &m->groups[gi];
        char key[4096];
        fe_jw_obj(&w);
        fe_jw_key(&w, "group");
        fe_jw_int(&w, gi);
        fe_jw_key(&w, "nodes");
        fe_jw_arr_flat(&w);
        for (int k = 0; k < bg->n; k++)
            fe_jw_str(&w, fe_node_name(g, fe_graph_node(g, bg->nodes[k])));
        fe_jw_end(&w);
        fe_group_compat_key(g, bg->nodes, bg->n, key, sizeof key);
        fe_jw_key(&w, "ops");
        fe_jw_str(&w, key);
        fe_jw_key(&w, "kernel");
        fe_jw_str(&w, fe_k_choice_name(bg->kernel));
        fe_jw_key(&w, "one_kernel");
        fe_jw_bool(&w, bg->is_fused);
        fe_jw_key(&w, "split");
        fe_jw_int(&w, plan->groups[gi].split);
        fe_jw_key(&w, "how");
        fe_jw_str(&w, bg->how);
        fe_jw_key(&w, "median_ms");
        fe_jw_num(&w, bg->fused.median_ms);
        fe_jw_key(&w, "min_ms");
        fe_jw_num(&w, bg->fused.min_ms);
        fe_jw_key(&w, "max_ms");
        fe_jw_num(&w, bg->fused.max_ms);
        fe_jw_key(&w, "spread_ms");
        fe_jw_num(&w, bg->fused.spread_ms);
        fe_jw_key(&w, "reps");
        fe_jw_int(&w, bg->fused.reps);
        fe_jw_key(&w, "bytes");
        fe_jw_int(&w, bg->bytes);
        fe_jw_key(&w, "gbps");
        fe_jw_num(&w, gbps(bg->bytes, bg->fused.median_ms));
        fe_jw_key(&w, "separate_ms");
        fe_jw_num(&w, bg->members_ms);
        fe_jw_key(&w, "separate_bytes");
        fe_jw_int(&w, bg->members_bytes);
        fe_jw_key(&w, "speedup");
        fe_jw_num(&w, bg->fused.median_ms > 0 ? bg->members_ms / bg->fused.median_ms : 0);
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
    fe_jw_key(&w, "ops");
    fe_jw_arr(&w);
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_bench_stats *s = &m->node_ms[v];
        fe_jw_obj_flat(&w);
        fe_jw_key(&w, "node");
        fe_jw_str(&w, fe_node_name(g, fe_graph_node(g, v)));
        fe_jw_key(&w, "op");
        fe_jw_str(&w, fe_node_op_name(fe_graph_node(g, v)));
        fe_jw_key(&w, "group");
        fe_jw_int(&w, plan->group_of[v]);
        fe_jw_key(&w, "median_ms");
        fe_jw_num(&w, s->median_ms);
        fe_jw_key(&w, "min_ms");
        fe_jw_num(&w, s->min_ms);
        fe_jw_key(&w, "max_ms");
        fe_jw_num(&w, s->max_ms);
        fe_jw_key(&w, "spread_ms");
        fe_jw_num(&w, s->spread_ms);
        fe_jw_key(&w, "reps");
        fe_jw_int(&w, s->reps);
        fe_jw_key(&w, "bytes");
        fe_jw_int(&w, m->node_bytes[v]);
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
    fe_jw_key(&w, "totals");
    fe_jw_obj(&w);
    fe_cli_stats_json(&w, "plan", &m->plan_st);
    fe_cli_stats_json(&w, "unfused", &m->unfused_st);
    fe_jw_key(&w, "speedup");
    fe_jw_num(&w, m->plan_st.median_ms > 0 ? m->unfused_st.median_ms / m->plan_st.median_ms : 0);
    fe_jw_end(&w);
    fe_jw_end(&w);
}

static int run(int argc, char **argv)
{
    bench_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_cli_planned pl;
    fe_cli_measured m;
    if (fe_cli_plan_make(o.model, &o.plan, &pl, &err) != FE_OK)
        return fe_cli_fail(&err);
    o.m.totals = 1;
    if (fe_cli_measure(pl.plan, &o.m, &m, &err) != FE_OK) {
        fe_cli_planned_free(&pl);
        return fe_cli_fail(&err);
    }
    const char *label = fe_cli_plan_label(&o.plan, pl.plan);
    if (o.json)
        print_json(&o, pl.plan, &m, label);
    else
        print_text(&o, pl.plan, &m, label);
    fe_cli_measured_free(&m);
    fe_cli_planned_free(&pl);
    return 0;
}

const fe_cmd fe_cmd_bench = {"bench", "time a plan's groups and every op on this CPU", usage, run};
