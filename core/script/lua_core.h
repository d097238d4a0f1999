/* lua_core.h: the fuseeng.core module (lua_core.c): what Lua code may know
 * about the engine itself. The engine preloads it into its sandbox
 * (fe_sandbox_opts.modules), as does any program that runs the fuseeng
 * library in a sandbox of its own. */
#ifndef FE_LUA_CORE_H
#define FE_LUA_CORE_H

#include <lua.h>

#include <lauxlib.h>

/* Open the module: push its table. */
int fe_luaopen_core(lua_State *L);

/* {"fuseeng.core", fe_luaopen_core}, NULL-ended: for fe_sandbox_opts.modules. */
extern const luaL_Reg FE_LUA_CORE_MODULES[];

#endif
