/* lua_graph.h: the graph, its nodes and tensors, and candidate groups as
 * read-only Lua userdata. Objects are made lazily when a script asks for
 * them (node and tensor objects are cached per graph, so the same node is
 * always the same Lua value); the graph is never copied into Lua tables. */
#ifndef FE_LUA_GRAPH_H
#define FE_LUA_GRAPH_H

#include <lua.h>

#include "graph.h"

/* Push a new graph object for g. g must outlive it or be detached first. */
void fe_lg_push_graph(lua_State *L, const fe_graph *g);
/* Cut the graph object at idx from its graph: any later use from Lua
 * raises "the graph is no longer loaded" instead of touching freed memory. */
void fe_lg_detach(lua_State *L, int idx);

/* Push node or tensor id of the graph object at gidx. */
void fe_lg_push_node(lua_State *L, int gidx, int32_t id);
void fe_lg_push_tensor(lua_State *L, int gidx, int32_t id);
/* Push a group object for nodes[0..n) (copied; must be sorted ascending). */
void fe_lg_push_group(lua_State *L, int gidx, const int32_t *nodes, int n);
/* The same for the group labelled label of the run's partition (its only
 * one, whose groups only grow: partition.h), so that its group.id is
 * remembered by label and size instead of hashing its members again. */
void fe_lg_push_part(lua_State *L, int gidx, const int32_t *nodes, int n, int32_t label);
/* The same for a candidate that merges nparts groups: part i has
 * part_len[i] sorted members, listed one part after another in part_nodes
 * (n in all), and is the partition's group part_labels[i] (part_labels
 * may be NULL: none is). Lua sees them as group.parts. */
void fe_lg_push_group_parts(lua_State *L, int gidx, const int32_t *nodes, int n,
                            const int32_t *part_len, const int32_t *part_nodes,
                            const int32_t *part_labels, int nparts);

/* The node id a Lua value names in g: a node object of g, a node name, or a
 * 1-based topological index. -1 if it names none. */
int32_t fe_lg_to_node(lua_State *L, int idx, const fe_graph *g);

/* The tensor id a Lua value names in g: a tensor object of g or a tensor
 * name. -1 if it names none. */
int32_t fe_lg_to_tensor(lua_State *L, int idx, const fe_graph *g);

/* The members of a group object at idx (NULL if it is not one); raises a
 * Lua error if the group belongs to a graph other than g. */
const int32_t *fe_lg_group_nodes(lua_State *L, int idx, const fe_graph *g, int *n);

/* A group argument of a ctx method: a group object, or a list of nodes
 * (objects, names or 1-based indices). Its members, sorted, go into buf
 * (room for cap) or, when more, into *heap (caller frees); returns the
 * count. Raises a Lua error for anything else, an empty list or a node
 * listed twice: release nothing else before calling it. */
int fe_lg_group_arg(lua_State *L, int idx, const fe_graph *g, int32_t *buf, int cap,
                    int32_t **heap);

#endif
