/* policy.c: loading, combining and parameterising policies.
 *
 * A policy file runs once, in a fresh sandbox environment, and must return
 * a table made by fe.policy{...} (or a combinator). An fe_policy_ref keeps
 * a registry reference to that table; combining and parameter overrides
 * call the planner's own instance of lua/fuseeng.lua, so the rules for them
 * live in Lua beside fe.policy itself.
 *
 * The marker that says "policy" (__fuseeng_policy in the metatable) is
 * duck-typed, because each script has its own instance of the library, so
 * a script can forge it. C therefore trusts no field: fe_policy_check
 * checks every field the engine reads whenever a policy is taken and
 * before each run (the table is the script's and may change).
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "home.h"
#include "policy.h"

/* Copy a string field of the table at idx into buf ("" if absent), its
 * control characters escaped (names and descriptions reach terminals). Raw:
 * a script's metamethods never run from C outside a protected call. */
static void field_str(lua_State *L, int idx, const char *key, char *buf, size_t size)
{
    idx = lua_absindex(L, idx);
    lua_pushstring(L, key);
    lua_rawget(L, idx);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    fe_escape_into(buf, size, s, 0);
    lua_pop(L, 1);
}

/* Is the value at idx a policy? Duck-typed through its metatable's marker,
 * because each script has its own instance of the library. */
static int is_policy(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx))
        return 0;
    lua_pushliteral(L, "__fuseeng_policy");
    lua_rawget(L, -2);
    int yes = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return yes;
}

/* Does the string field key of the table at t equal one of the words
 * (NULL-terminated)? An absent field matches. */
static int field_is(lua_State *L, int t, const char *key, const char *const *words)
{
    char v[32];
    lua_pushstring(L, key);
    int type = lua_rawget(L, t);
    lua_pop(L, 1);
    if (type == LUA_TNIL)
        return 1;
    field_str(L, t, key, v, sizeof v);
    for (; *words; words++)
        if (strcmp(v, *words) == 0)
            return 1;
    return 0;
}

/* Check the policy table at idx (see fe_policy_check); path names it. */
static int check_table(lua_State *L, int idx, const char *path, fe_error *err)
{
    int t = lua_absindex(L, idx);
    char name[256], driver[32], list[256];
    field_str(L, t, "name", name, sizeof name);
    for (int i = 0; i < FE_NPOLICY_FIELDS; i++) {
        const fe_policy_field *f = &FE_POLICY_FIELDS[i];
        lua_pushstring(L, f->name);
        int type = lua_rawget(L, t);
        lua_pop(L, 1);
        if (type != LUA_TNIL && type != f->type)
            return fe_error_set(err, FE_EINPUT, "%s: policy '%s': '%s' is a %s; expected a %s (make "
                                "policies with fe.policy{...})", path, name, f->name,
                                lua_typename(L, type), lua_typename(L, f->type));
    }
    if (!name[0])
        return fe_error_set(err, FE_EINPUT, "%s: a policy needs a non-empty 'name' (make policies "
                            "with fe.policy{...})", path);
    field_str(L, t, "driver", driver, sizeof driver);
    const fe_driver *d = fe_driver_find(driver);
    if (!d)
        return fe_error_set(err, FE_EINPUT, "%s: policy '%s': driver '%s' is unknown; expected %s",
                            path, name, driver, fe_driver_names(list, sizeof list));
    for (int i = 0; i < FE_NPOLICY_FIELDS; i++) {
        const fe_policy_field *f = &FE_POLICY_FIELDS[i];
        if (f->words && !field_is(L, t, f->name, f->words))
            return fe_error_set(err, FE_EINPUT, "%s: policy '%s': %s must be %s", path, name,
                                f->name, fe_policy_field_words(f, list, sizeof list));
    }
    if (d->needs) {
        lua_pushstring(L, d->needs);
        int missing = lua_rawget(L, t) == LUA_TNIL;
        lua_pop(L, 1);
        if (missing)
            return fe_error_set(err, FE_EINPUT, "%s: policy '%s': the %s driver needs %s", path,
                                name, driver, d->needs_what);
    }
    char why[256];
    if (d->check && d->check(L, t, why, sizeof why))
        return fe_error_set(err, FE_EINPUT, "%s: policy '%s': %s", path, name, why);
    return FE_OK;
}

int fe_policy_check(fe_policy_ref *p, fe_error *err)
{
    lua_State *L = fe_sandbox_L(p->pl->sb);
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
    int rc = check_table(L, -1, p->path, err);
    if (rc == FE_OK) {
        field_str(L, -1, "name", p->name, sizeof p->name);
        field_str(L, -1, "driver", p->driver, sizeof p->driver);
        field_str(L, -1, "description", p->description, sizeof p->description);
        field_str(L, -1, "source", p->source, sizeof p->source);
    }
    lua_pop(L, 1);
    return rc;
}

int fe_policy_take(fe_planner *pl, const char *path, fe_policy_ref *p, fe_error *err)
{
    lua_State *L = fe_sandbox_L(pl->sb);
    if (!is_policy(L, -1)) {
        fe_error_set(err, FE_EINPUT, "%s: a policy file must return fe.policy{...} (or a "
                     "combination such as fe.chain{...}); it returned a %s", path,
                     luaL_typename(L, -1));
        lua_pop(L, 1);
        return FE_EINPUT;
    }
    int rc = check_table(L, -1, path, err);
    if (rc != FE_OK) {
        lua_pop(L, 1);
        return rc;
    }
    memset(p, 0, sizeof *p);
    p->pl = pl;
    field_str(L, -1, "name", p->name, sizeof p->name);
    field_str(L, -1, "driver", p->driver, sizeof p->driver);
    field_str(L, -1, "description", p->description, sizeof p->description);
    field_str(L, -1, "source", p->source, sizeof p->source);
    snprintf(p->path, sizeof p->path, "%s", path);
    p->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return FE_OK;
}

static int run_chunk(fe_planner *pl, const char *label, fe_policy_ref *p, fe_error *err)
{
    /* Loading runs the file's top level: it is metered like a run. */
    fe_sandbox_begin(pl->sb, label);
    int rc = fe_sandbox_pcall(pl->sb, 0, 1, label, err);
    if (rc != FE_OK) {
        /* A message without the file's name (raised from a tail call, as in
         * `return fe.policy{...}`) gets it. */
        if (err && strncmp(err->message, label, strlen(label)) != 0)
            fe_error_prefix(err, "%s: ", label);
        return rc;
    }
    return fe_policy_take(pl, label, p, err);
}

int fe_policy_load(fe_planner *pl, const char *name_or_path, fe_policy_ref *p, fe_error *err)
{
    char path[PATH_MAX];
    if (fe_home_find(fe_sandbox_home(pl->sb), "policies", "policy", name_or_path, path,
                     sizeof path) != 0) {
        char list[4096], hint[160];
        fe_home_names(fe_sandbox_home(pl->sb), "policies", list, sizeof list);
        return fe_error_set(err, FE_EINPUT, "policy '%s' not found%s: %s/policies has no such "
                            "policy (see 'fuseeng policies') and there is no file of that name "
                            "here", name_or_path, fe_did_you_mean(name_or_path, list, hint, sizeof hint),
                            fe_sandbox_home(pl->sb));
    }
    fe_sandbox_push_env(pl->sb);
    int rc = fe_sandbox_load_file(pl->sb, path, "the policy", err);
    if (rc != FE_OK)
        return rc;
    return run_chunk(pl, path, p, err);
}

int fe_policy_load_buffer(fe_planner *pl, const char *source, size_t len, const char *label,
                          fe_policy_ref *p, fe_error *err)
{
    if (!label)
        label = "policy";
    fe_sandbox_push_env(pl->sb);
    int rc = fe_sandbox_load_string(pl->sb, source, len, label, err);
    if (rc != FE_OK)
        return rc;
    return run_chunk(pl, label, p, err);
}

void fe_policy_release(fe_policy_ref *p)
{
    if (p && p->pl)
        luaL_unref(fe_sandbox_L(p->pl->sb), LUA_REGISTRYINDEX, p->ref);
}

int fe_policy_combine(fe_planner *pl, const char *how, const fe_policy_ref *const *list, int n,
                      fe_policy_ref *out, fe_error *err)
{
    lua_State *L = fe_sandbox_L(pl->sb);
    fe_planner_push_fe(pl);
    lua_getfield(L, -1, "combine");
    lua_remove(L, -2);
    lua_pushstring(L, how);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, list[i]->ref);
        lua_rawseti(L, -2, i + 1);
    }
    fe_sandbox_begin(pl->sb, "combine");
    int rc = fe_sandbox_pcall(pl->sb, 2, 1, "combine", err);
    if (rc != FE_OK)
        return rc;
    return fe_policy_take(pl, how, out, err);
}

int fe_policy_override(fe_policy_ref *p, const char *key, const char *value, fe_error *err)
{
    lua_State *L = fe_sandbox_L(p->pl->sb);
    fe_planner_push_fe(p->pl);
    lua_getfield(L, -1, "set_param");
    lua_remove(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
    lua_pushstring(L, key);
    lua_pushstring(L, value);
    fe_sandbox_begin(p->pl->sb, p->path);
    if (fe_sandbox_pcall(p->pl->sb, 3, 1, "param", err) != FE_OK)
        return err ? err->code : FE_EINPUT;
    /* The overridden policy replaces the old table under the same reference. */
    luaL_unref(L, LUA_REGISTRYINDEX, p->ref);
    field_str(L, -1, "name", p->name, sizeof p->name);
    p->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return FE_OK;
}
