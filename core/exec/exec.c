/* exec.c: whole-graph execution: sessions, random inputs, the unfused
 * reference and plan runs, buffer liveness (see exec.h).
 *
 * Note on memory. Activations are allocated when produced and released
 * after their last consumer (the last node, or the last group of a plan, in
 * execution order); released buffers go to a pool and are reused best-fit
 * (a buffer is reused for a request of at least half its size). Graph
 * outputs are never released: the result takes them. Before anything is
 * allocated the same liveness walk runs on sizes only, so that a model too
 * large for the machine is refused with the numbers instead of crashing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aten.h"
#include "clock.h"
#include "convert.h"
#include "datacheck.h"
#include "exec.h"
#include "group.h"
#include "node.h"
#include "ops.h"
#include "ranges.h"
#include "tensor_mem.h"
#include "u64map.h"

typedef struct pool_slot {
    void *ptr;
    size_t cap;
    int64_t stamp;          /* the run that last returned it */
} pool_slot;

typedef struct pool {
    pool_slot *slot;        /* free buffers */
    int n, capn;
    int64_t stamp;          /* current run */
    int64_t live, held, peak_live, peak_held;
} pool;

static void pool_free(pool *p);

struct fe_exec {
    const fe_graph *g;
    pool pl;                /* activation buffers kept between runs */
    fe_exec_opts o;
    fe_k_tensor *bufs;      /* by tensor id */
    uint8_t *owned;         /* 1: the session allocated bufs[t] (inputs, fill, alloc) */
    fe_range *ranges;       /* by tensor id: what random integers may hold (ranges.h) */
    int64_t static_bytes;
    fe_exec_runner runner;  /* plans on another device (fe_exec_set_runner), or NULL */
    void *rstate;
    void (*rfree)(void *);
};

/* ---- machine ---- */

void fe_exec_machine_memory(int64_t *total, int64_t *avail)
{
    long pg = sysconf(_SC_PAGESIZE);
    long np = sysconf(_SC_PHYS_PAGES), na = sysconf(_SC_AVPHYS_PAGES);
    *total = pg > 0 && np > 0 ? (int64_t)pg * np : 0;
    *avail = pg > 0 && na > 0 ? (int64_t)pg * na : 0;
}

static double gib(int64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

void fe_exec_name_file(const fe_graph *g, fe_error *err)
{
    size_t n = g->file ? strlen(g->file) : 0;
    if (err && err->code != FE_OK && n && strncmp(err->message, g->file, n) != 0)
        fe_error_prefix(err, "%s: ", g->file);
}

/* ---- random values ---- */

/* splitmix64: the next value of the generator whose state is *s. */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = fe_mix64(*s);
    *s += 0x9e3779b97f4a7c15ull;
    return z;
}

static int is_running_var(const fe_graph *g, int32_t t)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    for (int k = 0; k < tt->ncons; k++) {
        const fe_node *n = fe_graph_node(g, fe_tensor_consumer(g, tt, k));
        if (n->op == FE_OP_BATCH_NORM && n->nin > 4 && fe_node_input(g, n, 4) == t)
            return 1;
    }
    return 0;
}

/* The bound b of a weight's values U(-b, b): PyTorch's default for linear
 * and conv layers, 1 / sqrt(fan_in), where fan_in is what a matmul sums
 * over or a conv's C/groups * kh * kw. Uniform [-1, 1] weights would grow
 * activations by sqrt(fan_in) per layer (f16 overflows within a few), and
 * comparisons of plan and reference would judge noise. 1 otherwise. */
static float weight_bound(const fe_graph *g, int32_t t)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    if (tt->kind != FE_WEIGHT || tt->rank < 2)
        return 1.0f;
    const int64_t *d = fe_tensor_shape(g, tt);
    int64_t fan_in = 0;
    for (int k = 0; k < tt->ncons && fan_in <= 0; k++) {
        const fe_node *n = fe_graph_node(g, fe_tensor_consumer(g, tt, k));
        if (n->op == FE_OP_MATMUL) {
            int is_b = n->nin > 1 && fe_node_input(g, n, 1) == t;
            int tr = fe_node_attr_bool(g, n, is_b ? "transpose_b" : "transpose_a", 0);
            /* a [.., M, K] sums over its last axis, b [.., K, N] over its second last */
            fan_in = d[tt->rank - 1 - (is_b != tr)];
        } else if (n->op == FE_OP_CONV2D && n->nin > 1 && fe_node_input(g, n, 1) == t) {
            fan_in = 1;
            for (int i = 1; i < tt->rank; i++)
                fan_in *= d[i];
        }
    }
    return fan_in > 0 ? (float)(1.0 / sqrt((double)fan_in)) : 1.0f;
}

/* The integers tensor t gets, lo + [0, span): its range (ranges.c) within
 * its dtype, else [0, 16) (values that reach no index, or, for an
 * activation filled for a benchmark, reach one through a node fuseeng cannot
 * follow). */
static void int_range(const fe_graph *g, const fe_range *r, int32_t t, int64_t *lo, uint64_t *span)
{
    int dt = fe_graph_tensor(g, t)->dtype;
    int64_t dlo = dt == FE_I8 ? INT8_MIN : dt == FE_I32 ? INT32_MIN : INT64_MIN;
    int64_t dhi = dt == FE_I8 ? INT8_MAX : dt == FE_I32 ? INT32_MAX : INT64_MAX;   /* inclusive */
    *lo = 0, *span = 16;
    if (r->kind == FE_RANGE_IN) {
        int64_t a = r->lo > dlo ? r->lo : dlo, z = r->hi - 1 < dhi ? r->hi - 1 : dhi;
        if (a <= z)
            *lo = a, *span = (uint64_t)z - (uint64_t)a + 1;
    }
}

/* Fill buffer b of tensor t with the session's values for it. */
static void fill_random(const fe_exec *ex, int32_t t, fe_k_tensor *b)
{
    const fe_graph *g = ex->g;
    const fe_tensor *tt = fe_graph_tensor(g, t);
    int64_t n = tt->numel;
    /* the seed is FNV's offset basis short of its last digit, as it always
     * was here: a seed's values stay what earlier versions drew */
    uint64_t ts = ex->o.seed ^ fe_fnv1a(1469598103934665603ull, fe_tensor_name(g, tt),
                                        strlen(fe_tensor_name(g, tt)));
    enum { CH = 4096 };
    int kind = fe_k_dtype_is_int(tt->dtype) ? (tt->dtype == FE_BOOL ? 2 : 1) : 0;
    int64_t lo = 0;
    uint64_t span = 16;
    if (kind == 1)
        int_range(g, &ex->ranges[t], t, &lo, &span);
    int var = kind == 0 && is_running_var(g, t);
    float scale = kind == 0 ? weight_bound(g, t) : 1.0f;
    int64_t nch = (n + CH - 1) / CH;
    #pragma omp parallel for schedule(static) if (n >= (1 << 16))
    for (int64_t c = 0; c < nch; c++) {
        uint64_t s = ts + (uint64_t)c * 0x632be59bd9b4e019ull;   /* per chunk: parallel, deterministic */
        int64_t o = c * CH, m = n - o < CH ? n - o : CH;
        if (kind == 0) {
            float v[CH];
            for (int64_t i = 0; i < m; i++) {
                float u = (float)(splitmix(&s) >> 40) * 0x1p-24f;   /* [0, 1) */
                v[i] = var ? 0.5f + u : (2.0f * u - 1.0f) * scale;
            }
            fe_k_store_f32(b->data, tt->dtype, o, v, m);
        } else {
            int64_t v[CH];
            for (int64_t i = 0; i < m; i++) {
                uint64_t r = splitmix(&s);
                v[i] = kind == 2 ? (r >> 62) != 0 : (int64_t)((uint64_t)lo + (span ? r % span : r));
            }
            fe_k_store_i64(b->data, tt->dtype, o, v, m);
        }
    }
}

int fe_exec_executable(const fe_graph *g, fe_error *err)
{
    int bad = 0;
    const fe_node *first = NULL;
    for (int32_t i = 0; i < g->nnodes; i++) {
        const fe_node *n = fe_graph_node(g, i);
        if (n->op == FE_OP_CUSTOM && !fe_k_aten_supported(g, n)) {
            if (!first)
                first = n;
            bad++;
        }
    }
    if (!first)
        return FE_OK;
    fe_error why = {0};
    fe_k_aten_check(g, first, &why);
    return fe_error_set(err, FE_EINPUT, "%s: cannot execute: %s (%d custom node%s without a kernel "
                        "in all)", g->file ? g->file : g->name ? g->name : "model", why.message, bad,
                        bad == 1 ? "" : "s");
}

/* ---- sessions ---- */

static int is_static(const fe_tensor *t)
{
    return t->producer < 0;
}

/* Per-node scratch the kernels take beyond inputs and outputs (packing,
 * float copies, double accumulators): an estimate for the memory check. */
static int64_t node_scratch(const fe_graph *g, const fe_node *n)
{
    int64_t s = 0;
    for (int k = 0; k < n->nin && k < 3; k++) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, k));
        if (n->op == FE_OP_MATMUL || n->op == FE_OP_CONV2D || n->op == FE_OP_SDPA)
            s += t->numel * 4 + (t->numel * 4) / 8;
        else if (n->op >= FE_OP_SUM && n->op <= FE_OP_AMIN && k == 0)
            s += t->numel * 8;
    }
    if (n->op == FE_OP_SDPA) {
        const fe_tensor *q = fe_graph_tensor(g, fe_node_input(g, n, 0));
        const fe_tensor *k = fe_graph_tensor(g, fe_node_input(g, n, 1));
        if (q->rank >= 2 && k->rank >= 2)
            s += fe_tensor_shape(g, q)[q->rank - 2] * fe_tensor_shape(g, k)[k->rank - 2] * 4;
    }
    return s;
}

/* Liveness walk on sizes: peak bytes of activations (plus group
 * temporaries and kernel scratch) for the reference (p == NULL) or plan p. */
int64_t fe_exec_need_bytes(const fe_exec *ex, const fe_plan *p)
{
    const fe_graph *g = ex->g;
    int nsteps = p ? p->ngroups : g->nnodes;
    int32_t *last = malloc((size_t)(g->ntensors ? g->ntensors : 1) * sizeof(int32_t));
    int64_t live = 0, peak = 0;
    if (!last)
        return INT64_MAX;
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        last[t] = -1;
        for (int k = 0; k < tt->ncons; k++) {
            int32_t c = fe_tensor_consumer(g, tt, k);
            int32_t s = p ? p->group_of[c] : c;
            if (s > last[t])
                last[t] = s;
        }
        if (tt->flags & FE_T_OUTPUT)
            last[t] = INT32_MAX;
    }
    for (int s = 0; s < nsteps; s++) {
        int64_t extra = 0;
        int nm = p ? p->groups[s].n : 1;
        const int32_t *mem = p ? fe_group_nodes(p, &p->groups[s]) : NULL;
        for (int i = 0; i < nm; i++) {
            const fe_node *n = fe_graph_node(g, p ? mem[i] : s);
            int64_t sc = node_scratch(g, n);
            if (sc > extra)
                extra = sc;
            for (int k = 0; k < n->nout; k++) {
                const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
                live += t->bytes;      /* per-op upper bound: internal ones too */
            }
        }
        if (live + extra > peak)
            peak = live + extra;
        for (int i = 0; i < nm; i++) {
            const fe_node *n = fe_graph_node(g, p ? mem[i] : s);
            for (int k = 0; k < n->nin + n->nout; k++) {
                int32_t t = k < n->nin ? fe_node_input(g, n, k) : fe_node_output(g, n, k - n->nin);
                const fe_tensor *tt = fe_graph_tensor(g, t);
                if (!is_static(tt) && last[t] != -2 && last[t] <= s) {
                    live -= tt->bytes;
                    last[t] = -2;      /* released */
                }
            }
        }
    }
    free(last);
    return peak;
}

static int check_memory(const fe_exec *ex, int64_t need, const char *what, fe_error *err)
{
    int64_t total, avail;
    double frac = ex->o.mem_fraction > 0 ? ex->o.mem_fraction : 0.85;
    fe_exec_machine_memory(&total, &avail);
    if (total <= 0)
        return FE_OK;
    if ((double)(ex->static_bytes + need) > frac * (double)total)
        return fe_error_set(err, FE_EINPUT, "%s: executing %s needs %.2f GiB (inputs and weights "
                            "%.2f GiB, activations at peak %.2f GiB) but this machine has %.2f GiB "
                            "of memory (%.2f GiB available, limit %.0f%%); lower the dims "
                            "(--dim NAME=V) to run it on this machine",
                            ex->g->file ? ex->g->file : ex->g->name ? ex->g->name : "model", what,
                            gib(ex->static_bytes + need), gib(ex->static_bytes), gib(need),
                            gib(total), gib(avail), frac * 100.0);
    return FE_OK;
}

/* Check that a whole run fits, then give every input and weight its data. */
static int fill_statics(fe_exec *ex, fe_error *err)
{
    const fe_graph *g = ex->g;
    int missing = 0;
    for (int32_t t = 0; t < g->ntensors && !missing; t++)
        missing = is_static(fe_graph_tensor(g, t)) && !ex->bufs[t].data;
    if (!missing)
        return FE_OK;
    int rc = check_memory(ex, fe_exec_need_bytes(ex, NULL), "the reference", err);
    for (int32_t t = 0; t < g->ntensors && rc == FE_OK; t++)
        if (is_static(fe_graph_tensor(g, t)) && !ex->bufs[t].data)
            rc = fe_exec_fill(ex, t, err);
    return rc;
}

/* The file tensor t's values come from, or NULL: random. */
static const fe_st_tensor *file_tensor(const fe_exec *ex, int32_t t)
{
    const fe_tensor *tt = fe_graph_tensor(ex->g, t);
    const fe_st_file *f = !is_static(tt) ? NULL : tt->kind == FE_WEIGHT ? ex->o.weights
                          : tt->kind == FE_INPUT ? ex->o.inputs : NULL;
    return f ? fe_st_find(f, fe_tensor_name(ex->g, tt)) : NULL;
}

/* Random values for an input or weight that reaches an index through a
 * node fuseeng cannot follow back could fall out of range: refused, naming
 * it and the file option that gives its values (ranges.c). */
static int check_ranges(fe_exec *ex, fe_error *err)
{
    const fe_graph *g = ex->g;
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        if (is_static(tt) && fe_k_dtype_is_int(tt->dtype) && tt->dtype != FE_BOOL &&
            !file_tensor(ex, t) && fe_range_check(g, t, &ex->ranges[t], err)) {
            fe_exec_name_file(g, err);
            return FE_EINPUT;
        }
    }
    return FE_OK;
}

fe_exec *fe_exec_new(const fe_graph *g, const fe_exec_opts *opts, fe_error *err)
{
    fe_exec *ex = calloc(1, sizeof *ex);
    if (!ex)
        return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
    ex->g = g;
    if (opts)
        ex->o = *opts;
    if (!ex->o.seed)
        ex->o.seed = 1;
    ex->bufs = calloc((size_t)(g->ntensors ? g->ntensors : 1), sizeof(fe_k_tensor));
    ex->owned = calloc((size_t)(g->ntensors ? g->ntensors : 1), 1);
    ex->ranges = fe_ranges(g);
    if (!ex->bufs || !ex->owned || !ex->ranges) {
        fe_exec_free(ex);
        return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
    }
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        ex->bufs[t] = fe_k_graph_view(g, t, NULL);
        if (is_static(tt))
            ex->static_bytes += tt->bytes;
    }
    /* The files are checked whole before anything runs, lazy or not, and so
     * are the integer inputs and weights given random values. */
    if ((ex->o.weights && fe_datacheck(g, ex->o.weights, FE_DATA_WEIGHTS, err)) ||
        (ex->o.inputs && fe_datacheck(g, ex->o.inputs, FE_DATA_INPUTS, err)) ||
        check_ranges(ex, err) || (!ex->o.lazy && fill_statics(ex, err))) {
        fe_exec_free(ex);
        return NULL;
    }
    return ex;
}

void fe_exec_free(fe_exec *ex)
{
    if (!ex)
        return;
    for (int32_t t = 0; ex->bufs && t < ex->g->ntensors; t++)
        if (ex->owned[t])
            free(ex->bufs[t].data);
    pool_free(&ex->pl);
    if (ex->rfree)
        ex->rfree(ex->rstate);
    free(ex->bufs);
    free(ex->owned);
    free(ex->ranges);
    free(ex);
}

const fe_graph *fe_exec_graph(const fe_exec *ex) { return ex->g; }

void *fe_exec_runner_state(const fe_exec *ex, fe_exec_runner run)
{
    return ex->runner == run ? ex->rstate : NULL;
}

void fe_exec_set_runner(fe_exec *ex, fe_exec_runner run, void *state, void (*free_state)(void *))
{
    if (ex->rfree)
        ex->rfree(ex->rstate);
    ex->runner = run;
    ex->rstate = state;
    ex->rfree = free_state;
}
fe_k_tensor *fe_exec_buffers(fe_exec *ex) { return ex->bufs; }

int fe_exec_alloc(fe_exec *ex, int32_t t, fe_error *err)
{
    const fe_tensor *tt = fe_graph_tensor(ex->g, t);
    if (ex->bufs[t].data)
        return FE_OK;
    void *d = fe_k_tensor_mem((size_t)tt->bytes);
    if (!d)
        return fe_error_set(err, FE_ENOMEM, "out of memory for %s (%lld bytes)",
                            fe_tensor_name(ex->g, tt), (long long)tt->bytes);
    ex->bufs[t] = fe_k_graph_view(ex->g, t, d);
    ex->owned[t] = 1;
    return FE_OK;
}

void fe_exec_release(fe_exec *ex, int32_t t)
{
    if (ex->owned[t] && !is_static(fe_graph_tensor(ex->g, t))) {
        free(ex->bufs[t].data);
        ex->bufs[t].data = NULL;
        ex->owned[t] = 0;
    }
}

int fe_exec_fill(fe_exec *ex, int32_t t, fe_error *err)
{
    int rc = fe_exec_alloc(ex, t, err);
    if (rc)
        return rc;
    const fe_st_tensor *src = file_tensor(ex, t);
    if (src)   /* checked in fe_exec_new: same dtype and shape */
        memcpy(ex->bufs[t].data, src->data, (size_t)src->nbytes);
    else
        fill_random(ex, t, &ex->bufs[t]);
    return FE_OK;
}

/* ---- buffer pool ----
 *
 * The session keeps activation buffers between runs, as a framework's
 * caching allocator does, so that repeated runs (benchmarks) time kernels
 * rather than page faults on fresh memory. A run takes buffers best-fit
 * and returns them; at its end, buffers it did not use are freed, so the
 * pool holds at most what the last run needed. */

static void *pool_get(pool *p, size_t bytes, size_t *got)
{
    int best = -1;
    for (int i = 0; i < p->n; i++)
        if (p->slot[i].cap >= bytes && p->slot[i].cap <= 2 * bytes + 4096 &&
            (best < 0 || p->slot[i].cap < p->slot[best].cap))
            best = i;
    void *d;
    if (best >= 0) {
        d = p->slot[best].ptr;
        *got = p->slot[best].cap;
        p->slot[best] = p->slot[--p->n];
    } else {
        d = fe_k_tensor_mem(bytes);
        *got = bytes;
        if (d)
            p->held += (int64_t)bytes;
    }
    if (d) {
        p->live += (int64_t)*got;
        if (p->live > p->peak_live)
            p->peak_live = p->live;
        if (p->held > p->peak_held)
            p->peak_held = p->held;
    }
    return d;
}

static void pool_put(pool *p, void *d, size_t cap)
{
    p->live -= (int64_t)cap;
    if (p->n == p->capn) {
        int nc = p->capn ? 2 * p->capn : 16;
        pool_slot *ns = realloc(p->slot, (size_t)nc * sizeof *ns);
        if (!ns) {
            free(d);
            p->held -= (int64_t)cap;
            return;
        }
        p->slot = ns;
        p->capn = nc;
    }
    p->slot[p->n++] = (pool_slot){d, cap, p->stamp};
}

/* an output leaves the pool: the result owns it */
static void pool_detach(pool *p, size_t cap)
{
    p->live -= (int64_t)cap;
    p->held -= (int64_t)cap;
}

/* A run starts: counters from zero, buffers kept from earlier runs. */
static void pool_begin(pool *p)
{
    p->stamp++;
    p->live = 0;
    p->peak_live = 0;
    p->peak_held = p->held;
}

/* A run ended (every buffer returned): free what it did not use. */
static void pool_trim(pool *p)
{
    int k = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->slot[i].stamp == p->stamp) {
            p->slot[k++] = p->slot[i];
        } else {
            free(p->slot[i].ptr);
            p->held -= (int64_t)p->slot[i].cap;
        }
    }
    p->n = k;
}

static void pool_free(pool *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->slot[i].ptr);
    free(p->slot);
    memset(p, 0, sizeof *p);
}

/* ---- runs ---- */

void fe_exec_result_free(fe_exec_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->noutputs; i++)
        free(r->outputs[i].data);
    for (int i = 0; i < r->ngroups; i++)
        free(r->how[i]);
    free(r->how);
    free(r->group_ms);
    free(r->outputs);
    free(r->tensors);
    free(r);
}

typedef struct run {
    fe_exec *ex;
    fe_k_tensor *bufs;    /* a private table: session buffers + this run's activations */
    size_t *cap;          /* pooled capacity of each activation */
    int32_t *last;        /* last step reading each tensor */
    pool *pl;             /* the session's */
} run;

static int run_init(run *r, fe_exec *ex, const fe_plan *p, fe_error *err)
{
    const fe_graph *g = ex->g;
    memset(r, 0, sizeof *r);
    r->ex = ex;
    r->pl = &ex->pl;
    pool_begin(r->pl);
    size_t nt = (size_t)(g->ntensors ? g->ntensors : 1);
    r->bufs = malloc(nt * sizeof(fe_k_tensor));
    r->cap = calloc(nt, sizeof(size_t));
    r->last = malloc(nt * sizeof(int32_t));
    if (!r->bufs || !r->cap || !r->last)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        r->bufs[t] = ex->bufs[t];
        if (!is_static(tt))
            r->bufs[t].data = NULL;   /* activations: this run's own */
        r->last[t] = -1;
        for (int k = 0; k < tt->ncons; k++) {
            int32_t c = fe_tensor_consumer(g, tt, k);
            int32_t s = p ? p->group_of[c] : c;
            if (s > r->last[t])
                r->last[t] = s;
        }
        if (tt->flags & FE_T_OUTPUT)
            r->last[t] = INT32_MAX;
    }
    return FE_OK;
}

static int run_alloc(run *r, int32_t t, fe_error *err)
{
    const fe_tensor *tt = fe_graph_tensor(r->ex->g, t);
    if (r->bufs[t].data)
        return FE_OK;
    size_t got;
    void *d = pool_get(r->pl, (size_t)tt->bytes, &got);
    if (!d)
        return fe_error_set(err, FE_ENOMEM, "out of memory for %s (%lld bytes)",
                            fe_tensor_name(r->ex->g, tt), (long long)tt->bytes);
    r->bufs[t].data = d;
    r->cap[t] = got;
    return FE_OK;
}

static void run_release(run *r, int32_t t)
{
    if (r->cap[t] && r->bufs[t].data) {
        pool_put(r->pl, r->bufs[t].data, r->cap[t]);
        r->bufs[t].data = NULL;
        r->cap[t] = 0;
    }
}

/* release what step s was the last reader of, and dead outputs */
static void run_step_done(run *r, const int32_t *nodes, int n, int s)
{
    const fe_graph *g = r->ex->g;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        for (int k = 0; k < nd->nin; k++) {
            int32_t t = fe_node_input(g, nd, k);
            if (r->last[t] == s)
                run_release(r, t);
        }
        for (int k = 0; k < nd->nout; k++) {
            int32_t t = fe_node_output(g, nd, k);
            if (r->last[t] <= s)
                run_release(r, t);
        }
    }
}

static int run_finish(run *r, fe_exec_result **out, double ms, fe_error *err)
{
    const fe_graph *g = r->ex->g;
    fe_exec_result *res = calloc(1, sizeof *res);
    if (!res)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    res->noutputs = g->noutputs;
    res->tensors = calloc((size_t)(g->noutputs + 1), sizeof(int32_t));
    res->outputs = calloc((size_t)(g->noutputs + 1), sizeof(fe_k_tensor));
    if (!res->tensors || !res->outputs) {
        fe_exec_result_free(res);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int i = 0; i < g->noutputs; i++) {
        int32_t t = g->outputs[i];
        const fe_tensor *tt = fe_graph_tensor(g, t);
        res->tensors[i] = t;
        res->outputs[i] = r->bufs[t];
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= g->outputs[j] == t;
        if (r->cap[t] && !dup) {        /* hand the activation over */
            pool_detach(r->pl, r->cap[t]);
            r->cap[t] = 0;
            r->bufs[t].data = NULL;
        } else {                        /* an input, or listed twice: copy */
            void *d = fe_k_tensor_mem((size_t)tt->bytes);
            if (!d) {
                res->noutputs = i;
                fe_exec_result_free(res);
                return fe_error_set(err, FE_ENOMEM, "out of memory");
            }
            if (res->outputs[i].data)
                memcpy(d, res->outputs[i].data, (size_t)tt->bytes);
            res->outputs[i].data = d;
        }
    }
    res->static_bytes = r->ex->static_bytes;
    res->peak_bytes = r->pl->peak_live;
    res->pool_bytes = r->pl->peak_held;
    res->ms = ms;
    *out = res;
    return FE_OK;
}

static void run_free(run *r)
{
    if (r->bufs && r->cap)
        for (int32_t t = 0; t < r->ex->g->ntensors; t++)
            if (r->cap[t])
                pool_put(r->pl, r->bufs[t].data, r->cap[t]);
    pool_trim(r->pl);
    free(r->bufs);
    free(r->cap);
    free(r->last);
}

int fe_exec_reference(fe_exec *ex, fe_exec_result **out, fe_error *err)
{
    const fe_graph *g = ex->g;
    run r;
    double ms = 0;
    *out = NULL;
    if (fill_statics(ex, err))
        return err ? err->code : FE_ENOMEM;
    int rc = run_init(&r, ex, NULL, err);
    for (int32_t i = 0; i < g->nnodes && rc == FE_OK; i++) {
        const fe_node *n = fe_graph_node(g, i);
        for (int k = 0; k < n->nout && rc == FE_OK; k++)
            rc = run_alloc(&r, fe_node_output(g, n, k), err);
        if (rc)
            break;
        double t0 = fe_clock_s();
        rc = fe_k_node_run_bufs(g, n, r.bufs, err);
        ms += (fe_clock_s() - t0) * 1e3;
        run_step_done(&r, &i, 1, i);
    }
    if (rc == FE_OK)
        rc = run_finish(&r, out, ms, err);
    run_free(&r);
    return rc;
}

int32_t fe_exec_view_source(const fe_graph *g, const int32_t *nodes, int n)
{
    int32_t src = -1;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        if (nd->op != FE_OP_RESHAPE || nd->nin != 1 || nd->nout != 1)
            return -1;
        int32_t in = fe_node_input(g, nd, 0), pr = fe_graph_tensor(g, in)->producer;
        int inside = 0;
        for (int j = 0; j < n && !inside; j++)
            inside = nodes[j] == pr;
        if (inside)
            continue;
        if (src >= 0 && src != in)
            return -1;   /* two sources: not one buffer */
        src = in;
        if (fe_graph_tensor(g, in)->dtype != fe_graph_tensor(g, fe_node_output(g, nd, 0))->dtype)
            return -1;
    }
    return src;
}

/* A view group's members alias its source buffer (fe_exec_view_source):
 * no kernel, no copy. Their buffers are the source's, so the source must
 * live as long as the last of them is read: lifetimes are extended from
 * the last group back, which carries them through chains of views. */
static void alias_lifetimes(run *r, const fe_plan *p, const int32_t *src)
{
    const fe_graph *g = r->ex->g;
    for (int s = p->ngroups - 1; s >= 0; s--) {
        if (src[s] < 0)
            continue;
        const fe_group *gp = &p->groups[s];
        const int32_t *nodes = fe_group_nodes(p, gp);
        for (int i = 0; i < gp->n; i++) {
            int32_t t = fe_node_output(g, fe_graph_node(g, nodes[i]), 0);
            if (r->last[t] > r->last[src[s]])
                r->last[src[s]] = r->last[t];
        }
    }
}

/* Run plan p. With out, the result (outputs handed over); without, only
 * the times into *total_ms and group_ms (may be NULL), outputs going back
 * to the pool so that repeated runs reuse their memory. */
static int plan_run(fe_exec *ex, const fe_plan *p, fe_exec_result **out, double *total_ms,
                    double *group_ms, fe_error *err)
{
    const fe_graph *g = ex->g;
    run r;
    double ms = 0;
    int rc, nfused = 0;
    fe_k_group **grs = NULL;
    char **how = NULL;
    double *gms = NULL;
    int64_t outb = 0;
    if (out)
        *out = NULL;
    if (p->g != g)
        return fe_error_set(err, FE_EINPUT, "the plan was made for another graph");
    for (int i = 0; i < g->noutputs; i++)
        outb += fe_graph_tensor(g, g->outputs[i])->bytes;
    /* the caller usually holds the reference's outputs while the plan runs */
    rc = check_memory(ex, fe_exec_need_bytes(ex, p) + outb, "the plan", err);
    if (rc == FE_OK)
        rc = fill_statics(ex, err);
    if (rc)
        return rc;
    if (ex->runner)
        return ex->runner(ex, ex->rstate, p, out, total_ms, group_ms, err);
    rc = run_init(&r, ex, p, err);
    grs = calloc((size_t)(p->ngroups + 1), sizeof *grs);
    how = calloc((size_t)(p->ngroups + 1), sizeof *how);
    gms = calloc((size_t)(p->ngroups + 1), sizeof *gms);
    int32_t *src = malloc((size_t)(p->ngroups + 1) * sizeof *src);
    if (!rc && (!grs || !how || !gms || !src))
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int s = 0; s < p->ngroups && rc == FE_OK; s++)
        src[s] = fe_exec_view_source(g, fe_group_nodes(p, &p->groups[s]), p->groups[s].n);
    if (rc == FE_OK)
        alias_lifetimes(&r, p, src);
    for (int s = 0; s < p->ngroups && rc == FE_OK; s++) {
        const fe_group *gp = &p->groups[s];
        if (src[s] >= 0)
            continue;
        grs[s] = fe_k_group_new(g, fe_group_nodes(p, gp), gp->n, gp->split, gp->kernel, err);
        if (!grs[s])
            rc = err ? err->code : FE_ERUNTIME;
        else
            nfused += fe_k_group_is_fused(grs[s]) && gp->n > 1;
    }
    for (int s = 0; s < p->ngroups && rc == FE_OK; s++) {
        const fe_group *gp = &p->groups[s];
        if (src[s] >= 0) {
            const int32_t *nodes = fe_group_nodes(p, gp);
            for (int i = 0; i < gp->n; i++) {
                int32_t t = fe_node_output(g, fe_graph_node(g, nodes[i]), 0);
                r.bufs[t].data = r.bufs[src[s]].data;
                r.cap[t] = 0;   /* not this run's to release */
            }
            run_step_done(&r, nodes, gp->n, s);
            continue;
        }
        const int32_t *outs;
        int no = fe_k_group_outputs(grs[s], &outs);
        for (int k = 0; k < no && rc == FE_OK; k++)
            rc = run_alloc(&r, outs[k], err);
        if (rc)
            break;
        int64_t tb = fe_k_group_temp_bytes(grs[s]);
        if (r.pl->live + tb > r.pl->peak_live)
            r.pl->peak_live = r.pl->live + tb;
        double t0 = fe_clock_s();
        rc = fe_k_group_run(grs[s], r.bufs, err);
        gms[s] = (fe_clock_s() - t0) * 1e3;
        ms += gms[s];
        if (rc)
            fe_error_prefix(err, "group %d: ", s);
        run_step_done(&r, fe_group_nodes(p, gp), gp->n, s);
    }
    if (rc == FE_OK && !out) {
        *total_ms = ms;
        if (group_ms)
            memcpy(group_ms, gms, (size_t)p->ngroups * sizeof *gms);
    }
    if (rc == FE_OK && out)
        rc = run_finish(&r, out, ms, err);
    if (rc == FE_OK && out) {
        (*out)->ngroups = p->ngroups;
        (*out)->how = how;
        (*out)->group_ms = gms;
        (*out)->nfused = nfused;
        for (int s = 0; s < p->ngroups; s++) {
            how[s] = strdup(grs[s] ? fe_k_group_how(grs[s]) : FE_EXEC_VIEW_HOW);
            if (!how[s]) {
                (*out)->ngroups = s;
                break;
            }
        }
        how = NULL;
        gms = NULL;
    }
    for (int s = 0; grs && s < p->ngroups; s++)
        fe_k_group_free(grs[s]);
    free(grs);
    free(how);
    free(gms);
    free(src);
    run_free(&r);
    return rc;
}

int fe_exec_plan(fe_exec *ex, const fe_plan *p, fe_exec_result **out, fe_error *err)
{
    return plan_run(ex, p, out, NULL, NULL, err);
}

int fe_exec_plan_time(fe_exec *ex, const fe_plan *p, double *ms, double *group_ms, fe_error *err)
{
    return plan_run(ex, p, NULL, ms, group_ms, err);
}

int64_t fe_exec_last_peak(const fe_exec *ex)
{
    return ex->pl.peak_live;
}
