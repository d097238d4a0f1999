/* lua_graph.c: graph, node, tensor and group userdata for policies.
 *
 * Every object holds the graph object (a uservalue), which holds a pointer
 * to the C graph; detaching the graph nulls the pointer, so an object a
 * script kept from an earlier run raises an error instead of reading freed
 * memory. Field names are looked up in a per-type table (an upvalue of
 * __index) that maps them to small integers, then dispatched by a switch.
 *
 *   graph:  name, nnodes (#g), ntensors, g[i] (i-th node in topological
 *           order), g:node(name|index), g:tensor(name), inputs, weights,
 *           outputs (tensor lists), dims (name -> size), g:postdom(),
 *           g:post_dfs() and g:arrays() (plain arrays of the whole graph,
 *           lua_graph_flat.h)
 *   node:   name, op, pattern, index (1-based topological), inputs,
 *           outputs (tensor lists), output (the first), shape, dtype, numel,
 *           bytes (read + written), bytes_read, bytes_written, flops, live,
 *           producers, consumers (node lists), attrs (table), is_output
 *   tensor: name, shape, dtype, numel, bytes, kind, rank, index, producer
 *           (node or nil), consumers (node list), is_output
 *   group:  #grp, grp[i], nodes, size, ops, key ("silu+mul"), exact_key,
 *           inputs, outputs, internal (tensor lists), bytes_in, bytes_out,
 *           bytes, internal_bytes, flops, kinds (kind -> count), first, last,
 *           grp:contains(node), parts (the groups a candidate merges; made
 *           once per group object), id (an integer, equal exactly for
 *           equal node sets within a run: the members interned as bytes),
 *           a:shared_bytes(b), a:feeds(b) (sharedbytes.h), names (the members'
 *           names joined by ", ")
 *
 * Hooks run hundreds of thousands of times a plan, so group fields build no
 * Lua tables they do not return and allocate no C memory: sets of nodes and
 * tensors are stamps in a scratch owned by the graph object (marks()).
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "groupkey.h"
#include "lua_graph.h"
#include "lua_graph_flat.h"
#include "ops.h"
#include "sharedbytes.h"
#include "strtab.h"

/* Metatable names; their addresses are also registry keys of the same
 * metatables (new_mt), so making or checking an object interns no string:
 * hooks make and check several objects per candidate pair. */
static const char GRAPH_MT[] = "fuseeng.graph";
static const char NODE_MT[] = "fuseeng.node";
static const char TENSOR_MT[] = "fuseeng.tensor";
static const char GROUP_MT[] = "fuseeng.group";

static void set_mt(lua_State *L, const char *mt)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, mt);
    lua_setmetatable(L, -2);
}

/* luaL_testudata and luaL_checkudata by the metatable's address. */
static void *test_ud(lua_State *L, int idx, const char *mt)
{
    void *p = lua_touserdata(L, idx);
    if (!p || !lua_getmetatable(L, idx))
        return NULL;
    lua_rawgetp(L, LUA_REGISTRYINDEX, mt);
    int same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same ? p : NULL;
}

static void *check_ud(lua_State *L, int idx, const char *mt)
{
    void *p = test_ud(L, idx, mt);
    if (!p)
        luaL_typeerror(L, idx, mt);
    return p;
}

typedef struct lgraph {
    const fe_graph *g;
    fe_strtab *ids;      /* group.id: node sets seen this run (as bytes), made on first use */
    /* group.id of partition groups by label: id_of[label] holds while the
     * group has id_n[label] members (labelled()); made on first use. */
    int32_t *id_n, *id_of;
} lgraph;

typedef struct lobj {
    lgraph *lg;
    int32_t id;
} lobj;

/* Members, then (when the group is a candidate merge) the parts it merges:
 * nparts lengths, each part's members, and each part's partition label
 * (-1 if none). label is the group's own (fe_lg_push_part), or -1.
 * Uservalues: 1 the graph object, 2 the parts table once asked for. */
typedef struct lgroup {
    lgraph *lg;
    int32_t n, nparts, label;
    int32_t nodes[];
} lgroup;

static const fe_graph *live(lua_State *L, lgraph *lg)
{
    if (!lg->g)
        luaL_error(L, "the graph is no longer loaded (an object kept from an earlier run?)");
    return lg->g;
}

/* ---- pushing objects ---- */

static void ids_free(lgraph *lg)
{
    fe_strtab_free(lg->ids);
    lg->ids = NULL;
    free(lg->id_n);
    free(lg->id_of);
    lg->id_n = lg->id_of = NULL;
}

void fe_lg_detach(lua_State *L, int idx)
{
    lgraph *lg = check_ud(L, idx, GRAPH_MT);
    lg->g = NULL;
    ids_free(lg);   /* ids hold for one run */
}

static int graph_gc(lua_State *L)
{
    ids_free(lua_touserdata(L, 1));
    return 0;
}

/* The object id from the cache table at cidx (the graph object's
 * uservalue for its type, graph object at gidx), made on first use. */
static void push_cached(lua_State *L, int gidx, int cidx, int32_t id, const char *mt)
{
    if (lua_rawgeti(L, cidx, id) != LUA_TNIL)
        return;
    lua_pop(L, 1);
    lobj *o = lua_newuserdatauv(L, sizeof *o, 1);
    o->lg = lua_touserdata(L, gidx);
    o->id = id;
    lua_pushvalue(L, gidx);
    lua_setiuservalue(L, -2, 1);
    set_mt(L, mt);
    lua_pushvalue(L, -1);
    lua_rawseti(L, cidx, id);
}

static void push_obj(lua_State *L, int gidx, int32_t id, int cache, const char *mt)
{
    gidx = lua_absindex(L, gidx);
    lua_getiuservalue(L, gidx, cache);
    push_cached(L, gidx, lua_gettop(L), id, mt);
    lua_remove(L, -2);
}

void fe_lg_push_node(lua_State *L, int gidx, int32_t id)
{
    push_obj(L, gidx, id, 1, NODE_MT);
}

void fe_lg_push_tensor(lua_State *L, int gidx, int32_t id)
{
    push_obj(L, gidx, id, 2, TENSOR_MT);
}

static lgroup *push_group(lua_State *L, int gidx, const int32_t *nodes, int n, int32_t label,
                          const int32_t *part_len, const int32_t *part_nodes,
                          const int32_t *part_labels, int nparts)
{
    gidx = lua_absindex(L, gidx);
    size_t extra = nparts > 1 ? 2 * (size_t)nparts + (size_t)n : 0;
    lgroup *gr = lua_newuserdatauv(L, sizeof *gr + ((size_t)n + extra) * sizeof(int32_t), 2);
    gr->lg = lua_touserdata(L, gidx);
    gr->n = n;
    gr->nparts = nparts > 1 ? nparts : 0;
    gr->label = label;
    memcpy(gr->nodes, nodes, (size_t)n * sizeof *nodes);
    if (gr->nparts) {
        memcpy(gr->nodes + n, part_len, (size_t)nparts * sizeof *part_len);
        memcpy(gr->nodes + n + nparts, part_nodes, (size_t)n * sizeof *part_nodes);
        for (int i = 0; i < nparts; i++)
            gr->nodes[2 * n + nparts + i] = part_labels ? part_labels[i] : -1;
    }
    lua_pushvalue(L, gidx);
    lua_setiuservalue(L, -2, 1);
    set_mt(L, GROUP_MT);
    return gr;
}

void fe_lg_push_group_parts(lua_State *L, int gidx, const int32_t *nodes, int n,
                            const int32_t *part_len, const int32_t *part_nodes,
                            const int32_t *part_labels, int nparts)
{
    push_group(L, gidx, nodes, n, -1, part_len, part_nodes, part_labels, nparts);
}

void fe_lg_push_group(lua_State *L, int gidx, const int32_t *nodes, int n)
{
    push_group(L, gidx, nodes, n, -1, NULL, NULL, NULL, 0);
}

void fe_lg_push_part(lua_State *L, int gidx, const int32_t *nodes, int n, int32_t label)
{
    push_group(L, gidx, nodes, n, label, NULL, NULL, NULL, 0);
}

const int32_t *fe_lg_group_nodes(lua_State *L, int idx, const fe_graph *g, int *n)
{
    lgroup *gr = test_ud(L, idx, GROUP_MT);
    if (!gr)
        return NULL;
    if (live(L, gr->lg) != g)
        luaL_error(L, "the group belongs to another graph (kept from an earlier run?)");
    *n = gr->n;
    return gr->nodes;
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int fe_lg_group_arg(lua_State *L, int idx, const fe_graph *g, int32_t *buf, int cap,
                    int32_t **heap)
{
    int n;
    const int32_t *nodes = fe_lg_group_nodes(L, idx, g, &n);
    *heap = NULL;
    if (!nodes && !lua_istable(L, idx))
        return luaL_error(L, "expected a group or a list of nodes, got a %s", luaL_typename(L, idx));
    if (!nodes && (n = (int)lua_rawlen(L, idx)) == 0)
        return luaL_error(L, "the list of nodes is empty");
    if (n > cap) {
        if (!(*heap = malloc((size_t)n * sizeof **heap)))
            return luaL_error(L, "out of memory");
        buf = *heap;
    }
    if (nodes) {
        memcpy(buf, nodes, (size_t)n * sizeof *buf);
        return n;
    }
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        int32_t v = fe_lg_to_node(L, -1, g);
        lua_pop(L, 1);
        if (v < 0) {
            free(*heap);
            *heap = NULL;
            return luaL_error(L, "item %d of the node list is not a node of this graph", i);
        }
        buf[i - 1] = v;
    }
    qsort(buf, (size_t)n, sizeof *buf, cmp_id);
    for (int i = 1; i < n; i++)
        if (buf[i] == buf[i - 1]) {
            const char *name = fe_node_name(g, fe_graph_node(g, buf[i]));
            free(*heap);
            *heap = NULL;
            return luaL_error(L, "node '%s' is listed twice", name);
        }
    return n;
}

/* Is the value at idx a number with an integer value (2 or 2.0, as Lua's
 * own tables take them)? Then *i is it. Strings are not indices here. */
static int int_index(lua_State *L, int idx, lua_Integer *i)
{
    int ok = 0;
    *i = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
    return ok;
}

int32_t fe_lg_to_tensor(lua_State *L, int idx, const fe_graph *g)
{
    lobj *o = test_ud(L, idx, TENSOR_MT);
    if (o)
        return o->lg->g == g ? o->id : -1;
    if (lua_type(L, idx) == LUA_TSTRING)
        return fe_graph_find_tensor(g, lua_tostring(L, idx));
    return -1;
}

int32_t fe_lg_to_node(lua_State *L, int idx, const fe_graph *g)
{
    lobj *o = test_ud(L, idx, NODE_MT);
    lua_Integer i;
    if (o)
        return o->lg->g == g ? o->id : -1;
    if (lua_type(L, idx) == LUA_TSTRING)
        return fe_graph_find_node(g, lua_tostring(L, idx));
    if (int_index(L, idx, &i))
        return i >= 1 && i <= g->nnodes ? (int32_t)(i - 1) : -1;
    return -1;
}

/* The graph object behind any of our objects at idx, pushed. */
static void push_graph_of(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
}

/* ---- scratch marks ---- */

/* Stamps per node and per tensor, one scratch per graph object (its
 * uservalue 3, made on first use): marking a set costs its size, testing a
 * member O(1), and nothing is cleared between questions. */
typedef struct lmarks {
    int32_t stamp;
    int32_t v[];   /* nnodes node stamps, then ntensors tensor stamps */
} lmarks;

/* A fresh pair of stamps (s, s + 1) in the scratch of the graph of the
 * object at idx, as an fe_setpair. */
static fe_setpair marks(lua_State *L, int idx, const fe_graph *g)
{
    size_t n = (size_t)g->nnodes + (size_t)g->ntensors;
    lua_getiuservalue(L, idx, 1);
    lmarks *m = lua_getiuservalue(L, -1, 3) == LUA_TUSERDATA ? lua_touserdata(L, -1) : NULL;
    lua_pop(L, 1);
    if (!m) {
        m = lua_newuserdatauv(L, sizeof *m + n * sizeof(int32_t), 0);
        m->stamp = 0;
        memset(m->v, 0, n * sizeof(int32_t));
        lua_setiuservalue(L, -2, 3);
    }
    lua_pop(L, 1);
    if (m->stamp > INT32_MAX - 4) {   /* old stamps could come back: clear */
        memset(m->v, 0, n * sizeof(int32_t));
        m->stamp = 0;
    }
    m->stamp += 2;
    return (fe_setpair){m->v, m->v + g->nnodes, m->stamp};
}

/* ---- shared helpers ---- */

static void push_shape(lua_State *L, const fe_graph *g, const fe_tensor *t)
{
    const int64_t *d = fe_tensor_shape(g, t);
    lua_createtable(L, t->rank, 0);
    for (int i = 0; i < t->rank; i++) {
        lua_pushinteger(L, d[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* A list of the objects ids of one type (cache: 1 nodes, 2 tensors, as
 * push_obj); obj is the index of any object of the graph. The cache table
 * is read once per list: hooks build lists on every candidate. */
static void push_list(lua_State *L, int obj, const int32_t *ids, int n, int cache, const char *mt)
{
    push_graph_of(L, obj);
    int gi = lua_gettop(L);
    lua_getiuservalue(L, gi, cache);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        push_cached(L, gi, gi + 1, ids[i], mt);
        lua_rawseti(L, -2, i + 1);
    }
    lua_replace(L, gi);
    lua_pop(L, 1);
}

static void push_tensor_list(lua_State *L, int obj, const int32_t *ids, int n)
{
    push_list(L, obj, ids, n, 2, TENSOR_MT);
}

static void push_node_list(lua_State *L, int obj, const int32_t *ids, int n)
{
    push_list(L, obj, ids, n, 1, NODE_MT);
}

static void push_attr(lua_State *L, const fe_graph *g, const fe_node *n, const fe_attr *a)
{
    if (a->type == FE_ATTR_INTS && a->n == 1 && fe_op_attr_is_dim(n->op, fe_graph_str(g, a->key)))
        return (void)lua_pushinteger(L, fe_graph_resolve(g, g->ints[a->v.off]));   /* its value */
    switch (a->type) {
    case FE_ATTR_NULL: lua_pushnil(L); break;
    case FE_ATTR_BOOL: lua_pushboolean(L, (int)a->v.i); break;
    case FE_ATTR_INT: lua_pushinteger(L, a->v.i); break;
    case FE_ATTR_FLOAT: lua_pushnumber(L, a->v.f); break;
    case FE_ATTR_STR: lua_pushstring(L, fe_graph_str(g, a->v.s)); break;
    case FE_ATTR_INTS:
        lua_createtable(L, a->n, 0);
        for (int i = 0; i < a->n; i++) {
            lua_pushinteger(L, fe_graph_resolve(g, g->ints[a->v.off + i]));
            lua_rawseti(L, -2, i + 1);
        }
        break;
    case FE_ATTR_JSON: lua_pushlstring(L, g->blob + a->v.off, (size_t)a->n); break;
    }
}

/* Field name -> small int, from the __index closure's upvalue table. */
static int field(lua_State *L)
{
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    lua_pushvalue(L, 2);
    int f = lua_rawget(L, lua_upvalueindex(1)) == LUA_TNUMBER ? (int)lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    return f;
}

static int no_field(lua_State *L, const char *what)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "%s has no field '%s'", what, lua_tostring(L, 2));
    return luaL_error(L, "%s has no field of type %s", what, luaL_typename(L, 2));
}

static int read_only(lua_State *L)
{
    return luaL_error(L, "fuseeng objects are read-only");
}

/* Distinct ids, first occurrence order kept. */
static int uniq(int32_t *ids, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < m && !dup; j++)
            dup = ids[j] == ids[i];
        if (!dup)
            ids[m++] = ids[i];
    }
    return m;
}

/* ---- nodes ---- */

enum { N_OP = 1, N_NAME, N_PATTERN, N_INDEX, N_INPUTS, N_OUTPUTS, N_OUTPUT, N_SHAPE, N_DTYPE,
       N_NUMEL, N_BYTES, N_BYTES_READ, N_BYTES_WRITTEN, N_FLOPS, N_LIVE, N_PRODUCERS,
       N_CONSUMERS, N_ATTRS, N_IS_OUTPUT };
static const char *const node_fields[] = {"op", "name", "pattern", "index", "inputs", "outputs",
    "output", "shape", "dtype", "numel", "bytes", "bytes_read", "bytes_written", "flops", "live",
    "producers", "consumers", "attrs", "is_output", NULL};

static int node_index(lua_State *L)
{
    lobj *o = lua_touserdata(L, 1);
    const fe_graph *g = live(L, o->lg);
    const fe_node *n = fe_graph_node(g, o->id);
    const fe_tensor *out0 = fe_graph_tensor(g, fe_node_output(g, n, 0));
    switch (field(L)) {
    case N_OP: lua_pushstring(L, fe_node_op_name(n)); return 1;
    case N_NAME: lua_pushstring(L, fe_node_name(g, n)); return 1;
    case N_PATTERN: lua_pushstring(L, fe_pattern_name(n->pattern)); return 1;
    case N_INDEX: lua_pushinteger(L, o->id + 1); return 1;
    case N_INPUTS: push_tensor_list(L, 1, &g->io[n->io_off], n->nin); return 1;
    case N_OUTPUTS: push_tensor_list(L, 1, &g->io[n->io_off + n->nin], n->nout); return 1;
    case N_OUTPUT:
        push_graph_of(L, 1);
        fe_lg_push_tensor(L, -1, fe_node_output(g, n, 0));
        return 1;
    case N_SHAPE: push_shape(L, g, out0); return 1;
    case N_DTYPE: lua_pushstring(L, fe_dtype_name(out0->dtype)); return 1;
    case N_NUMEL: lua_pushinteger(L, out0->numel); return 1;
    case N_BYTES: lua_pushinteger(L, n->bytes_read + n->bytes_written); return 1;
    case N_BYTES_READ: lua_pushinteger(L, n->bytes_read); return 1;
    case N_BYTES_WRITTEN: lua_pushinteger(L, n->bytes_written); return 1;
    case N_FLOPS: lua_pushinteger(L, n->flops); return 1;
    case N_LIVE: lua_pushinteger(L, n->live); return 1;
    case N_PRODUCERS: {
        int32_t *ids = malloc(((size_t)n->nin + 1) * sizeof *ids);
        int k = 0;
        if (!ids)
            return luaL_error(L, "out of memory");
        for (int i = 0; i < n->nin; i++) {
            int32_t p = fe_graph_tensor(g, fe_node_input(g, n, i))->producer;
            if (p >= 0)
                ids[k++] = p;
        }
        k = uniq(ids, k);
        push_node_list(L, 1, ids, k);
        free(ids);
        return 1;
    }
    case N_CONSUMERS: {
        int total = 0;
        for (int i = 0; i < n->nout; i++)
            total += fe_graph_tensor(g, fe_node_output(g, n, i))->ncons;
        int32_t *ids = malloc(((size_t)total + 1) * sizeof *ids);
        int k = 0;
        if (!ids)
            return luaL_error(L, "out of memory");
        for (int i = 0; i < n->nout; i++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, i));
            for (int32_t c = 0; c < t->ncons; c++)
                ids[k++] = fe_tensor_consumer(g, t, c);
        }
        k = uniq(ids, k);
        push_node_list(L, 1, ids, k);
        free(ids);
        return 1;
    }
    case N_ATTRS:
        lua_createtable(L, 0, n->nattr);
        for (int i = 0; i < n->nattr; i++) {
            const fe_attr *a = &g->attrs[n->attr_off + i];
            push_attr(L, g, n, a);
            lua_setfield(L, -2, fe_graph_str(g, a->key));
        }
        return 1;
    case N_IS_OUTPUT:
        for (int i = 0; i < n->nout; i++)
            if (fe_graph_tensor(g, fe_node_output(g, n, i))->flags & FE_T_OUTPUT) {
                lua_pushboolean(L, 1);
                return 1;
            }
        lua_pushboolean(L, 0);
        return 1;
    }
    return no_field(L, "a node");
}

static int node_tostring(lua_State *L)
{
    lobj *o = lua_touserdata(L, 1);
    const fe_graph *g = live(L, o->lg);
    const fe_node *n = fe_graph_node(g, o->id);
    lua_pushfstring(L, "node '%s' (%s)", fe_node_name(g, n), fe_node_op_name(n));
    return 1;
}

/* ---- tensors ---- */

enum { T_NAME = 1, T_SHAPE, T_DTYPE, T_NUMEL, T_BYTES, T_KIND, T_RANK, T_INDEX, T_PRODUCER,
       T_CONSUMERS, T_IS_OUTPUT };
static const char *const tensor_fields[] = {"name", "shape", "dtype", "numel", "bytes", "kind",
    "rank", "index", "producer", "consumers", "is_output", NULL};

static int tensor_index(lua_State *L)
{
    lobj *o = lua_touserdata(L, 1);
    const fe_graph *g = live(L, o->lg);
    const fe_tensor *t = fe_graph_tensor(g, o->id);
    switch (field(L)) {
    case T_NAME: lua_pushstring(L, fe_tensor_name(g, t)); return 1;
    case T_SHAPE: push_shape(L, g, t); return 1;
    case T_DTYPE: lua_pushstring(L, fe_dtype_name(t->dtype)); return 1;
    case T_NUMEL: lua_pushinteger(L, t->numel); return 1;
    case T_BYTES: lua_pushinteger(L, t->bytes); return 1;
    case T_KIND: lua_pushstring(L, fe_tkind_name(t->kind)); return 1;
    case T_RANK: lua_pushinteger(L, t->rank); return 1;
    case T_INDEX: lua_pushinteger(L, o->id + 1); return 1;
    case T_PRODUCER:
        if (t->producer < 0)
            return 0;
        push_graph_of(L, 1);
        fe_lg_push_node(L, -1, t->producer);
        return 1;
    case T_CONSUMERS: push_node_list(L, 1, &g->cons[t->cons_off], t->ncons); return 1;
    case T_IS_OUTPUT: lua_pushboolean(L, (t->flags & FE_T_OUTPUT) != 0); return 1;
    }
    return no_field(L, "a tensor");
}

static int tensor_tostring(lua_State *L)
{
    lobj *o = lua_touserdata(L, 1);
    const fe_graph *g = live(L, o->lg);
    const fe_tensor *t = fe_graph_tensor(g, o->id);
    char s[160];
    lua_pushfstring(L, "tensor '%s' %s%s", fe_tensor_name(g, t), fe_dtype_name(t->dtype),
                    fe_shape_str(fe_tensor_shape(g, t), t->rank, s, sizeof s));
    return 1;
}

/* ---- graphs ---- */

enum { G_NAME = 1, G_NNODES, G_NTENSORS, G_NODE, G_TENSOR, G_INPUTS, G_WEIGHTS, G_OUTPUTS,
       G_DIMS, G_POSTDOM, G_ARRAYS, G_POST_DFS, G_NODES_OF };
static const char *const graph_fields[] = {"name", "nnodes", "ntensors", "node", "tensor",
    "inputs", "weights", "outputs", "dims", "postdom", "arrays", "post_dfs", "nodes_of", NULL};

static int graph_node(lua_State *L)
{
    lgraph *lg = check_ud(L, 1, GRAPH_MT);
    const fe_graph *g = live(L, lg);
    int32_t id = fe_lg_to_node(L, 2, g);
    if (id < 0)
        return 0;
    fe_lg_push_node(L, 1, id);
    return 1;
}

static int graph_tensor(lua_State *L)
{
    lgraph *lg = check_ud(L, 1, GRAPH_MT);
    const fe_graph *g = live(L, lg);
    int32_t id = fe_graph_find_tensor(g, luaL_checkstring(L, 2));
    if (id < 0)
        return 0;
    fe_lg_push_tensor(L, 1, id);
    return 1;
}

static int graph_postdom(lua_State *L)
{
    lgraph *lg = check_ud(L, 1, GRAPH_MT);
    return fe_lg_postdom(L, live(L, lg));
}

static int graph_arrays(lua_State *L)
{
    lgraph *lg = check_ud(L, 1, GRAPH_MT);
    return fe_lg_arrays(L, live(L, lg));
}

static int graph_post_dfs(lua_State *L)
{
    lgraph *lg = check_ud(L, 1, GRAPH_MT);
    return fe_lg_post_dfs(L, live(L, lg));
}

static int graph_nodes_of(lua_State *L)
{
    lgraph *lg = check_ud(L, 1, GRAPH_MT);
    return fe_lg_nodes_of(L, live(L, lg));
}

static int graph_index(lua_State *L)
{
    lgraph *lg = lua_touserdata(L, 1);
    const fe_graph *g = live(L, lg);
    lua_Integer i;
    if (lua_type(L, 2) == LUA_TNUMBER) {   /* as a list: nil outside 1..#g */
        if (!int_index(L, 2, &i) || i < 1 || i > g->nnodes)
            return 0;
        fe_lg_push_node(L, 1, (int32_t)(i - 1));
        return 1;
    }
    switch (field(L)) {
    case G_NAME: lua_pushstring(L, g->name); return 1;
    case G_NNODES: lua_pushinteger(L, g->nnodes); return 1;
    case G_NTENSORS: lua_pushinteger(L, g->ntensors); return 1;
    case G_NODE: lua_pushcfunction(L, graph_node); return 1;
    case G_TENSOR: lua_pushcfunction(L, graph_tensor); return 1;
    case G_POSTDOM: lua_pushcfunction(L, graph_postdom); return 1;
    case G_ARRAYS: lua_pushcfunction(L, graph_arrays); return 1;
    case G_POST_DFS: lua_pushcfunction(L, graph_post_dfs); return 1;
    case G_NODES_OF: lua_pushcfunction(L, graph_nodes_of); return 1;
    case G_INPUTS:
    case G_WEIGHTS: {
        int want = field(L) == G_INPUTS ? FE_INPUT : FE_WEIGHT, k = 0;
        lua_newtable(L);
        for (int32_t t = 0; t < g->ntensors; t++) {
            if (g->tensors[t].kind != want)
                continue;
            fe_lg_push_tensor(L, 1, t);
            lua_rawseti(L, -2, ++k);
        }
        return 1;
    }
    case G_OUTPUTS:
        lua_createtable(L, g->noutputs, 0);
        for (int32_t i = 0; i < g->noutputs; i++) {
            fe_lg_push_tensor(L, 1, g->outputs[i]);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    case G_DIMS:
        lua_createtable(L, 0, g->ndims);
        for (int32_t d = 0; d < g->ndims; d++) {
            lua_pushinteger(L, g->dims[d].value);
            lua_setfield(L, -2, fe_graph_str(g, g->dims[d].name));
        }
        return 1;
    }
    return no_field(L, "a graph");
}

static int graph_len(lua_State *L)
{
    lgraph *lg = lua_touserdata(L, 1);
    lua_pushinteger(L, live(L, lg)->nnodes);
    return 1;
}

static int graph_tostring(lua_State *L)
{
    lgraph *lg = lua_touserdata(L, 1);
    if (!lg->g) {
        lua_pushliteral(L, "graph (released)");
        return 1;
    }
    lua_pushfstring(L, "graph '%s' (%d nodes)", lg->g->name, lg->g->nnodes);
    return 1;
}

/* ---- groups ---- */

enum { R_NODES = 1, R_SIZE, R_OPS, R_KEY, R_EXACT_KEY, R_INPUTS, R_OUTPUTS, R_INTERNAL,
       R_BYTES_IN, R_BYTES_OUT, R_BYTES, R_INTERNAL_BYTES, R_FLOPS, R_KINDS, R_FIRST, R_LAST,
       R_CONTAINS, R_PARTS, R_ID, R_SHARED_BYTES, R_FEEDS, R_NAMES };
static const char *const group_fields[] = {"nodes", "size", "ops", "key", "exact_key", "inputs",
    "outputs", "internal", "bytes_in", "bytes_out", "bytes", "internal_bytes", "flops", "kinds",
    "first", "last", "contains", "parts", "id", "shared_bytes", "feeds", "names", NULL};

static int in_group(const lgroup *gr, int32_t v)
{
    int32_t lo = 0, hi = gr->n - 1;   /* members are sorted */
    while (lo <= hi) {
        int32_t mid = (lo + hi) / 2;
        if (gr->nodes[mid] == v)
            return 1;
        if (gr->nodes[mid] < v)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

/* Classify the tensors a group touches. which: 0 external inputs, 1
 * external outputs, 2 internal. Writes distinct ids into out (first-use
 * order) and returns the count; bytes gets their total. seen marks the
 * inputs already listed (a fresh stamp). */
static int group_tensors(const fe_graph *g, const lgroup *gr, int which, int32_t *out,
                         int64_t *bytes, const fe_setpair *seen)
{
    int k = 0;
    *bytes = 0;
    for (int32_t i = 0; i < gr->n; i++) {
        const fe_node *n = fe_graph_node(g, gr->nodes[i]);
        if (which == 0) {
            for (int q = 0; q < n->nin; q++) {
                int32_t t = fe_node_input(g, n, q);
                int32_t p = fe_graph_tensor(g, t)->producer;
                if ((p >= 0 && in_group(gr, p)) || seen->tensor[t] == seen->stamp)
                    continue;
                seen->tensor[t] = seen->stamp;
                if (out)
                    out[k] = t;
                k++;
                *bytes += fe_graph_tensor(g, t)->bytes;
            }
            continue;
        }
        for (int q = 0; q < n->nout; q++) {
            int32_t t = fe_node_output(g, n, q);
            const fe_tensor *ts = fe_graph_tensor(g, t);
            int outside = (ts->flags & FE_T_OUTPUT) != 0;
            for (int32_t c = 0; c < ts->ncons && !outside; c++)
                outside = !in_group(gr, fe_tensor_consumer(g, ts, c));
            if ((which == 1) == outside) {
                if (out)
                    out[k] = t;
                k++;
                *bytes += ts->bytes;
            }
        }
    }
    return k;
}

static int group_max_tensors(const fe_graph *g, const lgroup *gr)
{
    int total = 0;
    for (int32_t i = 0; i < gr->n; i++) {
        const fe_node *n = fe_graph_node(g, gr->nodes[i]);
        total += n->nin + n->nout;
    }
    return total + 1;
}

static int group_contains(lua_State *L)
{
    lgroup *gr = check_ud(L, 1, GROUP_MT);
    const fe_graph *g = live(L, gr->lg);
    int32_t v = fe_lg_to_node(L, 2, g);
    lua_pushboolean(L, v >= 0 && in_group(gr, v));
    return 1;
}

/* Marks for a:shared_bytes(b) and a:feeds(b): a's members stamp, b's
 * stamp + 1. Raises an error when b is no group or the two overlap. */
static fe_setpair group_pair(lua_State *L, const char *what, lgroup **a, lgroup **b)
{
    *a = check_ud(L, 1, GROUP_MT);
    *b = check_ud(L, 2, GROUP_MT);
    const fe_graph *g = live(L, (*a)->lg);
    if (live(L, (*b)->lg) != g)
        luaL_error(L, "%s: the two groups belong to different graphs", what);
    fe_setpair s = marks(L, 1, g);
    for (int32_t i = 0; i < (*a)->n; i++)
        s.node[(*a)->nodes[i]] = s.stamp;
    for (int32_t i = 0; i < (*b)->n; i++) {
        int32_t v = (*b)->nodes[i];
        if (s.node[v] == s.stamp)
            luaL_error(L, "%s: node '%s' is in both groups (they must not overlap)", what,
                       fe_node_name(g, fe_graph_node(g, v)));
        s.node[v] = s.stamp + 1;
    }
    return s;
}

static int group_shared_bytes(lua_State *L)
{
    lgroup *a, *b;
    fe_setpair s = group_pair(L, "a:shared_bytes(b)", &a, &b);
    lua_pushinteger(L, fe_shared_bytes(a->lg->g, &s, a->nodes, a->n, b->nodes, b->n));
    return 1;
}

static int group_feeds(lua_State *L)
{
    lgroup *a, *b;
    fe_setpair s = group_pair(L, "a:feeds(b)", &a, &b);
    lua_pushboolean(L, fe_set_feeds(a->lg->g, &s, b->nodes, b->n));
    return 1;
}

/* group.parts: made on first use and kept (uservalue 2), so a hook that
 * reads it twice gets the same table and the same part objects. */
static void push_parts(lua_State *L, const lgroup *gr)
{
    if (lua_getiuservalue(L, 1, 2) == LUA_TTABLE)
        return;
    lua_pop(L, 1);
    push_graph_of(L, 1);
    int gi = lua_gettop(L);
    int np = gr->nparts ? gr->nparts : 1;   /* a group that is no merge is its own part */
    lua_createtable(L, np, 0);
    const int32_t *len = gr->nodes + gr->n, *at = gr->nodes + gr->n + gr->nparts;
    const int32_t *label = at + gr->n;
    for (int i = 0; i < np; i++) {
        if (gr->nparts) {
            push_group(L, gi, at, len[i], label[i], NULL, NULL, NULL, 0);
            at += len[i];
        } else {
            lua_pushvalue(L, 1);
        }
        lua_rawseti(L, -2, i + 1);
    }
    lua_remove(L, gi);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, 1, 2);
}

/* Group gr's id (0-based), or -1 when out of memory. Members are interned
 * as bytes, which hashes them and misses the cache in a table of millions
 * of sets; a partition group's id is kept by its label and size instead,
 * because its groups only grow and a label is never reused (partition.h),
 * so a label and a size name one node set, and a live group is asked for
 * in every candidate it is in. */
static int32_t group_id(const lgroup *gr, const fe_graph *g)
{
    /* One node is its own id: every node of a big graph starts as a group
     * of one, and interning them all made a million-entry table at 1M
     * nodes. Larger sets are numbered after the nodes. */
    if (gr->n == 1)
        return gr->nodes[0];
    lgraph *lg = gr->lg;
    int keep = gr->label >= 0 && gr->label < g->nnodes;
    if (keep && !lg->id_n) {
        size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
        lg->id_n = calloc(n, sizeof *lg->id_n);
        lg->id_of = malloc(n * sizeof *lg->id_of);
        if (!lg->id_n || !lg->id_of) {
            free(lg->id_n);
            free(lg->id_of);
            lg->id_n = lg->id_of = NULL;
            keep = 0;
        }
    }
    if (keep && lg->id_n[gr->label] == gr->n)
        return lg->id_of[gr->label];
    int32_t id = -1;
    if (lg->ids || (lg->ids = fe_strtab_new()))
        id = fe_strtab_intern(lg->ids, (const char *)gr->nodes, (size_t)gr->n * sizeof *gr->nodes);
    if (id >= 0)
        id = id > INT32_MAX - g->nnodes ? -1 : id + g->nnodes;
    if (keep && id >= 0) {
        lg->id_n[gr->label] = gr->n;
        lg->id_of[gr->label] = id;
    }
    return id;
}

static int group_index(lua_State *L)
{
    lgroup *gr = lua_touserdata(L, 1);
    const fe_graph *g = live(L, gr->lg);
    lua_Integer i;
    if (lua_type(L, 2) == LUA_TNUMBER) {   /* as a list: nil outside 1..#group */
        if (!int_index(L, 2, &i) || i < 1 || i > gr->n)
            return 0;
        push_graph_of(L, 1);
        fe_lg_push_node(L, -1, gr->nodes[i - 1]);
        return 1;
    }
    int f = field(L);
    switch (f) {
    case R_NODES: push_node_list(L, 1, gr->nodes, gr->n); return 1;
    case R_SIZE: lua_pushinteger(L, gr->n); return 1;
    case R_OPS:
        lua_createtable(L, gr->n, 0);
        for (int32_t i = 0; i < gr->n; i++) {
            lua_pushstring(L, fe_node_op_name(fe_graph_node(g, gr->nodes[i])));
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    case R_KEY: {
        luaL_Buffer b;
        size_t need = fe_group_compat_key(g, gr->nodes, gr->n, NULL, 0);
        char *s = luaL_buffinitsize(L, &b, need + 1);
        fe_group_compat_key(g, gr->nodes, gr->n, s, need + 1);
        luaL_pushresultsize(&b, need);
        return 1;
    }
    case R_EXACT_KEY: {
        char key[17];
        if (fe_group_exact_key(g, gr->nodes, gr->n, key) != FE_OK)
            return luaL_error(L, "cannot hash the group");
        lua_pushstring(L, key);
        return 1;
    }
    case R_INPUTS:
    case R_OUTPUTS:
    case R_INTERNAL:
    case R_BYTES_IN:
    case R_BYTES_OUT:
    case R_INTERNAL_BYTES:
    case R_BYTES: {
        int which = f == R_INPUTS || f == R_BYTES_IN ? 0 : f == R_OUTPUTS || f == R_BYTES_OUT ? 1 : 2;
        int list = f == R_INPUTS || f == R_OUTPUTS || f == R_INTERNAL;
        int32_t buf[256], *ids = NULL;
        int64_t bytes, more = 0;
        fe_setpair seen = marks(L, 1, g);
        if (list) {
            int max = group_max_tensors(g, gr);
            ids = max <= 256 ? buf : malloc((size_t)max * sizeof *ids);
            if (!ids)
                return luaL_error(L, "out of memory");
        }
        int k = group_tensors(g, gr, f == R_BYTES ? 0 : which, ids, &bytes, &seen);
        if (f == R_BYTES)
            group_tensors(g, gr, 1, NULL, &more, &seen);
        if (list)
            push_tensor_list(L, 1, ids, k);
        else
            lua_pushinteger(L, bytes + more);
        if (ids != buf)
            free(ids);
        return 1;
    }
    case R_FLOPS: {
        int64_t s = 0;
        for (int32_t i = 0; i < gr->n; i++)
            s += fe_graph_node(g, gr->nodes[i])->flops;
        lua_pushinteger(L, s);
        return 1;
    }
    case R_KINDS: {
        int cnt[FE_NPATTERN] = {0};
        for (int32_t i = 0; i < gr->n; i++)
            cnt[fe_graph_node(g, gr->nodes[i])->pattern]++;
        lua_createtable(L, 0, FE_NPATTERN);
        for (int p = 0; p < FE_NPATTERN; p++) {
            lua_pushinteger(L, cnt[p]);
            lua_setfield(L, -2, fe_pattern_name(p));
        }
        return 1;
    }
    case R_FIRST:
    case R_LAST:
        push_graph_of(L, 1);
        fe_lg_push_node(L, -1, gr->nodes[f == R_FIRST ? 0 : gr->n - 1]);
        return 1;
    case R_CONTAINS: lua_pushcfunction(L, group_contains); return 1;
    case R_PARTS: push_parts(L, gr); return 1;
    case R_ID: {   /* equal exactly for equal node sets, within the run */
        int32_t id = group_id(gr, g);
        if (id < 0)
            return luaL_error(L, "out of memory numbering groups");
        lua_pushinteger(L, (lua_Integer)id + 1);
        return 1;
    }
    case R_NAMES: {   /* one string for a log line: no list, no tostring and sub */
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int32_t i = 0; i < gr->n; i++) {
            if (i)
                luaL_addstring(&b, ", ");
            luaL_addstring(&b, fe_node_name(g, fe_graph_node(g, gr->nodes[i])));
        }
        luaL_pushresult(&b);
        return 1;
    }
    case R_SHARED_BYTES: lua_pushcfunction(L, group_shared_bytes); return 1;
    case R_FEEDS: lua_pushcfunction(L, group_feeds); return 1;
    }
    return no_field(L, "a group");
}

static int group_len(lua_State *L)
{
    lgroup *gr = lua_touserdata(L, 1);
    lua_pushinteger(L, gr->n);
    return 1;
}

static int group_tostring(lua_State *L)
{
    lgroup *gr = lua_touserdata(L, 1);
    const fe_graph *g = live(L, gr->lg);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "group {");
    for (int32_t i = 0; i < gr->n && i < 12; i++) {
        if (i)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, fe_node_name(g, fe_graph_node(g, gr->nodes[i])));
    }
    if (gr->n > 12)
        luaL_addstring(&b, ", ...");
    luaL_addstring(&b, "}");
    luaL_pushresult(&b);
    return 1;
}

static int eq_obj(lua_State *L)
{
    lobj *a = lua_touserdata(L, 1), *b = lua_touserdata(L, 2);
    lua_pushboolean(L, a && b && a->lg == b->lg && a->id == b->id);
    return 1;
}

/* ---- registration ---- */

static void new_mt(lua_State *L, const char *name, const char *const *fields,
                   lua_CFunction index, lua_CFunction len, lua_CFunction tostring)
{
    luaL_newmetatable(L, name);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, name);
    lua_newtable(L);
    for (int i = 0; fields[i]; i++) {
        lua_pushinteger(L, i + 1);
        lua_setfield(L, -2, fields[i]);
    }
    lua_pushcclosure(L, index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, read_only);
    lua_setfield(L, -2, "__newindex");
    if (len) {
        lua_pushcfunction(L, len);
        lua_setfield(L, -2, "__len");
    }
    lua_pushcfunction(L, tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushboolean(L, 0);   /* scripts cannot reach or change the metatable */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

/* The metatables, registered with the first graph object of a state. */
static void open_metatables(lua_State *L)
{
    if (luaL_getmetatable(L, GRAPH_MT) != LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    new_mt(L, GRAPH_MT, graph_fields, graph_index, graph_len, graph_tostring);
    new_mt(L, NODE_MT, node_fields, node_index, NULL, node_tostring);
    new_mt(L, TENSOR_MT, tensor_fields, tensor_index, NULL, tensor_tostring);
    new_mt(L, GROUP_MT, group_fields, group_index, group_len, group_tostring);
    /* Node and tensor objects are cached, so identity is equality; __eq
     * also covers objects made by different runs over the same graph. */
    luaL_getmetatable(L, GRAPH_MT);
    lua_pushcfunction(L, graph_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_getmetatable(L, NODE_MT);
    lua_pushcfunction(L, eq_obj);
    lua_setfield(L, -2, "__eq");
    lua_pop(L, 1);
}

void fe_lg_push_graph(lua_State *L, const fe_graph *g)
{
    open_metatables(L);
    lgraph *lg = lua_newuserdatauv(L, sizeof *lg, 3);   /* 3: scratch marks (marks()) */
    lg->g = g;
    lg->ids = NULL;
    lg->id_n = lg->id_of = NULL;
    lua_newtable(L);
    lua_setiuservalue(L, -2, 1);   /* node objects by id */
    lua_newtable(L);
    lua_setiuservalue(L, -2, 2);   /* tensor objects by id */
    set_mt(L, GRAPH_MT);
}
