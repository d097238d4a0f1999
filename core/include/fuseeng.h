/* fuseeng.h: the public C API of fuseeng, a Lua-scriptable operator-fusion
 * policy engine.
 *
 * An engine holds a sandboxed Lua state in which policies are loaded,
 * combined and swapped; a model is a validated graph; running the engine's
 * active policy on a model gives a plan, which can be written as JSON.
 *
 *     fe_error err;
 *     fe_engine *e = fe_engine_new(NULL, &err);
 *     fe_model *m = fe_model_load_file("llama2_7b_layer.json", NULL, &err);
 *     fe_policy *p = fe_engine_load_policy(e, "static_rules", &err);
 *     fe_engine_use(e, p, &err);
 *     fe_plan *plan = fe_engine_plan(e, m, &err);
 *     char *json = fe_plan_to_json(plan, &err);
 *     ... fe_free(json); fe_plan_free(plan); fe_policy_free(p);
 *     fe_model_free(m); fe_engine_free(e);
 *
 * The block between the FE_API_BEGIN and FE_API_END lines holds only plain
 * C declarations (no macros, no inline code), so LuaJIT can feed it to
 * ffi.cdef unchanged. Ownership: every pointer returned by a function is
 * owned by the object it came from (and valid until that object is freed)
 * unless the comment says "caller frees", in which case the fe_*_free or
 * fe_free function named there releases it. Functions that can fail take
 * an fe_error (which may be NULL) and return NULL or a nonzero code.
 */
#ifndef FUSEENG_H
#define FUSEENG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FE_API_BEGIN */

/* Error codes. The CLI exits with 2 for FE_EINPUT and 1 for the others. */
enum {
    FE_OK = 0,
    FE_ERUNTIME = 1,   /* the engine failed while doing what was asked */
    FE_EINPUT = 2,     /* bad input: model, plan, policy, option or usage */
    FE_ENOMEM = 3,     /* an allocation failed */
    FE_ECHECK = 4      /* a numeric check failed (fused != reference) */
};

/* Every call that can fail takes an fe_error; on failure it holds the code
 * and one message naming the file, the place and what to fix. */
typedef struct fe_error {
    int code;
    char message[1024];
} fe_error;

typedef struct fe_engine fe_engine;   /* Lua state, policies, machine */
typedef struct fe_model fe_model;     /* a validated graph */
typedef struct fe_policy fe_policy;   /* a policy loaded in an engine */
typedef struct fe_plan fe_plan;       /* groups, decisions, figures */

/* Engine options; zero means the default. */
typedef struct fe_engine_options {
    int64_t max_instructions;   /* Lua instructions per run (2e9) */
    int64_t max_memory;         /* bytes the Lua state may hold (512 MiB) */
    const char *home;           /* directory with lua/ and policies/ (found) */
    const char *machine;        /* machine name or file (gcu) */
    double bench_budget;        /* seconds ctx:bench may measure per run (60) */
    double max_seconds;         /* wall-clock seconds per run, loading included (300); see
                                   the README's sandbox section for what it cannot stop */
} fe_engine_options;

/* Version string of the library, e.g. "0.1.0"; static storage. */
const char *fe_version(void);

/* Release memory returned as "caller frees with fe_free". */
void fe_free(void *p);

/* A new engine (caller frees with fe_engine_free), or NULL. opts may be NULL. */
fe_engine *fe_engine_new(const fe_engine_options *opts, fe_error *err);
/* Frees the engine and its Lua state. Free its policies and plans first. */
void fe_engine_free(fe_engine *e);

/* Load a model file or a JSON buffer; dims is NULL or "B=8,S=4096" (dim
 * overrides). Caller frees with fe_model_free. label names a buffer in
 * messages. */
fe_model *fe_model_load_file(const char *path, const char *dims, fe_error *err);
fe_model *fe_model_load_buffer(const char *json, size_t len, const char *label,
                               const char *dims, fe_error *err);
void fe_model_free(fe_model *m);
/* The model's name; owned by the model. */
const char *fe_model_name(const fe_model *m);
int fe_model_nodes(const fe_model *m);

/* Load a policy by name (resolved in policies/) or path, or from Lua
 * source. Caller frees with fe_policy_free (before the engine). */
fe_policy *fe_engine_load_policy(fe_engine *e, const char *name_or_path, fe_error *err);
fe_policy *fe_engine_load_policy_buffer(fe_engine *e, const char *source, size_t len,
                                        const char *label, fe_error *err);
/* Combine policies: how is "all", "any", "chain" or "vote". The result is
 * a new policy (caller frees); the inputs stay usable. */
fe_policy *fe_engine_combine(fe_engine *e, const char *how, fe_policy *const *policies,
                             int n, fe_error *err);
/* Override a parameter ("margin", "0.2"), typed by its default. */
int fe_policy_set_param(fe_policy *p, const char *key, const char *value, fe_error *err);
/* Name, driver and one-line description; owned by the policy. */
const char *fe_policy_name(const fe_policy *p);
const char *fe_policy_driver(const fe_policy *p);
const char *fe_policy_description(const fe_policy *p);
void fe_policy_free(fe_policy *p);

/* Make p the engine's active policy (swapping out the previous one). */
int fe_engine_use(fe_engine *e, fe_policy *p, fe_error *err);

/* Run the active policy on m. The plan refers to m: free the plan first.
 * Caller frees with fe_plan_free. */
fe_plan *fe_engine_plan(fe_engine *e, const fe_model *m, fe_error *err);

/* The plan as fuseeng.plan/1 JSON; caller frees with fe_free. */
char *fe_plan_to_json(const fe_plan *p, fe_error *err);
int fe_plan_groups(const fe_plan *p);
int fe_plan_group_size(const fe_plan *p, int group);
/* Name of the k-th node of a group; owned by the plan's model. */
const char *fe_plan_group_node(const fe_plan *p, int group, int k);
int fe_plan_decisions(const fe_plan *p);
void fe_plan_free(fe_plan *p);

/* FE_API_END */

#ifdef __cplusplus
}
#endif

#endif
