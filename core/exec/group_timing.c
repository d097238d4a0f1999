/* group_timing.c: a group timed alone on the session's device
 * (group_timing.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_exec.h"
#include "group.h"
#include "group_timing.h"

/* A group compiled for the session's device: the CPU's kernels, or the
 * card's (gpu_exec.h) when the session runs there. */
typedef struct tgroup {
    fe_exec *ex;
    fe_k_group *cpu;
    fe_gpu_group *gpu;
} tgroup;

static int tg_new(tgroup *t, fe_exec *ex, const int32_t *nodes, int n, int split, int kernel,
                  fe_error *err)
{
    memset(t, 0, sizeof *t);
    t->ex = ex;
    if (fe_gpu_exec_is(ex))
        t->gpu = fe_gpu_group_new(ex, nodes, n, err);
    else
        t->cpu = fe_k_group_new(fe_exec_graph(ex), nodes, n, split, kernel, err);
    return t->cpu || t->gpu ? FE_OK : err ? err->code : FE_ERUNTIME;
}

static void tg_free(tgroup *t)
{
    fe_k_group_free(t->cpu);
    fe_gpu_group_free(t->gpu);
    t->cpu = NULL;
    t->gpu = NULL;
}

/* One run (fe_bench_fn_ms): the card's runs give their own time. */
static int tg_call(void *ctx, double *ms, fe_error *err)
{
    tgroup *t = ctx;
    if (t->gpu)
        return fe_gpu_group_time(t->gpu, ms, err);
    return fe_k_group_run(t->cpu, fe_exec_buffers(t->ex), err);
}

static int tg_ios(const tgroup *t, int outs, const int32_t **ids)
{
    if (t->gpu)
        return outs ? fe_gpu_group_outputs(t->gpu, ids) : fe_gpu_group_inputs(t->gpu, ids);
    return outs ? fe_k_group_outputs(t->cpu, ids) : fe_k_group_inputs(t->cpu, ids);
}

/* How it ran, into b. */
static void tg_describe(const tgroup *t, fe_bench_group *b)
{
    snprintf(b->how, sizeof b->how, "%s", t->gpu ? fe_gpu_group_how(t->gpu) : fe_k_group_how(t->cpu));
    b->device = t->gpu ? FE_DEVICE_CUDA : FE_DEVICE_CPU;
    if (t->cpu) {
        b->kernel = fe_k_group_kernel(t->cpu);
        b->is_fused = fe_k_group_is_fused(t->cpu);
        return;
    }
    fe_gpu_kinfo ki;
    fe_gpu_group_kernels(t->gpu, &ki);
    b->kernel = 0;
    b->is_fused = fe_gpu_group_is_fused(t->gpu);
    b->kernels = ki.kernels;
    b->regs = ki.regs;
    b->spill_bytes = ki.spill_bytes;
    b->blocks_per_sm = ki.blocks_per_sm;
    b->host_steps = ki.host_steps;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Give tensor t a buffer for the benchmark (random values for inputs);
 * remember it in made[] so it is released afterwards. On the card, the
 * session's bench set (released as a whole). */
static int need(fe_exec *ex, int32_t t, int fill, int32_t *made, int *nmade, fe_error *err)
{
    if (fe_gpu_exec_is(ex))
        return fe_gpu_tensor(ex, t, fill, err);
    fe_k_tensor *b = fe_exec_buffers(ex);
    if (b[t].data)
        return FE_OK;
    int rc = fill ? fe_exec_fill(ex, t, err) : fe_exec_alloc(ex, t, err);
    if (rc == FE_OK)
        made[(*nmade)++] = t;
    return rc;
}

/* Bytes a node alone reads and writes (each distinct tensor once). */
static int64_t io_bytes(const fe_graph *g, const fe_node *nd)
{
    int64_t b = 0;
    for (int k = 0; k < nd->nin; k++) {
        int32_t t = fe_node_input(g, nd, k), dup = 0;
        for (int j = 0; j < k; j++)
            dup |= fe_node_input(g, nd, j) == t;
        if (!dup)
            b += fe_graph_tensor(g, t)->bytes;
    }
    for (int k = 0; k < nd->nout; k++)
        b += fe_graph_tensor(g, fe_node_output(g, nd, k))->bytes;
    return b;
}

int fe_bench_group_run(fe_exec *ex, const int32_t *nodes, int n, int split, int kernel,
                       const fe_bench_opts *opts, fe_bench_group *out, fe_error *err)
{
    const fe_graph *g = fe_exec_graph(ex);
    tgroup gr = {0};
    int rc = FE_OK, nmade = 0, cap = 0;
    int32_t *made = NULL;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        cap += nd->nin + nd->nout;
    }
    made = malloc((size_t)(cap + 1) * sizeof(int32_t));
    out->nodes = malloc((size_t)(n + 1) * sizeof(int32_t));
    out->members = calloc((size_t)(n + 1), sizeof(fe_bench_stats));
    out->member_bytes = calloc((size_t)(n + 1), sizeof(int64_t));
    if (!made || !out->nodes || !out->members || !out->member_bytes) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(out->nodes, nodes, (size_t)n * sizeof(int32_t));
    qsort(out->nodes, (size_t)n, sizeof(int32_t), cmp_i32);
    out->n = n;
    /* A group of views runs no kernel in a plan (its outputs alias its
     * source), nor does each of its reshapes alone: it costs nothing and
     * moves no bytes, which is what a policy asking must be told, not the
     * time of a copy that never happens. */
    if (fe_exec_view_source(g, out->nodes, n) >= 0) {
        snprintf(out->how, sizeof out->how, "%s", FE_EXEC_VIEW_HOW);
        out->is_fused = 1;
        goto out;
    }
    if ((rc = tg_new(&gr, ex, out->nodes, n, split, kernel, err)))
        goto out;
    tg_describe(&gr, out);
    {
        const int32_t *ids;
        int k = tg_ios(&gr, 0, &ids);
        for (int i = 0; i < k && rc == FE_OK; i++) {
            out->bytes += fe_graph_tensor(g, ids[i])->bytes;
            rc = need(ex, ids[i], 1, made, &nmade, err);
        }
        k = tg_ios(&gr, 1, &ids);
        for (int i = 0; i < k && rc == FE_OK; i++) {
            out->bytes += fe_graph_tensor(g, ids[i])->bytes;
            rc = need(ex, ids[i], 0, made, &nmade, err);
        }
    }
    if (rc)
        goto out;
    rc = fe_bench_run_ms(tg_call, &gr, opts, &out->fused, err);
    tg_free(&gr);
    if (rc)
        goto out;
    if (n == 1) {
        out->members[0] = out->fused;
        out->members_ms = out->fused.median_ms;
        out->members_bytes = out->member_bytes[0] = out->bytes;
        goto out;
    }
    /* members alone, in order, each on what the previous ones computed */
    for (int i = 0; i < n && rc == FE_OK; i++) {
        const fe_node *nd = fe_graph_node(g, out->nodes[i]);
        int known = opts && opts->known_ms && opts->known_ms[i] >= 0;
        for (int k = 0; k < nd->nout && rc == FE_OK; k++)
            rc = need(ex, fe_node_output(g, nd, k), known, made, &nmade, err);
        if (rc)
            break;
        int view = fe_exec_view_source(g, &out->nodes[i], 1) >= 0;
        out->member_bytes[i] = view ? 0 : io_bytes(g, nd);
        out->members_bytes += out->member_bytes[i];
        if (known) {
            out->members[i] = (fe_bench_stats){.median_ms = opts->known_ms[i],
                                               .min_ms = opts->known_ms[i],
                                               .max_ms = opts->known_ms[i],
                                               .mean_ms = opts->known_ms[i]};
            out->members_ms += opts->known_ms[i];
            continue;
        }
        tgroup one;
        if ((rc = tg_new(&one, ex, &out->nodes[i], 1, 1, 0, err)))
            break;
        if (view) {
            /* a view alone is free in a plan too; run it once, untimed, so
             * that the members after it read its values */
            double ms;
            rc = tg_call(&one, &ms, err);
        } else {
            rc = fe_bench_run_ms(tg_call, &one, opts, &out->members[i], err);
        }
        out->members_ms += out->members[i].median_ms;
        tg_free(&one);
    }
out:
    tg_free(&gr);
    for (int i = 0; i < nmade; i++)
        fe_exec_release(ex, made[i]);
    if (fe_gpu_exec_is(ex))
        fe_gpu_release(ex);
    free(made);
    if (rc)
        fe_bench_group_free(out);
    return rc;
}

void fe_bench_group_free(fe_bench_group *b)
{
    free(b->nodes);
    free(b->members);
    free(b->member_bytes);
    b->nodes = NULL;
    b->members = NULL;
    b->member_bytes = NULL;
    b->n = 0;
}

int fe_bench_node(fe_exec *ex, int32_t node, const fe_bench_opts *opts, fe_bench_stats *st,
                  fe_error *err)
{
    fe_bench_group b;
    int rc = fe_bench_group_run(ex, &node, 1, 1, 0, opts, &b, err);
    if (rc)
        return rc;
    *st = b.fused;
    fe_bench_group_free(&b);
    return FE_OK;
}
