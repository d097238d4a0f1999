/* embed.c: fuseeng embedded in a C program through the public API
 * (core/include/fuseeng.h), linked against libfuseeng.so.
 *
 * It loads a model and two policies into one engine, plans with one, swaps
 * in the other and plans again, combines them, loads a third from a Lua
 * string, and prints what each plan did. Usage: embed [MODEL]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuseeng.h"

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
