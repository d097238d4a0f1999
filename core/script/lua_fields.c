/* lua_fields.c: table fields for the bindings (lua_fields.h). */
#include <string.h>

#include "lua_fields.h"

void fe_lf_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

void fe_lf_int(lua_State *L, const char *k, int64_t v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

void fe_lf_str(lua_State *L, const char *k, const char *v)
{
    if (v)
        lua_pushstring(L, v);
    else
        lua_pushnil(L);
    lua_setfield(L, -2, k);
}

void fe_lf_bool(lua_State *L, const char *k, int v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}

/* Push member i of the struct at base. */
static void push_member(lua_State *L, const void *base, const fe_lf_member *m)
{
    const char *at = (const char *)base + m->offset;
    double d;
    int64_t l;
    int32_t w;
    int8_t b;
    int k;
    switch (m->type) {
    case FE_LF_NUM: memcpy(&d, at, sizeof d); lua_pushnumber(L, d); break;
    case FE_LF_I64: memcpy(&l, at, sizeof l); lua_pushinteger(L, l); break;
    case FE_LF_I32: memcpy(&w, at, sizeof w); lua_pushinteger(L, w); break;
    case FE_LF_BOOL8: memcpy(&b, at, sizeof b); lua_pushboolean(L, b); break;
    case FE_LF_BOOL: memcpy(&k, at, sizeof k); lua_pushboolean(L, k); break;
    }
}

void fe_lf_members(lua_State *L, const void *base, const fe_lf_member *m, int n)
{
    /* The names as Lua strings, made once per member list (registry[m]):
     * interning twenty names for every ctx:simulate result cost a tenth of
     * a simulator-heavy policy's planning. The fields go in the same order,
     * so the table is the one lua_setfield would make. */
    int t = lua_absindex(L, -1);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, m) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            lua_pushstring(L, m[i].name);
            lua_rawseti(L, -2, i + 1);
        }
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, m);
    }
    int keys = lua_gettop(L);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, keys, i + 1);
        push_member(L, base, &m[i]);
        lua_rawset(L, t);
    }
    lua_pop(L, 1);
}

int fe_lf_integer(lua_State *L, int idx, lua_Integer *v)
{
    int ok = 0;
    if (lua_type(L, idx) == LUA_TNUMBER)
        *v = lua_tointegerx(L, idx, &ok);
    return ok;
}
