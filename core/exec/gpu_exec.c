/* gpu_exec.c: plans on the GPU (gpu_exec.h). */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cuda.h"
#include "cuda_group.h"
#include "gpu_exec.h"
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
} gplan;

typedef struct fe_gpu_exec {
    const fe_graph *g;
    fe_cu_ptr *statics;         /* inputs and weights on the card, by tensor id */
    fe_cu_ptr fault;            /* set by a kernel that met an index out of range */
    int64_t static_bytes;
    int uploaded;
    uint64_t tick;
    gplan plans[NPLANS];
} fe_gpu_exec;

static void plan_clear(gplan *gp)
{
    for (int s = 0; gp->grs && s < gp->ngroups; s++)
        fe_cuda_group_free(gp->grs[s]);
    for (int s = 0; gp->ev && s <= gp->ngroups; s++)
        fe_cuda_event_free(gp->ev[s]);
    fe_cuda_free(gp->arena);
    free(gp->grs);
    free(gp->src);
    free(gp->dev);
    free(gp->ev);
    memset(gp, 0, sizeof *gp);
}

static void gpu_free(void *state)
{
    fe_gpu_exec *gx = state;
    if (!gx)
        return;
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

/* Inputs and weights to the card, once a session. */
static int upload_statics(fe_gpu_exec *gx, fe_exec *ex, fe_error *err)
{
    const fe_graph *g = gx->g;
    fe_k_tensor *bufs = fe_exec_buffers(ex);
    int rc = FE_OK;
    if (gx->uploaded)
        return FE_OK;
    for (int32_t t = 0; t < g->ntensors && rc == FE_OK; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        if (tt->producer >= 0 || gx->statics[t])
            continue;
        if (!bufs[t].data && (rc = fe_exec_fill(ex, t, err)))
            break;
        rc = fe_cuda_alloc(&gx->statics[t], (size_t)tt->bytes, err);
        if (rc == FE_OK)
            rc = fe_cuda_upload(gx->statics[t], bufs[t].data, (size_t)tt->bytes, err);
        gx->static_bytes += tt->bytes;
    }
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

/* One run of every group, events between them; waits for the end. */
static int run_groups(fe_gpu_exec *gx, gplan *gp, const fe_graph *g, fe_error *err)
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
        if (rc == FE_OK)
            rc = fe_cuda_record(gp->ev[s + 1], err);
    }
    if (rc == FE_OK)
        rc = fe_cuda_sync(err);
    int fault = 0;
    if (rc == FE_OK)
        rc = fe_cuda_download(&fault, gx->fault, sizeof fault, err);
    if (rc == FE_OK && fault)
        rc = fe_error_set(err, FE_EINPUT, "%s: an index of a gather or embedding is out of range "
                          "on the GPU (give --inputs with valid indices)", g->file ? g->file : "model");
    return rc;
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
        if ((rc = run_groups(gx, gp, g, err)))
            return rc;
        gp->warm = 1;
    }
    if ((rc = run_groups(gx, gp, g, err)))
        return rc;
    float t = 0;
    double total = 0;
    for (int s = 0; s < gp->ngroups && rc == FE_OK; s++) {
        rc = fe_cuda_elapsed(gp->ev[s], gp->ev[s + 1], &t, err);
        if (group_ms)
            group_ms[s] = t;
        total += t;
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
