/* lua_core.h: the fuseeng.core module (lua_core.c), preloaded into every
 * sandbox: what Lua code may know about the engine itself. */
#ifndef FE_LUA_CORE_H
#define FE_LUA_CORE_H

#include <lua.h>

/* Open the module: push its table. */
int fe_luaopen_core(lua_State *L);

#endif
