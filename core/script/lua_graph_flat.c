/* lua_graph_flat.c: whole-graph views for policies that walk every node
 * (see lua_graph_flat.h).
 *
 * Node and tensor objects are made one at a time, which is right for hooks
 * that look at a few nodes; a plan() that walks 100k nodes and their edges
 * pays about 1 us per object access. These calls build plain Lua arrays of
 * integers and strings once, so such a walk costs table reads only.
 * The "flat" form goes further for the lists: at 1M nodes one small table
 * per node and per tensor is most of a policy's Lua memory (3.2M tables,
 * about 100 bytes each) and of the collector's marking, and their reads
 * chase a pointer each; flat arrays with offsets (CSR) are a few big
 * tables read in order.
 */
#include <lauxlib.h>
#include <string.h>

#include "lua_graph_flat.h"
#include "ops.h"
#include "postdom.h"
#include "postorder.h"

int fe_lg_postdom(lua_State *L, const fe_graph *g)
{
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    int32_t *ipdom = lua_newuserdatauv(L, 2 * n * sizeof *ipdom, 0), *depth = ipdom + n;
    fe_error err = {0};
    if (fe_graph_postdom(g, ipdom, depth, &err) != FE_OK)
        return luaL_error(L, "%s", err.message);
    lua_createtable(L, g->nnodes, 0);
    lua_createtable(L, g->nnodes, 0);
    for (int32_t v = 0; v < g->nnodes; v++) {
        lua_pushinteger(L, ipdom[v] + 1);   /* FE_POSTDOM_SINK (-1) becomes 0 */
        lua_rawseti(L, -3, v + 1);
        lua_pushinteger(L, depth[v]);
        lua_rawseti(L, -2, v + 1);
    }
    return 2;
}

int fe_lg_post_dfs(lua_State *L, const fe_graph *g)
{
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    int32_t *order = lua_newuserdatauv(L, n * sizeof *order, 0);
    fe_error err = {0};
    if (fe_graph_post_dfs(g, order, &err) != FE_OK)
        return luaL_error(L, "%s", err.message);
    lua_createtable(L, g->nnodes, 0);
    for (int32_t i = 0; i < g->nnodes; i++) {
        lua_pushinteger(L, order[i] + 1);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* t[key] = a new array of n integers from get(g, i) */
static void int_array(lua_State *L, const char *key, int32_t n,
                      lua_Integer (*get)(const fe_graph *, int32_t), const fe_graph *g)
{
    lua_createtable(L, n, 0);
    for (int32_t i = 0; i < n; i++) {
        lua_pushinteger(L, get(g, i));
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, key);
}

static lua_Integer t_producer(const fe_graph *g, int32_t t) { return g->tensors[t].producer + 1; }
static lua_Integer t_numel(const fe_graph *g, int32_t t) { return g->tensors[t].numel; }
static lua_Integer t_rank(const fe_graph *g, int32_t t) { return g->tensors[t].rank; }
static lua_Integer t_is_output(const fe_graph *g, int32_t t)
{
    return (g->tensors[t].flags & FE_T_OUTPUT) != 0;
}

/* t[key] = per node, the list of its input (which = 0) or output tensors */
static void node_tensors(lua_State *L, const char *key, const fe_graph *g, int which)
{
    lua_createtable(L, g->nnodes, 0);
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        int cnt = which ? n->nout : n->nin;
        lua_createtable(L, cnt, 0);
        for (int k = 0; k < cnt; k++) {
            lua_pushinteger(L, (which ? fe_node_output(g, n, k) : fe_node_input(g, n, k)) + 1);
            lua_rawseti(L, -2, k + 1);
        }
        lua_rawseti(L, -2, v + 1);
    }
    lua_setfield(L, -2, key);
}

/* The same in flat form: t[key] holds every node's input (which = 0) or
 * output tensors one node after another, and t[at] where each node's
 * start, plus one past the last (n + 1 entries). One table in all instead
 * of one per node: at 1M nodes the per-node form is most of the policy's
 * memory and of the collector's work. */
static void node_tensors_flat(lua_State *L, const char *key, const char *at, const fe_graph *g,
                              int which)
{
    int32_t total = 0;
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        total += which ? n->nout : n->nin;
    }
    lua_createtable(L, g->nnodes + 1, 0);
    lua_createtable(L, total, 0);
    lua_Integer pos = 1;
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        lua_pushinteger(L, pos);
        lua_rawseti(L, -3, v + 1);
        int cnt = which ? n->nout : n->nin;
        for (int k = 0; k < cnt; k++) {
            lua_pushinteger(L, (which ? fe_node_output(g, n, k) : fe_node_input(g, n, k)) + 1);
            lua_rawseti(L, -2, pos++);
        }
    }
    lua_pushinteger(L, pos);
    lua_rawseti(L, -3, g->nnodes + 1);
    lua_setfield(L, -3, key);
    lua_setfield(L, -2, at);
}

/* t.consumers: per tensor, the list of its readers */
static void consumer_lists(lua_State *L, const fe_graph *g)
{
    lua_createtable(L, g->ntensors, 0);
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *te = fe_graph_tensor(g, t);
        lua_createtable(L, te->ncons, 0);
        for (int32_t c = 0; c < te->ncons; c++) {
            lua_pushinteger(L, fe_tensor_consumer(g, te, c) + 1);
            lua_rawseti(L, -2, c + 1);
        }
        lua_rawseti(L, -2, t + 1);
    }
    lua_setfield(L, -2, "consumers");
}

/* t.consumer and t.consumer_at: the readers in flat form (node_tensors_flat) */
static void consumers_flat(lua_State *L, const fe_graph *g)
{
    int32_t total = 0;
    for (int32_t t = 0; t < g->ntensors; t++)
        total += fe_graph_tensor(g, t)->ncons;
    lua_createtable(L, g->ntensors + 1, 0);
    lua_createtable(L, total, 0);
    lua_Integer pos = 1;
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *te = fe_graph_tensor(g, t);
        lua_pushinteger(L, pos);
        lua_rawseti(L, -3, t + 1);
        for (int32_t c = 0; c < te->ncons; c++) {
            lua_pushinteger(L, fe_tensor_consumer(g, te, c) + 1);
            lua_rawseti(L, -2, pos++);
        }
    }
    lua_pushinteger(L, pos);
    lua_rawseti(L, -3, g->ntensors + 1);
    lua_setfield(L, -3, "consumer");
    lua_setfield(L, -2, "consumer_at");
}

int fe_lg_arrays(lua_State *L, const fe_graph *g)
{
    const char *form = luaL_optstring(L, 2, "lists");
    int flat = strcmp(form, "flat") == 0;
    if (!flat && strcmp(form, "lists") != 0)
        return luaL_error(L, "graph:arrays(form): form is \"lists\" (the default) or \"flat\", "
                          "not \"%s\"", form);
    lua_createtable(L, 0, 14);
    lua_createtable(L, g->nnodes, 0);
    lua_createtable(L, g->nnodes, 0);
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        lua_pushstring(L, fe_node_op_name(n));
        lua_rawseti(L, -3, v + 1);
        lua_pushstring(L, fe_pattern_name(n->pattern));
        lua_rawseti(L, -2, v + 1);
    }
    lua_setfield(L, -3, "pattern");
    lua_setfield(L, -2, "op");
    if (flat) {
        node_tensors_flat(L, "input", "input_at", g, 0);
        node_tensors_flat(L, "output", "output_at", g, 1);
    } else {
        node_tensors(L, "inputs", g, 0);
        node_tensors(L, "outputs", g, 1);
    }
    int_array(L, "producer", g->ntensors, t_producer, g);
    int_array(L, "numel", g->ntensors, t_numel, g);
    int_array(L, "rank", g->ntensors, t_rank, g);
    int_array(L, "is_output", g->ntensors, t_is_output, g);
    if (flat)
        consumers_flat(L, g);
    else
        consumer_lists(L, g);
    return 1;
}
