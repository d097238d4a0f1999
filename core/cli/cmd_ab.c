/* cmd_ab.c: `fuseeng ab MODEL... --policy A --policy B`: compare policies on
 * the same models and the same simulated machine. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "engine.h"
#include "exec.h"
#include "jsonw.h"
#include "outfile.h"
#include "planning.h"
#include "sim.h"
#include "timing.h"

static const char usage[] =
    "usage: fuseeng ab MODEL... --policy A --policy B [--policy C ...] [options]\n"
    "\n"
    "Plan every MODEL with every policy on one simulated machine and compare them\n"
    "with the unfused baseline: kernels, simulated time, speedup, L3 traffic,\n"
    "device-memory peak, tiled groups. The fastest plan of each model is marked.\n"
    "\n"
    "  --policy P        a policy (at least two; a name in policies/ or a file)\n"
    "  --param K=V       override a parameter in every policy that has it\n"
    "  --machine M       simulated machine (default gcu)\n"
    "  --profile FILE    measured times for profile-driven policies\n"
    "  --dim NAME=V      override a dim in every model that has it\n"
    "  --json            print the results as JSON\n"
    "  --csv             print one CSV row per model and policy\n"
    "  --svg FILE        write a bar chart of the speedups\n"
    "  --measure         also run every plan on this CPU's kernels: measured time\n"
    "                    (median), speedup over every op as its own kernel, and a\n"
    "                    check of the results against the unfused reference\n"
    "  --budget S        seconds of timed runs per plan with --measure (default 0.5)\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                    limits of each policy run (as for fuseeng run)\n"
    "\n"
    "Exit status 1 when --measure finds a plan whose results differ from the\n"
    "reference (the table marks it), 2 for bad input.\n";

typedef struct cell {
    int kernels, tiled;
    double time_s, speedup;
    int64_t l3_bytes, mem_peak;
    double cpu_ms, cpu_speedup, cpu_max_rel;   /* --measure */
    int cpu_ok;
} cell;

typedef struct ab_opts {
    const char *models[64];
    int nmodels;
    const char *policies[16];
    int npolicies;
    const char *params[64];
    int nparams;
    fe_cli_dims dims;
    const char *machine, *svg, *profile;
    int json, csv, measure;
    double budget;
    fe_engine_options limits;   /* the Lua limits */
} ab_opts;

static int parse(int argc, char **argv, ab_opts *o)
{
    const char *val;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_limit_opt("ab", argc, argv, &i, &o->limits);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if ((m = fe_cli_opt("ab", argc, argv, &i, "--policy", &val))) {
            if (m == 2)
                return 2;
            if (o->npolicies == 16)
                return fe_cli_usage("ab", "at most 16 policies");
            o->policies[o->npolicies++] = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--param", &val))) {
            if (m == 2)
                return 2;
            if (!strchr(val, '=') || val[0] == '=' || o->nparams == 64)
                return fe_cli_usage("ab", "--param expects KEY=VALUE");
            o->params[o->nparams++] = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--machine", &val))) {
            if (m == 2)
                return 2;
            o->machine = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--profile", &val))) {
            if (m == 2)
                return 2;
            o->profile = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--svg", &val))) {
            if (m == 2)
                return 2;
            o->svg = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--dim", &val))) {
            if (m == 2 || fe_cli_add_dim("ab", &o->dims, val))
                return 2;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--budget", &val))) {
            if (m == 2 || fe_cli_seconds("ab", "--budget", val, &o->budget))
                return 2;
        } else if (strcmp(argv[i], "--measure") == 0) {
            o->measure = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (strcmp(argv[i], "--csv") == 0) {
            o->csv = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("ab", "unknown option '%s'", argv[i]);
        } else {
            if (o->nmodels == 64)
                return fe_cli_usage("ab", "at most 64 models");
            o->models[o->nmodels++] = argv[i];
        }
    }
    if (o->nmodels == 0)
        return fe_cli_usage("ab", "missing MODEL");
    if (o->npolicies < 2)
        return fe_cli_usage("ab", "give at least two --policy options to compare");
    if (o->json && o->csv)
        return fe_cli_usage("ab", "--json and --csv exclude each other");
    return 0;
}

/* Apply --param K=V to policy p where it has K; unknown everywhere is an
 * error (checked by the caller). Returns the number of params applied. */
static int apply_params(fe_policy *p, const ab_opts *o, int *used, fe_error *err)
{
    for (int i = 0; i < o->nparams; i++) {
        char key[256];
        const char *eq = strchr(o->params[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->params[i]), o->params[i]);
        fe_error local = {0};
        if (fe_policy_set_param(p, key, eq + 1, &local) == FE_OK) {
            used[i] = 1;
        } else if (!strstr(local.message, "has no param")) {
            *err = local;
            return -1;
        }
    }
    return 0;
}

/* Only dims a model has: --dim is shared by models that may not all have it. */
static void dims_for(const char *path, const ab_opts *o, fe_dimset *ds, const char **names,
                     int64_t *vals)
{
    fe_error err = {0};
    ds->n = 0;
    ds->names = names;
    ds->values = vals;
    fe_graph *probe = o->dims.n ? fe_load_model_file(path, NULL, &err) : NULL;
    for (int i = 0; probe && i < o->dims.n; i++)
        if (fe_graph_find_dim(probe, o->dims.names[i]) >= 0) {
            names[ds->n] = o->dims.names[i];
            vals[ds->n++] = o->dims.values[i];
        }
    fe_graph_free(probe);
}

/* The CPU side of one model for --measure: a session, the reference's
 * results and the unfused plan's time, shared by every policy. */
typedef struct cpu_model {
    fe_exec *ex;
    fe_exec_result *ref;
    fe_bench_stats base;
    fe_bench_opts bo;
} cpu_model;

static int cpu_begin(const fe_graph *g, double budget, cpu_model *cm, fe_error *err)
{
    memset(cm, 0, sizeof *cm);
    cm->bo.budget_s = budget > 0 ? budget : 0.5;
    fe_exec_opts eo = {.seed = 1};
    fe_plan *base = NULL;
    int rc = fe_exec_executable(g, err);
    if (rc == FE_OK && !(cm->ex = fe_exec_new(g, &eo, err)))
        rc = err->code;
    if (rc == FE_OK)
        rc = fe_exec_reference(cm->ex, &cm->ref, err);
    if (rc == FE_OK && !(base = fe_plan_unfused(g, err)))
        rc = FE_ENOMEM;
    if (rc == FE_OK)
        rc = fe_bench_plan(cm->ex, base, &cm->bo, &cm->base, err);
    fe_plan_free(base);
    return rc;
}

static void cpu_end(cpu_model *cm)
{
    fe_exec_result_free(cm->ref);
    fe_exec_free(cm->ex);
    memset(cm, 0, sizeof *cm);
}

/* Run the plan against the reference and time it. */
static int cpu_measure(cpu_model *cm, const fe_plan *plan, cell *c, fe_error *err)
{
    fe_exec_result *got = NULL;
    fe_cmp cmp;
    fe_bench_stats st;
    int rc = fe_exec_plan(cm->ex, plan, &got, err);
    if (rc == FE_OK && (rc = fe_exec_compare(plan->g, cm->ref, got, &cmp, err)) == FE_OK) {
        c->cpu_ok = cmp.ok;
        for (int i = 0; i < cmp.n; i++)
            if (cmp.items[i].max_rel > c->cpu_max_rel)
                c->cpu_max_rel = cmp.items[i].max_rel;
        fe_cmp_free(&cmp);
    }
    fe_exec_result_free(got);
    if (rc == FE_OK && (rc = fe_bench_plan(cm->ex, plan, &cm->bo, &st, err)) == FE_OK) {
        c->cpu_ms = st.median_ms;
        c->cpu_speedup = st.median_ms > 0 ? cm->base.median_ms / st.median_ms : 0;
    }
    return rc;
}

static int measure(fe_engine *e, fe_policy *p, const fe_graph *g, const fe_sim_report *base,
                   cpu_model *cm, cell *c, fe_error *err)
{
    fe_run_stats stats;
    fe_plan *plan = fe_run_policy(e, p, g, &stats, err);
    if (!plan)
        return -1;
    fe_cli_warn_fallback(&stats);
    if (cm && cpu_measure(cm, plan, c, err) != FE_OK) {
        fe_plan_free(plan);
        return -1;
    }
    fe_sim_report rep;
    if (fe_sim_plan(plan, &e->machine, &rep, err) != FE_OK) {
        fe_plan_free(plan);
        return -1;
    }
    c->kernels = rep.total.kernels;
    c->tiled = rep.total.tiled;
    c->time_s = rep.total.time_s;
    c->speedup = rep.total.time_s > 0 ? base->total.time_s / rep.total.time_s : 0;
    c->l3_bytes = rep.total.l3_bytes;
    c->mem_peak = rep.total.mem_peak;
    fe_sim_report_free(&rep);
    fe_plan_free(plan);
    return 0;
}

static void write_svg(FILE *f, const ab_opts *o, char names[][256], char (*mnames)[256], cell *cells)
{
    static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7"};
    int np = o->npolicies, nm = o->nmodels;
    double maxv = 1;
    for (int i = 0; i < nm * np; i++)
        if (cells[i].speedup > maxv)
            maxv = cells[i].speedup;
    int bar = 18, gap = 14, left = 60, top = 40, h = 260;
    int width = left + nm * (np * bar + gap) + 220, height = top + h + 120;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n", width, height);
    fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">Simulated speedup over unfused</text>\n", left);
    for (int t = 0; t <= 4; t++) {
        double v = maxv * t / 4;
        int y = top + h - (int)(h * t / 4);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n", left, y,
                left + nm * (np * bar + gap), y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.2fx</text>\n", left - 6, y + 4, v);
    }
    int y1 = top + h - (int)(h / maxv);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
            left, y1, left + nm * (np * bar + gap), y1);
    for (int mi = 0; mi < nm; mi++) {
        int x0 = left + mi * (np * bar + gap) + gap / 2;
        for (int pi = 0; pi < np; pi++) {
            const cell *c = &cells[mi * np + pi];
            int bh = (int)(h * c->speedup / maxv);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s, %s: "
                       "%.2fx</title></rect>\n", x0 + pi * bar, top + h - bh, bar - 2, bh,
                    colors[pi % 8], mnames[mi], names[pi], c->speedup);
        }
        fprintf(f, "<text transform=\"translate(%d,%d) rotate(35)\">%s</text>\n", x0, top + h + 14,
                mnames[mi]);
    }
    for (int pi = 0; pi < np; pi++) {
        int x = left + nm * (np * bar + gap) + 20, y = top + pi * 18;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y,
                colors[pi % 8]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 18, y + 10, names[pi]);
    }
    fprintf(f, "</svg>\n");
}

static int run(int argc, char **argv)
{
    ab_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_engine_options eo = o.limits;
    eo.machine = o.machine;
    fe_engine *e = fe_engine_new(&eo, &err);
    if (!e)
        return fe_cli_fail(&err);
    if (o.profile && fe_engine_set_profile(e, o.profile, &err) != FE_OK) {
        fe_engine_free(e);
        return fe_cli_fail(&err);
    }
    fe_policy *pols[16] = {0};
    char names[16][256];
    char (*mnames)[256] = calloc((size_t)o.nmodels, sizeof *mnames);
    cell *cells = calloc((size_t)(o.nmodels * o.npolicies), sizeof *cells);
    double *base_ms = calloc((size_t)o.nmodels, sizeof *base_ms);
    double *cpu_ms = calloc((size_t)o.nmodels, sizeof *cpu_ms);
    int used[64] = {0}, wrong = 0;
    if (!mnames || !cells || !base_ms || !cpu_ms) {
        fe_error_set(&err, FE_ENOMEM, "out of memory");
        rc = fe_cli_fail(&err);
        goto out;
    }
    for (int i = 0; i < o.npolicies; i++) {
        if (!(pols[i] = fe_engine_load_policy(e, o.policies[i], &err)) ||
            apply_params(pols[i], &o, used, &err) != 0) {
            rc = fe_cli_fail(&err);
            goto out;
        }
        snprintf(names[i], sizeof names[i], "%s", fe_policy_name(pols[i]));
    }
    for (int i = 0; i < o.nparams; i++)
        if (!used[i]) {
            rc = fe_cli_usage("ab", "--param %s: no policy given has that parameter", o.params[i]);
            goto out;
        }
    for (int mi = 0; mi < o.nmodels; mi++) {
        const char *dn[64];
        int64_t dv[64];
        fe_dimset ds;
        dims_for(o.models[mi], &o, &ds, dn, dv);
        fe_graph *g = fe_load_model_file(o.models[mi], &ds, &err);
        fe_plan *base = g ? fe_plan_unfused(g, &err) : NULL;
        fe_sim_report brep;
        if (!base || fe_sim_plan(base, &e->machine, &brep, &err) != FE_OK) {
            fe_plan_free(base);
            fe_graph_free(g);
            rc = fe_cli_fail(&err);
            goto out;
        }
        snprintf(mnames[mi], sizeof mnames[mi], "%s", g->name[0] ? g->name : o.models[mi]);
        base_ms[mi] = brep.total.time_s * 1e3;
        cpu_model cm;
        if (o.measure && cpu_begin(g, o.budget, &cm, &err) != FE_OK) {
            fe_error_prefix(&err, "%s: --measure: ", o.models[mi]);
            rc = fe_cli_fail(&err);
        }
        if (o.measure)
            cpu_ms[mi] = cm.base.median_ms;
        for (int pi = 0; pi < o.npolicies && rc == 0; pi++)
            if (measure(e, pols[pi], g, &brep, o.measure ? &cm : NULL, &cells[mi * o.npolicies + pi],
                        &err) != 0) {
                fe_error_prefix(&err, "%s with %s: ", o.models[mi], names[pi]);
                rc = fe_cli_fail(&err);
            }
        if (o.measure)
            cpu_end(&cm);
        fe_sim_report_free(&brep);
        fe_plan_free(base);
        fe_graph_free(g);
        if (rc)
            goto out;
    }

    if (o.svg) {
        fe_outfile svg;
        if (fe_outfile_open(&svg, o.svg, "the chart", &err) != FE_OK) {
            rc = fe_cli_fail(&err);
            goto out;
        }
        write_svg(svg.f, &o, names, mnames, cells);
        if (fe_outfile_commit(&svg, &err) != FE_OK) {
            rc = fe_cli_fail(&err);
            goto out;
        }
    }
    if (o.json) {
        fe_jw w;
        fe_jw_init(&w, stdout, 2);
        fe_jw_obj(&w);
        fe_jw_key(&w, "machine");
        fe_jw_str(&w, e->machine.name);
        fe_jw_key(&w, "models");
        fe_jw_arr(&w);
        for (int mi = 0; mi < o.nmodels; mi++) {
            fe_jw_obj(&w);
            fe_jw_key(&w, "model");
            fe_jw_str(&w, mnames[mi]);
            fe_jw_key(&w, "unfused_ms");
            fe_jw_num(&w, base_ms[mi]);
            if (o.measure) {
                fe_jw_key(&w, "cpu_unfused_ms");
                fe_jw_num(&w, cpu_ms[mi]);
            }
            fe_jw_key(&w, "policies");
            fe_jw_arr(&w);
            for (int pi = 0; pi < o.npolicies; pi++) {
                const cell *c = &cells[mi * o.npolicies + pi];
                fe_jw_obj_flat(&w);
                fe_jw_key(&w, "policy");
                fe_jw_str(&w, names[pi]);
                fe_jw_key(&w, "kernels");
                fe_jw_int(&w, c->kernels);
                fe_jw_key(&w, "sim_ms");
                fe_jw_num(&w, c->time_s * 1e3);
                fe_jw_key(&w, "speedup");
                fe_jw_num(&w, c->speedup);
                fe_jw_key(&w, "l3_bytes");
                fe_jw_int(&w, c->l3_bytes);
                fe_jw_key(&w, "mem_peak");
                fe_jw_int(&w, c->mem_peak);
                fe_jw_key(&w, "tiled_groups");
                fe_jw_int(&w, c->tiled);
                if (o.measure) {
                    fe_jw_key(&w, "cpu_ms");
                    fe_jw_num(&w, c->cpu_ms);
                    fe_jw_key(&w, "cpu_speedup");
                    fe_jw_num(&w, c->cpu_speedup);
                    fe_jw_key(&w, "cpu_ok");
                    fe_jw_bool(&w, c->cpu_ok);
                    fe_jw_key(&w, "cpu_max_rel");
                    fe_jw_num(&w, c->cpu_max_rel);
                }
                fe_jw_end(&w);
            }
            fe_jw_end(&w);
            fe_jw_end(&w);
        }
        fe_jw_end(&w);
        fe_jw_end(&w);
    } else if (o.csv) {
        printf("model,policy,kernels,sim_ms,speedup,l3_bytes,mem_peak,tiled_groups,machine%s\n",
               o.measure ? ",cpu_ms,cpu_speedup,cpu_ok,cpu_max_rel" : "");
        for (int mi = 0; mi < o.nmodels; mi++)
            for (int pi = 0; pi < o.npolicies; pi++) {
                const cell *c = &cells[mi * o.npolicies + pi];
                printf("%s,%s,%d,%.6f,%.4f,%lld,%lld,%d,%s", mnames[mi], names[pi], c->kernels,
                       c->time_s * 1e3, c->speedup, (long long)c->l3_bytes, (long long)c->mem_peak,
                       c->tiled, e->machine.name);
                if (o.measure)
                    printf(",%.6f,%.4f,%d,%.3g", c->cpu_ms, c->cpu_speedup, c->cpu_ok, c->cpu_max_rel);
                printf("\n");
            }
    } else {
        printf("machine %s: %s\n", e->machine.name, e->machine.description);
        for (int mi = 0; mi < o.nmodels; mi++) {
            int best = 0;
            for (int pi = 1; pi < o.npolicies; pi++)
                if (cells[mi * o.npolicies + pi].time_s < cells[mi * o.npolicies + best].time_s)
                    best = pi;
            printf("\n%s (unfused %.3f ms simulated", mnames[mi], base_ms[mi]);
            if (o.measure)
                printf(", %.3f ms measured", cpu_ms[mi]);
            printf(")\n");
            printf("  %-32s %8s %12s %8s %12s %12s %6s", "policy", "kernels", "sim ms", "speedup",
                   "L3 traffic", "mem peak", "tiled");
            if (o.measure)
                printf(" %10s %8s %8s", "cpu ms", "speedup", "results");
            printf("\n");
            for (int pi = 0; pi < o.npolicies; pi++) {
                const cell *c = &cells[mi * o.npolicies + pi];
                char l3[32], mp[32];
                printf("%s %-32s %8d %12.3f %7.2fx %12s %12s %6d", pi == best ? "*" : " ", names[pi],
                       c->kernels, c->time_s * 1e3, c->speedup,
                       fe_fmt_bytes((double)c->l3_bytes, l3, sizeof l3),
                       fe_fmt_bytes((double)c->mem_peak, mp, sizeof mp), c->tiled);
                if (o.measure)
                    printf(" %10.3f %7.2fx %8s", c->cpu_ms, c->cpu_speedup, c->cpu_ok ? "ok" : "WRONG");
                printf("\n");
            }
        }
    }
    for (int i = 0; o.measure && i < o.nmodels * o.npolicies; i++)
        wrong += !cells[i].cpu_ok;
    if (wrong) {
        fprintf(stderr, "fuseeng: %d plan%s computed results that differ from the unfused reference "
                "(marked WRONG); 'fuseeng run MODEL --policy P --execute' shows which output\n",
                wrong, wrong == 1 ? "" : "s");
        rc = 1;
    }
out:
    for (int i = 0; i < o.npolicies; i++)
        fe_policy_free(pols[i]);
    free(mnames);
    free(cells);
    free(base_ms);
    free(cpu_ms);
    fe_engine_free(e);
    return rc;
}

const fe_cmd fe_cmd_ab = {"ab", "compare policies on models (simulated)", usage, run};
