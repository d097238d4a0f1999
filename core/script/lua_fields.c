/* lua_fields.c: table fields for the bindings (lua_fields.h). */
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
