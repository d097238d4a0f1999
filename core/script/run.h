/* run.h: one planning run of a policy on a graph, below the ctx.
 *
 * The run owns the Lua side of planning (the graph object, the policy's
 * hooks, the decision log, faults and fallback_on_error) so that drivers
 * are plain C: they propose candidates and merge groups in a partition
 * (partition.h), and ask the run what the policy thinks. ctx.c builds the
 * ctx the hooks receive; planning.c starts runs from an engine and a
 * policy and makes their plans. A run knows neither: it is given what it
 * plans with (fe_run_env), so everything that drives it sits above it. */
#ifndef FE_RUN_H
#define FE_RUN_H

#include <lua.h>

#include "ctx_bench.h"
#include "legality.h"
#include "machine.h"
#include "profile.h"
#include "sandbox.h"

typedef struct fe_run_stats {
    int64_t hook_calls;      /* Lua hooks called (decide, score, plan, ...) */
    double hook_seconds;     /* time spent in them, simulator calls included */
    int64_t sim_calls;       /* ctx:simulate* calls the hooks made */
    double sim_seconds;      /* time in them (part of hook_seconds) */
    int64_t bench_measured;  /* ctx:bench: items timed on the CPU kernels */
    int64_t bench_cached;    /* ctx:bench: answers from the run's kernel cache */
    int64_t bench_fallbacks; /* ctx:bench: calls refused for a spent budget */
    fe_sim_agreement bench_agree;    /* ctx:bench's measurements against the simulator */
    fe_sim_agreement profile_agree;  /* ctx.profile:lookup's profiled times against it */
    double bench_seconds;    /* time spent measuring */
    double bench_cpu_seconds;   /* process CPU time spent measuring (every core) */
    int64_t decide_calls;
    int64_t decide_reused;   /* greedy: refusals of unchanged pairs not asked again */
    int64_t hook_memo;       /* memo = true: answers reused for candidates of a structure
                                asked about before (no hook call) */
    int64_t instructions;    /* Lua instructions used (rounded to the hook interval) */
    int64_t lua_bytes;       /* Lua state's memory at the end */
    int rounds;              /* greedy rounds */
    double seconds;
    char fault[1024];        /* with fallback_on_error = "unfused": the fault the policy's
                                fusions were dropped for ("file:LINE: message"); "" if none */
} fe_run_stats;

/* What a run plans with, borrowed for the run: the engine's and the
 * policy's. */
typedef struct fe_run_env {
    fe_sandbox *sb;
    const fe_machine *machine;
    const fe_profile *profile;   /* for ctx.profile; NULL if none */
    double bench_budget;         /* seconds ctx:bench may spend */
    double bench_item;           /* seconds of repetitions per measured item */
    const char *weights;         /* ctx:bench's safetensors files (NULL: random) */
    const char *inputs;
    int bench_device;            /* FE_DEVICE_*: where ctx:bench measures */
    const char *policy;          /* the policy's name, */
    const char *driver;          /* driver, */
    const char *path;            /* file (or label), */
    int policy_ref;              /* and table (registry ref) */
} fe_run_env;

typedef struct fe_run {
    fe_run_env env;
    const fe_graph *g;
    lua_State *L;
    int gidx, ptab;          /* stack slots: graph object, policy table */
    int ctx;                 /* stack slot of ctx (ctx.c pushes it), 0 before */
    int decide, score;       /* stack slots of the hooks, 0 if absent */
    int default_verdict;     /* the policy's `default` */
    int unfused_on_error;    /* fallback_on_error = "unfused" */
    int auto_tiling;         /* tiling = "auto": unchosen splits are the simulator's */
    fe_part *part;
    struct fe_memo *memo;    /* memo = true: hook answers by structure; else NULL */
    int32_t by;              /* the policy's name, interned in log */
    fe_plan *log;            /* holds the decision log while planning */
    fe_error *err;
    int status;              /* FE_OK, or what stopped the run */
    int disabled;            /* the policy failed and fell back to unfused */
    int32_t *tmp;            /* scratch for candidate members (nnodes) */
    int32_t *parts;          /* scratch: members part by part (nnodes) */
    int32_t *part_len;       /* scratch: part lengths (nnodes) */
    char *say;               /* scratch: a reason with its parts named (reason.h) */
    size_t saycap;
    int32_t *extra_split;    /* group id -> split a driver set (0 = none) */
    int32_t *extra_kernel;   /* group id -> kernel choice a driver set (0 = auto) */
    int64_t pending;         /* candidates the driver has still to decide in this pass, the
                                one being decided included (0: unknown): ctx:bench shares
                                its budget among them */
    fe_run_stats stats;
    double t0;               /* when the run began */
    int top;                 /* the stack's top before the run */
} fe_run;

/* Start a run of env's policy on g: scratch memory, the graph object, the
 * policy table and its hooks on the stack (the table has passed
 * fe_policy_check). FE_OK or FE_ENOMEM with err set; either way end it
 * with fe_run_end. */
int fe_run_begin(fe_run *r, const fe_run_env *env, const fe_graph *g, fe_error *err);
/* End the run: cut the graph object, pop what the run pushed, free its
 * memory; the stats into *stats if not NULL. */
void fe_run_end(fe_run *r, fe_run_stats *stats);

/* Is the run over for the driver? It stopped (r->status), or the policy
 * failed under fallback_on_error = "unfused" and nothing it does counts. */
static inline int fe_run_over(const fe_run *r)
{
    return r->status != FE_OK || r->disabled;
}

/* A fault of the policy in hook `hook` (its function at stack slot fn, or
 * 0): the message is given a place if it has none (fn's definition line,
 * else the policy's file). The run stops (returns -1, r->status set) or,
 * with fallback_on_error = "unfused", the policy is disabled: its fusions
 * are dropped, the fault is logged and reported (returns 0). */
int fe_run_fault(fe_run *r, const char *hook, int fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* fe_sandbox_pcall of a policy hook (function and nargs arguments on the
 * stack), counted and timed in r->stats as a hook call. */
int fe_run_pcall(fe_run *r, int nargs, int nresults, const char *what, fe_error *e);

/* Out of memory in a driver: stops the run; returns -1. */
int fe_run_oom(fe_run *r, const char *where);

/* Call the policy's hook `name` (its function at stack slot fn) as
 * name(self, graph, ctx): FE_OK with its one answer on top, or FE_EINPUT
 * after a fault, reported as fe_run_fault does (nothing pushed). */
int fe_run_graph_hook(fe_run *r, int fn, const char *name);

/* Ask the policy about merging groups gids[0..n) of r->part: 1 fuse, 0 do
 * not (also once the policy is disabled), -1 the run must stop (r->status
 * is set). The decision is logged. */
int fe_run_decide(fe_run *r, const int32_t *gids, int n);

/* The policy's score for merging groups a and b (greedy); without a score
 * hook, the bytes of the tensors the merge would keep on chip. -1 if the
 * run must stop. */
int fe_run_score(fe_run *r, int32_t a, int32_t b, double *score);

/* The split and kernel hooks on each group of plan (the driver's finished
 * partition), until the policy faults: 0, or -1 if the run must stop. */
int fe_run_group_hooks(fe_run *r, fe_plan *plan);

/* The copies hook, once, on plan (the driver's finished partition): the
 * layout copies it asks for go into plan. 0, or -1 if the run must stop;
 * a bad answer is a fault of the policy (fe_run_fault). */
int fe_run_copies_hook(fe_run *r, fe_plan *plan);

/* Log a candidate the engine rejected as illegal (verdict -2). */
void fe_run_reject(fe_run *r, const int32_t *nodes, int n, const char *why);

/* Log a note (ctx:log, driver remarks): verdict -3, no nodes needed. */
void fe_run_note(fe_run *r, const int32_t *nodes, int n, const char *text);
/* Log that the policy keeps node alone (a "do not fuse" decision) with why. */
void fe_run_alone(fe_run *r, int32_t node, const char *why);

/* Move the decision log into plan and give each group the reason of the
 * last accepted decision that shaped it (unless the policy is disabled). */
void fe_run_take_log(fe_run *r, fe_plan *plan);

/* Members of the union of groups gids, sorted, into r->tmp; returns count. */
int32_t fe_run_members(fe_run *r, const int32_t *gids, int n);

/* Room for need items of elem bytes in a driver's list items of capacity
 * *cap (doubling, from first): the list, maybe moved, with *cap updated;
 * NULL if out of memory (items and *cap unchanged). */
void *fe_run_grow(void *items, int64_t *cap, int64_t need, size_t elem, int64_t first);

/* Push t[k] without metamethods; returns its type. */
int fe_run_rawfield(lua_State *L, int t, const char *k);
/* Call method `name` of the object at obj with nargs arguments on top of
 * the stack, protected (objects such as compiled patterns may be fakes
 * made by a script). Leaves nresults; on error returns -1 with nothing
 * left, after fe_run_fault (so the run is over: stopped or disabled). */
int fe_run_method(fe_run *r, int obj, const char *name, int nargs, int nresults, const char *what);

#endif
