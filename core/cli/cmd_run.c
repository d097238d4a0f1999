/* cmd_run.c: `fuseeng run MODEL --policy P`: plan a model with a policy and
 * report the plan (summary, decision log, plan file, Graphviz). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng run MODEL --policy P [--policy P2 ... --combine HOW] [options]\n"
    "       fuseeng run MODEL --plan FILE [options]\n"
    "\n"
    "Plan MODEL with policy P (a file, or a name in policies/) and print a summary:\n"
    "kernels before and after, the largest groups, decisions counted by reason, and\n"
    "the simulated machine's figures for the plan and the unfused baseline (time,\n"
    "L3 bytes, L2 peak, device-memory peak, spill bytes, speedup). With --execute,\n"
    "also run the plan and the unfused reference on this CPU on the same seeded\n"
    "inputs: max absolute and relative error per output, measured time per group\n"
    "and in total; exit status 1 when an output is outside tolerance. With\n"
    "--weights and --inputs the runs use the model's own values (safetensors files,\n"
    "docs/formats.md), and --expect compares both runs' outputs with given ones.\n"
    "\n"
    "  --policy P          a policy; repeat it and give --combine to combine several\n"
    "  --plan FILE         a saved plan instead (fuseeng.plan/1, or a dispatch table): at the dims and on\n"
    "                      the machine it records unless --dim / --machine say\n"
    "                      otherwise; --ignore-model-name takes a plan made for\n"
    "                      another model\n"
    "  --combine HOW       all | any | chain | vote (docs/policy-guide.md)\n"
    "  --param K=V         override a policy parameter, typed by its default\n"
    "  --dim NAME=V        override a model dim\n"
    "  --dim NAME=V1,V2,.. plan once per value (increasing): a dispatch table, seed\n"
    "                      004's DAFE. Bucket Vi serves the values above V(i-1) up to\n"
    "                      Vi with the plan made at Vi; the report gives each bucket's\n"
    "                      kernels, simulated time and gain over unfused, and the groups\n"
    "                      that differ between buckets; --json / --plan-out write the\n"
    "                      table (fuseeng.dispatch/1), which --plan and `fuseeng sim`\n"
    "                      read, picking the bucket for the model's value of NAME\n"
    "  --plan-out FILE     write the plan (fuseeng.plan/1 JSON)\n"
    "  --dot FILE          write the plan as Graphviz, one cluster per group\n"
    "  --machine M         simulated machine: a name in lua/machines (default gcu) or a file\n"
    "  --profile FILE      measured times for ctx.profile (fuseeng profile, or InfiniCore's)\n"
    "  --execute           run plan and reference on the CPU kernels (see above)\n"
    "  --show-kernels      print what this CPU executes for each group: the kernel, and\n"
    "                      a fused group's vector program (inputs, tiling, instructions)\n"
    "  --device cpu|cuda   where --execute runs the plan and the timed unfused plan, and\n"
    "                      what --show-kernels shows: cuda generates a CUDA kernel per\n"
    "                      group for the first NVIDIA GPU (driver, NVRTC and cuBLAS\n"
    "                      loaded at run time); the reference stays on the CPU; and\n"
    "                      where the policy's ctx:bench measures (cpu)\n"
    "  --seed N            random inputs and weights for --execute (default 1)\n"
    "  --weights FILE      the model's weights from a safetensors file (every tensor\n"
    "                      of kind weight, nothing else), for --execute and ctx:bench\n"
    "  --inputs FILE       the graph inputs from a safetensors file likewise\n"
    "  --expect FILE       with --execute: compare the plan's and the reference's\n"
    "                      outputs with these (safetensors, by output name, e.g.\n"
    "                      PyTorch's); exit status 1 if they differ\n"
    "  --expect-rtol R     tolerance for --expect (default by output: f32 1e-3,\n"
    "                      f16 1e-2, bf16 5e-2: another implementation sums in\n"
    "                      another order)\n"
    "  --save-outputs FILE with --execute: write the reference run's outputs\n"
    "                      (safetensors, for a later --expect)\n"
    "  --budget S          seconds of timed runs per measurement for --execute (0.5)\n"
    "  --no-timing         with --execute: check the numbers only (one run of the plan\n"
    "                      and one of the reference; no timed rounds)\n"
    "  --rtol R            judge every output with relative tolerance R (default by\n"
    "                      dtype: f32 1e-4, f16 1e-2, bf16 5e-2)\n"
    "  --bench-budget S    seconds ctx:bench may spend measuring in this run (60)\n"
    "  --verbose           add the simulator's figures for every group (with --json or\n"
    "                      --plan-out, under each group's \"sim\")\n"
    "  --trace FILE        write a Perfetto / Chrome trace of the plan and the unfused baseline\n"
    "  --json              print the plan JSON instead of the summary\n"
    "  --explain           print every decision: candidate, verdict, policy, reason\n"
    "  --stats             planning time by part, hook calls/s, memory\n"
    "  --max-instructions N  Lua instruction budget for the run (default 2e9)\n"
    "  --max-memory MIB      Lua memory cap (default 512)\n"
    "  --max-seconds S       wall-clock limit of each Lua run: loading the policy, planning\n"
    "                        (default 300; a script stuck in one C call, such as a\n"
    "                        backtracking string pattern, is ended a grace period later)\n"
    "\n"
    "Exit status 2 for a bad model, policy, option or data file (the message names\n"
    "the file and line, or tensor); a policy error stops the run unless the policy\n"
    "says fallback_on_error = \"unfused\"; 1 when --execute finds results that\n"
    "differ (plan against reference, or either against --expect).\n";

typedef struct run_opts {
    const char *model;
    fe_cli_plan_opts plan;
    const char *plan_out, *dot, *trace, *save_outputs;
    int json, explain, stats, verbose, execute, show_kernels;
    fe_execute_options exec;
} run_opts;

static int parse(int argc, char **argv, run_opts *o)
{
    const char *val = NULL;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_plan_opt("run", argc, argv, &i, &o->plan);
        if (m == 2)
            return 2;
        if (m)
            continue;
#define OPT(name) ((m = fe_cli_opt("run", argc, argv, &i, name, &val)) != 0)
        if (OPT("--plan-out")) {
            o->plan_out = val;
        } else if (OPT("--dot")) {
            o->dot = val;
        } else if (OPT("--trace")) {
            o->trace = val;
        } else if (OPT("--seed")) {
            if (m != 2 && fe_cli_seed("run", val, &o->exec.seed))
                m = 2;
        } else if (OPT("--rtol")) {
            char *end = NULL;
            o->exec.rtol = m == 2 ? 0 : strtod(val, &end);
            if (m != 2 && (end == val || *end || !(o->exec.rtol > 0) || o->exec.rtol >= 1))
                m = 2, fe_cli_usage("run", "--rtol needs a relative tolerance in (0, 1), got '%s'", val);
        } else if (OPT("--expect")) {
            o->exec.expect = val;
        } else if (OPT("--expect-rtol")) {
            char *end = NULL;
            o->exec.expect_rtol = m == 2 ? 0 : strtod(val, &end);
            if (m != 2 && (end == val || *end || !(o->exec.expect_rtol > 0) ||
                           o->exec.expect_rtol >= 1))
                m = 2, fe_cli_usage("run", "--expect-rtol needs a relative tolerance in (0, 1), "
                                    "got '%s'", val);
        } else if (OPT("--save-outputs")) {
            o->save_outputs = val;
        } else if (OPT("--budget")) {
            if (m != 2 && fe_cli_seconds("run", "--budget", val, &o->exec.budget))
                m = 2;
        } else if (OPT("--device")) {
            if (m != 2 && fe_cli_device("run", val, &o->exec.device))
                m = 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (strcmp(argv[i], "--explain") == 0) {
            o->explain = 1;
        } else if (strcmp(argv[i], "--stats") == 0) {
            o->stats = 1;
        } else if (strcmp(argv[i], "--verbose") == 0) {
            o->verbose = 1;
        } else if (strcmp(argv[i], "--execute") == 0) {
            o->execute = 1;
        } else if (strcmp(argv[i], "--show-kernels") == 0) {
            o->show_kernels = 1;
        } else if (strcmp(argv[i], "--no-timing") == 0) {
            o->exec.no_timing = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("run", "unknown option '%s'", argv[i]);
        } else if (o->model) {
            return fe_cli_usage("run", "one MODEL at a time (got '%s' and '%s')", o->model, argv[i]);
        } else {
            o->model = argv[i];
        }
#undef OPT
        if (m == 2)
            return 2;
    }
    if (!o->model)
        return fe_cli_usage("run", "missing MODEL (a fuseeng.model/1 JSON file)");
    if (o->show_kernels && o->json)
        return fe_cli_usage("run", "--show-kernels prints text: drop --json (or run twice)");
    if (!o->execute && (o->exec.expect || o->exec.expect_rtol > 0 || o->save_outputs ||
                        o->exec.no_timing))
        return fe_cli_usage("run", "%s goes with --execute", o->exec.expect ? "--expect"
                            : o->save_outputs ? "--save-outputs"
                            : o->exec.no_timing ? "--no-timing" : "--expect-rtol");
    o->plan.eng.bench_device = o->exec.device;   /* ctx:bench measures there too */
    if (o->exec.expect_rtol > 0 && !o->exec.expect)
        return fe_cli_usage("run", "--expect-rtol goes with --expect FILE");
    o->exec.weights = o->plan.eng.weights;
    o->exec.inputs = o->plan.eng.inputs;
    fe_cli_file in[24], out[] = {{"--plan-out", o->plan_out}, {"--trace", o->trace},
                                 {"--dot", o->dot}, {"--save-outputs", o->save_outputs}};
    int nin = fe_cli_plan_inputs(o->model, &o->plan, in, 23);
    in[nin++] = (fe_cli_file){"--expect", o->exec.expect};
    if (fe_cli_distinct("run", in, nin, out, 4))
        return 2;
    return fe_cli_plan_check("run", &o->plan, 1);
}

/* --dim NAME=v1,v2,...: a plan per value and the dispatch table of them
 * (fe_dispatch_*): its report, or the fuseeng.dispatch/1 file. */
static int run_buckets(const run_opts *o)
{
    if (o->execute || o->trace || o->dot || o->show_kernels)
        return fe_cli_usage("run", "--dim %s with several values makes a dispatch table: %s "
                            "takes one plan (run --plan TABLE --dim %s=V picks a bucket's)",
                            o->plan.bucket_dim, o->execute ? "--execute" : o->trace ? "--trace"
                            : o->dot ? "--dot" : "--show-kernels", o->plan.bucket_dim);
    if (o->plan.dims.n >= 64)
        return fe_cli_usage("run", "at most 64 --dim options");
    static fe_cli_planned pl[64];
    fe_report *rep[64] = {0};
    fe_error err = {0};
    fe_dispatch *d = NULL;
    int rc = 0, n = 0, groups = o->verbose ? FE_WITH_GROUPS : 0;
    fe_cli_plan_opts po = o->plan;
    int at = po.dims.n++;
    po.dims.names[at] = o->plan.bucket_dim;
    memset(pl, 0, sizeof pl);
    if (!(d = fe_dispatch_new(o->plan.bucket_dim, &err)))
        goto fail;
    for (; n < o->plan.nbuckets; n++) {
        int64_t v = o->plan.buckets[n];
        po.dims.values[at] = v;
        if (fe_cli_plan_make(o->model, &po, &pl[n], &err) != FE_OK ||
            !(rep[n] = fe_engine_simulate(pl[n].e, pl[n].plan, &err)) ||
            fe_dispatch_add(d, v, pl[n].plan, rep[n], &err) != FE_OK) {
            fe_cli_prefix(&err, "bucket %s=%lld: ", o->plan.bucket_dim, (long long)v);
            n++;
            goto fail;
        }
    }
    if (o->plan_out && fe_cli_write(o->plan_out, "the dispatch table",
                                    fe_dispatch_format(d, FE_FORMAT_JSON | groups, &err), &err) != FE_OK)
        goto fail;
    if (o->json) {
        if (fe_cli_put(fe_dispatch_format(d, FE_FORMAT_JSON | groups, &err)))
            goto fail;
        goto out;
    }
    if (fe_cli_put(fe_dispatch_format(d, FE_FORMAT_TEXT, &err)))
        goto fail;
    for (int i = 0; o->explain && i < n; i++) {
        fe_cli_printf(stdout, "\nbucket %s=%lld\n", o->plan.bucket_dim, (long long)o->plan.buckets[i]);
        if (fe_cli_put(fe_plan_format(pl[i].plan, NULL, NULL, NULL, FE_FORMAT_DECISIONS, &err)))
            goto fail;
    }
    goto out;
fail:
    rc = fe_cli_fail(&err);
out:
    for (int i = 0; i < n; i++) {
        fe_report_free(rep[i]);
        fe_cli_planned_free(&pl[i]);
    }
    fe_dispatch_free(d);
    return rc;
}

static int run(int argc, char **argv)
{
    run_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.plan.nbuckets)
        return run_buckets(&o);
    fe_error err = {0};
    fe_cli_planned pl;
    fe_report *rep = NULL;
    fe_result *ex = NULL;
    char *kernels = NULL;

    if (fe_cli_plan_make(o.model, &o.plan, &pl, &err) != FE_OK)
        return fe_cli_fail(&err);
    fe_plan *plan = pl.plan;
    /* The plan and the unfused baseline on the engine's machine. */
    if (!(rep = fe_engine_simulate(pl.e, plan, &err)))
        goto fail;
    /* Execute before printing anything: a model that cannot run leaves no
     * half report behind. */
    if (o.execute && !(ex = fe_plan_execute(plan, &o.exec, &err)))
        goto fail;
    if (o.show_kernels &&
        !(kernels = fe_plan_format(plan, NULL, NULL, NULL, o.exec.device == FE_DEVICE_CUDA
                                   ? FE_FORMAT_KERNELS_CUDA : FE_FORMAT_KERNELS, &err)))
        goto fail;
    int groups = o.verbose ? FE_WITH_GROUPS : 0;
    if (o.save_outputs && fe_result_save_outputs(ex, o.save_outputs, &err) != FE_OK)
        goto fail;
    if (o.trace && fe_cli_write(o.trace, "the trace", fe_report_format(rep, NULL, FE_FORMAT_TRACE, &err),
                             &err) != FE_OK)
        goto fail;
    if (o.plan_out && fe_cli_write(o.plan_out, "the plan",
                                fe_plan_format(plan, NULL, rep, ex, FE_FORMAT_JSON | groups, &err),
                                &err) != FE_OK)
        goto fail;
    if (o.dot && fe_cli_write(o.dot, "the dot file", fe_plan_format(plan, NULL, NULL, NULL,
                                                                 FE_FORMAT_DOT, &err), &err) != FE_OK)
        goto fail;
    if (o.json) {
        if (fe_cli_put(fe_plan_format(plan, NULL, rep, ex, FE_FORMAT_JSON | FE_WITH_VERSUS | groups,
                               &err)))
            goto fail;
    } else {
        if (fe_cli_put(fe_plan_format(plan, &pl.stats, NULL, NULL,
                               FE_FORMAT_TEXT | (o.stats ? FE_WITH_STATS : 0), &err)))
            goto fail;
        printf("\n");
        if (fe_cli_put(fe_report_format(rep, NULL, FE_FORMAT_TEXT | groups, &err)))
            goto fail;
        if (ex) {
            printf("\n");
            if (fe_cli_put(fe_result_format(ex, FE_FORMAT_TEXT, &err)))
                goto fail;
        }
        if (o.explain && fe_cli_put(fe_plan_format(plan, NULL, NULL, NULL, FE_FORMAT_DECISIONS, &err)))
            goto fail;
        if (kernels) {
            printf("\n");
            fe_cli_put(kernels);
            kernels = NULL;
        }
    }
    if (ex && fe_result_check(ex, &err) != FE_OK) {
        fflush(stdout);
        goto fail;
    }
    goto out;
fail:
    rc = fe_cli_fail(&err);
out:
    fe_free(kernels);
    fe_result_free(ex);
    fe_report_free(rep);
    fe_cli_planned_free(&pl);
    return rc;
}

const fe_cmd fe_cmd_run = {"run", "plan a model with a fusion policy", usage, run};
