/* sim_executor.c: groups priced as a machine's executor runs them
 * (machine.h's executor = "cuda": the CUDA back end's kernels, planned
 * without a device) and the copies the executor adds (fe_sim_copy).
 * docs/simulator.md, "Executor", states the rules; sim.c's note the
 * register count they replace. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_group.h"
#include "sim.h"

/* A part as the back end runs it: a generated kernel whose threads each
 * hold held values at once (fe_cuda_shape.held: arrays of K) has those
 * registers, not one element's live values, and spills past the machine's
 * registers; a kernel of threads threads on a machine that needs
 * saturating_threads in flight streams and computes proportionally slower
 * below them. */
static void as_run(fe_sim_group_result *r, const fe_machine *m, int64_t threads, int64_t held)
{
    int64_t regs = m->reserved_registers + held, spill = regs - m->registers, bytes;
    if (held > 0 && threads > 0) {
        spill = spill > 0 ? spill : 0;
        r->regs = (int32_t)(regs < INT32_MAX ? regs : INT32_MAX);
        r->spill_regs = (int32_t)(spill < INT32_MAX ? spill : INT32_MAX);
        r->spill_bytes = __builtin_mul_overflow(spill * 8, threads, &bytes) ? INT64_MAX : bytes;
        r->spill_s = (double)r->spill_bytes / m->local_bandwidth;
    }
    double eff = m->saturating_threads > 0 && threads > 0 && threads < m->saturating_threads
                 ? (double)threads / (double)m->saturating_threads : 1.0;
    r->l3_s /= eff;
    r->l2_s /= eff;
    r->spill_s /= eff;
    r->compute_s /= eff;
    r->memory_s = r->l3_s + r->l2_s + r->spill_s;
    double body = m->overlap ? fmax(r->compute_s, r->memory_s) : r->compute_s + r->memory_s;
    r->time_s = r->launch_s + r->tile_s + r->collective_s + body;
}

/* Grids planned for this many multiprocessors are never capped: a part's
 * threads are what its data asks for. */
enum { EXECUTOR_SMS = 1 << 12 };

/* A kernel that reads and writes bytes once through L3 and holds nothing
 * on chip: a layout copy (see the note), or a copy the executor makes of
 * a view. */
void fe_sim_copy(int64_t bytes, int32_t nodes, const fe_machine *m, fe_sim_group_result *r)
{
    memset(r, 0, sizeof *r);
    r->nodes = nodes;
    r->split = r->split_default = 1;
    r->fits = 1;
    r->launch = FE_LAUNCH_KERNEL;
    r->l3_read = r->l3_write = bytes;
    r->l3_bytes = 2 * bytes;
    r->l3_s = (double)r->l3_bytes / m->l3_bandwidth;
    r->memory_s = r->l3_s;
    r->launch_s = m->launch_us * 1e-6;
    r->time_s = r->launch_s + r->memory_s;
}

/* A part of views only that the executor runs as a kernel (a strided copy,
 * since the next kernel reads it dense, as the CUDA back end does for a
 * lone transpose): a copy of what leaves the part, not a free view. */
static void price_view_kernel(const fe_graph *g, const fe_machine *m, const int32_t *ids, int k,
                              fe_sim_group_result *r)
{
    int64_t bytes = 0;
    for (int i = 0; i < k; i++) {
        const fe_node *nd = fe_graph_node(g, ids[i]);
        for (int o = 0; o < nd->nout; o++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, o));
            int leaves = (t->flags & FE_T_OUTPUT) != 0;
            for (int c = 0; c < t->ncons && !leaves; c++) {
                int32_t v = fe_tensor_consumer(g, t, c), in = 0;
                for (int j = 0; j < k && !in; j++)
                    in = ids[j] == v;
                leaves = !in;
            }
            bytes += leaves ? t->bytes : 0;
        }
    }
    fe_sim_copy(bytes, k, m, r);
}

/* A group on a machine whose executor is "cuda" (machine.h): priced as
 * the kernels the CUDA back end makes of it (kernels/gpu/cuda_group.h,
 * planned without a device), each part a group of its own in turn, so
 * the members between parts go through memory and each part is a launch,
 * and each part's registers and speed as its kernel runs (as_run). *done = 0
 * when the back end cannot plan the group: it is then priced whole, as
 * on any machine. */
int fe_sim_executor_group(const fe_graph *g, const fe_machine *m, const int32_t *nodes, int n,
                          int split, fe_sim_group_result *out, int *done, fe_error *err)
{
    fe_error why = {0};
    *done = 0;
    fe_cuda_group *gr = fe_cuda_group_plan(g, nodes, n, EXECUTOR_SMS, &why);
    if (!gr)
        return why.code == FE_ENOMEM ? fe_error_set(err, FE_ENOMEM, "%s", why.message) : FE_OK;
    const int32_t *members;
    int *part_of = malloc((size_t)n * sizeof *part_of);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    int64_t *threads = malloc((size_t)n * sizeof *threads), *held = malloc((size_t)n * sizeof *held);
    int rc = part_of && ids && threads && held ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
    int nparts = rc == FE_OK ? fe_cuda_group_parts(gr, &members, part_of, threads, held) : 0;
    fe_machine one = *m;
    one.executor[0] = '\0';
    one.saturating_threads = 0;
    if (rc == FE_OK && nparts == 1) {
        rc = fe_sim_group(g, &one, nodes, n, split, out, err);
        if (rc == FE_OK && out->launch == FE_LAUNCH_NONE && threads[0] > 0)
            price_view_kernel(g, m, nodes, n, out);
        as_run(out, m, threads[0], held[0]);
    } else if (rc == FE_OK) {
        fe_sim_group_result sum, r;
        memset(&sum, 0, sizeof sum);
        sum.split = sum.split_default = 1;
        sum.fits = 1;
        sum.launch = FE_LAUNCH_NONE;
        for (int p = 0; p < nparts && rc == FE_OK; p++) {
            int k = 0;
            for (int i = 0; i < n; i++)
                if (part_of[i] == p)
                    ids[k++] = members[i];
            if (k && (rc = fe_sim_group(g, &one, ids, k, 0, &r, err)) == FE_OK) {
                if (r.launch == FE_LAUNCH_NONE && threads[p] > 0)
                    price_view_kernel(g, m, ids, k, &r);
                as_run(&r, m, threads[p], held[p]);
                fe_sim_result_add(&sum, &r);
                /* a kernel among the parts makes it a kernel, else a library call */
                if (r.launch == FE_LAUNCH_KERNEL ||
                    (r.launch == FE_LAUNCH_EXTERN && sum.launch == FE_LAUNCH_NONE))
                    sum.launch = r.launch;
            }
        }
        *out = sum;
    }
    *done = rc == FE_OK;
    free(threads);
    free(held);
    free(ids);
    free(part_of);
    fe_cuda_group_free(gr);
    return rc;
}

