/* test_lua_pool.c: the Lua state's small-block pools (core/script/lua_pool.c):
 * blocks keep their bytes through resizes within a class, across classes
 * and across the pool/malloc boundary; released blocks are handed out
 * again; blocks in use never overlap; and a state on the pools runs Lua
 * that makes and drops many objects (through the sandbox). */
#include <stdint.h>

#include "testlib.h"
#include "lua_pool.h"
#include "sandbox.h"

#define NB 4000

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31 + i);
}

static int holds(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 31 + i))
            return 0;
    return 1;
}

/* Random sizes from 1 to 600 bytes, resized and released at random; every
 * live block keeps its own bytes (overlapping blocks would overwrite each
 * other's). */
static void resize_release(void **s)
{
    (void)s;
    fe_lua_pool *p = fe_lua_pool_new();
    assert_non_null(p);
    static unsigned char *blk[NB];
    static size_t size[NB];
    uint64_t x = 88172645463325252ull;
    for (int step = 0; step < 200000; step++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int i = (int)(x % NB);
        size_t n = 1 + (size_t)((x >> 20) % 600);
        if (!blk[i]) {
            blk[i] = fe_lua_pool_realloc(p, NULL, 0, n);
            assert_non_null(blk[i]);
            assert_int_equal((uintptr_t)blk[i] % 8, 0);
            size[i] = n;
            fill(blk[i], n, (unsigned)i);
        } else if ((x >> 40) % 3 == 0) {
            assert_true(holds(blk[i], size[i], (unsigned)i));
            fe_lua_pool_release(p, blk[i], size[i]);
            blk[i] = NULL;
        } else {
            unsigned char *q = fe_lua_pool_realloc(p, blk[i], size[i], n);
            assert_non_null(q);
            assert_true(holds(q, size[i] < n ? size[i] : n, (unsigned)i));
            blk[i] = q;
            size[i] = n;
            fill(q, n, (unsigned)i);
        }
    }
    for (int i = 0; i < NB; i++)
        if (blk[i]) {
            assert_true(holds(blk[i], size[i], (unsigned)i));
            fe_lua_pool_release(p, blk[i], size[i]);
        }
    fe_lua_pool_free(p);
}

/* A released block of a class is the next one of that class. */
static void reuse(void **s)
{
    (void)s;
    fe_lua_pool *p = fe_lua_pool_new();
    void *a = fe_lua_pool_realloc(p, NULL, 0, 40);
    void *b = fe_lua_pool_realloc(p, NULL, 0, 40);
    assert_ptr_not_equal(a, b);
    fe_lua_pool_release(p, a, 40);
    assert_ptr_equal(fe_lua_pool_realloc(p, NULL, 0, 33), a);   /* 33 and 40: one class */
    /* Growing within the class keeps the block. */
    assert_ptr_equal(fe_lua_pool_realloc(p, b, 40, 48), b);
    fe_lua_pool_free(p);
}

/* Lua on the pools: tables, strings and closures made and dropped by the
 * hundred thousand, with the collector running. */
static void lua_on_pools(void **s)
{
    (void)s;
    fe_error err = {0};
    fe_sandbox *sb = fe_sandbox_new(NULL, &err);
    assert_non_null(sb);
    lua_State *L = fe_sandbox_L(sb);
    const char *code =
        "local keep, sum = {}, 0\n"
        "for i = 1, 200000 do\n"
        "  local t = { i, tostring(i) .. string.rep('x', i % 300), function() return i end }\n"
        "  if i % 97 == 0 then keep[#keep + 1] = t end\n"
        "  sum = sum + #t[2]\n"
        "end\n"
        "for _, t in ipairs(keep) do assert(t[2]:sub(1, #tostring(t[1])) == tostring(t[1]) and t[3]() == t[1]) end\n"
        "return #keep";
    fe_sandbox_push_env(sb);
    assert_int_equal(fe_sandbox_load_string(sb, code, strlen(code), "pool", &err), FE_OK);
    if (fe_sandbox_pcall(sb, 0, 1, "test", &err) != FE_OK)
        fail_msg("%s", err.message);
    assert_int_equal(lua_tointeger(L, -1), 200000 / 97);
    fe_sandbox_free(sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resize_release),
        cmocka_unit_test(reuse),
        cmocka_unit_test(lua_on_pools),
    };
    return cmocka_run_group_tests_name("lua_pool", tests, NULL, NULL);
}
