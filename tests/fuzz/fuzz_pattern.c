/* fuzz_pattern.c: the op-pattern DSL (lua/fuseeng/pattern.lua, an LPeg
 * grammar compiled to a DFA, or an expression tree): the input is one
 * pattern source. A Lua harness (pattern_harness.lua), loaded once in the
 * engine's sandbox, compiles it and holds the result to what the DSL
 * promises:
 *   - a source it refuses gets "fuzz:LINE:COL: message" (an error from
 *     inside the library, "attempt to index a nil value", is a bug);
 *   - a chain's p:match and p:match_tokens agree on token sequences made
 *     of the ops it names and a few others (the test of the same name in
 *     tests/lua/test_pattern.lua, on fuzzed patterns);
 *   - an expression's p:match_expr runs on every node of a small graph.
 * Planning with the patterns driver (core/script/driver_patterns.c) is the
 * policy target's: a policy made here per input would spend the time on
 * loading the fuseeng library. */
#include "api.h"
#include "fuzz.h"
#include "sandbox.h"

static int harness_ref = LUA_NOREF;

#define HARNESS "tests/fuzz/pattern_harness.lua"

/* The compiled harness function, loaded once; exits if it cannot be. */
static void load_harness(fe_sandbox *sb)
{
    fe_error err = {0};
    char src[16384];
    FILE *f = fopen(HARNESS, "rb");
    size_t len = f ? fread(src, 1, sizeof src, f) : 0;
    if (f)
        fclose(f);
    if (!len || len == sizeof src) {
        fprintf(stderr, "fuzz: cannot read %s (run from the repository's top directory)\n",
                HARNESS);
        exit(1);
    }
    fe_sandbox_push_env(sb);
    fe_sandbox_begin(sb, HARNESS);
    if (fe_sandbox_load_string(sb, src, len, HARNESS, &err) != FE_OK ||
        fe_sandbox_pcall(sb, 0, 1, "the pattern harness", &err) != FE_OK) {
        fprintf(stderr, "fuzz: %s\n", err.message);
        exit(1);
    }
    harness_ref = luaL_ref(fe_sandbox_L(sb), LUA_REGISTRYINDEX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fe_sandbox *sb = fz_engine()->pl->sb;
    if (harness_ref == LUA_NOREF)
        load_harness(sb);
    lua_State *L = fe_sandbox_L(sb);
    fe_error err = {0};
    fe_sandbox_begin(sb, "fuzz_pattern");
    lua_rawgeti(L, LUA_REGISTRYINDEX, harness_ref);
    lua_pushlstring(L, (const char *)data, size);
    if (fe_sandbox_pcall(sb, 1, 0, "the pattern harness", &err) != FE_OK) {
        fz_check_error("the pattern harness", &err);
        /* Out of budget or memory is the sandbox doing its job; anything
         * else the harness raised is a broken promise of the DSL. */
        if (strstr(err.message, "fuzz-bug:")) {
            fprintf(stderr, "%s\n", err.message);
            abort();
        }
    }
    lua_gc(L, LUA_GCSTEP, 0);
    return 0;
}
