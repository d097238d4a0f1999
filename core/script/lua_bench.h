/* lua_bench.h: ctx:bench, measurement on the CPU kernels (lua_bench.c). */
#ifndef FE_LUA_BENCH_H
#define FE_LUA_BENCH_H

#include <lua.h>

/* Add ctx:bench to every run of this state (once per state). */
void fe_lua_bench_open(lua_State *L);

#endif
