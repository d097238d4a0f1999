/* bench_kernels.c: how fast the CPU kernels are on this machine, against its
 * own memory bandwidth: a STREAM-like copy and triad first, then the fused
 * workloads (effective bandwidth, ratio to copy, fused vs unfused) and the
 * matmul choices. Medians throughout: the machine is shared and noisy.
 *
 * Usage: bench_kernels [budget_seconds_per_item] (default 0.2; or
 * $FE_BENCH_BUDGET). Prints a table and the targets met or missed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cache.h"
#include "choice.h"
#include "exec.h"
#include "group.h"
#include "load.h"
#include "ops.h"
#include "tensor_mem.h"
#include "group_timing.h"
#include "timing.h"

#include "bench_util.h"


static double budget = 0.2;

/* ---- STREAM-like bandwidth ---- */

typedef struct bw {
    double copy, copy_nt, triad, triad_nt;   /* GB/s, bytes counted as STREAM does */
} bw;


static size_t stream_mib;

/* STREAM's vectors: the widest this build has (n is a multiple of 64). */
#if defined(__AVX2__) && defined(__FMA__)
#define SV 8
#define SLOAD _mm256_load_ps
#define SSTORE _mm256_store_ps
#define SSTREAM _mm256_stream_ps
#define STRIAD(c, b) _mm256_fmadd_ps(_mm256_set1_ps(3.0f), c, b)
#else
#define SV 4
#define SLOAD _mm_load_ps
#define SSTORE _mm_store_ps
#define SSTREAM _mm_stream_ps
#define STRIAD(c, b) _mm_add_ps(_mm_mul_ps(_mm_set1_ps(3.0f), c), b)
#endif

/* The arrays: 4x the last-level cache (at least 128 MiB each), made once,
 * in the memory tensors get (fe_k_tensor_mem: huge pages where the OS
 * offers them), so that the kernels are held to what memory does for a
 * loop on the same pages (copy-nt ran 5% faster on huge pages). */
static float *sa, *sb, *sc;
static size_t sn;

static void stream_alloc(void)
{
    size_t n = (size_t)(4 * fe_k_cache_llc()) / sizeof(float);
    if (n < (32u << 20))
        n = 32u << 20;
    n &= ~(size_t)63;
    sa = fe_k_tensor_mem(n * 4), sb = fe_k_tensor_mem(n * 4), sc = fe_k_tensor_mem(n * 4);
    if (!sa || !sb || !sc) {
        fprintf(stderr, "bench: out of memory for STREAM arrays\n");
        exit(1);
    }
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        sa[i] = 1.0f;
        sb[i] = 2.0f;
        sc[i] = 0.5f;
    }
    sn = n;
    stream_mib = n * 4 >> 20;
}

enum { COPY, COPY_NT, TRIAD, TRIAD_NT };

/* One run of STREAM kernel k, in GB/s. Vector loads and stores, as the
 * kernels use: a scalar loop (what the compiler makes of c[i] = a[i] at
 * -O2) moves one float per cycle, which on this machine is below what
 * memory can take. */
static double stream_once(int k)
{
    float *a = sa, *b = sb, *c = sc;
    size_t n = sn;
    double t0 = fe_clock_s();
    switch (k) {
    case COPY:
        #pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i += SV)
            SSTORE(c + i, SLOAD(a + i));
        break;
    case COPY_NT:
        #pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i += SV)
            SSTREAM(c + i, SLOAD(a + i));
        _mm_sfence();
        break;
    case TRIAD:
        #pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i += SV)
            SSTORE(a + i, STRIAD(SLOAD(c + i), SLOAD(b + i)));
        break;
    default:
        #pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i += SV)
            SSTREAM(a + i, STRIAD(SLOAD(c + i), SLOAD(b + i)));
        _mm_sfence();
        break;
    }
    double bytes = (k == COPY || k == COPY_NT ? 2.0 : 3.0) * (double)n * 4;
    return bytes / (fe_clock_s() - t0) / 1e9;
}

/* The median of R runs of each kernel, taken in turn. */
static void stream(bw *out, int R)
{
    double t[4][32];
    if (R > 32)
        R = 32;
    for (int r = 0; r < R; r++)
        for (int k = 0; k < 4; k++)
            t[k][r] = stream_once(k);
    out->copy = median(t[COPY], R);
    out->copy_nt = median(t[COPY_NT], R);
    out->triad = median(t[TRIAD], R);
    out->triad_nt = median(t[TRIAD_NT], R);
}

/* ---- workloads ---- */

/* A workload is a model file examples/bench/<file>.json (examples/gen/bench.lua),
 * run once as written and once with its named leading dims made small
 * enough that the data stays in L2 (about 1 MiB per thread): the latter
 * bounds the fused kernel's compute ceiling from below, since each run of
 * a few tens of microseconds also starts and joins the threads (chain6 ran
 * 10.7 G elements/s there and 12.6 from memory). */
typedef struct workload {
    const char *name;
    const char *file;
    const char *dims[2];    /* leading dims shrunk for the in-cache run */
    int64_t small[2];
    double target;          /* bandwidth ratio target */
} workload;

static const workload W[] = {
    {"swiglu silu(g)*u f32[2048,11008]", "swiglu", {"T", NULL}, {16, 0}, 0.95},
    {"add+rmsnorm f32[2048,4096] -> h, y", "add_rmsnorm", {"T", NULL}, {32, 0}, 0.85},
    {"gelu tanh f32[2048,16384]", "gelu", {"T", NULL}, {16, 0}, 0.95},
    {"chain6 tanh(relu(x*a+b)*c)+x f32[4096,4096]", "chain6", {"T", NULL}, {64, 0}, 0.95},
    {"softmax(x*0.125+mask) f32[32,2048,2048]", "softmax", {"H", "Q"}, {1, 64}, 0.60},
};

/* Where the model files are: $FE_BENCH_MODELS, else examples/bench under
 * the working directory (make bench runs from the top), else relative to
 * the program (build/bench/bench_kernels). */
static char models_dir[4096] = "examples/bench";

static void find_models(const char *argv0)
{
    const char *e = getenv("FE_BENCH_MODELS");
    char probe[4200];
    if (e && *e) {
        snprintf(models_dir, sizeof models_dir, "%s", e);
        return;
    }
    snprintf(probe, sizeof probe, "%s/swiglu.json", models_dir);
    if (access(probe, R_OK) == 0)
        return;
    const char *slash = strrchr(argv0, '/');
    int n = slash ? (int)(slash - argv0) : 1;
    snprintf(models_dir, sizeof models_dir, "%.*s/../../examples/bench", n, slash ? argv0 : ".");
}

static int npass, nfail;

static void verdict(int ok, const char *fmt, double got, double want)
{
    printf("    %s  ", ok ? "MET   " : "MISSED");
    printf(fmt, got, want);
    printf("\n");
    ok ? npass++ : nfail++;
}

/* examples/bench/<file>.json with dims overridden (dims may be NULL). */
static fe_graph *load(const char *file, const fe_dimset *dims)
{
    fe_error err = {0};
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", models_dir, file);
    fe_graph *g = fe_load_model_file(path, dims, &err);
    if (!g) {
        fprintf(stderr, "bench: %s (set FE_BENCH_MODELS to the directory of the workload files)\n",
                err.message);
        exit(1);
    }
    return g;
}

/* bytes every member reads and writes when run op by op */
static double unfused_bytes(const fe_graph *g)
{
    double b = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const fe_node *n = fe_graph_node(g, i);
        for (int k = 0; k < n->nin; k++)
            b += (double)fe_graph_tensor(g, fe_node_input(g, n, k))->bytes;
        for (int k = 0; k < n->nout; k++)
            b += (double)fe_graph_tensor(g, fe_node_output(g, n, k))->bytes;
    }
    return b;
}

/* Every workload is measured in ROUNDS rounds (fused, then its members
 * alone), and each figure is the median over rounds of per-round medians:
 * the host is shared, and noise comes in bursts longer than one round. */
enum { ROUNDS = 3 };

/* The workload as written, or small (its leading dims overridden). */
static fe_graph *load_workload(const workload *w, int small)
{
    const char *names[2];
    int64_t values[2];
    fe_dimset d = {0, names, values};
    for (int i = 0; i < 2 && small && w->dims[i]; i++) {
        names[d.n] = w->dims[i];
        values[d.n++] = w->small[i];
    }
    return load(w->file, small ? &d : NULL);
}

/* Every node of g, in order (a workload as one group); free it. */
static int32_t *all_nodes(const fe_graph *g)
{
    int32_t *all = malloc((size_t)(g->nnodes + 1) * sizeof(int32_t));
    if (!all) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < g->nnodes; i++)
        all[i] = i;
    return all;
}

/* The fused kernel on data that stays in cache, as elements per second:
 * a lower bound on its compute ceiling (see W). */
static double in_cache_rate(const workload *w)
{
    fe_error err = {0};
    fe_graph *g = load_workload(w, 1);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_bench_opts o = {.budget_s = budget, .warmup = 20, .min_reps = 50};
    fe_bench_group b;
    int32_t *all = all_nodes(g);
    double best = 1e30, elems = 0;
    for (int32_t t = 0; t < g->ntensors; t++)
        if (fe_graph_tensor(g, t)->flags & FE_T_OUTPUT)
            elems = (double)fe_graph_tensor(g, t)->numel;
    for (int r = 0; r < ROUNDS; r++) {
        if (!ex || fe_bench_group_run(ex, all, g->nnodes, 1, FE_K_CHOICE_AUTO, &o, &b, &err)) {
            fprintf(stderr, "bench: %s (in cache): %s\n", w->name, err.message);
            exit(1);
        }
        if (b.fused.median_ms < best)
            best = b.fused.median_ms;
        fe_bench_group_free(&b);
    }
    free(all);
    fe_exec_free(ex);
    fe_graph_free(g);
    return elems / (best * 1e-3);
}



/* Groups run one after another, as a plan runs them. */
typedef struct seq {
    fe_k_group **g;
    int n;
    fe_k_tensor *bufs;
} seq;

static double time_seq(seq *q)
{
    fe_error err = {0};
    double t0 = fe_clock_s();
    for (int i = 0; i < q->n; i++)
        if (fe_k_group_run(q->g[i], q->bufs, &err)) {
            fprintf(stderr, "bench: %s\n", err.message);
            exit(1);
        }
    return (fe_clock_s() - t0) * 1e3;
}

/* Time f and u back to back, np times, alternating which goes first (so
 * drift within a pair cancels): the medians of each and of the per-pair
 * differences u - f and ratios u / f. The host's bandwidth drifts by tens
 * of percent within seconds, more than some of the differences measured. */
typedef struct pairs {
    int n;
    double f, u, diff, ratio;
} pairs;

static void time_pairs(seq *f, seq *u, int np, pairs *out)
{
    double tf[64], tu[64], d[64], q[64];
    if (np > 64)
        np = 64;
    time_seq(f);
    time_seq(u);
    for (int i = 0; i < np; i++) {
        if (i % 2) {
            tu[i] = time_seq(u);
            tf[i] = time_seq(f);
        } else {
            tf[i] = time_seq(f);
            tu[i] = time_seq(u);
        }
        d[i] = tu[i] - tf[i];
        q[i] = tu[i] / tf[i];
    }
    out->n = np;
    out->f = median(tf, np);
    out->u = median(tu, np);
    out->diff = median(d, np);
    out->ratio = median(q, np);
}

/* Give every tensor a node produces a buffer (or release them all). */
static void alloc_produced(fe_exec *ex, const fe_graph *g, int release)
{
    fe_error err = {0};
    for (int32_t t = 0; t < g->ntensors; t++) {
        if (fe_graph_tensor(g, t)->producer < 0)
            continue;
        if (release) {
            fe_exec_release(ex, t);
        } else if (fe_exec_alloc(ex, t, &err)) {
            fprintf(stderr, "bench: %s\n", err.message);
            exit(1);
        }
    }
}

/* Every node of g fused (one group) and unfused (each node its own group,
 * in order), timed in np pairs; kernel is the choice for the fused group
 * and the first node (a matmul's), the others run their best one. */
static void paired_unfused(fe_exec *ex, const fe_graph *g, const int32_t *all, int kernel, int np,
                           pairs *out)
{
    fe_error err = {0};
    fe_k_group *fg[1], **ug = calloc((size_t)g->nnodes + 1, sizeof *ug);
    seq f = {fg, 1, fe_exec_buffers(ex)}, u = {ug, g->nnodes, fe_exec_buffers(ex)};
    int ok = ug != NULL;
    fg[0] = fe_k_group_new(g, all, g->nnodes, 1, kernel, &err);
    ok = ok && fg[0];
    for (int i = 0; ok && i < g->nnodes; i++)
        ok = (ug[i] = fe_k_group_new(g, &all[i], 1, 1, i ? FE_K_CHOICE_AUTO : kernel, &err)) != NULL;
    if (!ok) {
        fprintf(stderr, "bench: %s\n", ug ? err.message : "out of memory");
        exit(1);
    }
    alloc_produced(ex, g, 0);
    time_pairs(&f, &u, np, out);
    alloc_produced(ex, g, 1);
    fe_k_group_free(fg[0]);
    for (int i = 0; i < g->nnodes; i++)
        fe_k_group_free(ug[i]);
    free(ug);
}

/* The workload fused (one group) and STREAM copy and copy-nt, np times
 * each in turn (the order rotating): the medians of copy's GB/s and of the
 * per-turn ratios of the workload's effective bandwidth (bytes fb) to
 * them. The host's bandwidth moves by 1.5x within seconds; a copy measured
 * milliseconds from the run it is compared with moves with it. */
typedef struct cpairs {
    int n;
    double copy, copy_nt, ratio, ratio_nt;
} cpairs;

static void paired_copy(fe_exec *ex, const fe_graph *g, const int32_t *all, double fb, int np,
                        cpairs *out)
{
    fe_error err = {0};
    fe_k_group *fg[1];
    seq f = {fg, 1, fe_exec_buffers(ex)};
    double c[64], cn[64], r[64], rn[64];
    if (np > 64)
        np = 64;
    if (!(fg[0] = fe_k_group_new(g, all, g->nnodes, 1, FE_K_CHOICE_AUTO, &err))) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    alloc_produced(ex, g, 0);
    time_seq(&f);
    for (int i = 0; i < np; i++) {
        double ms = 0;
        for (int k = 0; k < 3; k++)
            switch ((i + k) % 3) {
            case 0: ms = time_seq(&f); break;
            case 1: c[i] = stream_once(COPY); break;
            default: cn[i] = stream_once(COPY_NT); break;
            }
        double gbs = fb / (ms * 1e-3) / 1e9;
        r[i] = gbs / c[i];
        rn[i] = gbs / cn[i];
    }
    alloc_produced(ex, g, 1);
    fe_k_group_free(fg[0]);
    out->n = np;
    out->copy = median(c, np);
    out->copy_nt = median(cn, np);
    out->ratio = median(r, np);
    out->ratio_nt = median(rn, np);
}

typedef struct wres {
    const workload *w;
    double ms, fmin, ums, fb, ub, ceil_gbs, rate;
    cpairs cp;                               /* against STREAM copy, in turns */
    int reps, n;
    pairs pr;                                /* fused and unfused end to end, in pairs */
    char how[2048];
} wres;

static void run_workload(const workload *w, wres *res)
{
    fe_error err = {0};
    fe_graph *g = load_workload(w, 0);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_bench_opts o = {.budget_s = budget, .warmup = 2, .min_reps = 5};
    fe_bench_group b;
    double fr[ROUNDS], ur[ROUNDS], elems = 0;
    int32_t *all = all_nodes(g);
    if (!ex) {
        fprintf(stderr, "bench: %s: %s\n", w->name, err.message);
        exit(1);
    }
    memset(res, 0, sizeof *res);
    res->w = w;
    res->fmin = 1e30;
    res->fb = graph_io_bytes(g);
    for (int r = 0; r < ROUNDS; r++) {
        if (fe_bench_group_run(ex, all, g->nnodes, 1, FE_K_CHOICE_AUTO, &o, &b, &err)) {
            fprintf(stderr, "bench: %s: %s\n", w->name, err.message);
            exit(1);
        }
        fr[r] = b.fused.median_ms;
        ur[r] = b.members_ms;
        res->reps += b.fused.reps;
        if (b.fused.min_ms < res->fmin)
            res->fmin = b.fused.min_ms;
        snprintf(res->how, sizeof res->how, "%s", b.how);
        res->n = b.n;
        fe_bench_group_free(&b);
    }
    paired_copy(ex, g, all, res->fb, 31, &res->cp);
    paired_unfused(ex, g, all, FE_K_CHOICE_AUTO, 21, &res->pr);
    res->ub = unfused_bytes(g);
    res->ms = median(fr, ROUNDS);
    res->ums = median(ur, ROUNDS);
    for (int32_t t = 0; t < g->ntensors; t++)
        if (fe_graph_tensor(g, t)->flags & FE_T_OUTPUT)
            elems = (double)fe_graph_tensor(g, t)->numel;
    res->rate = in_cache_rate(w);
    res->ceil_gbs = res->fb / elems * res->rate / 1e9;
    free(all);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void print_workload(const wres *r)
{
    double gbs = r->fb / (r->ms * 1e-3) / 1e9, need = 0.8 * r->ub / r->fb;
    printf("%-44s %8.2f ms (min %.2f, %d reps)  %6.1f GB/s  %5.1f%% of copy  %5.1f%% of copy-nt\n",
           r->w->name, r->ms, r->fmin, r->reps, gbs, 100 * r->cp.ratio, 100 * r->cp.ratio_nt);
    printf("    in %d turns with copy: copy %.1f GB/s, copy-nt %.1f (medians); in cache (the same\n"
           "    kernel on data that stays in L2, a lower bound on its compute ceiling): %.2f G elements/s\n"
           "    = %.1f GB/s at its bytes per element (%.0f%% of that copy)\n", r->cp.n, r->cp.copy, r->cp.copy_nt, r->rate * 1e-9, r->ceil_gbs,
           100 * r->ceil_gbs / r->cp.copy);
    printf("    ran as: %s\n", r->how);
    printf("    unfused: %d kernels, %.0f MiB moved vs %.0f MiB fused; each kernel timed alone: %.2f ms "
           "(%.2fx)\n", r->n, r->ub / 1048576, r->fb / 1048576, r->ums, r->ums / r->ms);
    printf("    paired runs (%d pairs, fused and unfused end to end back to back): fused %.2f ms, "
           "unfused %.2f ms\n", r->pr.n, r->pr.f, r->pr.u);
    verdict(r->cp.ratio >= r->w->target, "bandwidth %.1f%% of copy (median of turns), target %.0f%%",
            100 * r->cp.ratio, 100 * r->w->target);
    verdict(r->pr.ratio >= need, "fused speedup %.2fx (median of paired ratios), target 0.8 x bytes "
            "ratio = %.2fx", r->pr.ratio, need);
}

typedef struct mres {
    double blocked, blas, fused, fused_members, m0, m1, m2, fblas;
    pairs pr;   /* fused and separate in pairs: the epilogue is ~2% of the matmul,
                 * below the host's drift between measurements */
    char fused_how[2048], fblas_how[2048];
} mres;


static void run_matmul(mres *r)
{
    fe_error err = {0};
    fe_graph *g = load("matmul_bias_gelu", NULL);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_bench_opts o = {.budget_s = budget, .warmup = 1, .min_reps = 3};
    fe_bench_group mb, mblas, fused, fblas;
    int32_t mm = 0, all[3] = {0, 1, 2};
    double a[ROUNDS], b[ROUNDS], c[ROUNDS], d[ROUNDS], e[ROUNDS];
    if (!ex) {
        fprintf(stderr, "bench: matmul: %s\n", err.message);
        exit(1);
    }
    for (int k = 0; k < ROUNDS; k++) {
        /* blocked first: OpenBLAS's threads keep spinning a while after a
         * call and would slow whatever runs next */
        if (fe_bench_group_run(ex, &mm, 1, 1, FE_K_CHOICE_MATMUL_BLOCKED, &o, &mb, &err) ||
            fe_bench_group_run(ex, all, 3, 1, FE_K_CHOICE_MATMUL_BLOCKED, &o, &fused, &err) ||
            fe_bench_group_run(ex, &mm, 1, 1, FE_K_CHOICE_MATMUL_BLAS, &o, &mblas, &err) ||
            fe_bench_group_run(ex, all, 3, 1, FE_K_CHOICE_MATMUL_BLAS, &o, &fblas, &err)) {
            fprintf(stderr, "bench: matmul: %s\n", err.message);
            exit(1);
        }
        struct timespec pause = {0, 300000000};   /* let OpenBLAS's threads go to sleep */
        nanosleep(&pause, NULL);
        a[k] = mb.fused.median_ms;
        b[k] = mblas.fused.median_ms;
        c[k] = fused.fused.median_ms;
        d[k] = fused.members_ms;
        e[k] = fblas.fused.median_ms;
        r->m0 = fused.members[0].median_ms;
        r->m1 = fused.members[1].median_ms;
        r->m2 = fused.members[2].median_ms;
        snprintf(r->fused_how, sizeof r->fused_how, "%s", fused.how);
        snprintf(r->fblas_how, sizeof r->fblas_how, "%s", fblas.how);
        fe_bench_group_free(&mb);
        fe_bench_group_free(&mblas);
        fe_bench_group_free(&fused);
        fe_bench_group_free(&fblas);
    }
    paired_unfused(ex, g, all, FE_K_CHOICE_MATMUL_BLOCKED, 15, &r->pr);
    r->blocked = median(a, ROUNDS);
    r->blas = median(b, ROUNDS);
    r->fused = median(c, ROUNDS);
    r->fused_members = median(d, ROUNDS);
    r->fblas = median(e, ROUNDS);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void print_matmul(const mres *r)
{
    double flop = 2.0 * 2048.0 * 2048.0 * 2048.0;
    printf("\nmatmul f32 2048x2048x2048 (%.1f GFLOP), median of %d rounds\n", flop * 1e-9, ROUNDS);
    printf("  %-40s %8.2f ms  %6.1f GFLOP/s\n", "matmul_blocked", r->blocked, flop / r->blocked * 1e-6);
    printf("  %-40s %8.2f ms  %6.1f GFLOP/s\n", "matmul_blas (OpenBLAS sgemm)", r->blas,
           flop / r->blas * 1e-6);
    printf("  %-40s %8.2f ms  (%s)\n", "matmul_blocked + bias + gelu, fused", r->fused, r->fused_how);
    printf("  %-40s %8.2f ms  (last round: matmul %.2f + add %.2f + gelu %.2f)\n",
           "matmul then separate add, gelu", r->fused_members, r->m0, r->m1, r->m2);
    printf("  %-40s %8.2f ms  (%s)\n", "matmul_blas + bias + gelu", r->fblas, r->fblas_how);
    printf("  paired runs (%d pairs, fused and separate back to back): fused %.2f ms, separate %.2f ms, "
           "median difference %.2f ms\n", r->pr.n, r->pr.f, r->pr.u, r->pr.diff);
    verdict(r->pr.diff > 0, "matmul+epilogue fused faster than matmul then epilogue: by %.2f ms "
            "(median of paired differences; %.2f ms separate)", r->pr.diff, r->pr.u);
    verdict(r->blocked <= 2.0 * r->blas, "blocked %.2f ms within 2x of OpenBLAS (limit %.2f ms)",
            r->blocked, 2.0 * r->blas);
}

/* bench_kernels [BUDGET [WORKLOAD...]]: seconds per item (default 0.2 or
 * $FE_BENCH_BUDGET) and the workloads to run (file names of W, or matmul;
 * default all). */
int main(int argc, char **argv)
{
    const char *e = getenv("FE_BENCH_BUDGET");
    bw m;
    enum { NW = (int)(sizeof W / sizeof W[0]) };
    wres wr[NW];
    mres mr;
    if (argc > 1)
        budget = atof(argv[1]);
    else if (e)
        budget = atof(e);
    if (budget <= 0)
        budget = 0.2;
    for (int i = 2; i < argc; i++) {
        int known = !strcmp(argv[i], "matmul");
        for (int k = 0; k < NW; k++)
            known |= !strcmp(argv[i], W[k].file);
        if (!known) {
            fprintf(stderr, "bench_kernels: no workload '%s' (swiglu add_rmsnorm gelu chain6 softmax "
                            "matmul)\n", argv[i]);
            return 2;
        }
    }
    find_models(argv[0]);
    printf("bench_kernels: %d threads, %.2f s per item, %d rounds, medians\n\n", omp_get_max_threads(),
           budget, ROUNDS);
    stream_alloc();
    stream(&m, 15);
    printf("memory bandwidth (STREAM-like, %zu MiB per array, median of 15):\n", stream_mib);
    printf("  copy     %6.1f GB/s   c = a\n", m.copy);
    printf("  copy-nt  %6.1f GB/s   c = a, non-temporal stores (no read for ownership)\n", m.copy_nt);
    printf("  triad    %6.1f GB/s   a = b + 3 c\n", m.triad);
    printf("  triad-nt %6.1f GB/s\n", m.triad_nt);
    printf("(the host's bandwidth drifts within a run, so each workload's ratios below come from\n"
           "runs taken in turns with copy and copy-nt: the median of the per-turn ratios)\n\n");
    printf("fused workloads (effective bandwidth = external inputs read once + outputs written once;\n"
           "the kernels stream their stores, so copy-nt is the tighter bound):\n");
    fflush(stdout);
    for (int i = 0; i < NW; i++) {
        if (!wanted(argc, argv, W[i].file))
            continue;
        run_workload(&W[i], &wr[i]);
        print_workload(&wr[i]);
        fflush(stdout);
    }
    if (wanted(argc, argv, "matmul")) {
        run_matmul(&mr);
        print_matmul(&mr);
    }
    printf("\n%d targets met, %d missed\n", npass, nfail);
    return 0;
}
