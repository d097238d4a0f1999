/* gpu_exec.c: plans on the GPU (gpu_exec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cuda.h"
#include "cuda_group.h"
#include "gpu_exec.h"
#include "paired.h"
#include "tensor_mem.h"
#include "u64map.h"

#define NPLANS 4        /* compiled plans a session keeps (A/B alternates two) */
#define ALIGN 256       /* arena offsets: the allocator's alignment */

typedef struct gplan {
    uint64_t key, use;          /* content hash (0: empty), last use */
    int ngroups, nfused;
    fe_cuda_group **grs;        /* NULL for a view group */
    int32_t *src;               /* view groups: the tensor they alias, else -1 */
    fe_cu_ptr arena, *dev;      /* activations' arena; every tensor's buffer */
    int64_t arena_bytes, temp_bytes;
    fe_cu_event *ev;            /* ngroups + 1 */
    int warm;
    int graph_state;            /* 0 not tried, 1 captured, -1 cannot be (graph_why) */
    int warm_graph;
    fe_cu_graph graph;
    char graph_why[200];
} gplan;

typedef struct fe_gpu_exec {
    const fe_graph *g;
    fe_cu_ptr *statics;         /* inputs and weights on the card, by tensor id */
    fe_cu_ptr fault;            /* set by a kernel that met an index out of range */
    int64_t static_bytes;
    int uploaded;
    int graphs;                 /* plans replay as CUDA graphs (fe_gpu_exec_graphs) */
    uint64_t tick;
    gplan plans[NPLANS];
    fe_cu_ptr *bench;           /* single groups timed alone: every tensor's buffer */
} fe_gpu_exec;

static void plan_clear(gplan *gp)
{
    for (int s = 0; gp->grs && s < gp->ngroups; s++)
        fe_cuda_group_free(gp->grs[s]);
    for (int s = 0; gp->ev && s <= gp->ngroups; s++)
        fe_cuda_event_free(gp->ev[s]);
    fe_cuda_free(gp->arena);
    fe_cuda_graph_free(gp->graph);
    free(gp->grs);
    free(gp->src);
    free(gp->dev);
    free(gp->ev);
    memset(gp, 0, sizeof *gp);
}

static void bench_release(fe_gpu_exec *gx);

static void gpu_free(void *state)
{
    fe_gpu_exec *gx = state;
    if (!gx)
        return;
    bench_release(gx);
    free(gx->bench);
    for (int i = 0; i < NPLANS; i++)
        plan_clear(&gx->plans[i]);
    for (int32_t t = 0; gx->statics && t < gx->g->ntensors; t++)
        fe_cuda_free(gx->statics[t]);
    fe_cuda_free(gx->fault);
    free(gx->statics);
    free(gx);
}

static uint64_t plan_key(const fe_plan *p)
{
    uint64_t h = fe_fnv1a(FE_FNV_SEED, &p->ngroups, sizeof p->ngroups);
    for (int s = 0; s < p->ngroups; s++) {
        const fe_group *gp = &p->groups[s];
        h = fe_fnv1a(h, &gp->n, sizeof gp->n);
        h = fe_fnv1a(h, fe_group_nodes(p, gp), (size_t)gp->n * sizeof(int32_t));
    }
    return h ? h : 1;
}

/* Input or weight t on the card, copied once a session. */
static int upload_static(fe_gpu_exec *gx, fe_exec *ex, int32_t t, fe_error *err)
{
    const fe_tensor *tt = fe_graph_tensor(gx->g, t);
    fe_k_tensor *bufs = fe_exec_buffers(ex);
    int rc = FE_OK;
    if (gx->statics[t])
        return FE_OK;
    if (!bufs[t].data && (rc = fe_exec_fill(ex, t, err)))
        return rc;
    if ((rc = fe_cuda_alloc(&gx->statics[t], (size_t)tt->bytes, err)) == FE_OK)
        rc = fe_cuda_upload(gx->statics[t], bufs[t].data, (size_t)tt->bytes, err);
    gx->static_bytes += tt->bytes;
    return rc;
}

/* Every input and weight, before a plan's first run. */
static int upload_statics(fe_gpu_exec *gx, fe_exec *ex, fe_error *err)
{
    int rc = FE_OK;
    for (int32_t t = 0; !gx->uploaded && t < gx->g->ntensors && rc == FE_OK; t++)
        if (fe_graph_tensor(gx->g, t)->producer < 0)
            rc = upload_static(gx, ex, t, err);
    gx->uploaded = rc == FE_OK;
    return rc;
}

/* ---- the arena ---- */

/* The activations crossing groups, their lifetimes in group steps (graph
 * outputs to the end), views sharing their source's. */
static int plan_arena(fe_gpu_exec *gx, gplan *gp, const fe_plan *p, fe_error *err)
{
    const fe_graph *g = gx->g;
    int G = p->ngroups, n = 0, rc;
    int32_t *def = malloc(((size_t)g->ntensors + 1) * sizeof *def);
    int32_t *last = malloc(((size_t)g->ntensors + 1) * sizeof *last);
    fe_life *lv = NULL;
    if (!def || !last) {
        free(def);
        free(last);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int32_t t = 0; t < g->ntensors; t++)
        def[t] = last[t] = -1;
    for (int s = 0; s < G; s++) {
        const int32_t *ids;
        int k;
        if (gp->src[s] >= 0) {
            const int32_t *nodes = fe_group_nodes(p, &p->groups[s]);
            for (int i = 0; i < p->groups[s].n; i++)
                def[fe_node_output(g, fe_graph_node(g, nodes[i]), 0)] = s;
            if (last[gp->src[s]] < s)
                last[gp->src[s]] = s;
            continue;
        }
        k = fe_cuda_group_inputs(gp->grs[s], &ids);
        for (int i = 0; i < k; i++)
            if (last[ids[i]] < s)
                last[ids[i]] = s;
        k = fe_cuda_group_outputs(gp->grs[s], &ids);
        for (int i = 0; i < k; i++)
            def[ids[i]] = s;
    }
    for (int i = 0; i < g->noutputs; i++)
        last[g->outputs[i]] = G;
    /* a view's readers keep its source alive (chains too: last group first) */
    for (int s = G - 1; s >= 0; s--) {
        if (gp->src[s] < 0)
            continue;
        const int32_t *nodes = fe_group_nodes(p, &p->groups[s]);
        for (int i = 0; i < p->groups[s].n; i++) {
            int32_t t = fe_node_output(g, fe_graph_node(g, nodes[i]), 0);
            if (last[t] > last[gp->src[s]])
                last[gp->src[s]] = last[t];
        }
    }
    lv = malloc(((size_t)g->ntensors + 1) * sizeof *lv);
    if (!lv) {
        free(def);
        free(last);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        if (def[t] < 0 || tt->producer < 0)
            continue;
        int s = def[t];
        if (gp->src[s] >= 0)
            continue;   /* a view: its source's memory */
        lv[n++] = (fe_life){t, s, last[t] < s ? s : last[t], tt->bytes, 0};
    }
    gp->arena_bytes = fe_arena_place(lv, n, ALIGN);
    rc = gp->arena_bytes < 0 ? fe_error_set(err, FE_ENOMEM, "out of memory")
                             : fe_cuda_alloc(&gp->arena, (size_t)gp->arena_bytes, err);
    for (int i = 0; i < n && rc == FE_OK; i++)
        gp->dev[lv[i].t] = gp->arena + (fe_cu_ptr)lv[i].off;
    for (int32_t t = 0; t < g->ntensors; t++)
        if (gx->statics[t])
            gp->dev[t] = gx->statics[t];
    /* views in order: a chain's later links take the pointer its first got */
    for (int s = 0; s < G && rc == FE_OK; s++) {
        if (gp->src[s] < 0)
            continue;
        const int32_t *nodes = fe_group_nodes(p, &p->groups[s]);
        for (int i = 0; i < p->groups[s].n; i++)
            gp->dev[fe_node_output(g, fe_graph_node(g, nodes[i]), 0)] = gp->dev[gp->src[s]];
    }
    free(lv);
    free(def);
    free(last);
    return rc;
}

static int plan_compile(fe_gpu_exec *gx, gplan *gp, const fe_plan *p, uint64_t key, fe_error *err)
{
    const fe_graph *g = gx->g;
    int G = p->ngroups, rc = FE_OK;
    gp->ngroups = G;
    gp->grs = calloc((size_t)G + 1, sizeof *gp->grs);
    gp->src = malloc(((size_t)G + 1) * sizeof *gp->src);
    gp->dev = calloc((size_t)g->ntensors + 1, sizeof *gp->dev);
    gp->ev = calloc((size_t)G + 1, sizeof *gp->ev);
    if (!gp->grs || !gp->src || !gp->dev || !gp->ev)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int s = 0; s < G && rc == FE_OK; s++) {
        const fe_group *grp = &p->groups[s];
        gp->src[s] = fe_exec_view_source(g, fe_group_nodes(p, grp), grp->n);
        if (gp->src[s] >= 0)
            continue;
        gp->grs[s] = fe_cuda_group_new(g, fe_group_nodes(p, grp), grp->n, err);
        if (!gp->grs[s]) {
            rc = err ? err->code : FE_ERUNTIME;
            fe_error_prefix(err, "group %d: ", s);
            break;
        }
        gp->nfused += fe_cuda_group_is_fused(gp->grs[s]) && grp->n > 1;
        int64_t tb = fe_cuda_group_temp_bytes(gp->grs[s]);
        gp->temp_bytes = tb > gp->temp_bytes ? tb : gp->temp_bytes;
    }
    for (int s = 0; s <= G && rc == FE_OK; s++)
        rc = fe_cuda_event_new(&gp->ev[s], err);
    if (rc == FE_OK)
        rc = plan_arena(gx, gp, p, err);
    gp->key = rc == FE_OK ? key : 0;
    return rc;
}

/* The session's compiled copy of p: found, or compiled in the least
 * recently used place. */
static gplan *plan_get(fe_gpu_exec *gx, const fe_plan *p, fe_error *err)
{
    uint64_t key = plan_key(p);
    gplan *lru = &gx->plans[0];
    for (int i = 0; i < NPLANS; i++) {
        gplan *gp = &gx->plans[i];
        if (gp->key == key) {
            gp->use = ++gx->tick;
            return gp;
        }
        if (gp->use < lru->use)
            lru = gp;
    }
    plan_clear(lru);
    if (plan_compile(gx, lru, p, key, err)) {
        plan_clear(lru);
        return NULL;
    }
    lru->use = ++gx->tick;
    return lru;
}

/* Wait for the run and check the fault flag its kernels may have set. */
static int finish(fe_gpu_exec *gx, const fe_graph *g, fe_error *err)
{
    int fault = 0, rc = fe_cuda_sync(err);
    if (rc == FE_OK)
        rc = fe_cuda_download(&fault, gx->fault, sizeof fault, err);
    if (rc == FE_OK && fault)
        rc = fe_error_set(err, FE_EINPUT, "%s: an index of a gather, embedding or aten index is out of range "
                          "on the GPU (give --inputs with valid indices)", g->file ? g->file : "model");
    return rc;
}

/* One run of every group, events before the first and after the last,
 * and with each between every two (a time per group); waits for the end.
 * An event recorded costs the launching thread about as much as a small
 * launch, so a plan of many groups is not timed with them unless asked:
 * its total would count them against it. */
static int run_groups(fe_gpu_exec *gx, gplan *gp, const fe_graph *g, int each, fe_error *err)
{
    int rc = fe_cuda_memset(gx->fault, 0, sizeof(int), err);
    if (rc == FE_OK)
        rc = fe_cuda_record(gp->ev[0], err);
    for (int s = 0; s < gp->ngroups && rc == FE_OK; s++) {
        if (gp->grs[s]) {
            rc = fe_cuda_group_run(gp->grs[s], gp->dev, gx->fault, err);
            if (rc)
                fe_error_prefix(err, "group %d: ", s);
        }
        if (rc == FE_OK && (each || s == gp->ngroups - 1))
            rc = fe_cuda_record(gp->ev[s + 1], err);
    }
    return rc == FE_OK ? finish(gx, g, err) : rc;
}

/* Capture p's launches as a CUDA graph, once: graph_state 1, or -1 with
 * why in the plan when a group has a step on the host (its copies wait
 * for the card, which a graph cannot hold). FE_OK, or the device's error. */
static int capture(fe_gpu_exec *gx, gplan *gp, const fe_plan *p, fe_error *err)
{
    const fe_graph *g = gx->g;
    int rc;
    for (int s = 0; s < gp->ngroups; s++)
        if (gp->grs[s] && fe_cuda_group_host_steps(gp->grs[s])) {
            snprintf(gp->graph_why, sizeof gp->graph_why, "group %d ('%.40s') runs ops on the "
                     "host (%.100s)", s,
                     fe_node_name(g, fe_graph_node(g, fe_group_nodes(p, &p->groups[s])[0])),
                     fe_cuda_group_how(gp->grs[s]));
            gp->graph_state = -1;
            return FE_OK;
        }
    if ((rc = fe_cuda_capture_begin(err)))
        return rc;
    rc = fe_cuda_memset(gx->fault, 0, sizeof(int), err);
    for (int s = 0; s < gp->ngroups && rc == FE_OK; s++)
        if (gp->grs[s])
            rc = fe_cuda_group_run(gp->grs[s], gp->dev, gx->fault, err);
    if (rc) {
        fe_cuda_capture_end(&gp->graph, 0, NULL);
        return rc;
    }
    if ((rc = fe_cuda_capture_end(&gp->graph, 1, err)))
        return rc;
    gp->graph_state = 1;
    return FE_OK;
}

/* One replay of the plan's graph, timed by the events around it. */
static int run_graph(fe_gpu_exec *gx, gplan *gp, const fe_graph *g, fe_error *err)
{
    int rc = fe_cuda_record(gp->ev[0], err);
    if (rc == FE_OK)
        rc = fe_cuda_graph_launch(gp->graph, err);
    if (rc == FE_OK)
        rc = fe_cuda_record(gp->ev[gp->ngroups], err);
    return rc == FE_OK ? finish(gx, g, err) : rc;
}

/* The run's result: the graph's outputs copied back. */
static int result_of(fe_gpu_exec *gx, gplan *gp, const fe_graph *g, fe_exec_result **out,
                     fe_error *err)
{
    fe_exec_result *r = calloc(1, sizeof *r);
    int rc = FE_OK;
    if (!r)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    r->tensors = calloc((size_t)g->noutputs + 1, sizeof *r->tensors);
    r->outputs = calloc((size_t)g->noutputs + 1, sizeof *r->outputs);
    r->how = calloc((size_t)gp->ngroups + 1, sizeof *r->how);
    r->group_ms = calloc((size_t)gp->ngroups + 1, sizeof *r->group_ms);
    if (!r->tensors || !r->outputs || !r->how || !r->group_ms)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < g->noutputs && rc == FE_OK; i++) {
        int32_t t = g->outputs[i];
        const fe_tensor *tt = fe_graph_tensor(g, t);
        void *d = fe_k_tensor_mem((size_t)tt->bytes);
        if (!d) {
            rc = fe_error_set(err, FE_ENOMEM, "out of memory");
            break;
        }
        r->tensors[i] = t;
        r->outputs[i] = fe_k_graph_view(g, t, d);
        r->noutputs = i + 1;
        rc = fe_cuda_download(d, gp->dev[t], (size_t)tt->bytes, err);
    }
    for (int s = 0; s < gp->ngroups && rc == FE_OK; s++) {
        r->how[s] = strdup(gp->grs[s] ? fe_cuda_group_how(gp->grs[s]) : FE_EXEC_VIEW_HOW);
        if (!r->how[s])
            rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        r->ngroups = s + 1;
    }
    r->static_bytes = gx->static_bytes;
    r->peak_bytes = gp->arena_bytes + gp->temp_bytes;
    r->pool_bytes = gp->arena_bytes;
    r->nfused = gp->nfused;
    if (rc) {
        fe_exec_result_free(r);
        return rc;
    }
    *out = r;
    return FE_OK;
}

static int gpu_run(fe_exec *ex, void *state, const fe_plan *p, fe_exec_result **out, double *ms,
                   double *group_ms, fe_error *err)
{
    const fe_graph *g = fe_exec_graph(ex);
    fe_gpu_exec *gx = state;
    int rc = fe_cuda_open(err);   /* makes the context current on this thread */
    if (rc)
        return rc;
    if ((rc = upload_statics(gx, ex, err)))
        return rc;
    gplan *gp = plan_get(gx, p, err);
    if (!gp)
        return err ? err->code : FE_ERUNTIME;
    if (!gp->warm) {   /* the first run pays for loading modules lazily: not timed */
        if ((rc = run_groups(gx, gp, g, 0, err)))
            return rc;
        gp->warm = 1;
    }
    float t = 0;
    double total = 0;
    if (gx->graphs && !out) {
        if (!gp->graph_state && (rc = capture(gx, gp, p, err)))
            return rc;
        if (gp->graph_state < 0)
            return fe_error_set(err, FE_EINPUT, "the plan cannot be replayed as a CUDA graph: %s",
                                gp->graph_why);
        if (!gp->warm_graph) {   /* the first launch uploads the graph: not timed */
            if ((rc = run_graph(gx, gp, g, err)))
                return rc;
            gp->warm_graph = 1;
        }
        if ((rc = run_graph(gx, gp, g, err)) ||
            (rc = fe_cuda_elapsed(gp->ev[0], gp->ev[gp->ngroups], &t, err)))
            return rc;
        for (int s = 0; group_ms && s < gp->ngroups; s++)
            group_ms[s] = 0;   /* one launch: no group has a time of its own */
        *ms = t;
        return FE_OK;
    }
    if ((rc = run_groups(gx, gp, g, group_ms || out, err)) ||
        (rc = fe_cuda_elapsed(gp->ev[0], gp->ev[gp->ngroups], &t, err)))
        return rc;
    total = t;   /* the groups' times, where asked, are its parts */
    for (int s = 0; group_ms && s < gp->ngroups && rc == FE_OK; s++) {
        rc = fe_cuda_elapsed(gp->ev[s], gp->ev[s + 1], &t, err);
        group_ms[s] = t;
    }
    if (rc)
        return rc;
    if (!out) {
        *ms = total;
        return FE_OK;
    }
    rc = result_of(gx, gp, g, out, err);
    if (rc == FE_OK) {
        (*out)->ms = total;
        for (int s = 0; s < gp->ngroups; s++) {
            fe_cuda_elapsed(gp->ev[s], gp->ev[s + 1], &t, NULL);
            (*out)->group_ms[s] = t;
        }
    }
    return rc;
}

int fe_gpu_exec_attach(fe_exec *ex, fe_error *err)
{
    const fe_graph *g = fe_exec_graph(ex);
    int rc = fe_cuda_open(err);
    if (rc)
        return rc;
    fe_gpu_exec *gx = calloc(1, sizeof *gx);
    if (!gx || !(gx->statics = calloc((size_t)g->ntensors + 1, sizeof *gx->statics))) {
        free(gx);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    gx->g = g;
    if ((rc = fe_cuda_alloc(&gx->fault, sizeof(int), err))) {
        gpu_free(gx);
        return rc;
    }
    fe_exec_set_runner(ex, gpu_run, gx, gpu_free);
    return FE_OK;
}

int fe_gpu_exec_is(const fe_exec *ex)
{
    return fe_exec_runner_state(ex, gpu_run) != NULL;
}

int fe_gpu_exec_graphs(fe_exec *ex, int on)
{
    fe_gpu_exec *gx = fe_exec_runner_state(ex, gpu_run);
    if (!gx)
        return 0;
    gx->graphs = on;
    return 1;
}

int fe_gpu_exec_capturable(fe_exec *ex, const fe_plan *p, char *why, size_t n, fe_error *err)
{
    fe_gpu_exec *gx = fe_exec_runner_state(ex, gpu_run);
    int rc;
    if (!gx)
        return fe_error_set(err, FE_ERUNTIME, "cuda: the session does not run on the GPU");
    if ((rc = fe_cuda_open(err)) || (rc = upload_statics(gx, ex, err)))
        return rc;
    gplan *gp = plan_get(gx, p, err);
    if (!gp)
        return err ? err->code : FE_ERUNTIME;
    if (!gp->warm) {
        if ((rc = run_groups(gx, gp, gx->g, 0, err)))
            return rc;
        gp->warm = 1;
    }
    if (!gp->graph_state && (rc = capture(gx, gp, p, err)))
        return rc;
    snprintf(why, n, "%s", gp->graph_state > 0 ? "" : gp->graph_why);
    return FE_OK;
}

/* ---- single groups, timed alone ---- */

struct fe_gpu_group {
    fe_gpu_exec *gx;
    fe_cuda_group *gr;
    fe_cu_event ev[2];
};

static void bench_release(fe_gpu_exec *gx)
{
    for (int32_t t = 0; gx->bench && t < gx->g->ntensors; t++) {
        if (gx->bench[t] && !gx->statics[t])
            fe_cuda_free(gx->bench[t]);
        gx->bench[t] = 0;
    }
}

void fe_gpu_release(fe_exec *ex)
{
    fe_gpu_exec *gx = fe_exec_runner_state(ex, gpu_run);
    if (gx)
        bench_release(gx);
}

int fe_gpu_tensor(fe_exec *ex, int32_t t, int fill, fe_error *err)
{
    fe_gpu_exec *gx = fe_exec_runner_state(ex, gpu_run);
    const fe_tensor *tt = fe_graph_tensor(fe_exec_graph(ex), t);
    int rc;
    if (!gx)
        return fe_error_set(err, FE_ERUNTIME, "cuda: the session does not run on the GPU");
    if (!gx->bench && !(gx->bench = calloc((size_t)gx->g->ntensors + 1, sizeof *gx->bench)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    if (gx->bench[t])
        return FE_OK;
    if (tt->producer < 0) {   /* an input or weight: the session's copy */
        if ((rc = upload_static(gx, ex, t, err)))
            return rc;
        gx->bench[t] = gx->statics[t];
        return FE_OK;
    }
    if ((rc = fe_cuda_alloc(&gx->bench[t], (size_t)tt->bytes, err)) || !fill)
        return rc;
    /* random values by the session's rules, made on the host and copied */
    int had = fe_exec_buffers(ex)[t].data != NULL;
    if ((rc = fe_exec_fill(ex, t, err)) == FE_OK)
        rc = fe_cuda_upload(gx->bench[t], fe_exec_buffers(ex)[t].data, (size_t)tt->bytes, err);
    if (!had)
        fe_exec_release(ex, t);
    return rc;
}

fe_gpu_group *fe_gpu_group_new(fe_exec *ex, const int32_t *nodes, int n, fe_error *err)
{
    fe_gpu_exec *gx = fe_exec_runner_state(ex, gpu_run);
    fe_gpu_group *b;
    if (!gx)
        return fe_error_set(err, FE_ERUNTIME, "cuda: the session does not run on the GPU"), NULL;
    if (fe_cuda_open(err))
        return NULL;
    if (!(b = calloc(1, sizeof *b)))
        return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
    b->gx = gx;
    if (!(b->gr = fe_cuda_group_new(gx->g, nodes, n, err)) || fe_cuda_event_new(&b->ev[0], err) ||
        fe_cuda_event_new(&b->ev[1], err)) {
        fe_gpu_group_free(b);
        return NULL;
    }
    return b;
}

void fe_gpu_group_free(fe_gpu_group *b)
{
    if (!b)
        return;
    fe_cuda_group_free(b->gr);
    fe_cuda_event_free(b->ev[0]);
    fe_cuda_event_free(b->ev[1]);
    free(b);
}

const char *fe_gpu_group_how(const fe_gpu_group *b) { return fe_cuda_group_how(b->gr); }
int fe_gpu_group_is_fused(const fe_gpu_group *b) { return fe_cuda_group_is_fused(b->gr); }

int fe_gpu_group_inputs(const fe_gpu_group *b, const int32_t **ids)
{
    return fe_cuda_group_inputs(b->gr, ids);
}

int fe_gpu_group_outputs(const fe_gpu_group *b, const int32_t **ids)
{
    return fe_cuda_group_outputs(b->gr, ids);
}

void fe_gpu_group_kernels(const fe_gpu_group *b, fe_gpu_kinfo *ki)
{
    const fe_cuda_kernel *ks;
    int n = fe_cuda_group_kernels(b->gr, &ks);
    memset(ki, 0, sizeof *ki);
    ki->kernels = n;
    ki->host_steps = fe_cuda_group_host_steps(b->gr);
    for (int i = 0; i < n; i++) {
        if (ks[i].attr.regs > ki->regs)
            ki->regs = ks[i].attr.regs;
        if (ks[i].attr.local_bytes > ki->spill_bytes)
            ki->spill_bytes = ks[i].attr.local_bytes;
        if (i == 0 || ks[i].attr.blocks_per_sm < ki->blocks_per_sm)
            ki->blocks_per_sm = ks[i].attr.blocks_per_sm;
    }
}

int fe_gpu_group_time(fe_gpu_group *b, double *ms, fe_error *err)
{
    fe_gpu_exec *gx = b->gx;
    float t = 0;
    int rc = fe_cuda_memset(gx->fault, 0, sizeof(int), err);
    if (rc == FE_OK)
        rc = fe_cuda_record(b->ev[0], err);
    if (rc == FE_OK)
        rc = fe_cuda_group_run(b->gr, gx->bench, gx->fault, err);
    if (rc == FE_OK)
        rc = fe_cuda_record(b->ev[1], err);
    if (rc == FE_OK)
        rc = finish(gx, gx->g, err);
    if (rc == FE_OK)
        rc = fe_cuda_elapsed(b->ev[0], b->ev[1], &t, err);
    *ms = t;
    return rc;
}

int fe_gpu_exec_versus_graphs(fe_exec *ex, const fe_plan *base, const fe_plan *plan, double budget,
                              fe_bench_stats *base_st, fe_bench_stats *plan_st, double v[3],
                              char *why, size_t n, fe_error *err)
{
    char w[200];
    const fe_plan *pl[2] = {base, plan};
    int rc;
    why[0] = 0;
    for (int i = 0; i < 2; i++) {
        if ((rc = fe_gpu_exec_capturable(ex, pl[i], w, sizeof w, err)))
            return rc;
        if (w[0]) {
            snprintf(why, n, "the %s cannot be replayed as a CUDA graph: %.180s",
                     i ? "plan" : "unfused plan", w);
            return FE_OK;
        }
    }
    fe_gpu_exec_graphs(ex, 1);
    rc = fe_paired_versus(ex, base, plan, budget, base_st, plan_st, v, err);
    fe_gpu_exec_graphs(ex, 0);
    return rc;
}
