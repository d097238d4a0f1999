/* lua_core.c: the fuseeng.core module: what Lua code may know about the
 * engine itself (the op registry, pattern kinds, kernel choices, version,
 * hashing, where a script's function was defined). The
 * Lua library (lua/fuseeng.lua and the DSLs) reads ops from here, so the
 * registry in ops.c stays the one owner of op facts. */
#include <lauxlib.h>
#include <openssl/evp.h>
#include <string.h>

#include "choice.h"
#include "fuseeng.h"
#include "ops.h"
#include "sandbox.h"

/* ops[name] = {kind=, min_inputs=, max_inputs=, flops=, live=, attrs=, description=} */
static void push_ops(lua_State *L)
{
    lua_createtable(L, 0, FE_NOPS);
    for (int i = 0; i < FE_NOPS; i++) {
        const fe_op *op = fe_op_get(i);
        lua_createtable(L, 0, 8);
        lua_pushstring(L, fe_pattern_name(op->pattern));
        lua_setfield(L, -2, "kind");
        lua_pushinteger(L, op->min_in);
        lua_setfield(L, -2, "min_inputs");
        if (op->max_in == FE_VARIADIC)
            lua_pushnil(L);
        else
            lua_pushinteger(L, op->max_in);
        lua_setfield(L, -2, "max_inputs");
        lua_pushinteger(L, op->flops);
        lua_setfield(L, -2, "flops");
        lua_pushinteger(L, op->live);
        lua_setfield(L, -2, "live");
        lua_pushstring(L, op->attrs);
        lua_setfield(L, -2, "attrs");
        lua_pushstring(L, op->desc);
        lua_setfield(L, -2, "description");
        lua_pushinteger(L, i);
        lua_setfield(L, -2, "id");
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
        lua_pushstring(L, c->name);
        lua_setfield(L, -2, "name");
        lua_pushinteger(L, c->id);
        lua_setfield(L, -2, "id");
        lua_pushboolean(L, c->takes_epilogue);
        lua_setfield(L, -2, "takes_epilogue");
        lua_pushboolean(L, c->gemm);
        lua_setfield(L, -2, "gemm");
        lua_pushstring(L, c->desc);
        lua_setfield(L, -2, "description");
        lua_rawseti(L, -2, i + 1);
    }
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

int fe_luaopen_core(lua_State *L)
{
    lua_createtable(L, 0, 8);
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
    lua_pushstring(L, fe_version());
    lua_setfield(L, -2, "version");
    lua_pushcfunction(L, l_sha256);
    lua_setfield(L, -2, "sha256");
    lua_pushcfunction(L, l_where);
    lua_setfield(L, -2, "where");
    return 1;
}
