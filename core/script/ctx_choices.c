/* ctx_choices.c: ctx:choices(anchor [, opts]), seed 001's recursive
 * fused-choice generation for policies (the enumeration is
 * core/plan/choices.c's; this file reads the arguments and builds the
 * answer).
 *
 *   opts.depth   most nodes added to the anchor (default 3, seed 001's
 *                max_fusion_depth)
 *   opts.max     most choices returned, the anchor alone included (64)
 *   opts.kinds   a list, or fe.set, of "epilogue", "prologue", "cross"
 *                (default all three; seed 001's custom_op_fusion_types)
 *
 * The answer is a list of {group = <group>, kind = "anchor" | "epilogue" |
 * "prologue" | "cross", depth = <nodes added>, parent = <index of the
 * choice it grew from, nil for the anchor>}, with `truncated` (true when
 * max cut the list) and `illegal` (how many sets legality refused) set on
 * the list itself.
 */
#include <lauxlib.h>
#include <string.h>

#include "ctx_choices.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "sandbox.h"

static const char *const KIND_NAMES[] = {"epilogue", "prologue", "cross"};

static const char *kind_name(int kind)
{
    return kind == FE_CHOICE_EPILOGUE ? "epilogue" : kind == FE_CHOICE_PROLOGUE ? "prologue"
         : kind == FE_CHOICE_CROSS ? "cross" : "anchor";
}

/* One kind name at idx into its bit, or a Lua error. */
static int kind_bit(lua_State *L, int idx)
{
    const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    for (int i = 0; s && i < 3; i++)
        if (!strcmp(s, KIND_NAMES[i]))
            return 1 << i;
    return luaL_error(L, "choices: kinds holds %s; each kind is \"epilogue\", \"prologue\" or "
                      "\"cross\"", fe_sandbox_describe(L, idx));
}

/* opts.kinds at idx: a list of names, or a set (name -> true). */
static int kinds_option(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        return luaL_error(L, "choices: kinds must be a list of \"epilogue\", \"prologue\" and "
                          "\"cross\", got %s", fe_sandbox_describe(L, idx));
    int bits = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_toboolean(L, -1)) {
            bits |= kind_bit(L, lua_absindex(L, -2));
        } else if (lua_isinteger(L, -2)) {
            bits |= kind_bit(L, lua_absindex(L, -1));
        } else if (lua_type(L, -2) != LUA_TSTRING) {
            return luaL_error(L, "choices: kinds must be a list of kind names");
        }
        lua_pop(L, 1);
    }
    return bits;
}

static int int_option(lua_State *L, int idx, const char *name, int lo, int hi)
{
    lua_Integer v;
    if (!fe_lf_integer(L, idx, &v) || v < lo || v > hi)
        return luaL_error(L, "choices: %s must be an integer from %d to %d, got %s", name, lo, hi,
                          fe_sandbox_describe(L, idx));
    return (int)v;
}

/* The options table at idx (nil: defaults) into *o. */
static void read_options(lua_State *L, int idx, fe_choice_opts *o)
{
    *o = (fe_choice_opts){.depth = 3, .max = 64, .kinds = FE_CHOICE_ALL};
    if (lua_isnoneornil(L, idx))
        return;
    if (!lua_istable(L, idx))
        luaL_error(L, "choices: options must be a table such as {depth = 3, max = 64}, got %s",
                   fe_sandbox_describe(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
        int v = lua_gettop(L);
        if (!strcmp(k, "depth"))
            o->depth = int_option(L, v, "depth", 0, FE_CHOICE_MAX_DEPTH);
        else if (!strcmp(k, "max"))
            o->max = int_option(L, v, "max", 1, FE_CHOICE_MAX_COUNT);
        else if (!strcmp(k, "kinds"))
            o->kinds = kinds_option(L, v);
        else
            luaL_error(L, "choices: unknown option %s (options are depth, max and kinds)",
                       fe_sandbox_describe(L, v - 1));
        lua_pop(L, 1);
    }
}

int fe_ctx_choices(lua_State *L, const fe_graph *g, int gidx, fe_chooser **ch)
{
    int32_t anchor = fe_lg_to_node(L, 2, g);
    if (anchor < 0)
        return luaL_error(L, "choices: the anchor must be a node of this graph (a node, its "
                          "name or its 1-based index), got %s", fe_sandbox_describe(L, 2));
    fe_choice_opts o;
    read_options(L, 3, &o);
    fe_error err = {0};
    if (!*ch && !(*ch = fe_chooser_new(g, &err)))
        return luaL_error(L, "choices: %s", err.message);
    fe_choice_set set;
    if (fe_chooser_around(*ch, anchor, &o, &set, &err) != FE_OK)
        return luaL_error(L, "choices: %s", err.message);
    lua_createtable(L, set.n, 2);
    for (int32_t i = 0; i < set.n; i++) {
        const fe_choice *c = &set.items[i];
        lua_createtable(L, 0, 4);
        fe_lg_push_group(L, gidx, set.nodes + c->off, c->n);
        lua_setfield(L, -2, "group");
        fe_lf_str(L, "kind", kind_name(c->kind));
        fe_lf_int(L, "depth", c->n - 1);
        if (c->parent >= 0)
            fe_lf_int(L, "parent", c->parent + 1);
        lua_rawseti(L, -2, i + 1);
    }
    fe_lf_bool(L, "truncated", set.truncated);
    fe_lf_int(L, "illegal", set.illegal);
    return 1;
}
