/* run.c: one planning run of a policy on a graph.
 *
 * Note on a run. The run pushes the graph object, the policy table and its
 * hooks on the Lua stack and keeps their slots; ctx (ctx.c) goes above
 * them. The driver then proposes candidates and the run asks the hooks:
 *
 *     driver --candidate--> legality (partition.c) --legal--> decide()
 *        ^                                                        |
 *        +------------------ merge if true <----------------------+
 *
 * Every answer goes to the decision log with the policy's reason. A fault
 * of the policy (a Lua error in a hook, an answer of the wrong type) stops
 * the run with the script's "file:LINE: message" (fallback_on_error =
 * "stop", the default), or, with "unfused", disables the policy: the
 * driver ends, the plan is the unfused plan whatever was decided before
 * (as InfiniCore falls back to the unfused path), and the log and
 * stats.fault say why. The split and kernel hooks run on the finished
 * partition before its plan is kept, so their faults fall back the same
 * way; the decision log moves into the plan only after every hook ran.
 *
 * planning.c drives a run: fe_run_begin, ctx (ctx.c), the driver from
 * drivers.c's table, fe_run_group_hooks, fe_run_take_log, fe_run_end.
 */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "clock.h"
#include "lua_graph.h"
#include "lua_fields.h"
#include "memo.h"
#include "reason.h"
#include "run.h"
#include "sim.h"

/* obj[name](obj, args...) inside a protected call: stack on entry is
 * obj, name, args. */
static int trampoline(lua_State *L)
{
    int n = lua_gettop(L);
    lua_getfield(L, 1, lua_tostring(L, 2));
    lua_insert(L, 1);
    lua_remove(L, 3);
    lua_call(L, n - 1, LUA_MULTRET);
    return lua_gettop(L);
}

int fe_run_pcall(fe_run *r, int nargs, int nresults, const char *what, fe_error *e)
{
    double t0 = fe_clock_s();
    r->stats.hook_calls++;
    int rc = fe_sandbox_pcall(r->env.sb, nargs, nresults, what, e);
    r->stats.hook_seconds += fe_clock_s() - t0;
    return rc;
}

int fe_run_method(fe_run *r, int obj, const char *name, int nargs, int nresults, const char *what)
{
    lua_State *L = r->L;
    obj = lua_absindex(L, obj);
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, trampoline);
    lua_pushvalue(L, obj);
    lua_pushstring(L, name);
    lua_rotate(L, base + 1, 3);   /* trampoline, obj, name below the args */
    fe_error e = {0};
    if (fe_run_pcall(r, nargs + 2, nresults, what, &e) != FE_OK) {
        /* The method itself, if the object holds it, places the message. */
        fe_run_rawfield(L, obj, name);
        fe_run_fault(r, what, lua_gettop(L), "%s", e.message);
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

/* ---- the decision log ---- */

/* A decision whose reason is interned in the log already (fe_plan_str). */
static void log_decision_id(fe_run *r, const int32_t *nodes, int n, int verdict, int32_t reason)
{
    if (fe_plan_log_ids(r->log, nodes, n, verdict, r->by, reason) != FE_OK && r->status == FE_OK)
        fe_run_oom(r, "recording decisions");
}

static void log_decision(fe_run *r, const int32_t *nodes, int n, int verdict, const char *reason)
{
    log_decision_id(r, nodes, n, verdict, fe_plan_str(r->log, reason));
}

int fe_run_oom(fe_run *r, const char *where)
{
    if (r->status == FE_OK) {
        r->status = FE_ENOMEM;
        fe_error_set(r->err, FE_ENOMEM, "out of memory %s", where);
    }
    return -1;
}

void fe_run_reject(fe_run *r, const int32_t *nodes, int n, const char *why)
{
    char msg[600];
    snprintf(msg, sizeof msg, "rejected by the engine: %s", why);
    log_decision(r, nodes, n, -2, msg);
}

void fe_run_alone(fe_run *r, int32_t node, const char *why)
{
    log_decision(r, &node, 1, 0, why);
}

void fe_run_note(fe_run *r, const int32_t *nodes, int n, const char *text)
{
    log_decision_id(r, nodes, n, -3, fe_plan_note_str(r->log, text));
}

/* ---- hooks ---- */

int32_t fe_run_members(fe_run *r, const int32_t *gids, int n)
{
    int32_t k = 0;
    for (int i = 0; i < n; i++)
        k += fe_part_members(r->part, gids[i], r->tmp + k);
    if (n > 1) {
        /* Each list is sorted; an insertion pass is quick for small groups. */
        for (int32_t i = 1; i < k; i++) {
            int32_t x = r->tmp[i], j = i;
            while (j > 0 && r->tmp[j - 1] > x) {
                r->tmp[j] = r->tmp[j - 1];
                j--;
            }
            r->tmp[j] = x;
        }
    }
    return k;
}

void *fe_run_grow(void *items, int64_t *cap, int64_t need, size_t elem, int64_t first)
{
    if (need <= *cap)
        return items;
    int64_t n = *cap > 0 ? *cap : first;
    while (n < need)
        n *= 2;
    void *p = realloc(items, (size_t)n * elem);
    if (p)
        *cap = n;
    return p;
}

/* ---- faults ---- */

/* The fault msg in hook (function at stack slot fn, or 0), about the
 * candidate nodes[0..n) if any: see fe_run_fault. */
static int fault_at(fe_run *r, const char *hook, int fn, const int32_t *nodes, int n, const char *msg)
{
    char placed[sizeof r->stats.fault];
    char place[320];
    size_t plen = strlen(r->env.path);
    if (fe_sandbox_has_place(msg) ||
        (strncmp(msg, r->env.path, plen) == 0 && msg[plen] == ':'))   /* placed by the file alone */
        snprintf(placed, sizeof placed, "%s", msg);
    else if (fn && fe_sandbox_fn_place(r->L, fn, place, sizeof place))
        snprintf(placed, sizeof placed, "%s: %.700s", place, msg);
    else
        snprintf(placed, sizeof placed, "%.300s: %.700s", r->env.path, msg);
    if (!r->unfused_on_error) {
        if (r->status == FE_OK) {
            r->status = FE_EINPUT;
            fe_error_set(r->err, FE_EINPUT, "%s (in %s of policy '%s')", placed, hook, r->env.policy);
        }
        return -1;
    }
    if (!r->disabled) {
        r->disabled = 1;
        snprintf(r->stats.fault, sizeof r->stats.fault, "%s", placed);
        char note[1600];
        snprintf(note, sizeof note, "error in %s: %s; fallback_on_error = \"unfused\": the policy's "
                 "fusions are dropped", hook, placed);
        log_decision(r, nodes, n, 0, note);
    }
    return 0;
}

int fe_run_fault(fe_run *r, const char *hook, int fn, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fault_at(r, hook, fn, NULL, 0, msg);
}

int fe_run_graph_hook(fe_run *r, int fn, const char *name)
{
    lua_State *L = r->L;
    lua_pushvalue(L, fn);
    lua_pushvalue(L, r->ptab);
    lua_pushvalue(L, r->gidx);
    lua_pushvalue(L, r->ctx);
    fe_error e = {0};
    if (fe_run_pcall(r, 3, 1, name, &e) != FE_OK) {
        fe_run_fault(r, name, fn, "%s", e.message);
        return FE_EINPUT;
    }
    return FE_OK;
}

/* Ask decide about the candidate in r->tmp[0..cnt) (parts gids, in r->part_len,
 * r->parts): its verdict (1, 0 or -1 for no opinion) and reason (valid
 * until the stack is reset to top), or -2 after a fault. */
static int ask_decide(fe_run *r, const int32_t *gids, int32_t cnt, int n, int top,
                      const char **reason)
{
    lua_State *L = r->L;
    double t0 = fe_clock_s();
    lua_pushvalue(L, r->decide);
    lua_pushvalue(L, r->ptab);
    fe_lg_push_group_parts(L, r->gidx, r->tmp, cnt, r->part_len, r->parts, gids, n);
    lua_pushvalue(L, r->ctx);
    r->stats.hook_calls++;
    r->stats.decide_calls++;
    fe_error e = {0};
    int rc = fe_sandbox_pcall(r->env.sb, 3, 2, "decide", &e);
    r->stats.hook_seconds += fe_clock_s() - t0;
    if (rc != FE_OK) {
        fault_at(r, "decide", r->decide, r->tmp, cnt, e.message);
        return -2;
    }
    int t = lua_type(L, -2), verdict;
    if (t == LUA_TBOOLEAN) {
        verdict = lua_toboolean(L, -2);
    } else if (t == LUA_TNIL) {
        verdict = -1;
    } else {
        snprintf(e.message, sizeof e.message, "decide returned a %s; it must return true, false or "
                 "nil (and a reason)", lua_typename(L, t));
        lua_settop(L, top);
        fault_at(r, "decide", r->decide, r->tmp, cnt, e.message);
        return -2;
    }
    /* Reasons are strings; numbers convert; anything else is named, not
     * printed (its __tostring is the script's code). */
    *reason = lua_type(L, -1) == LUA_TNIL ? ""
              : lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER
                  ? lua_tostring(L, -1)
                  : fe_sandbox_describe(L, -1);
    return verdict;
}

int fe_run_decide(fe_run *r, const int32_t *gids, int n)
{
    lua_State *L = r->L;
    if (r->disabled)
        return 0;
    int32_t cnt = fe_run_members(r, gids, n);
    int top = lua_gettop(L);
    if (!r->decide) {
        log_decision(r, r->tmp, cnt, 1, "legal; the policy has no decide hook");
        return 1;
    }
    /* group.parts: the groups being merged, each sorted. */
    for (int i = 0, at = 0; i < n; i++) {
        r->part_len[i] = fe_part_members(r->part, gids[i], r->parts + at);
        at += r->part_len[i];
    }
    const char *reason;
    int verdict;
    uint64_t key[2];
    const fe_memo_answer *known = NULL;
    if (r->memo) {
        fe_memo_key(r->memo, FE_MEMO_DECIDE, r->tmp, cnt, r->part_len, r->parts, n, key);
        known = fe_memo_get(r->memo, key);
    }
    int32_t reason_id = -1;   /* the reason interned in the log, for a verdict */
    if (known) {
        verdict = known->value;
        reason = known->reason;
        reason_id = known->reason_id;
        r->stats.hook_memo++;
    } else {
        verdict = ask_decide(r, gids, cnt, n, top, &reason);
        if (verdict == -2) {
            lua_settop(L, top);
            return r->status == FE_OK ? 0 : -1;   /* disabled: nothing fuses */
        }
    }
    /* A reason naming the parts is kept as written (the memo's copy serves
     * every candidate of the structure) and logged with these parts. */
    int named = reason_id == -2 || (!known && fe_reason_names_parts(reason));
    if (verdict >= 0 && reason_id < 0 && !named)
        reason_id = fe_plan_str(r->log, reason);
    if (r->memo && !known &&
        fe_memo_put(r->memo, key, verdict, reason, named ? -2 : reason_id) != FE_OK)
        fe_run_oom(r, "remembering answers");
    if (named) {
        reason = fe_reason_with_parts(r->g, reason, r->part_len, r->parts, n, &r->say,
                                      &r->saycap);
        if (!reason) {
            lua_settop(L, top);
            return fe_run_oom(r, "naming a decision's parts");
        }
        /* Stored, not interned: named reasons are mostly new, and looking
         * each up in a table of a million was most of their price. */
        reason_id = verdict >= 0 ? fe_plan_note_str(r->log, reason) : -1;
    }
    int fuse = verdict < 0 ? r->default_verdict : verdict;
    if (verdict < 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s%sno opinion; default: %s", reason, *reason ? "; " : "",
                 fuse ? "fuse" : "do not fuse");
        log_decision(r, r->tmp, cnt, -1, msg);
    } else {
        log_decision_id(r, r->tmp, cnt, verdict, reason_id);
    }
    lua_settop(L, top);
    return r->status == FE_OK ? fuse : -1;
}

/* Bytes of the tensors flowing between a and b: what fusing them keeps on
 * chip (Inductor's "memory saved" score). */
static double bytes_between(fe_run *r, int32_t a, int32_t b)
{
    const fe_graph *g = r->g;
    double s = 0;
    for (int pass = 0; pass < 2; pass++) {
        int32_t from = pass ? b : a, to = pass ? a : b;
        for (int32_t v = r->part->head[from]; v >= 0; v = r->part->next[v]) {
            const fe_node *n = fe_graph_node(g, v);
            for (int k = 0; k < n->nout; k++) {
                const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
                for (int32_t c = 0; c < t->ncons; c++)
                    if (r->part->gid[fe_tensor_consumer(g, t, c)] == to) {
                        s += (double)t->bytes;
                        break;
                    }
            }
        }
    }
    return s;
}

int fe_run_score(fe_run *r, int32_t a, int32_t b, double *score)
{
    lua_State *L = r->L;
    if (r->disabled) {
        *score = 0;
        return 0;
    }
    if (!r->score) {
        *score = bytes_between(r, a, b);
        return 0;
    }
    int top = lua_gettop(L);
    lua_pushvalue(L, r->score);
    lua_pushvalue(L, r->ptab);
    int32_t na = fe_part_members(r->part, a, r->tmp);
    fe_lg_push_part(L, r->gidx, r->tmp, na, a);
    int32_t nb = fe_part_members(r->part, b, r->tmp);
    fe_lg_push_part(L, r->gidx, r->tmp, nb, b);
    lua_pushvalue(L, r->ctx);
    r->stats.hook_calls++;
    fe_error e = {0};
    double t0 = fe_clock_s();
    int rc = fe_sandbox_pcall(r->env.sb, 4, 1, "score", &e);
    r->stats.hook_seconds += fe_clock_s() - t0;
    *score = 0;
    if (rc != FE_OK)
        return fault_at(r, "score", r->score, NULL, 0, e.message);
    /* A number, not a string that looks like one: "12" > "9" is false. */
    double s = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
    if (isnan(s)) {
        snprintf(e.message, sizeof e.message, "score returned %s; it must return a number",
                 lua_type(L, -1) == LUA_TNUMBER ? "NaN" : lua_pushfstring(L, "a %s", luaL_typename(L, -1)));
        lua_settop(L, top);
        return fault_at(r, "score", r->score, NULL, 0, e.message);
    }
    lua_settop(L, top);
    *score = s;
    return 0;
}

/* ---- setting up ---- */

/* Raw field reads: policy tables come from scripts, and C never runs a
 * script's metamethods outside a protected call. */
int fe_run_rawfield(lua_State *L, int t, const char *k)
{
    t = lua_absindex(L, t);
    lua_pushstring(L, k);
    return lua_rawget(L, t);
}

/* Is the string field k of the table at t equal to word? */
static int field_is(lua_State *L, int t, const char *k, const char *word)
{
    int yes = fe_run_rawfield(L, t, k) == LUA_TSTRING && strcmp(lua_tostring(L, -1), word) == 0;
    lua_pop(L, 1);
    return yes;
}

int fe_run_begin(fe_run *r, const fe_run_env *env, const fe_graph *g, fe_error *err)
{
    lua_State *L = fe_sandbox_L(env->sb);
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    *r = (fe_run){.env = *env, .g = g, .L = L, .err = err, .t0 = fe_clock_s()};
    r->part = fe_part_new(g, err);
    r->log = fe_plan_unfused(g, err);
    r->tmp = malloc(n * sizeof *r->tmp);
    r->parts = malloc(n * sizeof *r->parts);
    r->part_len = malloc(n * sizeof *r->part_len);
    r->extra_split = calloc(n, sizeof *r->extra_split);
    r->extra_kernel = calloc(n, sizeof *r->extra_kernel);
    if (!r->part || !r->log || !r->tmp || !r->parts || !r->part_len || !r->extra_split ||
        !r->extra_kernel)
        return fe_error_set(err, FE_ENOMEM, "out of memory starting a run");
    r->by = fe_plan_str(r->log, env->policy);
    r->top = lua_gettop(L);
    fe_lg_push_graph(L, g);
    r->gidx = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, env->policy_ref);
    r->ptab = lua_gettop(L);
    r->decide = fe_run_rawfield(L, r->ptab, "decide") == LUA_TFUNCTION ? lua_gettop(L) : 0;
    r->score = fe_run_rawfield(L, r->ptab, "score") == LUA_TFUNCTION ? lua_gettop(L) : 0;
    r->default_verdict = fe_run_rawfield(L, r->ptab, "default") == LUA_TBOOLEAN && lua_toboolean(L, -1);
    lua_pop(L, 1);
    r->unfused_on_error = field_is(L, r->ptab, "fallback_on_error", "unfused");
    r->auto_tiling = field_is(L, r->ptab, "tiling", "auto");
    if (fe_run_rawfield(L, r->ptab, "memo") == LUA_TBOOLEAN && lua_toboolean(L, -1) &&
        !(r->memo = fe_memo_new(g, err))) {
        lua_pop(L, 1);
        return FE_ENOMEM;
    }
    lua_pop(L, 1);
    return FE_OK;
}

void fe_run_end(fe_run *r, fe_run_stats *stats)
{
    if (r->gidx) {
        fe_lg_detach(r->L, r->gidx);
        lua_settop(r->L, r->top);
    }
    r->stats.seconds = fe_clock_s() - r->t0;
    r->stats.instructions = fe_sandbox_used(r->env.sb);
    r->stats.lua_bytes = fe_sandbox_memory(r->env.sb);
    if (stats)
        *stats = r->stats;
    fe_plan_free(r->log);
    fe_part_free(r->part);
    fe_memo_free(r->memo);
    free(r->tmp);
    free(r->say);
    free(r->parts);
    free(r->part_len);
    free(r->extra_split);
    free(r->extra_kernel);
}

/* ---- the final groups ---- */

/* One split or kernel hook (at stack slot fn) on group gr: its answer
 * goes into gr; a fault is fe_run_fault's (-1 stops the run). With a memo,
 * a group of a structure asked about before gets that answer. */
static int group_hook(fe_run *r, const fe_plan *plan, fe_group *gr, int fn, const char *name)
{
    lua_State *L = r->L;
    int is_split = strcmp(name, "split") == 0;
    uint64_t key[2];
    if (r->memo) {
        fe_memo_key(r->memo, is_split ? FE_MEMO_SPLIT : FE_MEMO_KERNEL, fe_group_nodes(plan, gr),
                    gr->n, NULL, NULL, 1, key);
        const fe_memo_answer *known = fe_memo_get(r->memo, key);
        if (known) {
            r->stats.hook_memo++;
            if (is_split && known->value > 0)
                gr->split = known->value;
            else if (!is_split && known->value >= 0)
                gr->kernel = known->value;
            return 0;
        }
    }
    lua_pushvalue(L, fn);
    lua_pushvalue(L, r->ptab);
    fe_lg_push_group(L, r->gidx, fe_group_nodes(plan, gr), gr->n);
    lua_pushvalue(L, r->ctx);
    fe_error e = {0};
    if (fe_run_pcall(r, 3, 1, name, &e) != FE_OK)
        return fault_at(r, name, fn, fe_group_nodes(plan, gr), gr->n, e.message);
    int rc = 0, value = is_split ? 0 : -1;
    if (lua_isnil(L, -1)) {
        /* no choice: the default stands */
    } else if (is_split) {
        lua_Integer k;
        if (fe_lf_integer(L, -1, &k) && k >= 1 && k <= FE_SIM_MAX_SPLIT)
            gr->split = value = (int32_t)k;
        else
            rc = fe_run_fault(r, name, fn, "split returned %s; it must return " FE_SIM_SPLIT_RULE " (or nil)",
                              fe_sandbox_describe(L, -1));
    } else {
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        int id = k ? fe_k_choice_find(k) : -1;
        if (id >= 0)
            gr->kernel = value = id;
        else
            rc = fe_run_fault(r, name, fn, "kernel returned %s; it must return one of: %s (or nil)",
                              fe_sandbox_describe(L, -1), fe_k_choice_names());
    }
    lua_pop(L, 1);
    if (rc == 0 && !fe_run_over(r) && r->memo && fe_memo_put(r->memo, key, value, NULL, -1) != FE_OK)
        rc = fe_run_oom(r, "remembering answers");
    return rc;
}

int fe_run_group_hooks(fe_run *r, fe_plan *plan)
{
    lua_State *L = r->L;
    int split = fe_run_rawfield(L, r->ptab, "split") == LUA_TFUNCTION ? lua_gettop(L) : 0;
    int kernel = fe_run_rawfield(L, r->ptab, "kernel") == LUA_TFUNCTION ? lua_gettop(L) : 0;
    int rc = 0;
    for (int32_t gi = 0; gi < plan->ngroups && rc == 0 && !fe_run_over(r); gi++) {
        if (split)
            rc = group_hook(r, plan, &plan->groups[gi], split, "split");
        if (kernel && rc == 0 && !fe_run_over(r))
            rc = group_hook(r, plan, &plan->groups[gi], kernel, "kernel");
    }
    lua_settop(L, r->ctx);
    return rc;
}

/* ---- layout copies ---- */

/* Item i of the copies hook's answer (at stack top): a tensor object or
 * name, or {tensor = ..., reason = "..."}; added to plan, or a fault. */
static int copy_item(fe_run *r, fe_plan *plan, int fn, int i)
{
    lua_State *L = r->L;
    const char *reason = NULL;
    int item = lua_gettop(L);
    if (lua_type(L, item) == LUA_TTABLE && !lua_getmetatable(L, item)) {
        int rt = lua_getfield(L, item, "reason");
        if (rt == LUA_TSTRING)
            reason = lua_tostring(L, -1);
        else if (rt != LUA_TNIL)
            return fe_run_fault(r, "copies", fn, "copies: item %d: reason is %s; it must be a "
                                "string (or nil)", i, fe_sandbox_describe(L, -1));
        lua_getfield(L, item, "tensor");
        item = lua_gettop(L);
    } else if (lua_type(L, item) == LUA_TTABLE) {
        lua_pop(L, 1);   /* the metatable: a tensor object */
    }
    int32_t t = fe_lg_to_tensor(L, item, r->g);
    if (t < 0)
        return fe_run_fault(r, "copies", fn, "copies: item %d is %s; it must be a tensor of the "
                            "model (object or name), or {tensor = ..., reason = \"...\"}", i,
                            fe_sandbox_describe(L, item));
    const char *why = fe_plan_copy_refusal(plan, t);
    if (why)
        return fe_run_fault(r, "copies", fn, "copies: item %d: tensor '%s' %s", i,
                            fe_tensor_name(r->g, fe_graph_tensor(r->g, t)), why);
    if (fe_plan_add_copy(plan, t, reason) != FE_OK)
        return fe_run_oom(r, "recording layout copies");
    return 0;
}

int fe_run_copies_hook(fe_run *r, fe_plan *plan)
{
    lua_State *L = r->L;
    if (fe_run_rawfield(L, r->ptab, "copies") != LUA_TFUNCTION) {
        lua_settop(L, r->ctx);
        return 0;
    }
    int fn = lua_gettop(L);
    if (fe_run_graph_hook(r, fn, "copies") != FE_OK) {
        lua_settop(L, r->ctx);
        return -1;
    }
    int rc = 0, list = lua_gettop(L);
    if (!lua_isnil(L, list) && lua_type(L, list) != LUA_TTABLE) {
        rc = fe_run_fault(r, "copies", fn, "copies returned %s; it must return a list of tensors "
                          "(or nil)", fe_sandbox_describe(L, list));
    } else if (!lua_isnil(L, list)) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, list);
        for (lua_Integer i = 1; i <= n && rc == 0 && !fe_run_over(r); i++) {
            lua_rawgeti(L, list, i);
            rc = copy_item(r, plan, fn, (int)i);
            lua_settop(L, list);
        }
    }
    lua_settop(L, r->ctx);
    return rc;
}

/* Give each group the reason of the last accepted decision that shaped it. */
static void group_reasons(fe_run *r, fe_plan *plan)
{
    for (int32_t d = 0; d < plan->ndecisions; d++) {
        const fe_decision *dc = &plan->decisions[d];
        if (dc->verdict != 1 && !(dc->verdict == -1 && r->default_verdict))
            continue;
        if (dc->n < 1)
            continue;
        int32_t gi = plan->group_of[plan->dnodes[dc->off]];
        plan->groups[gi].reason = dc->reason;
    }
}

/* Reasons are interned in the log's string table, so the plan takes that
 * table too. */
void fe_run_take_log(fe_run *r, fe_plan *plan)
{
    fe_strtab *s = plan->strs;
    plan->strs = r->log->strs;
    r->log->strs = s;
    plan->decisions = r->log->decisions;
    plan->ndecisions = r->log->ndecisions;
    plan->cap_decisions = r->log->cap_decisions;
    plan->dnodes = r->log->dnodes;
    plan->ndnodes = r->log->ndnodes;
    plan->cap_dnodes = r->log->cap_dnodes;
    r->log->decisions = NULL;
    r->log->dnodes = NULL;
    r->log->ndecisions = 0;
    /* ctx:optimal's records (their cost names are in the table too). */
    plan->nsolves = r->log->nsolves;
    plan->solves = r->log->solves;
    plan->solve_nodes = r->log->solve_nodes;
    plan->solve_group = r->log->solve_group;
    r->log->nsolves = 0;
    r->log->solves = NULL;
    r->log->solve_nodes = r->log->solve_group = NULL;
    /* The copies' reasons were interned in the table the plan gave up. */
    for (int32_t i = 0; i < plan->ncopies; i++)
        if (plan->copies[i].reason >= 0)
            plan->copies[i].reason = fe_plan_str(plan, fe_strtab_str(s, plan->copies[i].reason));
    if (!r->disabled)
        group_reasons(r, plan);
}
