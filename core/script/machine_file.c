/* machine_file.c: running machine files (lua/machines/NAME.lua) in the
 * sandbox; machine.c (the simulator's layer) checks the table they return.
 *
 * A machine spec may end in overrides, "gcu:registers=128,launch_us=5":
 * each FIELD=VALUE (a number, true or false) replaces a top-level field of
 * the table the file returns before machine.c checks it, so an override
 * gets the same range checks and messages as the file's own fields. The
 * machine's name becomes the whole spec, which is what plan files and
 * reports record, so a plan made on it reads back on the same machine. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "home.h"
#include "machine_file.h"

static int load_path(fe_sandbox *sb, const char *path, const char *spec, const char *over,
                     fe_machine *m, fe_error *err);

/* Split "base:k=v,..." into base (in buf) and the overrides (NULL if none):
 * the last ':' followed by text holding '=' starts them. */
static const char *split_spec(const char *spec, char *buf, size_t size, fe_error *err,
                              const char **over)
{
    const char *colon = strrchr(spec, ':');
    *over = NULL;
    if (!colon || !strchr(colon, '='))
        return spec;
    if ((size_t)(colon - spec) >= size) {
        fe_error_set(err, FE_EINPUT, "machine '%.80s...': the name before ':' is too long", spec);
        return NULL;
    }
    memcpy(buf, spec, (size_t)(colon - spec));
    buf[colon - spec] = '\0';
    *over = colon + 1;
    return buf;
}

/* Set each k=v of over in the table on top of L's stack. */
static int apply_overrides(lua_State *L, const char *spec, const char *over, fe_error *err)
{
    for (const char *p = over; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[128], *eq, *stop;
        if (len == 0 || len >= sizeof item || !(eq = memchr(p, '=', len)) || eq == p)
            return fe_error_set(err, FE_EINPUT, "machine '%s': override '%.*s' is not FIELD=VALUE "
                                "(write e.g. gcu:registers=128,launch_us=5)", spec,
                                (int)(len < 60 ? len : 60), p);
        memcpy(item, p, len);
        item[len] = '\0';
        eq = item + (eq - p);
        *eq = '\0';
        const char *v = eq + 1;
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
            lua_pushboolean(L, v[0] == 't');
        } else {
            double d = strtod(v, &stop);
            if (!*v || *stop)
                return fe_error_set(err, FE_EINPUT, "machine '%s': override %s=%s: the value must "
                                    "be a number, true or false", spec, item, v);
            if (d == (double)(long long)d && d > -9e15 && d < 9e15)
                lua_pushinteger(L, (lua_Integer)d);
            else
                lua_pushnumber(L, d);
        }
        if (strcmp(item, "name") == 0 || strcmp(item, "description") == 0)
            return fe_error_set(err, FE_EINPUT, "machine '%s': override %s: only numbers and "
                                "true/false fields can be overridden", spec, item);
        lua_setfield(L, -2, item);
        p += len + (end ? 1 : 0);
    }
    lua_pushstring(L, spec);
    lua_setfield(L, -2, "name");
    return FE_OK;
}

int fe_machine_load(fe_sandbox *sb, const char *spec, fe_machine *m, fe_error *err)
{
    char path[PATH_MAX], base[PATH_MAX];
    const char *over, *name_or_path = spec ? split_spec(spec, base, sizeof base, err, &over) : NULL;
    if (spec && !name_or_path)
        return FE_EINPUT;
    if (!name_or_path || !*name_or_path)
        return fe_error_set(err, FE_EINPUT, "no machine given (use a name such as gcu, or a "
                            "path to a machine file)");
    if (fe_home_find(fe_sandbox_home(sb), "lua/machines", "machine", name_or_path, path,
                     sizeof path) != 0) {
        char dir[PATH_MAX], list[600], hint[160];
        snprintf(dir, sizeof dir, "%s/lua/machines", fe_sandbox_home(sb));
        fe_home_names(fe_sandbox_home(sb), "lua/machines", list, sizeof list);
        return fe_error_set(err, FE_EINPUT, "machine '%s' not found%s: %s has no such machine "
                            "(known machines: %s; 'fuseeng machines' describes them) and there "
                            "is no file of that name here", name_or_path,
                            fe_did_you_mean(name_or_path, list, hint, sizeof hint), dir,
                            list[0] ? list : "none");
    }
    return load_path(sb, path, spec, over, m, err);
}

int fe_machine_load_shipped(fe_sandbox *sb, const char *spec, fe_machine *m, fe_error *err)
{
    char dir[PATH_MAX], path[PATH_MAX], list[600], base[PATH_MAX];
    struct stat st;
    const char *over, *name = spec ? split_spec(spec, base, sizeof base, err, &over) : NULL;
    if (spec && !name)
        return FE_EINPUT;
    int plain = name && *name && name[0] != '.' && strlen(name) < sizeof m->name;
    for (const char *c = name; plain && *c; c++)
        plain = isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
    if (!plain) {
        return fe_error_set(err, FE_EINPUT, "'%.80s' is not a machine name (at most %zu letters, "
                            "digits, '_', '-' or '.', not starting with '.')", name ? name : "",
                            sizeof m->name - 1);
    }
    snprintf(dir, sizeof dir, "%s/lua/machines", fe_sandbox_home(sb));
    fe_home_names(fe_sandbox_home(sb), "lua/machines", list, sizeof list);
    if (snprintf(path, sizeof path, "%s/%s.lua", dir, name) >= (int)sizeof path ||
        stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        char hint[160];
        return fe_error_set(err, FE_EINPUT, "no machine named '%s' in %s (known machines: %s)%s",
                            name, dir, list[0] ? list : "none",
                            fe_did_you_mean(name, list, hint, sizeof hint));
    }
    return load_path(sb, path, spec, over, m, err);
}

static int load_path(fe_sandbox *sb, const char *path, const char *spec, const char *over,
                     fe_machine *m, fe_error *err)
{
    lua_State *L = fe_sandbox_L(sb);
    int top = lua_gettop(L);
    fe_sandbox_push_env(sb);   /* which starts a fresh metered run for itself */
    if (fe_sandbox_load_file(sb, path, "the machine file", err) != FE_OK) {
        lua_settop(L, top);
        return err ? err->code : FE_EINPUT;
    }
    fe_sandbox_begin(sb, path);
    if (fe_sandbox_pcall(sb, 0, 1, path, err) != FE_OK) {
        lua_settop(L, top);
        return err ? err->code : FE_EINPUT;
    }
    if (over && (!lua_istable(L, -1) || strlen(spec) >= sizeof m->name)) {
        lua_settop(L, top);
        return fe_error_set(err, FE_EINPUT, "machine '%.80s': %s", spec, strlen(spec) >= sizeof
                            m->name ? "too long with its overrides (a machine name holds at most "
                            "63 characters)" : "the file does not return a table to override");
    }
    if (over && apply_overrides(L, spec, over, err) != FE_OK) {
        lua_settop(L, top);
        return FE_EINPUT;
    }
    int rc = fe_machine_read(L, -1, path, m, err);
    lua_settop(L, top);
    if (rc != FE_OK && over)
        fe_error_prefix(err, "machine '%s' (with its overrides): ", spec);
    if (rc == FE_OK) {
        size_t len = strnlen(path, sizeof m->file - 1);
        memcpy(m->file, path, len);
        m->file[len] = '\0';
    }
    return rc;
}

