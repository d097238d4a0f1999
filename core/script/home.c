/* home.c: the install home and the shipped files in it (home.h). */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "home.h"

int fe_home_pathf(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

static int is_dir_with(const char *dir, const char *file)
{
    char p[PATH_MAX];
    struct stat st;
    if (fe_home_pathf(p, sizeof p, "%s/%s", dir, file))
        return 0;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int fe_home_locate(const char *opt, char *out, size_t size)
{
    char cands[8][PATH_MAX];
    int n = 0;
    if (opt && *opt)
        n += fe_home_pathf(cands[n], PATH_MAX, "%s", opt) == 0;
    const char *env = getenv("FUSEENG_HOME");
    if (env && *env)
        n += fe_home_pathf(cands[n], PATH_MAX, "%s", env) == 0;
    Dl_info info;
    char self[PATH_MAX];
    if (dladdr((void *)fe_home_locate, &info) && info.dli_fname && realpath(info.dli_fname, self)) {
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        n += fe_home_pathf(cands[n], PATH_MAX, "%s/..", self) == 0;
        n += fe_home_pathf(cands[n], PATH_MAX, "%s/../..", self) == 0;
        n += fe_home_pathf(cands[n], PATH_MAX, "%s/../../..", self) == 0;
        n += fe_home_pathf(cands[n], PATH_MAX, "%s/../share/fuseeng", self) == 0;
    }
#ifdef FE_DATADIR
    n += fe_home_pathf(cands[n], PATH_MAX, "%s", FE_DATADIR) == 0;
#endif
    n += fe_home_pathf(cands[n], PATH_MAX, ".") == 0;
    for (int i = 0; i < n; i++) {
        if (is_dir_with(cands[i], "lua/fuseeng.lua")) {
            char real[PATH_MAX];
            if (!realpath(cands[i], real))
                memcpy(real, cands[i], sizeof real);
            return fe_home_pathf(out, size, "%s", real);
        }
    }
    return -1;
}

int fe_home_find(const char *home, const char *subdir, const char *kind, const char *name,
                 char *out, size_t size)
{
    struct stat st;
    size_t n = strlen(name);
    if (strchr(name, '/'))
        return fe_home_pathf(out, size, "%s", name);
    /* A bare name is the shipped file first, with or without ".lua". */
    int lua = n > 4 && strcmp(name + n - 4, ".lua") == 0;
    int here = stat(name, &st) == 0;
    if (fe_home_pathf(out, size, "%s/%s/%.*s.lua", home, subdir, (int)(lua ? n - 4 : n), name) == 0 &&
        stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
        if (here) {
            char shown[2 * PATH_MAX];
            fe_escape_into(shown, sizeof shown, name, 0);
            fprintf(stderr, "fuseeng: note: %s '%s' is the shipped one, %s; to use the file "
                    "'%s' in this directory, write ./%s\n", kind, shown, out, shown, shown);
        }
        return 0;
    }
    if (here)
        return fe_home_pathf(out, size, "%s", name);
    out[0] = '\0';
    return -1;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

void fe_home_names(const char *home, const char *subdir, char *out, size_t size)
{
    char dir[PATH_MAX], (*names)[64] = malloc(256 * sizeof *names);
    int n = 0;
    DIR *d = NULL;
    out[0] = '\0';
    if (!names || fe_home_pathf(dir, sizeof dir, "%s/%s", home, subdir) || !(d = opendir(dir))) {
        free(names);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < 64 + 4 && strcmp(e->d_name + len - 4, ".lua") == 0)
            snprintf(names[n++], sizeof names[0], "%.*s", (int)(len - 4), e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_name);
    size_t at = 0;
    for (int i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ", " : "", names[i]);
    free(names);
}
