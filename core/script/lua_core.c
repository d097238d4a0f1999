/* lua_core.c: the fuseeng.core module: what Lua code may know about the
 * engine itself (the op registry, pattern kinds, kernel choices, the
 * drivers and the fields of a policy, version, hashing, where a script's
 * function was defined). The Lua library (lua/fuseeng.lua and the DSLs)
 * reads them from here, so ops.c stays the one owner of op facts, choice.c
 * of kernel choices and drivers.c of drivers and policy fields. */
#include <lauxlib.h>
#include <openssl/evp.h>
#include <string.h>

#include "choice.h"
#include "drivers.h"
#include "error.h"
#include "lua_core.h"
#include "lua_fields.h"
#include "ops.h"
#include "plan.h"
#include "sandbox.h"
#include "version.h"

/* ops[name] = {kind=, min_inputs=, max_inputs=, flops=, live=, view=, library=, attrs=,
 * description=} */
static void push_ops(lua_State *L)
{
    lua_createtable(L, 0, FE_NOPS);
    for (int i = 0; i < FE_NOPS; i++) {
        const fe_op *op = fe_op_get(i);
        lua_createtable(L, 0, 10);
        fe_lf_str(L, "kind", fe_pattern_name(op->pattern));
        fe_lf_int(L, "min_inputs", op->min_in);
        if (op->max_in != FE_VARIADIC)
            fe_lf_int(L, "max_inputs", op->max_in);
        fe_lf_int(L, "flops", op->flops);
        fe_lf_int(L, "live", op->live);
        fe_lf_bool(L, "view", (op->flags & FE_OPF_VIEW) != 0);
        fe_lf_bool(L, "library", (op->flags & FE_OPF_LIBRARY) != 0);
        fe_lf_str(L, "attrs", op->attrs);
        fe_lf_str(L, "description", op->desc);
        fe_lf_int(L, "id", i);
        lua_setfield(L, -2, op->name);
    }
}

/* kernel_choices = {{name=, id=, takes_epilogue=, gemm=, description=}, ...}
 * in id order: choice.c's table, so that policies never spell the names. */
static void push_kernel_choices(lua_State *L)
{
    lua_createtable(L, FE_K_NCHOICES, 0);
    for (int i = 0; i < FE_K_NCHOICES; i++) {
        const fe_k_choice *c = fe_k_choice_get(i);
        lua_createtable(L, 0, 5);
        fe_lf_str(L, "name", c->name);
        fe_lf_int(L, "id", c->id);
        fe_lf_bool(L, "takes_epilogue", c->takes_epilogue);
        fe_lf_bool(L, "gemm", c->gemm);
        fe_lf_str(L, "description", c->desc);
        lua_rawseti(L, -2, i + 1);
    }
}

/* A list of the strings words[] (NULL-ended). */
static void push_words(lua_State *L, const char *const *words)
{
    lua_newtable(L);
    for (int i = 0; words && words[i]; i++) {
        lua_pushstring(L, words[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

/* policy_fields = {{name=, type=, source_type=, values={...}}, ...} and
 * drivers = {{name=, hooks={...}, needs=, needs_what=, params={NAME=default,
 * ...}}, ...}, in drivers.c's order; values[1] is a string field's default. */
static void push_policy_schema(lua_State *L)
{
    lua_createtable(L, FE_NPOLICY_FIELDS, 0);
    for (int i = 0; i < FE_NPOLICY_FIELDS; i++) {
        const fe_policy_field *f = &FE_POLICY_FIELDS[i];
        lua_createtable(L, 0, 4);
        fe_lf_str(L, "name", f->name);
        fe_lf_str(L, "type", lua_typename(L, f->type));
        fe_lf_str(L, "source_type", f->source_type == LUA_TNONE ? NULL : lua_typename(L, f->source_type));
        if (f->words) {
            push_words(L, f->words);
            lua_setfield(L, -2, "values");
        }
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "policy_fields");
    lua_createtable(L, FE_NDRIVERS, 0);
    for (int i = 0; i < FE_NDRIVERS; i++) {
        const fe_driver *d = &FE_DRIVERS[i];
        lua_createtable(L, 0, 5);
        fe_lf_str(L, "name", d->name);
        push_words(L, d->hooks);
        lua_setfield(L, -2, "hooks");
        fe_lf_str(L, "needs", d->needs);
        fe_lf_str(L, "needs_what", d->needs_what);
        lua_newtable(L);
        for (const fe_driver_param *p = d->params; p && p->name; p++)
            fe_lf_int(L, p->name, p->value);
        lua_setfield(L, -2, "params");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "drivers");
}

/* sha256(s) -> 64 hex digits. */
static int l_sha256(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    if (!EVP_Digest(s, n, md, &len, EVP_sha256(), NULL))
        return luaL_error(L, "sha256 failed");
    for (unsigned i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    lua_pushlstring(L, hex, 2 * len);
    return 1;
}

/* where(f) -> "file:LINE" where the script function f was defined, or nil
 * (C functions, the library's own): the place for a message about what f
 * returned, which has no line of its own. */
static int l_where(lua_State *L)
{
    char place[320];
    if (!fe_sandbox_fn_place(L, 1, place, sizeof place))
        return 0;
    lua_pushstring(L, place);
    return 1;
}

/* closest(name, names) -> the nearest of the array names within two
 * edits, or nil: the engine's one edit distance (fe_closest). */
static int l_closest(lua_State *L)
{
    const char *key = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 2);
    if (n > 4096)
        n = 4096;
    const char **names = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *names, 0);
    int m = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, 2, i);
        if (lua_type(L, -1) == LUA_TSTRING)
            names[m++] = lua_tostring(L, -1);   /* kept alive by the table */
        lua_pop(L, 1);
    }
    const char *near = fe_closest(key, names, m);
    if (!near)
        return 0;
    lua_pushstring(L, near);
    return 1;
}

int fe_luaopen_core(lua_State *L)
{
    lua_createtable(L, 0, 10);
    push_policy_schema(L);
    push_ops(L);
    lua_setfield(L, -2, "ops");
    lua_createtable(L, FE_NPATTERN, 0);
    for (int p = 0; p < FE_NPATTERN; p++) {
        lua_pushstring(L, fe_pattern_name(p));
        lua_rawseti(L, -2, p + 1);
    }
    lua_setfield(L, -2, "kinds");
    push_kernel_choices(L);
    lua_setfield(L, -2, "kernel_choices");
    fe_lf_str(L, "version", FE_VERSION);
    fe_lf_int(L, "max_split", FE_PLAN_MAX_SPLIT);
    lua_pushcfunction(L, l_sha256);
    lua_setfield(L, -2, "sha256");
    lua_pushcfunction(L, l_where);
    lua_setfield(L, -2, "where");
    lua_pushcfunction(L, l_closest);
    lua_setfield(L, -2, "closest");
    return 1;
}

const luaL_Reg FE_LUA_CORE_MODULES[] = {{"fuseeng.core", fe_luaopen_core}, {NULL, NULL}};
