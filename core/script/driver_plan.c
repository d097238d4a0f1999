/* driver_plan.c: the plan driver: the policy returns whole groups.
 *
 * plan(self, graph, ctx) returns a list of groups; a group is a list of
 * nodes (node objects, names or 1-based topological indices) and may carry
 * `split` (TLF factor), `kernel` (a kernel choice name) and `reason`. The
 * engine checks each group in order and rejects, with a reason in the
 * decision log, any group that names an unknown node, reuses a node of an
 * earlier group, or is illegal (not convex, a cycle with earlier groups, no
 * kernel class). Rejected groups and nodes in no group run unfused. A
 * policy's plan can never make an illegal plan.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "drivers.h"
#include "lua_graph.h"
#include "lua_fields.h"
#include "sim.h"

/* Merge the groups of the list at stack slot list, in order (see the note
 * for their form and the checks); owner[v] becomes the index of the group
 * that took node v (-1 on entry; owner may be NULL when the caller does not
 * need it), made[i] the group id item i + 1 became (-1: rejected; made may
 * be NULL). A group of one node is logged only when log_single. Returns the
 * run's status. */
int fe_drive_groups(fe_run *r, int list, int32_t *owner, int32_t *made, int log_single,
                    const char *default_reason)
{
    const fe_graph *g = r->g;
    lua_State *L = r->L;
    size_t cap = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    int32_t *nodes = malloc(cap * sizeof *nodes);
    int32_t *gids = malloc(cap * sizeof *gids);
    int32_t *own = owner ? NULL : malloc(cap * sizeof *own);
    char why[700];
    if (!nodes || !gids || (!owner && !own)) {
        fe_run_oom(r, "reading a list of groups");
        goto out;
    }
    if (!owner) {
        owner = own;
        for (size_t v = 0; v < cap; v++)
            owner[v] = -1;
    }
    lua_Integer ng = (lua_Integer)lua_rawlen(L, list);
    for (lua_Integer gi = 1; gi <= ng && !fe_run_over(r); gi++) {
        if (made)
            made[gi - 1] = -1;
        lua_rawgeti(L, list, gi);
        int grp = lua_gettop(L);
        int n = 0, bad = 0;
        why[0] = '\0';
        if (!lua_istable(L, grp)) {
            snprintf(why, sizeof why, "group %lld is a %s, not a list of nodes", (long long)gi,
                     luaL_typename(L, grp));
            bad = 1;
        }
        lua_Integer len = bad ? 0 : (lua_Integer)lua_rawlen(L, grp);
        for (lua_Integer k = 1; k <= len && !bad; k++) {
            lua_rawgeti(L, grp, k);
            int32_t v = fe_lg_to_node(L, -1, g);
            if (v < 0) {
                snprintf(why, sizeof why, "group %lld item %lld (%s) is not a node of this graph",
                         (long long)gi, (long long)k, fe_sandbox_describe(L, -1));
                bad = 1;
            } else if (owner[v] >= 0) {
                snprintf(why, sizeof why, "group %lld: node '%s' is already in group %d",
                         (long long)gi, fe_node_name(g, fe_graph_node(g, v)), owner[v] + 1);
                bad = 1;
            } else {
                int dup = 0;
                for (int j = 0; j < n && !dup; j++)
                    dup = nodes[j] == v;
                if (dup) {
                    snprintf(why, sizeof why, "group %lld lists node '%s' twice", (long long)gi,
                             fe_node_name(g, fe_graph_node(g, v)));
                    bad = 1;
                } else {
                    nodes[n++] = v;
                }
            }
            lua_pop(L, 1);
        }
        if (!bad && n == 0) {
            snprintf(why, sizeof why, "group %lld is empty", (long long)gi);
            bad = 1;
        }
        for (int k = 0; k < n && !bad; k++)
            gids[k] = r->part->gid[nodes[k]];
        if (!bad && n > 1) {
            char legal[512];
            if (!fe_part_can_merge(r->part, gids, n, legal, sizeof legal)) {
                snprintf(why, sizeof why, "group %lld: %s", (long long)gi, legal);
                bad = 1;
            }
        }
        /* split / kernel / reason fields */
        int32_t split = 0, kernel = 0;   /* 0: not chosen (planning.c) */
        const char *reason = default_reason;
        if (!bad) {
            if (fe_run_rawfield(L, grp, "split") != LUA_TNIL) {
                lua_Integer s = 0;
                if (!fe_lf_integer(L, -1, &s) || s < 1 || s > FE_SIM_MAX_SPLIT) {
                    snprintf(why, sizeof why, "group %lld: split must be " FE_SIM_SPLIT_RULE,
                             (long long)gi);
                    bad = 1;
                }
                split = (int32_t)s;
            }
            lua_pop(L, 1);
            if (fe_run_rawfield(L, grp, "kernel") != LUA_TNIL) {
                const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
                kernel = fe_k_choice_find(k);
                if (kernel < 0) {
                    snprintf(why, sizeof why, "group %lld: kernel '%s' is not one of: %s",
                             (long long)gi, k, fe_k_choice_names());
                    bad = 1;
                }
            }
            lua_pop(L, 1);
            if (fe_run_rawfield(L, grp, "reason") == LUA_TSTRING)
                reason = lua_tostring(L, -1);
        }
        /* Sort the members for the log and the merge. */
        for (int i = 1; i < n; i++) {
            int32_t x = nodes[i], j = i;
            while (j > 0 && nodes[j - 1] > x) {
                nodes[j] = nodes[j - 1];
                j--;
            }
            nodes[j] = x;
        }
        if (bad) {
            fe_run_reject(r, nodes, n, why);
        } else {
            for (int k = 0; k < n; k++) {
                gids[k] = r->part->gid[nodes[k]];
                owner[nodes[k]] = (int32_t)gi - 1;
            }
            int32_t gid = n > 1 ? fe_part_merge(r->part, gids, n) : gids[0];
            if (n > 1 || log_single)
                fe_plan_log(r->log, nodes, n, 1, r->env.policy, reason);
            if (made)
                made[gi - 1] = gid;
            /* Applied to the plan's group once it is built (run.c). */
            r->extra_split[gid] = split;
            r->extra_kernel[gid] = kernel;
        }
        lua_settop(L, list);
    }
out:
    free(nodes);
    free(gids);
    free(own);
    return r->status;
}

int fe_drive_groups_hook(fe_run *r, int fn, const char *name)
{
    lua_State *L = r->L;
    if (fe_run_graph_hook(r, fn, name) != FE_OK)
        return 0;
    int list = lua_gettop(L);
    if (!lua_istable(L, list)) {
        fe_run_fault(r, name, fn, "%s returned a %s; it must return a list of groups (lists of "
                     "nodes)", name, luaL_typename(L, list));
        return 0;
    }
    return list;
}

int fe_drive_plan(fe_run *r)
{
    const fe_graph *g = r->g;
    lua_State *L = r->L;
    int32_t *owner = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *owner);
    char why[700];

    if (!owner) {
        fe_run_oom(r, "in the plan driver");
        goto out;
    }
    for (int32_t v = 0; v < g->nnodes; v++)
        owner[v] = -1;

    fe_run_rawfield(L, r->ptab, "plan");
    int list = fe_drive_groups_hook(r, lua_gettop(L), "plan");
    if (!list)
        goto out;
    if (fe_drive_groups(r, list, owner, NULL, 1, "returned by plan()") != FE_OK)
        goto out;
    /* Nodes in no group run alone; say so once. */
    int32_t missing = 0, first = -1;
    for (int32_t v = 0; v < g->nnodes; v++)
        if (owner[v] < 0 && missing++ == 0)
            first = v;
    if (missing > 0) {
        snprintf(why, sizeof why, "%d node%s in no group (first: '%s') run%s unfused", missing,
                 missing == 1 ? " is" : "s are", fe_node_name(g, fe_graph_node(g, first)),
                 missing == 1 ? "s" : "");
        fe_run_note(r, NULL, 0, why);
    }
out:
    lua_settop(L, r->ctx);
    free(owner);
    return r->status;
}
