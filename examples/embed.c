/* embed.c: fuseeng embedded in a C program through the public API, linked
 * against libfuseeng.so. Planning, swapping policies, simulating and
 * executing need only the embedding API (core/include/fuseeng.h); plan
 * files with their figures, and planning with a policy that is not the
 * active one, are the command's calls (fuseeng_cli.h, which it includes).
 *
 * It loads a model and two policies into one engine, plans with one, swaps
 * in the other and plans again, combines them, loads a third from a Lua
 * string, and prints what each plan did. Then it does what `fuseeng run`
 * and `fuseeng sim` do: simulates a plan against the unfused one, writes
 * it as a plan file and reads it back for the model, and executes a plan
 * on this CPU against the unfused reference (at a small size, S=8).
 * Usage: embed [MODEL]. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuseeng_cli.h"

static void die(const fe_error *err)
{
    fprintf(stderr, "embed: %s\n", err->message);
    exit(err->code == FE_EINPUT ? 2 : 1);
}

static fe_plan *plan_with(fe_engine *e, fe_policy *p, fe_model *m)
{
    fe_error err;
    fe_plan *plan;
    if (fe_engine_use(e, p, &err) != FE_OK || !(plan = fe_engine_plan(e, m, &err)))
        die(&err);
    int fused = 0;
    for (int g = 0; g < fe_plan_groups(plan); g++)
        fused += fe_plan_group_size(plan, g) > 1;
    printf("%-28s %3d kernels (%d fused groups), %d decisions\n", fe_policy_name(p),
           fe_plan_groups(plan), fused, fe_plan_decisions(plan));
    return plan;
}

/* Simulate p, save it as a plan file with its figures, read it back for
 * the model at path and check the copy simulates the same. */
static void simulate_and_save(fe_engine *e, const fe_plan *p, const char *path)
{
    fe_error err;
    fe_report *r = fe_engine_simulate(e, p, &err);
    if (!r)
        die(&err);
    fe_figures plan, unfused;
    fe_report_figures(r, 0, &plan);
    fe_report_figures(r, 1, &unfused);
    printf("simulated on %s: %.1f us in %d kernels (unfused %.1f us in %d), L3 %.1f MiB less\n",
           fe_engine_machine(e), plan.time_s * 1e6, plan.kernels, unfused.time_s * 1e6,
           unfused.kernels, (double)(unfused.l3_bytes - plan.l3_bytes) / (1 << 20));

    char file[] = "/tmp/embed_plan_XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0) {
        perror("embed: mkstemp");
        exit(1);
    }
    close(fd);
    char *json = fe_plan_format(p, NULL, r, NULL, FE_FORMAT_JSON, &err);
    if (!json || fe_write_file(file, "the plan", json, &err) != FE_OK)
        die(&err);
    fe_free(json);

    fe_saved_plan *s = fe_saved_plan_read(e, file, path, NULL, &err);
    fe_report *again = s ? fe_engine_simulate(e, fe_saved_plan_plan(s), &err) : NULL;
    if (!again)
        die(&err);
    fe_figures copy;
    fe_report_figures(again, 0, &copy);
    printf("plan file read back: %d groups, %s\n", fe_plan_groups(fe_saved_plan_plan(s)),
           copy.time_s == plan.time_s ? "same simulated time" : "DIFFERENT simulated time");
    remove(file);
    if (copy.time_s != plan.time_s)
        exit(1);
    fe_report_free(again);
    fe_saved_plan_free(s);
    fe_report_free(r);
}

/* Run the policy's plan of the model at S=8 on this CPU beside the
 * unfused reference; exits 1 if an output differs. */
static void execute(fe_policy *p, const char *path)
{
    fe_error err;
    const char *names[] = {"S"};
    int64_t values[] = {8};
    fe_model *small = fe_model_load_dims(path, 1, names, values, &err);
    fe_plan *plan = small ? fe_policy_plan(p, small, NULL, &err) : NULL;
    if (!plan)
        die(&err);
    fe_execute_options o = {.seed = 1, .no_timing = 1};
    fe_result *x = fe_plan_execute(plan, &o, &err);
    if (!x)
        die(&err);
    printf("executed at S=8 on this CPU: %s\n",
           fe_result_ok(x) ? "outputs equal the unfused reference" : "outputs differ");
    if (fe_result_check(x, &err) != FE_OK)
        die(&err);
    fe_result_free(x);
    fe_plan_free(plan);
    fe_model_free(small);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/models/llama2_7b_layer.json";
    fe_error err;
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        die(&err);
    fe_model *m = fe_model_load_file(path, NULL, &err);
    if (!m)
        die(&err);
    printf("fuseeng %s, model %s (%d nodes)\n", fe_version(), fe_model_name(m), fe_model_nodes(m));

    fe_policy *rules = fe_engine_load_policy(e, "static_rules", &err);
    fe_policy *all = rules ? fe_engine_load_policy(e, "fuse_all", &err) : NULL;
    if (!rules || !all)
        die(&err);
    fe_plan *p1 = plan_with(e, rules, m);
    fe_plan *p2 = plan_with(e, all, m);   /* swapped in the same engine */

    /* A policy from source: fuse only pairs. */
    const char *src =
        "local fe = require 'fuseeng'\n"
        "return fe.policy { name = 'pairs', driver = 'greedy',\n"
        "  decide = function(self, group) return #group <= 2, 'at most two nodes' end }\n";
    fe_policy *pairs = fe_engine_load_policy_buffer(e, src, strlen(src), "pairs.lua", &err);
    if (!pairs)
        die(&err);
    fe_plan *p3 = plan_with(e, pairs, m);

    /* Both baselines must agree for all(): only fusions static_rules allows. */
    fe_policy *both[2] = {all, rules};
    fe_policy *strict = fe_engine_combine(e, "all", both, 2, &err);
    if (!strict)
        die(&err);
    fe_plan *p4 = plan_with(e, strict, m);

    char *json = fe_plan_to_json(p1, &err);
    if (!json)
        die(&err);
    printf("plan JSON of %s: %zu bytes\n", fe_policy_name(rules), strlen(json));
    fe_free(json);

    simulate_and_save(e, p2, path);
    execute(all, path);

    int ok = fe_plan_groups(p2) < fe_plan_groups(p1) && fe_plan_groups(p3) >= fe_plan_groups(p2);
    fe_plan_free(p1);
    fe_plan_free(p2);
    fe_plan_free(p3);
    fe_plan_free(p4);
    fe_policy_free(strict);
    fe_policy_free(pairs);
    fe_policy_free(all);
    fe_policy_free(rules);
    fe_model_free(m);
    fe_engine_free(e);
    if (!ok) {
        fprintf(stderr, "embed: the policies did not differ as expected\n");
        return 1;
    }
    return 0;
}
