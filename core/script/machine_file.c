/* machine_file.c: running machine files (lua/machines/NAME.lua) in the
 * sandbox; machine.c (the simulator's layer) checks the table they return. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "machine_file.h"

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* "gcu, gcu_big, host": the machine files shipped in dir, sorted. */
static void known_machines(const char *dir, char *out, size_t size)
{
    char names[32][64];
    int n = 0;
    DIR *d = opendir(dir);
    out[0] = '\0';
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 32;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < 64 + 4 && strcmp(e->d_name + len - 4, ".lua") == 0)
            snprintf(names[n++], sizeof names[0], "%.*s", (int)(len - 4), e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_name);
    size_t at = 0;
    for (int i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ", " : "", names[i]);
}

static int load_path(fe_sandbox *sb, const char *path, fe_machine *m, fe_error *err);

int fe_machine_load(fe_sandbox *sb, const char *name_or_path, fe_machine *m, fe_error *err)
{
    char path[PATH_MAX];
    if (!name_or_path || !*name_or_path)
        return fe_error_set(err, FE_EINPUT, "no machine given (use a name such as gcu, or a "
                            "path to a machine file)");
    if (fe_sandbox_find(sb, "lua/machines", "machine", name_or_path, path, sizeof path) != 0) {
        char dir[PATH_MAX], list[600];
        snprintf(dir, sizeof dir, "%s/lua/machines", fe_sandbox_home(sb));
        known_machines(dir, list, sizeof list);
        return fe_error_set(err, FE_EINPUT, "machine '%s' not found: %s has no such machine "
                            "(known machines: %s) and there is no file of that name here",
                            name_or_path, dir, list[0] ? list : "none");
    }
    return load_path(sb, path, m, err);
}

int fe_machine_load_shipped(fe_sandbox *sb, const char *name, fe_machine *m, fe_error *err)
{
    char dir[PATH_MAX], path[PATH_MAX], list[600];
    struct stat st;
    int plain = name && *name && name[0] != '.' && strlen(name) < sizeof m->name;
    for (const char *c = name; plain && *c; c++)
        plain = isalnum((unsigned char)*c) || *c == '_' || *c == '-' || *c == '.';
    if (!plain) {
        return fe_error_set(err, FE_EINPUT, "'%.80s' is not a machine name (at most %zu letters, "
                            "digits, '_', '-' or '.', not starting with '.')", name ? name : "",
                            sizeof m->name - 1);
    }
    snprintf(dir, sizeof dir, "%s/lua/machines", fe_sandbox_home(sb));
    known_machines(dir, list, sizeof list);
    if (snprintf(path, sizeof path, "%s/%s.lua", dir, name) >= (int)sizeof path ||
        stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return fe_error_set(err, FE_EINPUT, "no machine named '%s' in %s (known machines: %s)",
                            name, dir, list[0] ? list : "none");
    return load_path(sb, path, m, err);
}

static int load_path(fe_sandbox *sb, const char *path, fe_machine *m, fe_error *err)
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
    int rc = fe_machine_read(L, -1, path, m, err);
    lua_settop(L, top);
    if (rc == FE_OK) {
        size_t len = strnlen(path, sizeof m->file - 1);
        memcpy(m->file, path, len);
        m->file[len] = '\0';
    }
    return rc;
}

