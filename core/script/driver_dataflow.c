/* driver_dataflow.c: the dataflow driver, TVM-OPU's GraphMatchFuser::Partition
 * (seed 002).
 *
 * Note on the partition. The policy gives a hardware data flow (HDFG, see
 * lua/fuseeng/dataflow.lua). Nodes are walked in post-DFS order from the
 * graph outputs (producers before consumers, one branch at a time, as TVM's
 * post_dfs_order), keeping the step of the last match:
 *
 *   - an op some step accepts: find_match(op, last) searches breadth-first
 *     from last's successors; found and legal -> the node joins the current
 *     group. Otherwise restart: find_match(op, nil) from the root; found ->
 *     a new group opens (if the current one holds anything); not found ->
 *     the node stays alone and the flow is back at the root.
 *   - an op no step accepts is not placed by the walk. Like TVM's
 *     CollectInputs, when a node joins a group its ungrouped producers of
 *     such ops (reshapes, constant makers; weights are tensors and come
 *     along anyway) are pulled into the same group, recursively, as long
 *     as the group stays legal.
 *
 * Every merge passes the engine's legality check first. The groups found
 * are then put to the policy's decide, in the order they were opened; a
 * group it rejects stays unfused.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "lua_graph.h"
#include "ops.h"
#include "postorder.h"

typedef struct flow {
    fe_run *r;
    int h;               /* stack slot of the compiled data flow */
    fe_part *scratch;    /* groups found by the walk */
    int32_t *group;      /* node -> walk group label, -1 */
    uint8_t *mapped;     /* op id -> 1 accepted by some step, 0 not, 2 unknown */
    int32_t *stack;      /* collect_inputs' (node, next input) pairs: 2 (nnodes + 1) */
} flow;

/* h:method(op [, last]) -> string or nil; pushes the result. */
static int call_flow(flow *f, const char *method, const char *op, const char *last)
{
    fe_run *r = f->r;
    lua_State *L = r->L;
    int nargs = 1;
    lua_pushstring(L, op);
    if (last) {
        lua_pushstring(L, last);
        nargs++;
    } else if (strcmp(method, "find_match") == 0) {
        lua_pushnil(L);
        nargs++;
    }
    return fe_run_method(r, f->h, method, nargs, 1, "data flow");
}

/* CollectInputs: pull ungrouped producers of unmapped ops into v's group,
 * `label`, depth-first in input order as TVM's recursion does. The stack
 * is explicit: a chain of thousands of unmapped ops (reshapes, casts)
 * would overflow the C stack. Each node is pushed at most once (it is
 * labelled first), so 2 (nnodes + 1) slots hold every (node, next input)
 * pair. */
static void collect_inputs(flow *f, int32_t v, int32_t label)
{
    const fe_graph *g = f->r->g;
    int32_t *stack = f->stack, sp = 0;
    char why[512];
    stack[sp++] = v;
    stack[sp++] = 0;
    while (sp > 0) {
        int32_t u = stack[sp - 2], k = stack[sp - 1];
        const fe_node *n = fe_graph_node(g, u);
        if (k >= n->nin) {
            sp -= 2;
            continue;
        }
        stack[sp - 1]++;
        int32_t p = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
        if (p < 0 || f->group[p] >= 0 || f->mapped[fe_graph_node(g, p)->op] == 1)
            continue;
        int32_t gids[2] = {f->scratch->gid[p], f->scratch->gid[u]};
        if (!fe_part_can_merge(f->scratch, gids, 2, why, sizeof why))
            continue;
        fe_part_merge(f->scratch, gids, 2);
        f->group[p] = label;
        stack[sp++] = p;
        stack[sp++] = 0;
    }
}

static int is_mapped(flow *f, const fe_node *n)
{
    if (f->mapped[n->op] == 2) {
        if (call_flow(f, "maps", fe_node_op_name(n), NULL) != 0)
            return -1;
        f->mapped[n->op] = (uint8_t)lua_toboolean(f->r->L, -1);
        lua_pop(f->r->L, 1);
    }
    return f->mapped[n->op];
}

/* Open walk group `label` with node v at step `step`. */
static void open_group(flow *f, int32_t v, int32_t label)
{
    f->group[v] = label;
    collect_inputs(f, v, label);
}

int fe_drive_dataflow(fe_run *r)
{
    const fe_graph *g = r->g;
    lua_State *L = r->L;
    flow f = {.r = r};
    char why[512];
    char last[256] = "";          /* step of the last match; "" = at the root */
    int32_t cur = -1, cur_node = -1, labels = 0;
    int32_t *order = NULL, *members = NULL, *gids = NULL, *start = NULL;
    uint8_t mapped[FE_NOPS];

    memset(mapped, 2, sizeof mapped);
    f.mapped = mapped;
    fe_run_rawfield(L, r->ptab, "dataflow");
    f.h = lua_gettop(L);
    f.scratch = fe_part_new(g, r->err);
    f.group = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *f.group);
    f.stack = malloc(2 * ((size_t)g->nnodes + 1) * sizeof *f.stack);
    members = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *members);
    gids = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *gids);
    order = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *order);
    if (order && fe_graph_post_dfs(g, order, NULL) != FE_OK) {
        free(order);
        order = NULL;
    }
    if (!f.scratch || !f.group || !f.stack || !members || !gids || !order) {
        fe_run_oom(r, "in the dataflow driver");
        goto out;
    }
    for (int32_t v = 0; v < g->nnodes; v++)
        f.group[v] = -1;

    /* The walk: groups in the scratch partition, labelled in opening order. */
    for (int32_t i = 0; i < g->nnodes; i++) {
        int32_t v = order[i];
        const fe_node *n = fe_graph_node(g, v);
        const char *op = fe_node_op_name(n);
        int m = is_mapped(&f, n);
        if (m < 0)
            goto out;   /* a fault, reported: fe_run_over */
        if (!m || f.group[v] >= 0)
            continue;
        if (call_flow(&f, "find_match", op, last[0] ? last : NULL) != 0)
            goto out;   /* a fault, reported: fe_run_over */
        if (lua_type(L, -1) == LUA_TSTRING && cur >= 0) {
            int32_t pair[2] = {f.scratch->gid[v], f.scratch->gid[cur_node]};
            if (fe_part_can_merge(f.scratch, pair, 2, why, sizeof why)) {
                fe_part_merge(f.scratch, pair, 2);
                snprintf(last, sizeof last, "%s", lua_tostring(L, -1));
                lua_pop(L, 1);
                open_group(&f, v, cur);
                continue;
            }
        }
        lua_pop(L, 1);
        /* Restart from the root of the flow: a new group. */
        if (call_flow(&f, "find_match", op, NULL) != 0)
            goto out;   /* a fault, reported: fe_run_over */
        if (lua_type(L, -1) == LUA_TSTRING) {
            snprintf(last, sizeof last, "%s", lua_tostring(L, -1));
            cur = labels++;
            cur_node = v;
            open_group(&f, v, cur);
        } else {
            last[0] = '\0';   /* the node stays alone; the flow is back at its root */
        }
        lua_pop(L, 1);
    }

    /* The groups found, in opening order, go to decide. Nodes are bucketed
     * by label (counting sort), each bucket in topological order. */
    start = calloc((size_t)labels + 1, sizeof *start);
    if (!start) {
        fe_run_oom(r, "in the dataflow driver");
        goto out;
    }
    for (int32_t v = 0; v < g->nnodes; v++)
        if (f.group[v] >= 0)
            start[f.group[v] + 1]++;
    for (int32_t l = 0; l < labels; l++)
        start[l + 1] += start[l];
    for (int32_t v = 0; v < g->nnodes; v++)
        if (f.group[v] >= 0)
            members[start[f.group[v]]++] = v;
    for (int32_t l = labels; l > 0; l--)   /* undo the fill's advance */
        start[l] = start[l - 1];
    start[0] = 0;
    for (int32_t l = 0; l < labels; l++) {
        int32_t *mem = members + start[l], cnt = start[l + 1] - start[l];
        if (cnt < 2)
            continue;
        for (int32_t k = 0; k < cnt; k++)
            gids[k] = r->part->gid[mem[k]];
        if (!fe_part_can_merge(r->part, gids, cnt, why, sizeof why)) {
            fe_run_reject(r, mem, cnt, why);
            continue;
        }
        int verdict = fe_run_decide(r, gids, cnt);
        if (verdict < 0 || fe_run_over(r))
            break;
        if (verdict == 1)
            fe_part_merge(r->part, gids, cnt);
    }
out:
    free(start);
    free(order);
    free(members);
    free(gids);
    free(f.group);
    free(f.stack);
    fe_part_free(f.scratch);
    lua_settop(L, r->ctx);
    return r->status;
}
