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

/* One of the graph's relations: row i (a node or a tensor) relates to
 * len(g, i) others, the k-th being item(g, i, k) (0-based ids). */
typedef struct relation {
    int32_t (*len)(const fe_graph *g, int32_t i);
    int32_t (*item)(const fe_graph *g, int32_t i, int k);
} relation;

static int32_t n_nin(const fe_graph *g, int32_t v) { return fe_graph_node(g, v)->nin; }
static int32_t n_nout(const fe_graph *g, int32_t v) { return fe_graph_node(g, v)->nout; }
static int32_t t_ncons(const fe_graph *g, int32_t t) { return fe_graph_tensor(g, t)->ncons; }
static int32_t n_input(const fe_graph *g, int32_t v, int k)
{
    return fe_node_input(g, fe_graph_node(g, v), k);
}
static int32_t n_output(const fe_graph *g, int32_t v, int k)
{
    return fe_node_output(g, fe_graph_node(g, v), k);
}
static int32_t t_consumer(const fe_graph *g, int32_t t, int k)
{
    return fe_tensor_consumer(g, fe_graph_tensor(g, t), k);
}
static const relation INPUTS = {n_nin, n_input}, OUTPUTS = {n_nout, n_output},
                      CONSUMERS = {t_ncons, t_consumer};

/* t[key] = for each of the n rows, the list of what it relates to */
static void lists(lua_State *L, const char *key, int32_t n, relation r, const fe_graph *g)
{
    lua_createtable(L, n, 0);
    for (int32_t i = 0; i < n; i++) {
        int32_t cnt = r.len(g, i);
        lua_createtable(L, cnt, 0);
        for (int k = 0; k < cnt; k++) {
            lua_pushinteger(L, r.item(g, i, k) + 1);
            lua_rawseti(L, -2, k + 1);
        }
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, key);
}

/* The same in flat form: t[key] holds every row's entries one row after
 * another, and t[at] where each row starts, plus one past the last (n + 1
 * entries). Two tables in all instead of one per row: at 1M nodes the
 * lists are most of a policy's memory and of the collector's work. */
static void flat(lua_State *L, const char *key, const char *at, int32_t n, relation r,
                 const fe_graph *g)
{
    int32_t total = 0;
    for (int32_t i = 0; i < n; i++)
        total += r.len(g, i);
    lua_createtable(L, n + 1, 0);
    lua_createtable(L, total, 0);
    lua_Integer pos = 1;
    for (int32_t i = 0; i < n; i++) {
        lua_pushinteger(L, pos);
        lua_rawseti(L, -3, i + 1);
        int32_t cnt = r.len(g, i);
        for (int k = 0; k < cnt; k++) {
            lua_pushinteger(L, r.item(g, i, k) + 1);
            lua_rawseti(L, -2, pos++);
        }
    }
    lua_pushinteger(L, pos);
    lua_rawseti(L, -3, n + 1);
    lua_setfield(L, -3, key);
    lua_setfield(L, -2, at);
}

int fe_lg_arrays(lua_State *L, const fe_graph *g)
{
    const char *form = luaL_optstring(L, 2, "lists");
    int is_flat = strcmp(form, "flat") == 0;
    if (!is_flat && strcmp(form, "lists") != 0)
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
    if (is_flat) {
        flat(L, "input", "input_at", g->nnodes, INPUTS, g);
        flat(L, "output", "output_at", g->nnodes, OUTPUTS, g);
    } else {
        lists(L, "inputs", g->nnodes, INPUTS, g);
        lists(L, "outputs", g->nnodes, OUTPUTS, g);
    }
    int_array(L, "producer", g->ntensors, t_producer, g);
    int_array(L, "numel", g->ntensors, t_numel, g);
    int_array(L, "rank", g->ntensors, t_rank, g);
    int_array(L, "is_output", g->ntensors, t_is_output, g);
    if (is_flat)
        flat(L, "consumer", "consumer_at", g->ntensors, CONSUMERS, g);
    else
        lists(L, "consumers", g->ntensors, CONSUMERS, g);
    return 1;
}

int fe_lg_nodes_of(lua_State *L, const fe_graph *g)
{
    const char *name = luaL_checkstring(L, 2);
    int op = fe_op_find(name);
    if (op < 0)
        return luaL_error(L, "graph:nodes_of: '%s' is not an op (see fuseeng ops)", name);
    lua_newtable(L);
    lua_Integer k = 0;
    for (int32_t v = 0; v < g->nnodes; v++) {
        if (fe_graph_node(g, v)->op != op)
            continue;
        lua_pushinteger(L, v + 1);
        lua_rawseti(L, -2, ++k);
    }
    return 1;
}
