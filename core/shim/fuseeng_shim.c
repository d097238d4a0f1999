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

#include "fuseeng_cli.h"

/* Every call of the public headers but those returning void (FE_API_VOID),
 * fuseeng.h's first: name, return type, parameter list, argument list, the
 * fe_error argument. tests/cli/embedding.sh checks that libfuseeng.so
 * exports every call the headers declare. */
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
    X(fe_policy_source, const char *, (const fe_policy *p), (p), NULL)                      \
    X(fe_engine_use, int, (fe_engine *x, fe_policy *p, fe_error *e), (x, p, e), e)          \
    X(fe_engine_plan, fe_plan *, (fe_engine *x, const fe_model *m, fe_error *e), (x, m, e), e) \
    X(fe_plan_to_json, char *, (const fe_plan *p, fe_error *e), (p, e), e)                  \
    X(fe_plan_groups, int, (const fe_plan *p), (p), NULL)                                   \
    X(fe_plan_group_size, int, (const fe_plan *p, int g), (p, g), NULL)                     \
    X(fe_plan_group_node, const char *, (const fe_plan *p, int g, int k), (p, g, k), NULL)  \
    X(fe_plan_decisions, int, (const fe_plan *p), (p), NULL)                                \
    X(fe_escape, size_t, (char *d, size_t n, const char *s, int k), (d, n, s, k), NULL)     \
    X(fe_engine_set_machine, int, (fe_engine *x, const char *m, fe_error *e), (x, m, e), e) \
    X(fe_engine_machine, const char *, (const fe_engine *x), (x), NULL)                     \
    X(fe_model_load_dims, fe_model *,                                                       \
      (const char *p, int n, const char *const *k, const int64_t *v, fe_error *e),          \
      (p, n, k, v, e), e)                                                                   \
    X(fe_engine_simulate, fe_report *, (fe_engine *x, const fe_plan *p, fe_error *e), (x, p, e), e) \
    X(fe_plan_execute, fe_result *, (const fe_plan *p, const fe_execute_options *o, fe_error *e), \
      (p, o, e), e)                                                                         \
    X(fe_kernel_register, int, (const char *n, fe_kernel_fn f, void *u, fe_error *e),      \
      (n, f, u, e), e)                                                                      \
    X(fe_kernel_load, int, (const char *p, fe_error *e), (p, e), e)                         \
    X(fe_result_ok, int, (const fe_result *x), (x), NULL)                                   \
    X(fe_result_check, int, (const fe_result *x, fe_error *e), (x, e), e)                   \
    X(fe_result_ms, double, (const fe_result *x, int u), (x, u), NULL)                      \
    FE_API_CLI(X)

/* fuseeng_cli.h's: the rest of what the fuseeng command does. */
#define FE_API_CLI(X)                                                                       \
    X(fe_engine_home, const char *, (const fe_engine *x), (x), NULL)                        \
    X(fe_dimarg_parse, int, (const char *t, size_t n, fe_dimarg *d, fe_error *e), (t, n, d, e), e) \
    X(fe_engine_set_profile, int, (fe_engine *x, const char *p, fe_error *e), (x, p, e), e) \
    X(fe_engine_machine_description, const char *, (const fe_engine *x), (x), NULL)         \
    X(fe_model_check_data, int,                                                             \
      (const fe_model *m, const char *w, const char *i, const char *o, fe_error *e),        \
      (m, w, i, o, e), e)                                                                   \
    X(fe_model_dim, int64_t, (const fe_model *m, const char *n), (m, n), NULL)              \
    X(fe_model_file, const char *, (const fe_model *m), (m), NULL)                          \
    X(fe_model_format, char *, (const fe_model *m, int f, fe_error *e), (m, f, e), e)       \
    X(fe_ops_format, char *, (const char *o, fe_error *e), (o, e), e)                       \
    X(fe_import_onnx, int,                                                                  \
      (const char *p, const char *o, const fe_import_options *x, char **n, fe_error *e),    \
      (p, o, x, n, e), e)                                                                   \
    X(fe_policy_plan, fe_plan *, (fe_policy *p, const fe_model *m, fe_plan_stats *s, fe_error *e), \
      (p, m, s, e), e)                                                                      \
    X(fe_model_unfused, fe_plan *, (const fe_model *m, fe_error *e), (m, e), e)             \
    X(fe_plan_policy, const char *, (const fe_plan *p), (p), NULL)                          \
    X(fe_plan_format, char *,                                                               \
      (const fe_plan *p, const fe_plan_stats *s, const fe_report *r, const fe_result *x, int f, \
       fe_error *e), (p, s, r, x, f, e), e)                                                 \
    X(fe_write_file, int, (const char *p, const char *w, const char *t, fe_error *e),      \
      (p, w, t, e), e)                                                                      \
    X(fe_saved_plan_read, fe_saved_plan *,                                                  \
      (fe_engine *x, const char *p, const char *m, const fe_read_options *o, fe_error *e),  \
      (x, p, m, o, e), e)                                                                   \
    X(fe_saved_plan_model, fe_model *, (const fe_saved_plan *s), (s), NULL)                 \
    X(fe_saved_plan_plan, fe_plan *, (const fe_saved_plan *s), (s), NULL)                   \
    X(fe_saved_plan_made_for, const char *, (const fe_saved_plan *s), (s), NULL)            \
    X(fe_saved_plan_bucket, int64_t, (const fe_saved_plan *s, const char **d), (s, d), NULL) \
    X(fe_saved_plan_format, char *, (const fe_saved_plan *s, int f, fe_error *e), (s, f, e), e) \
    X(fe_report_format, char *,                                                             \
      (const fe_report *r, const fe_saved_plan *s, int f, fe_error *e), (r, s, f, e), e)    \
    X(fe_dispatch_new, fe_dispatch *, (const char *d, fe_error *e), (d, e), e)              \
    X(fe_dispatch_add, int,                                                                 \
      (fe_dispatch *d, int64_t v, const fe_plan *p, const fe_report *r, fe_error *e),       \
      (d, v, p, r, e), e)                                                                   \
    X(fe_dispatch_format, char *, (const fe_dispatch *d, int f, fe_error *e), (d, f, e), e) \
    X(fe_result_save_outputs, int, (const fe_result *x, const char *p, fe_error *e),        \
      (x, p, e), e)                                                                         \
    X(fe_result_format, char *, (const fe_result *x, int f, fe_error *e), (x, f, e), e)     \
    X(fe_plan_time, fe_timing *, (const fe_plan *p, const fe_timing_options *o, fe_error *e), \
      (p, o, e), e)                                                                         \
    X(fe_timing_format, char *, (const fe_timing *t, const char *l, int f, fe_error *e),   \
      (t, l, f, e), e)                                                                      \
    X(fe_timing_write_profile, int,                                                         \
      (const fe_timing *t, const char *p, fe_profile_info *i, fe_error *e), (t, p, i, e), e) \
    X(fe_threads, const char *, (void), (), NULL)                                           \
    X(fe_engine_ab, fe_ab *, (fe_engine *x, const fe_ab_options *o, fe_error *e), (x, o, e), e) \
    X(fe_ab_format, char *, (const fe_ab *a, int f, fe_error *e), (a, f, e), e)             \
    X(fe_ab_wrong, int, (const fe_ab *a), (a), NULL)                                        \
    X(fe_ab_faults, int, (const fe_ab *a), (a), NULL)                                       \
    X(fe_ab_failed, int, (const fe_ab *a), (a), NULL)                                       \
    X(fe_ab_fault, const char *, (const fe_ab *a, int i), (a, i), NULL)                     \
    X(fe_ab_suite_new, fe_ab_suite *,                                                       \
      (fe_engine *x, const fe_ab_suite_options *o, fe_error *e), (x, o, e), e)              \
    X(fe_ab_suite_read, fe_ab_suite *,                                                      \
      (fe_engine *x, const char *p, const fe_ab_suite_options *o, fe_error *e), (x, p, o, e), e) \
    X(fe_ab_suite_rows, int, (const fe_ab_suite *s), (s), NULL)                             \
    X(fe_ab_suite_cols, int, (const fe_ab_suite *s), (s), NULL)                             \
    X(fe_engine_ab_suite, fe_ab *,                                                          \
      (fe_engine *x, const fe_ab_suite *s, const fe_ab_run_options *o, fe_error *e),        \
      (x, s, o, e), e)                                                                      \
    X(fe_ab_merge, fe_ab *, (int n, const char *const *p, fe_error *e), (n, p, e), e)       \
    X(fe_engine_ab_diff, char *,                                                            \
      (fe_engine *x, const char *m, const char *d, fe_policy *a, fe_policy *b, int f,       \
       fe_error *e), (x, m, d, a, b, f, e), e)                                              \
    X(fe_script_run, int,                                                                   \
      (const char *p, int n, const char *const *a, const fe_engine_options *l, int *s,     \
       fe_error *e), (p, n, a, l, s, e), e)                                                 \
    X(fe_ab_write_traces, int, (const fe_ab *a, const char *d, fe_error *e), (a, d, e), e)  \
    X(fe_build_commit, const char *, (void), (), NULL)                                      \
    X(fe_did_you_mean, const char *, (const char *k, const char *l, char *h, size_t n),     \
      (k, l, h, n), NULL)                                                                   \
    X(fe_engine_machine_names, const char *, (const fe_engine *x, char *o, size_t n),       \
      (x, o, n), NULL)                                                                      \
    X(fe_timing_interrupted, int, (const fe_timing *t), (t), NULL)                          \
    X(fe_ab_interrupted, int, (const fe_ab *a), (a), NULL)                                  \
    X(fe_calibrate_machine, char *, (const fe_calibrate_options *o, fe_error *e), (o, e), e) \
    X(fe_ab_fidelity, fe_fidelity *, (const fe_ab *a, fe_error *e), (a, e), e)              \
    X(fe_fidelity_format, char *, (const fe_fidelity *f, int k, fe_error *e), (f, k, e), e)

#define FE_API_VOID(X)                                                                      \
    X(fe_free, (void *p), (p))                                                              \
    X(fe_engine_free, (fe_engine *x), (x))                                                  \
    X(fe_model_free, (fe_model *m), (m))                                                    \
    X(fe_policy_free, (fe_policy *p), (p))                                                  \
    X(fe_plan_free, (fe_plan *p), (p))                                                      \
    X(fe_error_prepend, (fe_error *e, const char *t), (e, t))                               \
    X(fe_engine_set_limits, (fe_engine *x, const fe_engine_options *o), (x, o))             \
    X(fe_saved_plan_free, (fe_saved_plan *s), (s))                                          \
    X(fe_dispatch_free, (fe_dispatch *d), (d))                                              \
    X(fe_report_figures, (const fe_report *r, int u, fe_figures *o), (r, u, o))             \
    X(fe_report_free, (fe_report *r), (r))                                                  \
    X(fe_result_free, (fe_result *x), (x))                                                  \
    X(fe_timing_free, (fe_timing *t), (t))                                                  \
    X(fe_ab_free, (fe_ab *a), (a))                                                          \
    X(fe_ab_suite_free, (fe_ab_suite *s), (s))                                              \
    X(fe_ab_set_command, (fe_ab *a, const char *c), (a, c))                                 \
    X(fe_ab_link_traces, (fe_ab *a, const char *d), (a, d))                                 \
    X(fe_progress_set_quiet, (int q), (q))                                                  \
    X(fe_progress_catch_ctrl_c, (void), ())                                                 \
    X(fe_fidelity_summarise, (const fe_fidelity *f, fe_fidelity_summary *o), (f, o))        \
    X(fe_fidelity_free, (fe_fidelity *f), (f))                                              \
    X(fe_watchdog, (void), ())

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
