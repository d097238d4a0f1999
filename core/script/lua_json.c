/* lua_json.c: the table a Lua data file returns, as JSON text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "lua_json.h"
#include "sandbox.h"

/* Write the value at idx; where is its path for messages. */
static int put(lua_State *L, int idx, fe_jw *w, const char *where, int depth, fe_error *err)
{
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        fe_jw_str(w, lua_tostring(L, idx));
        return FE_OK;
    case LUA_TBOOLEAN:
        fe_jw_bool(w, lua_toboolean(L, idx));
        return FE_OK;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            fe_jw_int(w, lua_tointeger(L, idx));
        else if (isfinite(lua_tonumber(L, idx)))
            fe_jw_num(w, lua_tonumber(L, idx));
        else
            return fe_error_set(err, FE_EINPUT, "%s: not a finite number", where);
        return FE_OK;
    case LUA_TTABLE:
        break;
    default:
        return fe_error_set(err, FE_EINPUT, "%s: a %s cannot be data (numbers, strings, booleans "
                            "and tables only)", where, luaL_typename(L, idx));
    }
    if (depth > 32)
        return fe_error_set(err, FE_EINPUT, "%s: nested too deep (a cycle?)", where);
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
    int strings = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        count++;
        strings |= lua_type(L, -2) == LUA_TSTRING;
        lua_pop(L, 1);
    }
    char sub[512];
    if (!strings && count == n) {
        fe_jw_arr(w);
        for (lua_Integer i = 1; i <= n; i++) {
            snprintf(sub, sizeof sub, "%s[%lld]", where, (long long)(i - 1));
            lua_rawgeti(L, idx, i);
            int rc = put(L, -1, w, sub, depth + 1, err);
            lua_pop(L, 1);
            if (rc != FE_OK)
                return rc;
        }
        fe_jw_end(w);
        return FE_OK;
    }
    if (count != 0 && n != 0)
        return fe_error_set(err, FE_EINPUT, "%s: a table is a list or a record, not both", where);
    fe_jw_obj(w);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            lua_pop(L, 2);
            return fe_error_set(err, FE_EINPUT, "%s: a record's keys are strings", where);
        }
        const char *k = lua_tostring(L, -2);
        snprintf(sub, sizeof sub, "%s%s%s", where, where[0] ? "." : "", k);
        fe_jw_key(w, k);
        int rc = put(L, -1, w, sub, depth + 1, err);
        lua_pop(L, 1);
        if (rc != FE_OK) {
            lua_pop(L, 1);
            return rc;
        }
    }
    fe_jw_end(w);
    return FE_OK;
}

char *fe_lua_file_json(fe_sandbox *sb, const char *path, fe_error *err)
{
    lua_State *L = fe_sandbox_L(sb);
    int top = lua_gettop(L);
    fe_sandbox_push_env(sb);
    char *text = NULL;
    size_t len = 0;
    int rc = fe_sandbox_load_file(sb, path, "the suite", err);
    if (rc == FE_OK) {
        fe_sandbox_begin(sb, path);
        rc = fe_sandbox_pcall(sb, 0, 1, path, err);
    }
    if (rc == FE_OK && !lua_istable(L, -1))
        rc = fe_error_set(err, FE_EINPUT, "%s: the file returns %s, not a table", path,
                          luaL_typename(L, -1));
    FILE *f = rc == FE_OK ? open_memstream(&text, &len) : NULL;
    if (rc == FE_OK && !f)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    if (f) {
        fe_jw w;
        fe_jw_init(&w, f, 0);
        rc = put(L, -1, &w, "", 0, err);
        fclose(f);
        if (rc != FE_OK) {
            fe_error_prefix(err, "%s: ", path);
            free(text);
            text = NULL;
        }
    }
    lua_settop(L, top);
    return text;
}
