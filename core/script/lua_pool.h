/* lua_pool.h: size-class pools for the small blocks of one Lua state
 * (lua_pool.c). A planning run makes and drops millions of small objects
 * (group and list objects per hook call, strings per log line); the
 * sandbox's allocator takes them from here instead of malloc, whose
 * per-block work and trimming showed as a fifth of such runs.
 */
#ifndef FE_LUA_POOL_H
#define FE_LUA_POOL_H

#include <stddef.h>

/* Blocks up to this many bytes come from the pools; larger ones from malloc. */
#define FE_LUA_POOL_MAX 256

typedef struct fe_lua_pool fe_lua_pool;

/* An empty pool; NULL on out-of-memory. Free with fe_lua_pool_free, after
 * the Lua state using it is closed (that returns every block). */
fe_lua_pool *fe_lua_pool_new(void);

/* Frees every block the pool ever handed out. */
void fe_lua_pool_free(fe_lua_pool *p);

/* Lua's allocator contract, minus the accounting (sandbox.c): ptr NULL
 * (old 0) allocates nsize; else resizes the block of old bytes. nsize > 0.
 * NULL when memory runs out, except that a shrink never fails. The caller
 * owns the block until fe_lua_pool_release. */
void *fe_lua_pool_realloc(fe_lua_pool *p, void *ptr, size_t old, size_t nsize);

/* Gives back the block ptr of old bytes (old as Lua passes it). */
void fe_lua_pool_release(fe_lua_pool *p, void *ptr, size_t old);

#endif
