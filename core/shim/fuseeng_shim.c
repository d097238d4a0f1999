/* fuseeng_shim.c: libfuseeng.so, the public shared library: a thin layer
 * that loads the engine (libfuseeng-core.so, next to it) and forwards each
 * public call.
 *
 * Why: the engine embeds Lua 5.4, whose C API names (lua_newstate, ...) are
 * the same as LuaJIT's and other Lua hosts'. A host that exports its own
 * lua_* symbols (LuaJIT does) would otherwise capture the engine's calls,
 * since the dynamic linker searches the executable first. Loading the
 * engine with RTLD_DEEPBIND makes it and its libraries resolve their own
 * symbols first, so fuseeng works inside any host, LuaJIT's FFI included.
 * (Sanitizer runtimes refuse RTLD_DEEPBIND; sanitized builds use a plain
 * local load, which is fine for C hosts.)
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fuseeng.h"

/* name, return type, parameter list, argument list, the fe_error argument */
#define FE_API(X)                                                                           \
    X(fe_version, const char *, (void), (), NULL)                                           \
    X(fe_engine_new, fe_engine *, (const fe_engine_options *o, fe_error *e), (o, e), e)     \
    X(fe_model_load_file, fe_model *, (const char *p, const char *d, fe_error *e), (p, d, e), e) \
    X(fe_model_load_buffer, fe_model *,                                                     \
      (const char *j, size_t n, const char *l, const char *d, fe_error *e), (j, n, l, d, e), e) \
    X(fe_model_name, const char *, (const fe_model *m), (m), NULL)                          \
    X(fe_model_nodes, int, (const fe_model *m), (m), NULL)                                  \
    X(fe_engine_load_policy, fe_policy *, (fe_engine *x, const char *p, fe_error *e), (x, p, e), e) \
    X(fe_engine_load_policy_buffer, fe_policy *,                                            \
      (fe_engine *x, const char *s, size_t n, const char *l, fe_error *e), (x, s, n, l, e), e) \
    X(fe_engine_combine, fe_policy *,                                                       \
      (fe_engine *x, const char *h, fe_policy *const *p, int n, fe_error *e), (x, h, p, n, e), e) \
    X(fe_policy_set_param, int, (fe_policy *p, const char *k, const char *v, fe_error *e),  \
      (p, k, v, e), e)                                                                      \
    X(fe_policy_name, const char *, (const fe_policy *p), (p), NULL)                        \
    X(fe_policy_driver, const char *, (const fe_policy *p), (p), NULL)                      \
    X(fe_policy_description, const char *, (const fe_policy *p), (p), NULL)                 \
    X(fe_engine_use, int, (fe_engine *x, fe_policy *p, fe_error *e), (x, p, e), e)          \
    X(fe_engine_plan, fe_plan *, (fe_engine *x, const fe_model *m, fe_error *e), (x, m, e), e) \
    X(fe_plan_to_json, char *, (const fe_plan *p, fe_error *e), (p, e), e)                  \
    X(fe_plan_groups, int, (const fe_plan *p), (p), NULL)                                   \
    X(fe_plan_group_size, int, (const fe_plan *p, int g), (p, g), NULL)                     \
    X(fe_plan_group_node, const char *, (const fe_plan *p, int g, int k), (p, g, k), NULL)  \
    X(fe_plan_decisions, int, (const fe_plan *p), (p), NULL)

#define FE_API_VOID(X)                                                                      \
    X(fe_free, (void *p), (p))                                                              \
    X(fe_engine_free, (fe_engine *x), (x))                                                  \
    X(fe_model_free, (fe_model *m), (m))                                                    \
    X(fe_policy_free, (fe_policy *p), (p))                                                  \
    X(fe_plan_free, (fe_plan *p), (p))

static struct {
#define PTR(name, ret, params, args, err) ret(*name) params;
#define PTR_VOID(name, params, args) void(*name) params;
    FE_API(PTR)
    FE_API_VOID(PTR_VOID)
} core;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[1000];   /* fits in fe_error.message */

static void load(void)
{
    Dl_info info;
    char path[PATH_MAX];
    if (!dladdr((void *)load, &info) || !info.dli_fname) {
        snprintf(failure, sizeof failure, "libfuseeng: cannot locate itself");
        return;
    }
    size_t n = strlen(info.dli_fname);
    const char *slash = strrchr(info.dli_fname, '/');
    size_t dir = slash ? (size_t)(slash + 1 - info.dli_fname) : 0;
    if (n >= sizeof path || dir + sizeof "libfuseeng-core.so" > sizeof path) {
        snprintf(failure, sizeof failure, "libfuseeng: its path is too long");
        return;
    }
    memcpy(path, info.dli_fname, dir);
    memcpy(path + dir, "libfuseeng-core.so", sizeof "libfuseeng-core.so");
#if defined(__SANITIZE_ADDRESS__)
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#else
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
#endif
    if (!h) {
        snprintf(failure, sizeof failure, "libfuseeng: cannot load the engine: %.900s", dlerror());
        return;
    }
#define SYM(name, ...)  /* every X-macro row: name first */                                                                      \
    if (!(*(void **)&core.name = dlsym(h, #name))) {                                        \
        snprintf(failure, sizeof failure, "libfuseeng: the engine lacks %s", #name);        \
        return;                                                                             \
    }
    FE_API(SYM)
    FE_API_VOID(SYM)
}

static int ready(fe_error *e)
{
    pthread_once(&once, load);
    if (!failure[0])
        return 1;
    if (e) {
        e->code = FE_ERUNTIME;
        memcpy(e->message, failure, sizeof failure);
    }
    return 0;
}

/* A function that cannot reach the engine fails like any other: its
 * error says why, and it returns NULL or a nonzero code. */
#define DEF(name, ret, params, args, err)                                                   \
    ret name params                                                                         \
    {                                                                                       \
        if (!ready(err))                                                                    \
            return (ret)_Generic((ret)0, int: FE_ERUNTIME, default: 0);                     \
        return core.name args;                                                              \
    }
#define DEF_VOID(name, params, args)                                                        \
    void name params                                                                        \
    {                                                                                       \
        if (ready(NULL))                                                                    \
            core.name args;                                                                 \
    }

FE_API(DEF)
FE_API_VOID(DEF_VOID)
