/* lua_profile.h: ctx.profile for policies (see lua_profile.c). */
#ifndef FE_LUA_PROFILE_H
#define FE_LUA_PROFILE_H

#include <lua.h>

/* profile:lookup(group); upvalue 1 is the run handle. */
int fe_lua_profile_lookup(lua_State *L);

#endif
