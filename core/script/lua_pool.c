/* lua_pool.c: size-class pools for a Lua state's small blocks (see
 * lua_pool.h).
 *
 * Note on the pools. Blocks of up to FE_LUA_POOL_MAX bytes are rounded up
 * to a multiple of STEP (their class) and carved from slabs of SLAB bytes;
 * a released block goes on its class's free list (its first word links the
 * next) and is handed out again before the slab is carved further. Lua
 * tells the allocator a block's size on every resize and release, so
 * blocks carry no header, and the class of a block is that of the size Lua
 * passes. Invariant: a block is at least as large as the size Lua last
 * gave for it, so putting it on that size's list is always safe; a shrink
 * that cannot get a smaller block (a slab's malloc failed) keeps the
 * larger one, as Lua requires shrinks never to fail (a malloc'd block
 * kept so then joins the pools for good). Slabs are freed only
 * with the pool: memory a state released stays for its next objects, as
 * malloc's own free lists would keep it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lua_pool.h"

#define STEP 16                       /* Lua's blocks need 8-byte alignment; slabs give 16 */
#define NCLASS (FE_LUA_POOL_MAX / STEP)
#define SLAB (256 << 10)

struct fe_lua_pool {
    void *free[NCLASS];   /* free list heads, one per class */
    char *cur, *end;      /* the rest of the slab being carved */
    void **slabs;
    size_t nslabs, cap;
};

/* The class of a size of 1..FE_LUA_POOL_MAX bytes. */
static int class_of(size_t n)
{
    return (int)((n + STEP - 1) / STEP) - 1;
}

fe_lua_pool *fe_lua_pool_new(void)
{
    return calloc(1, sizeof(fe_lua_pool));
}

void fe_lua_pool_free(fe_lua_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nslabs; i++)
        free(p->slabs[i]);
    free(p->slabs);
    free(p);
}

/* A block of class c, or NULL when a new slab cannot be had. */
static void *take(fe_lua_pool *p, int c)
{
    void *b = p->free[c];
    if (b) {
        p->free[c] = *(void **)b;
        return b;
    }
    size_t size = (size_t)(c + 1) * STEP;
    if ((size_t)(p->end - p->cur) < size) {
        if (p->nslabs == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 64;
            void **s = realloc(p->slabs, cap * sizeof *s);
            if (!s)
                return NULL;
            p->slabs = s;
            p->cap = cap;
        }
        char *slab = malloc(SLAB);
        if (!slab)
            return NULL;
        p->slabs[p->nslabs++] = slab;
        /* The old slab's tail (under one block) is left unused. */
        p->cur = slab;
        p->end = slab + SLAB;
    }
    b = p->cur;
    p->cur += size;
    return b;
}

static void give(fe_lua_pool *p, int c, void *b)
{
    *(void **)b = p->free[c];
    p->free[c] = b;
}

void *fe_lua_pool_realloc(fe_lua_pool *p, void *ptr, size_t old, size_t nsize)
{
    if (!ptr)
        return nsize <= FE_LUA_POOL_MAX ? take(p, class_of(nsize)) : malloc(nsize);
    if (old > FE_LUA_POOL_MAX && nsize > FE_LUA_POOL_MAX)
        return realloc(ptr, nsize);
    if (old <= FE_LUA_POOL_MAX && nsize <= FE_LUA_POOL_MAX && class_of(nsize) == class_of(old))
        return ptr;
    void *q = nsize <= FE_LUA_POOL_MAX ? take(p, class_of(nsize)) : malloc(nsize);
    if (!q)
        return nsize < old ? ptr : NULL;   /* a shrink keeps the larger block */
    memcpy(q, ptr, old < nsize ? old : nsize);
    fe_lua_pool_release(p, ptr, old);
    return q;
}

void fe_lua_pool_release(fe_lua_pool *p, void *ptr, size_t old)
{
    if (old <= FE_LUA_POOL_MAX)
        give(p, class_of(old), ptr);
    else
        free(ptr);
}
