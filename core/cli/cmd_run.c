/* cmd_run.c: `fuseeng run MODEL --policy P`: plan a model with a policy and
 * report the plan (summary, decision log, plan file, Graphviz). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "ops.h"
#include "plan_json.h"
#include "run.h"
#include "sim.h"
#include "trace.h"

static const char usage[] =
    "usage: fuseeng run MODEL --policy P [--policy P2 ... --combine HOW] [options]\n"
    "\n"
    "Plan MODEL with policy P (a file, or a name in policies/) and print a summary:\n"
    "kernels before and after, the largest groups, decisions counted by reason, and\n"
    "the simulated machine's figures for the plan and the unfused baseline (time,\n"
    "L3 bytes, L2 peak, device-memory peak, spill bytes, speedup).\n"
    "\n"
    "  --policy P          a policy; repeat it and give --combine to combine several\n"
    "  --combine HOW       all | any | chain | vote (see the README)\n"
    "  --param K=V         override a policy parameter, typed by its default\n"
    "  --dim NAME=V        override a model dim\n"
    "  --plan-out FILE     write the plan (fuseeng.plan/1 JSON)\n"
    "  --dot FILE          write the plan as Graphviz, one cluster per group\n"
    "  --machine M         simulated machine: a name in lua/machines (default gcu) or a file\n"
    "  --profile FILE      measured times for ctx.profile (fuseeng profile, or InfiniCore's)\n"
    "  --verbose           add the simulator's figures for every group\n"
    "  --trace FILE        write a Perfetto / Chrome trace of the plan and the unfused baseline\n"
    "  --json              print the plan JSON instead of the summary\n"
    "  --explain           print every decision: candidate, verdict, policy, reason\n"
    "  --stats             print Lua hook calls per second and memory\n"
    "  --max-instructions N  Lua instruction budget for the run (default 2e9)\n"
    "  --max-memory MIB      Lua memory cap (default 512)\n"
    "\n"
    "Exit status 2 for a bad model, policy or option (the message names the file\n"
    "and line); a policy error stops the run unless the policy says\n"
    "fallback_on_error = \"unfused\".\n";

typedef struct run_opts {
    const char *model;
    const char *policies[16];
    int npolicies;
    const char *combine;
    const char *params[64];
    int nparams;
    fe_cli_dims dims;
    const char *plan_out, *dot, *trace, *profile;
    int json, explain, stats, verbose;
    fe_engine_options eng;
} run_opts;

static int parse(int argc, char **argv, run_opts *o)
{
    const char *val;
    for (int i = 1; i < argc; i++) {
        int m;
#define OPT(name) ((m = fe_cli_opt("run", argc, argv, &i, name, &val)) == 2 ? -1 : m)
        if ((m = OPT("--policy")) < 0)
            return 2;
        if (m) {
            if (o->npolicies == 16)
                return fe_cli_usage("run", "at most 16 --policy options");
            o->policies[o->npolicies++] = val;
            continue;
        }
        if ((m = OPT("--combine")) < 0)
            return 2;
        if (m) {
            o->combine = val;
            continue;
        }
        if ((m = OPT("--param")) < 0)
            return 2;
        if (m) {
            if (!strchr(val, '=') || val[0] == '=')
                return fe_cli_usage("run", "--param expects KEY=VALUE, e.g. --param margin=0.2");
            if (o->nparams == 64)
                return fe_cli_usage("run", "at most 64 --param options");
            o->params[o->nparams++] = val;
            continue;
        }
        if ((m = OPT("--dim")) < 0)
            return 2;
        if (m) {
            if (fe_cli_add_dim("run", &o->dims, val))
                return 2;
            continue;
        }
        if ((m = OPT("--plan-out")) < 0)
            return 2;
        if (m) {
            o->plan_out = val;
            continue;
        }
        if ((m = OPT("--dot")) < 0)
            return 2;
        if (m) {
            o->dot = val;
            continue;
        }
        if ((m = OPT("--machine")) < 0)
            return 2;
        if (m) {
            o->eng.machine = val;
            continue;
        }
        if ((m = OPT("--profile")) < 0)
            return 2;
        if (m) {
            o->profile = val;
            continue;
        }
        if ((m = OPT("--trace")) < 0)
            return 2;
        if (m) {
            o->trace = val;
            continue;
        }
        if ((m = OPT("--max-instructions")) < 0)
            return 2;
        if (m) {
            o->eng.max_instructions = (int64_t)strtod(val, NULL);
            if (o->eng.max_instructions <= 0)
                return fe_cli_usage("run", "--max-instructions needs a positive count");
            continue;
        }
        if ((m = OPT("--max-memory")) < 0)
            return 2;
        if (m) {
            o->eng.max_memory = (int64_t)(strtod(val, NULL) * 1048576.0);
            if (o->eng.max_memory <= 0)
                return fe_cli_usage("run", "--max-memory needs a positive number of MiB");
            continue;
        }
#undef OPT
        if (strcmp(argv[i], "--json") == 0)
            o->json = 1;
        else if (strcmp(argv[i], "--explain") == 0)
            o->explain = 1;
        else if (strcmp(argv[i], "--stats") == 0)
            o->stats = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            o->verbose = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return fe_cli_usage("run", "unknown option '%s'", argv[i]);
        else if (o->model)
            return fe_cli_usage("run", "one MODEL at a time (got '%s' and '%s')", o->model, argv[i]);
        else
            o->model = argv[i];
    }
    if (!o->model)
        return fe_cli_usage("run", "missing MODEL (a fuseeng.model/1 JSON file)");
    if (o->npolicies == 0)
        return fe_cli_usage("run", "missing --policy (try 'fuseeng policies' for the shipped ones)");
    if (o->npolicies > 1 && !o->combine)
        return fe_cli_usage("run", "%d policies given: say how to combine them with --combine "
                            "all|any|chain|vote", o->npolicies);
    if (o->combine && strcmp(o->combine, "all") && strcmp(o->combine, "any") &&
        strcmp(o->combine, "chain") && strcmp(o->combine, "vote"))
        return fe_cli_usage("run", "--combine %s: expected all, any, chain or vote", o->combine);
    return 0;
}

/* Load, combine and parameterise the policies the options name. */
fe_policy *fe_cli_load_policies(fe_engine *e, const char *const *names, int n, const char *combine,
                                const char *const *params, int nparams, fe_error *err)
{
    fe_policy *list[16] = {0}, *p = NULL;
    for (int i = 0; i < n; i++) {
        if (!(list[i] = fe_engine_load_policy(e, names[i], err))) {
            while (i-- > 0)
                fe_policy_free(list[i]);
            return NULL;
        }
    }
    if (n == 1) {
        p = list[0];
    } else {
        p = fe_engine_combine(e, combine, list, n, err);
        for (int i = 0; i < n; i++)
            fe_policy_free(list[i]);
        if (!p)
            return NULL;
    }
    for (int i = 0; i < nparams; i++) {
        char key[256];
        const char *eq = strchr(params[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - params[i]), params[i]);
        if (fe_policy_set_param(p, key, eq + 1, err) != FE_OK) {
            fe_error_prefix(err, "--param %s: ", params[i]);
            fe_policy_free(p);
            return NULL;
        }
    }
    return p;
}

static const char *verdict_word(int v)
{
    switch (v) {
    case 1: return "fuse";
    case 0: return "no";
    case -1: return "none";
    case -2: return "rejected";
    default: return "note";
    }
}

static void print_group_nodes(const fe_plan *p, const int32_t *nodes, int n, FILE *f)
{
    fputc('[', f);
    for (int i = 0; i < n && i < 8; i++)
        fprintf(f, "%s%s", i ? ", " : "", fe_node_name(p->g, fe_graph_node(p->g, nodes[i])));
    if (n > 8)
        fprintf(f, ", ... %d more", n - 8);
    fputc(']', f);
}

static void explain(const fe_plan *p)
{
    printf("decisions (%d):\n", p->ndecisions);
    for (int32_t d = 0; d < p->ndecisions; d++) {
        const fe_decision *dc = &p->decisions[d];
        printf("  %-8s ", verdict_word(dc->verdict));
        if (dc->n > 0) {
            print_group_nodes(p, p->dnodes + dc->off, dc->n, stdout);
            printf("  ");
        }
        printf("%s\n", dc->reason >= 0 ? fe_strtab_str(p->strs, dc->reason) : "");
    }
}

/* A reason's key for counting: its text up to the first ':' (rule names,
 * "rejected by the engine"), or the whole text when short. */
static size_t reason_key(const char *s)
{
    const char *c = strchr(s, ':');
    size_t n = c ? (size_t)(c - s) : strlen(s);
    return n > 60 ? 60 : n;
}

typedef struct reason_count {
    const char *text;
    size_t len;
    int count;
} reason_count;

static int by_count(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    return c ? c : (int)x->len - (int)y->len;
}

static int by_size_desc(const void *a, const void *b, void *ctx)
{
    const fe_plan *p = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (p->groups[x].n != p->groups[y].n)
        return p->groups[y].n - p->groups[x].n;
    return (x > y) - (x < y);
}

static void summary(const fe_plan *p, const run_opts *o, const fe_run_stats *st)
{
    const fe_graph *g = p->g;
    fe_plan_counts c;
    fe_plan_summary_counts(p, &c);
    printf("model      %s (%d nodes, %s)\n", g->name[0] ? g->name : "(unnamed)", g->nnodes, o->model);
    printf("policy     %s\n", p->policy >= 0 ? fe_strtab_str(p->strs, p->policy) : "?");
    printf("kernels    %d -> %d (%d fused group%s holding %d nodes; largest %d node%s",
           g->nnodes, c.kernels, c.fused_groups, c.fused_groups == 1 ? "" : "s", c.fused_nodes,
           c.largest, c.largest == 1 ? "" : "s");
    if (c.tiled_groups)
        printf("; %d tiled", c.tiled_groups);
    printf(")\n");

    /* The five largest fused groups. */
    int32_t *ids = malloc((size_t)(p->ngroups > 0 ? p->ngroups : 1) * sizeof *ids);
    if (ids) {
        for (int32_t i = 0; i < p->ngroups; i++)
            ids[i] = i;
        qsort_r(ids, (size_t)p->ngroups, sizeof *ids, by_size_desc, (void *)p);
        for (int32_t i = 0; i < p->ngroups && i < 5 && p->groups[ids[i]].n > 1; i++) {
            const fe_group *gr = &p->groups[ids[i]];
            char key[64];
            fe_sim_group_label(g, fe_group_nodes(p, gr), gr->n, key, sizeof key);
            printf("%s %s (%d): ", i ? "          " : "largest   ", key, gr->n);
            print_group_nodes(p, fe_group_nodes(p, gr), gr->n, stdout);
            if (gr->split > 1)
                printf(" split %d", gr->split);
            printf("\n");
        }
        free(ids);
    }
    printf("decisions  %d fuse, %d do not fuse, %d no opinion, %d rejected by the engine\n", c.yes,
           c.no, c.none, c.rejected);

    /* Reasons by count. */
    reason_count *rc = calloc((size_t)(p->ndecisions > 0 ? p->ndecisions : 1), sizeof *rc);
    int nr = 0;
    for (int32_t d = 0; rc && d < p->ndecisions; d++) {
        const char *s = p->decisions[d].reason >= 0 ? fe_strtab_str(p->strs, p->decisions[d].reason) : "";
        size_t len = reason_key(s);
        if (len == 0)
            continue;
        int found = 0;
        for (int i = 0; i < nr && !found; i++)
            if (rc[i].len == len && memcmp(rc[i].text, s, len) == 0)
                found = ++rc[i].count;
        if (!found)
            rc[nr++] = (reason_count){s, len, 1};
    }
    if (rc) {
        qsort(rc, (size_t)nr, sizeof *rc, by_count);
        for (int i = 0; i < nr && i < 8; i++)
            printf("%s %5d  %.*s\n", i ? "          " : "reasons   ", rc[i].count, (int)rc[i].len,
                   rc[i].text);
        if (nr > 8)
            printf("           ... %d more kinds of reason (--explain lists all)\n", nr - 8);
        free(rc);
    }
    if (o->stats && st) {
        char b[32];
        printf("stats      %.3f s, %lld Lua hook calls (%.0f per second), %lld instructions, Lua "
               "memory %s, %d round%s\n", st->seconds, (long long)st->hook_calls,
               st->seconds > 0 ? (double)st->hook_calls / st->seconds : 0.0,
               (long long)st->instructions, fe_fmt_bytes((double)st->lua_bytes, b, sizeof b),
               st->rounds, st->rounds == 1 ? "" : "s");
    }
}

static int write_dot(const fe_plan *p, const char *path, fe_error *err)
{
    const fe_graph *g = p->g;
    FILE *f = fopen(path, "w");
    if (!f)
        return fe_error_set(err, FE_EINPUT, "%s: cannot write the dot file", path);
    fprintf(f, "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontsize=10, fontname=\"Helvetica\"];\n");
    for (int32_t gi = 0; gi < p->ngroups; gi++) {
        const fe_group *gr = &p->groups[gi];
        if (gr->n > 1)
            fprintf(f, "  subgraph cluster_%d {\n    label=\"group %d (%s%s)\"; style=filled; "
                    "color=\"#dde8f5\";\n", gi, gi, fe_class_name(gr->klass),
                    gr->split > 1 ? ", tiled" : "");
        for (int32_t k = 0; k < gr->n; k++) {
            int32_t v = p->members[gr->off + k];
            const fe_node *n = fe_graph_node(g, v);
            fprintf(f, "%s  n%d [label=\"", gr->n > 1 ? "  " : "", v);
            for (const char *s = fe_node_name(g, n); *s; s++)
                fputs(*s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : (char[2]){*s, 0}, f);
            fprintf(f, "\\n%s\"];\n", fe_node_op_name(n));
        }
        if (gr->n > 1)
            fprintf(f, "  }\n");
    }
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nin; k++) {
            int32_t prod = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
            if (prod >= 0)
                fprintf(f, "  n%d -> n%d;\n", prod, v);
        }
    }
    fprintf(f, "}\n");
    if (fclose(f) != 0)
        return fe_error_set(err, FE_ERUNTIME, "%s: write failed", path);
    return FE_OK;
}

/* The simulator's figures in the plan file's summary. */
static void sim_summary(fe_jw *w, void *ctx)
{
    fe_jw_key(w, "simulated");
    fe_sim_report_summary_json(ctx, w);
}

typedef struct sim_both {
    const fe_sim_report *plan, *base;
} sim_both;

static void sim_summary_both(fe_jw *w, void *ctx)
{
    sim_both *b = ctx;
    sim_summary(w, (void *)b->plan);
    fe_jw_key(w, "versus_unfused");
    fe_sim_report_compare_json(b->plan, b->base, w);
}

static int run(int argc, char **argv)
{
    run_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_graph *g = NULL;
    fe_engine *e = NULL;
    fe_policy *p = NULL;
    fe_plan *plan = NULL, *base = NULL;
    fe_run_stats st;
    fe_sim_report rep, base_rep;
    int have_rep = 0, have_base = 0;

    if (!(g = fe_load_model_file(o.model, &o.dims.set, &err)) || !(e = fe_engine_new(&o.eng, &err)) ||
        (o.profile && fe_engine_set_profile(e, o.profile, &err) != FE_OK) ||
        !(p = fe_cli_load_policies(e, o.policies, o.npolicies, o.combine, o.params, o.nparams, &err)) ||
        !(plan = fe_run_policy(e, p, g, &st, &err))) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    /* The plan and the unfused baseline on the engine's machine. */
    if (!(base = fe_plan_unfused(g, &err)) || fe_sim_plan(plan, &e->machine, &rep, &err) != FE_OK) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    have_rep = 1;
    if (fe_sim_plan(base, &e->machine, &base_rep, &err) != FE_OK) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    have_base = 1;
    fe_plan_extra extra = {sim_summary, &rep};
    if (o.trace) {
        const fe_sim_report *reps[2] = {&rep, &base_rep};
        const char *labels[2] = {fe_strtab_str(plan->strs, plan->policy), "unfused"};
        if (fe_trace_write_file(o.trace, reps, labels, 2, &err) != FE_OK) {
            rc = fe_cli_fail(&err);
            goto out;
        }
    }
    if (o.plan_out) {
        FILE *f = fopen(o.plan_out, "w");
        if (!f) {
            fe_error_set(&err, FE_EINPUT, "%s: cannot write the plan", o.plan_out);
            rc = fe_cli_fail(&err);
            goto out;
        }
        rc = fe_plan_write(plan, f, 1, &extra, &err);
        if (fclose(f) != 0 && rc == FE_OK)
            rc = fe_error_set(&err, FE_ERUNTIME, "%s: write failed", o.plan_out);
        if (rc) {
            rc = fe_cli_fail(&err);
            goto out;
        }
    }
    if (o.dot && write_dot(plan, o.dot, &err) != FE_OK) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    if (o.json) {
        sim_both both = {&rep, &base_rep};
        fe_plan_extra jextra = {sim_summary_both, &both};
        if (fe_plan_write(plan, stdout, 1, &jextra, &err) != FE_OK)
            rc = fe_cli_fail(&err);
    } else {
        summary(plan, &o, &st);
        printf("\n");
        fe_sim_report_compare_table(&rep, &base_rep, stdout);
        if (o.verbose) {
            printf("\ngroups\n");
            fe_sim_report_groups_table(&rep, stdout);
        }
        if (o.explain)
            explain(plan);
    }
out:
    if (have_rep)
        fe_sim_report_free(&rep);
    if (have_base)
        fe_sim_report_free(&base_rep);
    fe_plan_free(base);
    fe_plan_free(plan);
    fe_policy_free(p);
    fe_engine_free(e);
    fe_graph_free(g);
    return rc;
}

const fe_cmd fe_cmd_run = {"run", "plan a model with a fusion policy", usage, run};
