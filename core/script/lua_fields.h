/* lua_fields.h: setting a field of the table on top of the Lua stack, for
 * the bindings that build result tables (ctx's figures, fuseeng.core). */
#ifndef FE_LUA_FIELDS_H
#define FE_LUA_FIELDS_H

#include <lua.h>
#include <stdint.h>

void fe_lf_num(lua_State *L, const char *k, double v);
void fe_lf_int(lua_State *L, const char *k, int64_t v);
void fe_lf_str(lua_State *L, const char *k, const char *v);   /* v NULL: nil */
void fe_lf_bool(lua_State *L, const char *k, int v);

#endif
