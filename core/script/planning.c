/* planning.c: a policy plans a graph: one run (run.c) with its ctx
 * (ctx.c), through the driver drivers.c names, into a plan.
 *
 *   fe_policy_check -> fe_run_begin -> fe_ctx_push -> driver -> partition
 *     -> split and kernel hooks -> (policy disabled? the unfused plan)
 *     -> decision log into the plan -> splits -> fe_ctx_end -> fe_run_end
 *
 * The split (the tiles a group runs in) is the policy's decision. A
 * group's split is what the driver chose (the plan driver's group.split),
 * else what the split hook returned; a group neither chose runs whole
 * (split 1) unless the policy says tiling = "auto", which leaves it to the
 * simulator's default for the machine (seed 004's smallest split whose
 * tile fits the L2). So every plan says how each group runs, and no group
 * is tiled that no one asked to.
 */
#include <stdlib.h>

#include "ctx.h"
#include "drivers.h"
#include "plan_build.h"
#include "planning.h"
#include "sim.h"

/* The plan of the driver's partition, with the splits and kernels the
 * driver chose and the split and kernel hooks' answers. NULL if the run
 * stopped (r->status) or, with the policy disabled by a fault in those
 * hooks, the plan would not stand anyway. */
static fe_plan *partition_plan(fe_run *r)
{
    fe_plan *plan = fe_part_to_plan(r->part, r->err);
    if (!plan) {
        r->status = r->err && r->err->code ? r->err->code : FE_ENOMEM;
        return NULL;
    }
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        int32_t gid = r->part->gid[fe_group_nodes(plan, &plan->groups[gi])[0]];
        if (r->extra_split[gid] > 0)
            plan->groups[gi].split = r->extra_split[gid];
        plan->groups[gi].kernel = r->extra_kernel[gid];
    }
    if (fe_run_group_hooks(r, plan) != 0 || fe_run_over(r) || fe_run_copies_hook(r, plan) != 0 ||
        fe_run_over(r)) {
        fe_plan_free(plan);
        return NULL;
    }
    return plan;
}

/* Splits no one chose (0): the simulator's with tiling = "auto", else 1. */
static int settle_splits(const fe_run *r, fe_plan *plan, fe_error *err)
{
    if (r->auto_tiling)
        return fe_sim_resolve_splits(plan, r->env.machine, err);
    for (int32_t gi = 0; gi < plan->ngroups; gi++)
        if (plan->groups[gi].split == 0)
            plan->groups[gi].split = 1;
    return FE_OK;
}

/* The plan of run r (begun, with its ctx), or NULL with r->err set. */
static fe_plan *plan_run(fe_run *r)
{
    fe_plan *plan = NULL;
    const fe_driver *d = fe_driver_find(r->env.driver);
    if (!d) {
        fe_error_set(r->err, FE_EINPUT, "%s: policy '%s': unknown driver '%s'", r->env.path,
                     r->env.policy, r->env.driver);
        return NULL;
    }
    fe_sandbox_begin(r->env.sb, r->env.path);
    if (d->drive(r) != FE_OK || r->status != FE_OK)
        return NULL;
    if (!r->disabled)
        plan = partition_plan(r);
    if (r->status != FE_OK)
        return NULL;
    if (r->disabled) {
        /* The policy failed: none of its fusions stand, whatever it had
         * decided before the fault. */
        fe_plan_free(plan);
        if (!(plan = fe_plan_unfused(r->g, r->err)))
            return NULL;
    }
    fe_run_take_log(r, plan);
    plan->policy = fe_plan_str(plan, r->env.policy);
    plan->machine = fe_plan_str(plan, r->env.machine->name);
    if (settle_splits(r, plan, r->err) != FE_OK) {
        fe_plan_free(plan);
        return NULL;
    }
    return plan;
}

fe_plan *fe_run_policy(fe_policy_ref *p, const fe_graph *g, fe_run_stats *stats, fe_error *err)
{
    const fe_planner *pl = p->pl;
    /* The policy's table may have changed since it was loaded (it is the
     * script's own table): check again what C reads of it. */
    if (fe_policy_check(p, err) != FE_OK) {
        if (stats)
            *stats = (fe_run_stats){0};
        return NULL;
    }
    fe_run_env env = {.sb = pl->sb, .machine = &pl->machine, .profile = pl->profile,
                      .bench_budget = pl->bench_budget, .bench_item = pl->bench_item,
                      .weights = pl->weights, .inputs = pl->inputs,
                      .bench_device = pl->bench_device,
                      .policy = p->name, .driver = p->driver, .path = p->path,
                      .policy_ref = p->ref};
    fe_run r;
    fe_plan *plan = NULL;
    if (fe_run_begin(&r, &env, g, err) == FE_OK) {
        fe_ctx_push(&r);
        plan = plan_run(&r);
        fe_ctx_end(&r);
    }
    fe_run_end(&r, stats);
    return plan;
}
