/* calibrate.c: a device measured with the engine's own kernels, as a
 * machine description for the simulator (fuseeng calibrate).
 *
 * Note on the method.
 *
 * Every figure comes from timing small generated models on the device,
 * each planned as one group (or one group per node) and run by the same
 * executor plans run on, and each figure is the one that makes the
 * simulator's own formula (core/sim/sim.c) give the measured time of its
 * probe: the probe is priced by fe_sim_group for its bytes and FLOPs, and
 * the figure solved for. So a calibrated machine is exact on its probes by
 * construction, and what fuseeng fidelity then measures on whole models is
 * how well the cost model's structure fits the device.
 *
 *   launch_us        a chain of 32 tiny adds, one kernel each: the time
 *                    per kernel when kernels run back to back, as plans do
 *   memory sweep     z = x + y over working sets from 64 KiB to 8 times the
 *                    cache the machine's L2 stands for (the CPU's last-level
 *                    cache, the GPU's L2): the effective bandwidth of each
 *   l3_bandwidth     from the largest sizes: the simulator charges a lone
 *                    op B / l3_bandwidth + B / l2_bandwidth, so
 *                    l3 = 1 / (1 / measured - 1 / l2)
 *   l2_bandwidth     a fused chain of 16 adds against a single add over
 *                    the same DRAM-sized tensors: the chain's extra time
 *                    is its members' extra on-chip traffic; where the
 *                    device keeps a chain's values in registers the extra
 *                    time is within noise, and the in-cache bandwidth of
 *                    the sweep (a bound, as its note says) stands
 *   vector_flops     a fused chain of 16 GELUs (tanh form) on a tensor
 *                    that fits the cache, FLOPs as the op registry counts
 *                    them; a chain of 16 multiplies beside it in the note
 *   matrix_flops     a square matmul per dtype the device computes
 *   tile_us          a fused chain of 4 adds run in 64 tiles against 1
 *   local_bandwidth  a wide fused group (24 products summed) whose
 *                    registers the simulator says spill: its time beyond
 *                    the simulator's spill-free price, per spilled byte;
 *                    a bound when the excess is within noise
 *   l2_bytes, memory_bytes, registers: read off the device
 *   link_*           no interconnect is measured on one device: the
 *                    note says which memory figure stands in
 *
 * Each probe is timed with the harness of fuseeng bench (warm-up, then
 * repetitions to a budget); a note gives the median and the interquartile
 * spread in percent of it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "calibrate.h"
#include "cuda.h"
#include "cuda_group.h"
#include "exec.h"
#include "gpu_exec.h"
#include "load.h"
#include "plan_build.h"
#include "progress.h"
#include "sim.h"
#include "timing.h"
#include "vecprog.h"

typedef struct cal {
    const fe_calib_opts *o;
    fe_machine *m;
    fe_calib_notes *notes;
    int step, nsteps;
    fe_progress pr;                  /* the one progress line (progress.h) */
} cal;

enum { NSTEPS = 20 };

static void progress(cal *c, const char *what)
{
    if (c->o->progress)
        fe_progress_step(&c->pr, c->step, what);
    c->step++;
}

static void note(cal *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(cal *c, const char *field, const char *fmt, ...)
{
    int i = fe_machine_field_index(field);
    if (i < 0 || i >= 32)
        return;
    char *dst = c->notes->field[i];
    size_t len = strlen(dst);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst + len, sizeof c->notes->field[i] - len, fmt, ap);
    va_end(ap);
}

/* ---- probe models ---- */

typedef struct text {
    char *buf;
    size_t len;
    FILE *f;
} text;

static int text_open(text *t, const char *name, fe_error *err)
{
    t->buf = NULL;
    if (!(t->f = open_memstream(&t->buf, &t->len)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    fprintf(t->f, "{\"format\": \"fuseeng.model/1\", \"name\": \"%s\", \"tensors\": {", name);
    return FE_OK;
}

static void tensor(text *t, int first, const char *name, const char *kind, const char *dtype,
                   int64_t rows, int64_t cols)
{
    fprintf(t->f, "%s\"%s\": {\"shape\": [%lld, %lld], \"dtype\": \"%s\", \"kind\": \"%s\"}",
            first ? "" : ", ", name, (long long)rows, (long long)cols, dtype, kind);
}

/* A chain of k ops: t1 = op(x [, w]), t2 = op(t1 [, w]), ..., the last an
 * output; binary ops read w, the same tensor, at every step. */
static int chain_model(text *t, const char *op, int binary, const char *attrs, int k,
                       int64_t rows, int64_t cols, fe_error *err)
{
    int rc = text_open(t, op, err);
    if (rc)
        return rc;
    tensor(t, 1, "x", "input", "f32", rows, cols);
    if (binary)
        tensor(t, 0, "w", "input", "f32", rows, cols);
    fputs("}, \"nodes\": [", t->f);
    for (int i = 1; i <= k; i++) {
        fprintf(t->f, "%s{\"name\": \"n%d\", \"op\": \"%s\", \"inputs\": [", i > 1 ? ", " : "", i, op);
        if (i == 1)
            fputs("\"x\"", t->f);
        else
            fprintf(t->f, "\"t%d\"", i - 1);
        fprintf(t->f, "%s], \"outputs\": [\"t%d\"]%s%s}", binary ? ", \"w\"" : "", i,
                attrs ? ", \"attrs\": " : "", attrs ? attrs : "");
    }
    fprintf(t->f, "], \"outputs\": [\"t%d\"]}", k);
    return fclose(t->f) == 0 ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
}

/* width products x * c_i summed: many values live at once. */
static int wide_model(text *t, int width, int64_t rows, int64_t cols, fe_error *err)
{
    int rc = text_open(t, "wide", err);
    if (rc)
        return rc;
    tensor(t, 1, "x", "input", "f32", rows, cols);
    fputs("}, \"nodes\": [", t->f);
    for (int i = 1; i <= width; i++)
        fprintf(t->f, "%s{\"name\": \"m%d\", \"op\": \"mul\", \"inputs\": [\"x\"], \"outputs\": "
                "[\"m%d\"], \"attrs\": {\"scalar\": %.3f}}", i > 1 ? ", " : "", i, i, 1.0 / i);
    for (int i = 2; i <= width; i++)
        fprintf(t->f, ", {\"name\": \"s%d\", \"op\": \"add\", \"inputs\": [\"%s%d\", \"m%d\"], "
                "\"outputs\": [\"s%d\"]}", i, i == 2 ? "m" : "s", i == 2 ? 1 : i - 1, i, i);
    fprintf(t->f, "], \"outputs\": [\"s%d\"]}", width);
    return fclose(t->f) == 0 ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
}

static int matmul_model(text *t, const char *dtype, int64_t m, int64_t k, int64_t n,
                        fe_error *err)
{
    int rc = text_open(t, "matmul", err);
    if (rc)
        return rc;
    tensor(t, 1, "a", "input", dtype, m, k);
    tensor(t, 0, "b", "weight", dtype, k, n);
    fputs("}, \"nodes\": [{\"name\": \"mm\", \"op\": \"matmul\", \"inputs\": [\"a\", \"b\"], "
          "\"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}", t->f);
    return fclose(t->f) == 0 ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
}

/* ---- timing a probe ---- */

typedef struct probe {
    fe_bench_stats st;          /* measured */
    fe_sim_group_result sim;    /* its price on c->m as it stands */
    double ms;                  /* median */
    double spread;              /* interquartile range / median */
} probe;

/* Time t's model as one group (fused, in split tiles) or one group per
 * node, and price it on c->m. Frees t's text. */
static int run_probe(cal *c, text *t, int fused, int split, probe *pr, fe_error *err)
{
    fe_graph *g = fe_load_model_buffer(t->buf, t->len, "calibration probe", NULL, err);
    free(t->buf);
    t->buf = NULL;
    if (!g)
        return err->code;
    fe_plan *p = NULL;
    fe_exec *ex = NULL;
    int32_t *ids = malloc((size_t)g->nnodes * sizeof *ids);
    int rc = ids ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
    if (rc == FE_OK) {
        for (int32_t v = 0; v < g->nnodes; v++)
            ids[v] = fused ? 0 : v;
        p = fe_plan_from_labels(g, ids, err);
        rc = p ? FE_OK : err->code;
    }
    if (rc == FE_OK)
        for (int32_t i = 0; i < p->ngroups; i++)
            p->groups[i].split = fused ? split : 1;
    fe_exec_opts eo = {.seed = 1};
    if (rc == FE_OK && !(ex = fe_exec_new(g, &eo, err)))
        rc = err->code ? err->code : FE_ENOMEM;
    if (rc == FE_OK && c->o->device == FE_DEVICE_CUDA)
        rc = fe_gpu_exec_attach(ex, err);
    fe_bench_opts bo = {.budget_s = c->o->budget > 0 ? c->o->budget : 0.25, .min_reps = 5};
    if (rc == FE_OK)
        rc = fe_bench_plan(ex, p, &bo, &pr->st, err);
    if (rc == FE_OK) {
        for (int32_t v = 0; v < g->nnodes; v++)
            ids[v] = v;
        rc = fused ? fe_sim_group(g, c->m, ids, g->nnodes, split, &pr->sim, err)
                   : fe_sim_unfused(g, c->m, ids, g->nnodes, &pr->sim, err);
    }
    if (rc == FE_OK) {
        pr->ms = pr->st.median_ms;
        pr->spread = pr->ms > 0 ? pr->st.spread_ms / pr->ms : 0;
    }
    free(ids);
    fe_exec_free(ex);
    fe_plan_free(p);
    fe_graph_free(g);
    return rc;
}

static int chain_probe(cal *c, const char *op, int binary, const char *attrs, int k, int64_t elems,
                       int fused, int split, probe *pr, fe_error *err)
{
    int64_t cols = elems >= 4096 ? 4096 : elems;
    text t;
    int rc = chain_model(&t, op, binary, attrs, k, elems / cols, cols, err);
    return rc ? rc : run_probe(c, &t, fused, split, pr, err);
}

/* ---- the figures ---- */

static void read_device(cal *c, int64_t *cache, fe_error *err)
{
    fe_machine *m = c->m;
    (void)err;
    if (c->o->device == FE_DEVICE_CUDA) {
        const fe_cuda_dev *d = fe_cuda_device();
        m->l2_bytes = d->l2_bytes;
        m->memory_bytes = d->mem_bytes;
        m->registers = 255;
        m->reserved_registers = 16;
        m->elements_per_thread = 1;
        snprintf(m->executor, sizeof m->executor, "cuda");
        note(c, "executor", "groups are priced as the kernels fuseeng's CUDA back end makes of "
             "them\n");
        snprintf(m->description, sizeof m->description, "calibrated: %s, %d SMs, %lld MiB L2",
                 d->name, d->sms, (long long)(d->l2_bytes >> 20));
        note(c, "l2_bytes", "the GPU's L2, as the driver reports it\n");
        note(c, "memory_bytes", "the GPU's memory, as the driver reports it\n");
        note(c, "registers", "the most a CUDA thread can hold (the ISA's limit)\n");
        note(c, "reserved_registers", "addresses and indices of a generated kernel: not measured\n");
        note(c, "elements_per_thread", "the generated kernels compute one element per thread\n");
    } else {
        int64_t total, avail;
        fe_exec_machine_memory(&total, &avail);
        m->l2_bytes = fe_k_cache_share();
        m->memory_bytes = total > m->l2_bytes ? total : m->l2_bytes;
        m->registers = FE_K_VLANES == 16 ? 32 : 16;
        m->reserved_registers = 4;
        m->elements_per_thread = 1;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(m->description, sizeof m->description,
                 "calibrated: %ld CPU%s, %s, %lld MiB last-level cache as L2", ncpu,
                 ncpu == 1 ? "" : "s", FE_K_VLANES == 16 ? "AVX-512" : "AVX2",
                 (long long)(m->l2_bytes >> 20));
        note(c, "l2_bytes", "the share of the last-level cache this process's threads can keep "
             "(sysfs, at most 12 MiB a thread: kernels/vec/cache.h), which the executor's "
             "choices aim at\n");
        note(c, "memory_bytes", "physical memory (sysconf)\n");
        note(c, "registers", "vector registers of the ISA the kernels were built for (%s)\n",
             FE_K_VLANES == 16 ? "AVX-512: 32" : "AVX2: 16");
        note(c, "reserved_registers", "the vector programs keep about 4 for addresses and "
             "constants: not measured\n");
        note(c, "elements_per_thread", "a \"thread\" is one vector of lanes, one value each\n");
    }
    *cache = m->l2_bytes;
}

/* A probe's figure line: "median 1.234 ms, spread 2.1%". */
static void fig(char *buf, size_t size, const probe *p)
{
    snprintf(buf, size, "%.4g ms (spread %.1f%%)", p->ms, 100 * p->spread);
}

static int launch(cal *c, fe_error *err)
{
    probe p;
    progress(c, "launch overhead: 32 tiny kernels");
    int rc = chain_probe(c, "add", 1, NULL, 32, 256, 0, 1, &p, err);
    if (rc)
        return rc;
    c->m->launch_us = p.ms * 1e3 / 32;
    char f[96];
    fig(f, sizeof f, &p);
    note(c, "launch_us", "32 adds of 256 floats, one kernel each, back to back: %s, / 32\n", f);
    return FE_OK;
}

/* Elements of a DRAM-sized probe of k chained ops: past 8 times the cache
 * (at least 256 MiB of working set), within an eighth of the free memory
 * for the three tensors and a quarter for the reference's k + 2. */
static int64_t dram_elems(const cal *c, int64_t cache, int k)
{
    int64_t ws = 8 * cache > (256 << 20) ? 8 * cache : 256 << 20, total, avail;
    fe_exec_machine_memory(&total, &avail);
    if (c->o->device == FE_DEVICE_CPU && avail > 0) {
        if (ws > avail / 8)
            ws = avail / 8;
        if (ws / 12 * 4 * (k + 2) > avail / 4)
            ws = avail / 4 / (4 * (k + 2)) * 12;
    }
    int64_t e = ws / 12 / 4096 * 4096;
    return e > 4096 ? e : 4096;
}

/* The sweep: bandwidth of z = x + y by working set; returns the DRAM
 * figure and the best in-cache figure (bytes/s). */
static int sweep(cal *c, int64_t cache, double *dram, double *incache, fe_error *err)
{
    int64_t top = 12 * dram_elems(c, cache, 1);
    char line[160];
    *dram = 0, *incache = 0;
    note(c, "l3_bandwidth", "memory sweep, z = x + y (f32, 3 tensors; bytes = working set):\n");
    int n = 0, nfar = 0;
    double last = 0, far = 0;
    int64_t sizes[16];
    int ns = 0;
    for (int64_t ws = 64 << 10; ws < top && ns < 15; ws *= 4)
        sizes[ns++] = ws;
    sizes[ns++] = top;
    for (; n < ns; n++) {
        int64_t ws = sizes[n];
        probe p;
        snprintf(line, sizeof line, "memory sweep: %lld KiB", (long long)(ws >> 10));
        progress(c, line);
        int64_t elems = ws / 12 / 4096 * 4096;
        if (elems < 4096)
            elems = ws / 12;
        int rc = chain_probe(c, "add", 1, NULL, 1, elems, 0, 1, &p, err);
        if (rc)
            return rc;
        double t = p.ms * 1e-3 - c->m->launch_us * 1e-6;
        double bw = t > 0 ? 12.0 * (double)elems / t : 0;
        note(c, "l3_bandwidth", "  %8lld KiB  %7.1f GB/s  (spread %.1f%%)\n",
             (long long)(12 * elems >> 10), bw / 1e9, 100 * p.spread);
        if (12 * elems <= cache / 2 && bw > *incache)
            *incache = bw;
        if (12 * elems >= 4 * cache)
            far += bw, nfar++;
        last = bw;
    }
    *dram = nfar ? far / nfar : last;
    return *dram > 0 ? FE_OK : fe_error_set(err, FE_ERUNTIME, "calibrate: the memory sweep "
                                            "measured no time (a clock too coarse?)");
}

static int bandwidths(cal *c, int64_t cache, fe_error *err)
{
    double dram, incache;
    int rc = sweep(c, cache, &dram, &incache, err);
    if (rc)
        return rc;
    fe_machine *m = c->m;
    /* The fused chain against one add over DRAM-sized tensors. */
    int64_t elems = dram_elems(c, cache, 16);
    probe one, chain;
    progress(c, "on-chip traffic: a fused chain of 16 adds");
    if ((rc = chain_probe(c, "add", 1, NULL, 1, elems, 1, 1, &one, err)) ||
        (rc = chain_probe(c, "add", 1, NULL, 16, elems, 1, 1, &chain, err)))
        return rc;
    double extra = (chain.ms - one.ms) * 1e-3;
    double bytes = (double)(chain.sim.l2_traffic - one.sim.l2_traffic);
    double noise = fmax(chain.spread * chain.ms, one.spread * one.ms) * 1e-3;
    char a[96], b[96];
    fig(a, sizeof a, &one);
    fig(b, sizeof b, &chain);
    if (extra > 2 * noise && extra > 0.02 * one.ms * 1e-3) {
        m->l2_bandwidth = bytes / extra;
        note(c, "l2_bandwidth", "a fused chain of 16 adds over %lld MiB took %s, one add %s: "
             "%.3g extra bytes of on-chip traffic in the extra time\n",
             (long long)(12 * elems >> 20), b, a, bytes);
    } else {
        m->l2_bandwidth = bytes / fmax(2 * noise, 0.02 * one.ms * 1e-3);
        note(c, "l2_bandwidth", "a fused chain of 16 adds over %lld MiB took %s, one add %s: "
             "its %.3g extra bytes of on-chip traffic cost no time beyond noise (the values "
             "stay in registers), so this is a lower bound, those bytes over the noise; the "
             "sweep's best in cache was %.1f GB/s\n", (long long)(12 * elems >> 20), b, a,
             bytes, incache / 1e9);
    }
    if (m->l2_bandwidth < 2 * dram) {
        note(c, "l2_bandwidth", "raised to twice the memory bandwidth, the least that keeps "
             "the L2 the fast memory of the model (measured %.3g)\n", m->l2_bandwidth);
        m->l2_bandwidth = 2 * dram;
    }
    /* A lone op is charged B / l3 + B / l2 (sim.c): solve for l3. */
    double inv = 1 / dram - 1 / m->l2_bandwidth;
    m->l3_bandwidth = inv > 0 ? 1 / inv : dram;
    note(c, "l3_bandwidth", "sizes from 4 times the cache up give %.1f GB/s; the simulator adds the "
         "on-chip traffic of a lone op (B / l2_bandwidth), so this is the figure that makes "
         "its time %.1f GB/s\n", dram / 1e9, dram / 1e9);
    m->link_bandwidth = dram;
    note(c, "link_bandwidth", "not measured: one device has no interconnect; the memory "
         "bandwidth stands in (ranks on one host share it)\n");
    return FE_OK;
}

/* The GPU: how many threads in flight a kernel needs to stream at the
 * memory bandwidth, from a column sum whose kernel runs a thread a column. */
static int saturation(cal *c, fe_error *err)
{
    int64_t rows = 32768, cols = 1024;
    text t;
    int rc = text_open(&t, "colsum", err);
    if (rc)
        return rc;
    tensor(&t, 1, "x", "input", "f32", rows, cols);
    fputs("}, \"nodes\": [{\"name\": \"s\", \"op\": \"sum\", \"inputs\": [\"x\"], "
          "\"outputs\": [\"y\"], \"attrs\": {\"axes\": [0], \"keepdim\": false}}], "
          "\"outputs\": [\"y\"]}", t.f);
    if (fclose(t.f) != 0)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    fe_graph *g = fe_load_model_buffer(t.buf, t.len, "calibration probe", NULL, err);
    int64_t threads = 0;
    if (g) {
        int32_t id = 0;
        int part;
        const int32_t *members;
        fe_cuda_group *gr = fe_cuda_group_plan(g, &id, 1, 1 << 12, err);
        if (gr && fe_cuda_group_parts(gr, &members, &part, &threads, NULL) != 1)
            threads = 0;
        fe_cuda_group_free(gr);
        fe_graph_free(g);
    }
    probe p;
    progress(c, "threads to stream: a column sum");
    if ((rc = run_probe(c, &t, 0, 1, &p, err)))
        return rc;
    double meas = p.ms * 1e-3 - c->m->launch_us * 1e-6;
    double pred = p.sim.time_s - p.sim.launch_s;
    char f[96];
    fig(f, sizeof f, &p);
    if (threads > 0 && meas > pred && pred > 0) {
        c->m->saturating_threads = (int64_t)((double)threads * meas / pred);
        note(c, "saturating_threads", "a column sum of [%lld, %lld] floats runs %lld threads: "
             "%s, against %.4g ms at the memory bandwidth\n", (long long)rows, (long long)cols,
             (long long)threads, f, pred * 1e3 + c->m->launch_us * 1e-3);
    } else {
        note(c, "saturating_threads", "a column sum of [%lld, %lld] floats (%lld threads) took "
             "%s, no slower than the memory bandwidth: no kernel is priced as starved\n",
             (long long)rows, (long long)cols, (long long)threads, f);
    }
    return FE_OK;
}

static int vector_rate(cal *c, int64_t cache, fe_error *err)
{
    int64_t elems = cache / 4 / 8 / 4096 * 4096;   /* x and the output fit a quarter */
    if (c->o->device == FE_DEVICE_CUDA)
        elems = 64 << 20;                          /* enough threads to fill the card */
    if (elems < 4096)
        elems = 4096;
    probe gelu, mul;
    progress(c, "vector FLOPs: 16 GELUs fused");
    int rc = chain_probe(c, "gelu", 0, "{\"approximate\": \"tanh\"}", 16, elems, 1, 1, &gelu, err);
    progress(c, "vector FLOPs: 16 multiplies fused");
    if (rc || (rc = chain_probe(c, "mul", 1, NULL, 16, elems, 1, 1, &mul, err)))
        return rc;
    double t = gelu.ms * 1e-3 - c->m->launch_us * 1e-6;
    double tm = mul.ms * 1e-3 - c->m->launch_us * 1e-6;
    c->m->vector_flops[FE_F32] = t > 0 ? (double)gelu.sim.flops / t : 1e9;
    char a[96], b[96];
    fig(a, sizeof a, &gelu);
    fig(b, sizeof b, &mul);
    note(c, "vector_flops", "16 fused GELUs (tanh form) over %lld floats: %s, %.3g FLOPs as the "
         "registry counts them (10 per GELU). 16 fused multiplies: %s, %.3g FLOP/s (memory-bound "
         "or not, the simpler op runs at a different rate per counted FLOP)\n",
         (long long)elems, a, (double)gelu.sim.flops, b, tm > 0 ? (double)mul.sim.flops / tm : 0);
    return FE_OK;
}

static int matrix_rate(cal *c, fe_error *err)
{
    static const int dts[] = {FE_F32, FE_F16, FE_BF16};
    int64_t n = c->o->device == FE_DEVICE_CUDA ? 8192 : 1024;
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        char what[80];
        snprintf(what, sizeof what, "matrix FLOPs: %lld^3 matmul, %s", (long long)n,
                 fe_dtype_name(dts[i]));
        progress(c, what);
        text t;
        probe p;
        int rc = matmul_model(&t, fe_dtype_name(dts[i]), n, n, n, err);
        if (rc || (rc = run_probe(c, &t, 0, 1, &p, err)))
            return rc;
        double s = p.ms * 1e-3 - c->m->launch_us * 1e-6;
        c->m->matrix_flops[dts[i]] = s > 0 ? (double)p.sim.flops / s : 1e9;
        char f[96];
        fig(f, sizeof f, &p);
        note(c, "matrix_flops", "%s: a %lld x %lld x %lld matmul, %s\n", fe_dtype_name(dts[i]),
             (long long)n, (long long)n, (long long)n, f);
    }
    /* A transformer's small product (GPT-2's [256, 768] x [768, 768]) does not
     * reach that rate: the difference is a fixed cost per library call. */
    text t;
    probe p;
    progress(c, "library calls: a small matmul");
    int rc = matmul_model(&t, "f32", 256, 768, 768, err);
    if (rc || (rc = run_probe(c, &t, 0, 1, &p, err)))
        return rc;
    double extra = p.ms * 1e-3 - p.sim.time_s;
    char f[96];
    fig(f, sizeof f, &p);
    c->m->library_us = extra > 0 ? extra * 1e6 : 0;
    note(c, "library_us", "a 256 x 768 x 768 f32 matmul: %s, against %.4g ms at matrix_flops "
         "and the bandwidths%s\n", f, p.sim.time_s * 1e3, extra > 0 ? "" : " (no slower: 0)");
    return FE_OK;
}

static int tiles(cal *c, int64_t cache, fe_error *err)
{
    int64_t elems = 2 * cache / 12 / 4096 * 4096;
    probe one, many;
    progress(c, "tile overhead: 1 tile against 64");
    int rc = chain_probe(c, "add", 1, NULL, 4, elems, 1, 1, &one, err);
    if (rc || (rc = chain_probe(c, "add", 1, NULL, 4, elems, 1, 64, &many, err)))
        return rc;
    double per = (many.ms - one.ms) * 1e3 / 63;
    char a[96], b[96];
    fig(a, sizeof a, &one);
    fig(b, sizeof b, &many);
    c->m->tile_us = per > 0 ? per : 0;
    note(c, "tile_us", "a fused chain of 4 adds over %lld floats in 1 tile: %s; in 64 tiles: "
         "%s%s\n", (long long)elems, a, b, per > 0 ? "" : " (no slower: 0)");
    return FE_OK;
}

static int spills(cal *c, int64_t cache, fe_error *err)
{
    fe_machine *m = c->m;
    int64_t elems = 2 * cache / 8 / 4096 * 4096;
    if (c->o->device == FE_DEVICE_CUDA)
        elems = 64 << 20;
    text t;
    probe w;
    progress(c, "spills: 24 products summed, fused");
    int rc = wide_model(&t, 24, elems / 4096, 4096, err);
    if (rc || (rc = run_probe(c, &t, 1, 1, &w, err)))
        return rc;
    double mem = w.sim.l3_s + w.sim.l2_s;   /* the price without its spill term */
    double body = m->overlap ? fmax(w.sim.compute_s, mem) : w.sim.compute_s + mem;
    double t_meas = w.ms * 1e-3;
    double excess = t_meas - (m->launch_us * 1e-6 + body);
    double noise = fmax(w.spread * t_meas, 0.05 * t_meas);
    char f[96];
    fig(f, sizeof f, &w);
    if (w.sim.spill_bytes <= 0) {
        m->local_bandwidth = m->l2_bandwidth;
        note(c, "local_bandwidth", "the probe did not spill on this register budget: the L2 "
             "bandwidth stands in\n");
    } else if (excess > noise) {
        m->local_bandwidth = (double)w.sim.spill_bytes / excess;
        note(c, "local_bandwidth", "24 products summed in one kernel over %lld floats: %s, "
             "%.3g ms beyond its spill-free price for %.3g spilled bytes\n", (long long)elems, f,
             excess * 1e3, (double)w.sim.spill_bytes);
    } else {
        m->local_bandwidth = fmin((double)w.sim.spill_bytes / noise, 1e16);
        note(c, "local_bandwidth", "24 products summed in one kernel over %lld floats: %s, "
             "within noise (%.3g ms) of its spill-free price although the simulator counts "
             "%.3g spilled bytes: a lower bound, the spilled bytes over the noise\n",
             (long long)elems, f, noise * 1e3, (double)w.sim.spill_bytes);
    }
    return FE_OK;
}

int fe_calibrate(const fe_calib_opts *o, fe_machine *m, fe_calib_notes *notes, fe_error *err)
{
    memset(m, 0, sizeof *m);
    memset(notes, 0, sizeof *notes);
    cal c = {o, m, notes, 0, NSTEPS, {{0}, 0, 0, 0, 0}};
    fe_progress_begin(&c.pr, "calibrate: probe", NSTEPS);
    int rc = FE_OK;
    if (o->device == FE_DEVICE_CUDA && (rc = fe_cuda_open(err)) != FE_OK)
        return rc;
    snprintf(m->name, sizeof m->name, "%s", o->name ? o->name : o->device ? "cuda" : "host");
    /* Provisional figures: the probes are priced on the machine as it is
     * filled in, each figure solved after those it depends on. */
    m->l2_bandwidth = m->l3_bandwidth = m->local_bandwidth = m->link_bandwidth = 1e11;
    m->matrix_flops[FE_F32] = m->vector_flops[FE_F32] = 1e11;
    m->overlap = 1;
    int64_t cache;
    read_device(&c, &cache, err);
    if ((rc = launch(&c, err)) || (rc = bandwidths(&c, cache, err)) ||
        (o->device == FE_DEVICE_CUDA && (rc = saturation(&c, err))) ||
        (rc = vector_rate(&c, cache, err)) || (rc = matrix_rate(&c, err)) ||
        (rc = tiles(&c, cache, err)) || (rc = spills(&c, cache, err)))
        goto out;
    m->link_latency_us = m->launch_us;
    note(&c, "link_latency_us", "not measured: a kernel launch stands in for a ring step\n");
    note(&c, "overlap", "compute and memory traffic overlap on an out-of-order CPU and on a "
         "GPU: a kernel takes the longer of the two (not measured apart)\n");
    rc = fe_machine_check(m, "the calibrated machine", err);
out:
    fe_progress_end(&c.pr);
    return rc;
}
