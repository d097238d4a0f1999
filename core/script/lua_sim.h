/* lua_sim.h: ctx:simulate, ctx:simulate_unfused and ctx.machine. */
#ifndef FE_LUA_SIM_H
#define FE_LUA_SIM_H

#include <lua.h>

#include "machine.h"

/* Register the ctx methods (once per state). */
void fe_lua_sim_open(lua_State *L);
/* Push the machine as a plain table (its file's field names). */
void fe_lua_push_machine(lua_State *L, const fe_machine *m);

#endif
