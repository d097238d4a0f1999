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

void fe_lf_members(lua_State *L, const void *base, const fe_lf_member *m, int n)
{
    for (int i = 0; i < n; i++) {
        const char *at = (const char *)base + m[i].offset;
        double d;
        int64_t l;
        int32_t w;
        int8_t b;
        int k;
        switch (m[i].type) {
        case FE_LF_NUM: memcpy(&d, at, sizeof d); fe_lf_num(L, m[i].name, d); break;
        case FE_LF_I64: memcpy(&l, at, sizeof l); fe_lf_int(L, m[i].name, l); break;
        case FE_LF_I32: memcpy(&w, at, sizeof w); fe_lf_int(L, m[i].name, w); break;
        case FE_LF_BOOL8: memcpy(&b, at, sizeof b); fe_lf_bool(L, m[i].name, b); break;
        case FE_LF_BOOL: memcpy(&k, at, sizeof k); fe_lf_bool(L, m[i].name, k); break;
        }
    }
}

int fe_lf_integer(lua_State *L, int idx, lua_Integer *v)
{
    int ok = 0;
    if (lua_type(L, idx) == LUA_TNUMBER)
        *v = lua_tointegerx(L, idx, &ok);
    return ok;
}
