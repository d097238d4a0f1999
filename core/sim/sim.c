/* sim.c: the GCU simulator's cost model: the price of a group, and of a plan.
 *
 * Note on the model.
 *
 * The machine (seed 004) is a scratchpad accelerator: a kernel loads its
 * operands from device memory (L3) into a small fast L2, computes there and
 * writes its results back. Fusion pays because a fused group's
 * intermediates never leave the L2 -- if they fit. Everything is priced per
 * group, a group being the nodes one kernel runs (a single node unfused).
 *
 *        L3 (device memory, slow)            group {silu, mul}, split 3
 *     g ---- read once ------> +-------------------------+
 *                              |  silu -> t -> mul       | -- write once --> y
 *     u ---- read once ------> +-------------------------+
 *     (a weight or broadcast operand here would be read 3 times, once a tile)
 *                               t stays in L2 if a tile fits
 *
 * Tensors of a group G (members in topological order):
 *   external input   read by G, produced outside it (inputs, weights, other
 *                    groups' outputs); charged once however many members
 *                    read it, for the bytes its readers in G touch (a slice
 *                    or gather touches less than the whole tensor)
 *   external output  produced in G and read outside G, or a graph output
 *   intermediate     produced in G and read only inside it (or by nobody)
 *
 * Working set (seed 004's compute_fusion_memory_peak). Walk the members in
 * order. Before member v runs, its external inputs not loaded yet are loaded
 * and its outputs allocated; the live bytes then are one step of the walk.
 * After it, every buffer whose last reader in G is v is freed (an output no
 * member reads is freed at once, having been written back).
 *     working_set = max over steps of live bytes
 * (The seed frees before measuring, which forgets the node that is running;
 * we measure first.)
 *
 * Split (seed 004's TLF, tile-level fusion). A group's split is the number
 * of tiles it runs in: a loop over split tiles, each doing 1/split of its
 * iteration space. The iteration space is the group's anchor: its
 * largest non-weight tensor (lowest id on ties). A tensor is tiled along a
 * dimension of the anchor -- each tile touches 1/split of it -- unless it is a
 * weight, or smaller than the anchor and not of the anchor's size at that
 * dimension (dimensions aligned from the right, as numpy broadcasts): a
 * broadcast operand such as the causal mask [1,1,S,S] against scores
 * [1,32,S,S] is untiled along heads but tiled along rows. Operand roles
 * override shapes: a matmul needs all of B for a tile of rows and all of A
 * for a tile of columns, conv2d all input channels for a tile of output
 * channels, sdpa all of k and v for a tile of queries. The tiled
 * dimension is the anchor's dimension (of size > 1) that leaves the fewest
 * external input bytes untiled, the outermost on ties. Untiled operands are
 * read in full by every tile. Each step of the walk has tiled bytes T and
 * untiled U:
 *     l2_peak    = max over steps of ceil(T / split) + U
 *     fits       = l2_peak <= L2        (L2: the machine's l2_bytes)
 *     occupancy  = min(l2_peak, L2)     (what the kernel holds on chip:
 *                  a tile that needs more streams or overflows the rest)
 * The default split is 1 for a group without intermediates (nothing to keep
 * on chip: a lone op streams its operands) or whose working set fits;
 * otherwise the smallest split that makes a tile fit,
 *     split_default = max over steps of ceil(T / (L2 - U)),
 * which is seed 004's ceil(working_set / L2) when every operand is tiled;
 * and 1 when some step's untiled bytes alone fill the L2 (tiling cannot
 * help). A policy may pass any split >= 1 instead.
 *
 * Traffic, in bytes:
 *   overflow = fits ? 0 : 2 * intermediates       (written out, read back)
 *   reread     = (split - 1) * untiled external inputs
 *   l3_read    = external inputs + reread + overflow / 2
 *   l3_write   = external outputs + overflow / 2
 *   l2_traffic = sum over members of bytes read + written (ops.c) + reread
 *                (reports and ctx:simulate call it l2_bytes, a name their
 *                formats keep; in the code l2_bytes is the machine's L2)
 *
 * Registers (seed 003's spill question). A fused kernel holds every
 * member's live values per element (ops.c's "live") at once:
 *   regs        = reserved_registers
 *               + elements_per_thread * sum over members of live * words
 *   words       = 32-bit registers per value of the member's output dtype
 *                 (2 for i64, else 1)
 *   spill_regs  = max(0, regs - registers)
 *   threads     = ceil(anchor elements / elements_per_thread)
 *   spill_bytes = spill_regs * 4 * 2 * threads     (one store, one reload)
 * On a machine with an executor (sim_executor.c, "Executors" below), a
 * generated kernel's registers are the values its thread holds instead:
 *   regs        = reserved_registers + held   (fe_cuda_shape.held: its
 *                 arrays of K values a thread, K from its launch shape)
 *
 * Time, in seconds:
 *   compute    = sum over members of flops / peak, the peak taken from
 *                matrix_flops (matmul, conv2d, sdpa) or vector_flops (the
 *                rest) for the dtype of the member's first output
 *   memory     = l3_bytes / l3_bandwidth + l2_traffic / l2_bandwidth
 *              + spill_bytes / local_bandwidth
 *   body       = overlap ? max(compute, memory) : compute + memory
 *   collective = for each all_reduce member over p = world_size ranks, a
 *                ring: 2 (p-1)/p * input bytes / link_bandwidth
 *                      + 2 (p-1) * link_latency
 *   time       = launch + (split > 1 ? split * tile : 0) + collective + body
 * An all_reduce grouped with its elementwise epilogue (seed 001) is one
 * collective kernel: one launch, and its output stays on chip.
 *
 * Launches (launch.h). A group made only of views (reshape, transpose,
 * slice, expand) launches nothing: its consumers read the producer's
 * buffer through a strided index, so it costs no time and no bytes and
 * is not a kernel. A lone matmul, conv2d or sdpa is an extern library
 * call: priced like any group, counted apart from generated kernels.
 * Inside a fused group a view is index math too: its output, unless
 * read outside the group, is an alias that takes no buffer, no L2 traffic
 * and no registers (what it reads is charged to the group as usual).
 *
 * Plan. Groups run back to back in plan order; a group starts when the one
 * before ends. Device memory while group i runs:
 *     all weights (resident throughout)
 *   + every tensor that crosses groups, live from its producer's group
 *     (group 0 for graph inputs) to its last reader's group (the end for
 *     graph outputs)
 *   + group i's intermediates if they overflow the L2
 *   + each layout copy, from its kernel to its last reader's group
 * and mem_peak is the maximum over groups. The plan's l2_peak is the
 * largest occupancy of any group, so it never exceeds the L2; a group's
 * own l2_peak is what its tile needs, which may.
 *
 * Layout copies (plan.h's fe_copy) are generated kernels of their own,
 * run just before the group that first reads the tensor: a launch plus
 * the tensor's bytes read and written through L3, nothing on chip, and
 * device memory for the copy (the original stays: weights are resident,
 * inputs are the caller's) until its last reader's group ends. Readers
 * then read the copy instead, at the same bytes.
 *
 * What the model ignores: L3 data cached across kernels (every kernel reads
 * its inputs from L3 again); overlap between kernels; tiling along more than one dimension
 * (attention with q @ k^T inside a group cannot tile heads and rows at
 * once); tile shapes (a tile is exactly 1/split of everything tiled, even
 * when the split exceeds the tiled dimension); partial sums
 * of reductions across tiles; the internal blocking of a lone matmul (its
 * operands stream once); occupancy and bank conflicts. Registers add up over
 * all members although values die along a chain: the same pessimism that
 * makes Inductor's estimate veto big fusions.
 *
 * Cost: one pass over the members' inputs and outputs, plus, per tensor,
 * a scan of its readers that lie between the group's first and last
 * member. No allocation up to SMALL members; a plan allocates once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "sim.h"

#define SMALL 64

/* A group's membership: its sorted members, and for plans the plan's
 * node -> group map, which makes the test O(1). */
typedef struct gview {
    const fe_graph *g;
    const int32_t *nodes;
    int32_t n;
    const int32_t *group_of;
    int32_t gid;
    int32_t lo, hi;
} gview;

typedef struct step {
    int64_t tiled, untiled;
} step;

typedef struct anchor {
    int64_t numel;
    int64_t size;        /* extent of the tiled dimension */
    int from_right;      /* its position counted from the last dimension */
} anchor;

static inline int member(const gview *s, int32_t v)
{
    if (v < s->lo || v > s->hi)
        return 0;
    if (s->group_of)
        return s->group_of[v] == s->gid;
    int32_t a = 0, b = s->n - 1;
    while (a <= b) {
        int32_t mid = (a + b) >> 1, x = s->nodes[mid];
        if (x == v)
            return 1;
        if (x < v)
            a = mid + 1;
        else
            b = mid - 1;
    }
    return 0;
}

/* First position in t's reader list (sorted, one entry per node) holding a
 * node >= v. */
static int32_t reader_pos(const fe_graph *g, const fe_tensor *t, int32_t v)
{
    const int32_t *c = &g->cons[t->cons_off];
    int32_t a = 0, b = t->ncons;
    while (a < b) {
        int32_t mid = (a + b) >> 1;
        if (c[mid] < v)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* Does a member read t before the reader at pos (dir < 0) or after it? */
static int member_reads(const gview *s, const fe_tensor *t, int32_t pos, int dir)
{
    const int32_t *c = &s->g->cons[t->cons_off];
    if (dir < 0) {
        for (int32_t j = pos - 1; j >= 0 && c[j] >= s->lo; j--)
            if (member(s, c[j]))
                return 1;
    } else {
        for (int32_t j = pos + 1; j < t->ncons && c[j] <= s->hi; j++)
            if (member(s, c[j]))
                return 1;
    }
    return 0;
}

/* Whether an output of a member is read outside the group and inside it. */
static void output_readers(const gview *s, const fe_tensor *t, int *outside, int *inside)
{
    const int32_t *c = &s->g->cons[t->cons_off];
    *outside = *inside = 0;
    if (t->ncons > 0 && c[t->ncons - 1] > s->hi)
        *outside = 1;
    for (int32_t j = 0; j < t->ncons && c[j] <= s->hi && !(*outside && *inside); j++) {
        if (member(s, c[j]))
            *inside = 1;
        else
            *outside = 1;
    }
}

/* Bytes of input k (tensor t) that node n touches: all of it, except what
 * slices, gathers and custom ops with a smaller byte count select. */
static int64_t touched(const fe_graph *g, const fe_node *n, int k, const fe_tensor *t)
{
    int64_t part = t->bytes;
    switch (n->op) {
    case FE_OP_SLICE:
        part = n->bytes_written;
        break;
    case FE_OP_GATHER:
    case FE_OP_EMBEDDING:
        if (k == 0)
            part = n->bytes_written;
        break;
    case FE_OP_CUSTOM: {
        int64_t all = 0;
        for (int j = 0; j < n->nin; j++)
            all += fe_graph_tensor(g, fe_node_input(g, n, j))->bytes;
        if (all > 0 && n->bytes_read < all)
            part = (int64_t)((double)t->bytes * (double)n->bytes_read / (double)all);
        break;
    }
    default:
        break;
    }
    return part < t->bytes ? part : t->bytes;
}

/* What the group loads of external input tid: the sum over its member
 * readers of what each touches, at most the whole tensor. */
static int64_t loaded_bytes(const gview *s, int32_t tid, const fe_tensor *t)
{
    const fe_graph *g = s->g;
    const int32_t *c = &g->cons[t->cons_off];
    int64_t sum = 0;
    for (int32_t j = reader_pos(g, t, s->lo); j < t->ncons && c[j] <= s->hi; j++) {
        if (!member(s, c[j]))
            continue;
        const fe_node *n = fe_graph_node(g, c[j]);
        for (int k = 0; k < n->nin; k++) {
            if (fe_node_input(g, n, k) == tid) {
                sum += touched(g, n, k, t);
                break;
            }
        }
        if (sum >= t->bytes)
            return t->bytes;
    }
    return sum;
}

static void consider(const fe_graph *g, int32_t tid, int64_t *numel, int32_t *best)
{
    const fe_tensor *t = fe_graph_tensor(g, tid);
    if (t->kind == FE_WEIGHT)
        return;
    if (*best < 0 || t->numel > *numel || (t->numel == *numel && tid < *best)) {
        *numel = t->numel;
        *best = tid;
    }
}

/* Is t tiled when the anchor is tiled at dimension from_right (of size
 * size)? Weights never are; tensors as large as the anchor always are. */
static int tiled_at(const fe_graph *g, const fe_tensor *t, int64_t numel, int64_t size,
                    int from_right)
{
    if (t->kind == FE_WEIGHT)
        return 0;
    if (t->numel >= numel || size <= 1)
        return 1;
    if (t->rank <= from_right)
        return 0;
    return fe_tensor_shape(g, t)[t->rank - 1 - from_right] == size;
}

static int tiled(const fe_graph *g, const anchor *a, const fe_tensor *t)
{
    return tiled_at(g, t, a->numel, a->size, a->from_right);
}

/* Does node n need all of its input k in every tile when the group is
 * tiled at dimension from_right of its output? A matmul needs all of A to
 * tile its columns and all of B to tile its rows (whatever the shapes say:
 * k in q @ k^T has S rows like q); conv2d needs every input channel for an
 * output-channel tile; sdpa needs all of k and v for a tile of queries. */
static int role_untiled(const fe_node *n, int k, int from_right)
{
    switch (n->op) {
    case FE_OP_MATMUL:
        return (k == 0 && from_right == 0) || (k == 1 && from_right == 1);
    case FE_OP_CONV2D:
        return k == 0 && from_right == 2;
    case FE_OP_SDPA:
        return (from_right == 1 && (k == 1 || k == 2)) || (from_right == 0 && k < 2);
    default:
        return 0;
    }
}

/* Is external input tid tiled: by its shape, and for every member that
 * reads it as a matmul/conv2d/sdpa operand? */
static int input_tiled(const gview *s, const anchor *a, int32_t tid, const fe_tensor *t)
{
    const fe_graph *g = s->g;
    if (!tiled(g, a, t))
        return 0;
    const int32_t *c = &g->cons[t->cons_off];
    for (int32_t j = reader_pos(g, t, s->lo); j < t->ncons && c[j] <= s->hi; j++) {
        const fe_node *n = fe_graph_node(g, c[j]);
        if (n->pattern != FE_OUT_FUSABLE && n->op != FE_OP_SDPA)
            continue;
        if (!member(s, c[j]))
            continue;
        for (int k = 0; k < n->nin; k++)
            if (fe_node_input(g, n, k) == tid && role_untiled(n, k, a->from_right))
                return 0;
    }
    return 1;
}

/* Bytes of non-weight external inputs that tiling the anchor at dimension
 * from_right would leave untiled (read again by every tile), counted per
 * reading member. */
static int64_t untiled_inputs(const gview *s, int64_t numel, int64_t size, int from_right)
{
    const fe_graph *g = s->g;
    int64_t sum = 0;
    for (int32_t i = 0; i < s->n; i++) {
        const fe_node *n = fe_graph_node(g, s->nodes[i]);
        for (int k = 0; k < n->nin; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, k));
            if (t->kind != FE_WEIGHT && (t->producer < 0 || !member(s, t->producer)) &&
                (!tiled_at(g, t, numel, size, from_right) || role_untiled(n, k, from_right)))
                sum += t->bytes;
        }
    }
    return sum;
}

/* The anchor and its tiled dimension: of the anchor's dimensions larger
 * than 1, the one that leaves the fewest input bytes untiled, the
 * outermost on ties (so the batch or row dimension when all are equal). */
static anchor find_anchor(const gview *s)
{
    const fe_graph *g = s->g;
    anchor a = {0, 1, 0};
    int32_t best = -1;
    for (int32_t i = 0; i < s->n; i++) {
        const fe_node *n = fe_graph_node(g, s->nodes[i]);
        for (int k = 0; k < n->nin + n->nout; k++)
            consider(g, g->io[n->io_off + k], &a.numel, &best);
    }
    if (best < 0)
        return a;
    const fe_tensor *t = fe_graph_tensor(g, best);
    const int64_t *sh = fe_tensor_shape(g, t);
    int64_t least = -1;
    for (int d = 0; d < t->rank; d++) {
        if (sh[d] <= 1)
            continue;
        int64_t u = untiled_inputs(s, a.numel, sh[d], t->rank - 1 - d);
        if (least < 0 || u < least) {
            least = u;
            a.size = sh[d];
            a.from_right = t->rank - 1 - d;
        }
        if (least == 0)
            break;
    }
    return a;
}

/* Does node v only reinterpret memory (a view, ops.h)? Inside a group
 * its output is an alias: no intermediate buffer, no registers. */
static int is_view(const fe_graph *g, int32_t v)
{
    return v >= 0 && (fe_op_get(fe_graph_node(g, v)->op)->flags & FE_OPF_VIEW) != 0;
}

static int dup_input(const fe_graph *g, const fe_node *n, int k)
{
    int32_t t = fe_node_input(g, n, k);
    for (int j = 0; j < k; j++)
        if (fe_node_input(g, n, j) == t)
            return 1;
    return 0;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The split that makes every tile fit in an L2 of l2_bytes (see the note),
 * or 1. */
static int64_t default_split(const step *steps, int32_t n, int64_t l2_bytes, int64_t inter,
                             int64_t ws, int64_t numel)
{
    if (inter == 0 || ws <= l2_bytes)
        return 1;
    int64_t split = 1;
    for (int32_t i = 0; i < n; i++) {
        if (steps[i].untiled >= l2_bytes)
            return 1;
        int64_t need = ceil_div(steps[i].tiled, l2_bytes - steps[i].untiled);
        if (need > split)
            split = need;
    }
    int64_t cap = numel > 1 ? numel : 1;
    if (cap > FE_PLAN_MAX_SPLIT)
        cap = FE_PLAN_MAX_SPLIT;
    return split < cap ? split : cap;
}

/* Price one group at split asked (0: the default split); steps has room
 * for s->n entries. Returns 0, or -1 when a byte count would overflow 64
 * bits (a forced split of a group with huge untiled operands): no report
 * can hold that honestly. */
static int price(const gview *s, const fe_machine *m, int asked, step *steps,
                 fe_sim_group_result *r)
{
    const fe_graph *g = s->g;
    fe_launch launch = fe_group_launch(g, s->nodes, s->n);
    if (launch == FE_LAUNCH_NONE) {
        memset(r, 0, sizeof *r);
        r->nodes = s->n;
        r->split = r->split_default = 1;
        r->fits = 1;
        r->launch = FE_LAUNCH_NONE;
        return 0;
    }
    anchor a = find_anchor(s);
    int64_t T = 0, U = 0, ws = 0, untiled_in = 0, ext_in = 0, ext_out = 0, inter = 0;
    int64_t l2_members = 0, flops = 0, words = 0;   /* l2_members: their reads and writes */
    double compute = 0, coll = 0, coll_bytes = 0;
    int collective = 0;

    for (int32_t i = 0; i < s->n; i++) {
        int32_t v = s->nodes[i];
        const fe_node *n = fe_graph_node(g, v);
        int view = is_view(g, v);
        int64_t free_t = 0, free_u = 0;
        for (int k = 0; k < n->nin; k++) {
            if (dup_input(g, n, k))
                continue;
            int32_t tid = fe_node_input(g, n, k);
            const fe_tensor *t = fe_graph_tensor(g, tid);
            int32_t pos = reader_pos(g, t, v);
            int external = t->producer < 0 || !member(s, t->producer);
            if (!external && is_view(g, t->producer) && !(t->flags & FE_T_OUTPUT)) {
                int outside, inside;
                output_readers(s, t, &outside, &inside);
                if (!outside)
                    continue;   /* an alias inside the group: never held */
            }
            int tl = external ? input_tiled(s, &a, tid, t) : tiled(g, &a, t);
            int64_t b = t->bytes;
            if (external) {
                b = touched(g, n, k, t);
                if (b < t->bytes)
                    b = loaded_bytes(s, tid, t);
                if (!member_reads(s, t, pos, -1)) {
                    ext_in += b;
                    if (tl)
                        T += b;
                    else {
                        U += b;
                        untiled_in += b;
                    }
                }
            }
            if (!member_reads(s, t, pos, +1)) {
                if (tl)
                    free_t += b;
                else
                    free_u += b;
            }
        }
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            int outside, inside;
            output_readers(s, t, &outside, &inside);
            if (view && !outside && !(t->flags & FE_T_OUTPUT))
                continue;   /* an alias its readers here index through */
            if (outside || (t->flags & FE_T_OUTPUT))
                ext_out += t->bytes;
            else
                inter += t->bytes;
            int tl = tiled(g, &a, t);
            if (tl)
                T += t->bytes;
            else
                U += t->bytes;
            if (!inside) {
                if (tl)
                    free_t += t->bytes;
                else
                    free_u += t->bytes;
            }
        }
        steps[i] = (step){T, U};
        if (T + U > ws)
            ws = T + U;
        T -= free_t;
        U -= free_u;

        int dt = n->nout ? fe_graph_tensor(g, fe_node_output(g, n, 0))->dtype : FE_F32;
        flops += n->flops;
        compute += (double)n->flops / fe_machine_flops(m, n->op, dt);
        if (!view) {
            l2_members += n->bytes_read + n->bytes_written;
            words += (int64_t)n->live * (fe_dtype_size(dt) > 4 ? 2 : 1);
        }
        if (n->op == FE_OP_ALL_REDUCE && n->nin > 0) {
            int64_t p = fe_node_attr_int(g, n, "world_size", 1);
            collective = 1;
            if (p > 1) {
                double bytes = (double)fe_graph_tensor(g, fe_node_input(g, n, 0))->bytes;
                double sent = 2.0 * (double)(p - 1) / (double)p * bytes;
                coll += sent / m->link_bandwidth + 2.0 * (double)(p - 1) * m->link_latency_us * 1e-6;
                coll_bytes += sent;
            }
        }
    }

    int64_t l2_bytes = m->l2_bytes;
    int64_t split_default = default_split(steps, s->n, l2_bytes, inter, ws, a.numel);
    int64_t split = asked > 0 ? asked : split_default;
    int64_t peak = 0;
    for (int32_t i = 0; i < s->n; i++) {
        int64_t p = ceil_div(steps[i].tiled, split) + steps[i].untiled;
        if (p > peak)
            peak = p;
    }
    int fits = peak <= l2_bytes;
    int64_t regs = m->reserved_registers + (int64_t)m->elements_per_thread * words;
    int64_t spill_regs = regs > m->registers ? regs - m->registers : 0;
    int64_t threads = ceil_div(a.numel > 0 ? a.numel : 1, m->elements_per_thread);
    /* The model's tensors fit 64 bits (the loader checks); what the split
     * multiplies may not. */
    int64_t overflow = 0, reread, l3_read, l3_write, l3_bytes, l2_traffic, spill;
    if ((!fits && __builtin_mul_overflow(inter, 2, &overflow)) ||
        __builtin_mul_overflow(split - 1, untiled_in, &reread) ||
        __builtin_add_overflow(ext_in + overflow / 2, reread, &l3_read) ||
        __builtin_add_overflow(ext_out, overflow / 2, &l3_write) ||
        __builtin_add_overflow(l3_read, l3_write, &l3_bytes) ||
        __builtin_add_overflow(l2_members, reread, &l2_traffic) ||
        __builtin_mul_overflow(spill_regs * 8, threads, &spill))
        return -1;

    memset(r, 0, sizeof *r);
    r->nodes = s->n;
    r->split = (int32_t)split;
    r->split_default = (int32_t)split_default;
    r->regs = regs > INT32_MAX ? INT32_MAX : (int32_t)regs;
    r->spill_regs = spill_regs > INT32_MAX ? INT32_MAX : (int32_t)spill_regs;
    r->fits = (int8_t)fits;
    r->collective = (int8_t)collective;
    r->launch = (int8_t)launch;
    r->flops = flops;
    r->l3_read = l3_read;
    r->l3_write = l3_write;
    r->l3_bytes = l3_bytes;
    r->reread_bytes = reread;
    r->overflow_bytes = overflow;
    r->intermediate_bytes = inter;
    r->l2_traffic = l2_traffic;
    r->working_set = ws;
    r->l2_peak = peak;
    r->l2_occupancy = peak < l2_bytes ? peak : l2_bytes;
    r->spill_bytes = spill;
    r->collective_bytes = (int64_t)coll_bytes;

    r->compute_s = compute;
    r->l3_s = (double)r->l3_bytes / m->l3_bandwidth;
    r->l2_s = (double)r->l2_traffic / m->l2_bandwidth;
    r->spill_s = (double)r->spill_bytes / m->local_bandwidth;
    r->memory_s = r->l3_s + r->l2_s + r->spill_s;
    int libs = 0;   /* library calls (matmul, conv2d, sdpa): each its fixed cost */
    for (int32_t i = 0; i < s->n; i++)
        libs += (fe_op_get(fe_graph_node(s->g, s->nodes[i])->op)->flags & FE_OPF_LIBRARY) != 0;
    r->launch_s = (m->launch_us + libs * m->library_us) * 1e-6;
    r->tile_s = split > 1 ? (double)split * m->tile_us * 1e-6 : 0;
    r->collective_s = coll;
    double body = m->overlap ? fmax(compute, r->memory_s) : compute + r->memory_s;
    r->time_s = r->launch_s + r->tile_s + r->collective_s + body;
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Check ids and give them back sorted: nodes itself if already ascending,
 * else a sorted copy in buf (room for SMALL) or on the heap (*heap). */
static int prepare(const fe_graph *g, const int32_t *nodes, int n, int32_t *buf,
                   int32_t **heap, const int32_t **out, fe_error *err)
{
    int ascending = 1;
    *heap = NULL;
    if (n <= 0 || !nodes)
        return fe_error_set(err, FE_EINPUT, "a group needs at least one node");
    for (int i = 0; i < n; i++) {
        if (nodes[i] < 0 || nodes[i] >= g->nnodes)
            return fe_error_set(err, FE_EINPUT, "node id %d is out of range (the graph has %d "
                                "nodes)", (int)nodes[i], (int)g->nnodes);
        if (i > 0 && nodes[i] <= nodes[i - 1])
            ascending = 0;
    }
    if (ascending) {
        *out = nodes;
        return FE_OK;
    }
    int32_t *list = buf;
    if (n > SMALL) {
        list = *heap = fe_malloc((size_t)n * sizeof *list, err);
        if (!list)
            return FE_ENOMEM;
    }
    memcpy(list, nodes, (size_t)n * sizeof *list);
    qsort(list, (size_t)n, sizeof *list, cmp_id);
    for (int i = 1; i < n; i++) {
        if (list[i] == list[i - 1]) {
            free(*heap);
            *heap = NULL;
            return fe_error_set(err, FE_EINPUT, "node '%s' appears twice in the group",
                                fe_node_name(g, fe_graph_node(g, list[i])));
        }
    }
    *out = list;
    return FE_OK;
}

/* A checked machine (fe_machine_check's ranges) keeps every time finite;
 * one filled in C without the check could overflow to infinity, which no
 * report can show honestly. */
static int finite_time(double s, const fe_machine *m, fe_error *err)
{
    if (isfinite(s))
        return FE_OK;
    return fe_error_set(err, FE_EINPUT, "machine '%s': the simulated time is not finite; its "
                        "bandwidths, FLOP rates or overheads are outside the ranges machine "
                        "files allow", m->name);
}

static int too_large(fe_error *err, int n, int split)
{
    char at[32] = "its default split";
    if (split > 0)
        snprintf(at, sizeof at, "split %d", split);
    return fe_error_set(err, FE_EINPUT, "the traffic of a group of %d node%s at %s "
                        "overflows 64-bit byte counts", n, n == 1 ? "" : "s", at);
}

int fe_sim_group(const fe_graph *g, const fe_machine *m, const int32_t *nodes, int n, int split,
                 fe_sim_group_result *out, fe_error *err)
{
    if (m->executor[0] && n > 0) {
        int done, rc = fe_sim_executor_group(g, m, nodes, n, split, out, &done, err);
        if (rc != FE_OK || done)
            return rc == FE_OK ? finite_time(out->time_s, m, err) : rc;
    }
    int32_t buf[SMALL], *heap;
    step small[SMALL], *steps = small;
    const int32_t *list;
    if (split < 0 || split > FE_PLAN_MAX_SPLIT)
        return fe_error_set(err, FE_EINPUT, "split must be 0 (the default) or "
                            FE_PLAN_SPLIT_RULE ", got %d", split);
    int rc = prepare(g, nodes, n, buf, &heap, &list, err);
    if (rc != FE_OK)
        return rc;
    if (n > SMALL) {
        steps = fe_malloc((size_t)n * sizeof *steps, err);
        if (!steps) {
            free(heap);
            return FE_ENOMEM;
        }
    }
    gview s = {g, list, n, NULL, 0, list[0], list[n - 1]};
    rc = price(&s, m, split, steps, out);
    if (steps != small)
        free(steps);
    free(heap);
    if (rc != 0)
        return too_large(err, n, split);
    return finite_time(out->time_s, m, err);
}

int fe_sim_unfused(const fe_graph *g, const fe_machine *m, const int32_t *nodes, int n,
                   fe_sim_group_result *out, fe_error *err)
{
    int32_t buf[SMALL], *heap;
    const int32_t *list;
    int rc = prepare(g, nodes, n, buf, &heap, &list, err);
    if (rc != FE_OK)
        return rc;
    fe_sim_group_result sum, one;
    memset(&sum, 0, sizeof sum);
    sum.split = sum.split_default = 1;
    sum.fits = 1;
    for (int i = 0; i < n; i++) {
        step st;
        gview s = {g, &list[i], 1, NULL, 0, list[i], list[i]};
        if (m->executor[0]) {   /* each node as the executor runs it */
            if ((rc = fe_sim_group(g, m, &list[i], 1, 0, &one, err)) != FE_OK) {
                free(heap);
                return rc;
            }
            fe_sim_result_add(&sum, &one);
            continue;
        }
        if (price(&s, m, 0, &st, &one) != 0) {
            free(heap);
            return too_large(err, 1, 0);
        }
        fe_sim_result_add(&sum, &one);
    }
    *out = sum;
    free(heap);
    return finite_time(sum.time_s, m, err);
}

void fe_sim_result_add(fe_sim_group_result *sum, const fe_sim_group_result *one)
{
    sum->nodes += one->nodes;
    sum->collective |= one->collective;
    sum->fits &= one->fits;
#define MAX_OF(f) sum->f = one->f > sum->f ? one->f : sum->f
    MAX_OF(regs); MAX_OF(spill_regs); MAX_OF(working_set); MAX_OF(l2_peak);
    MAX_OF(l2_occupancy);
#undef MAX_OF
#define SUM_OF(f) sum->f += one->f
    SUM_OF(flops); SUM_OF(l3_read); SUM_OF(l3_write); SUM_OF(l3_bytes); SUM_OF(reread_bytes);
    SUM_OF(overflow_bytes); SUM_OF(intermediate_bytes); SUM_OF(l2_traffic); SUM_OF(spill_bytes);
    SUM_OF(collective_bytes); SUM_OF(time_s); SUM_OF(launch_s); SUM_OF(tile_s);
    SUM_OF(collective_s); SUM_OF(compute_s); SUM_OF(memory_s); SUM_OF(l3_s); SUM_OF(l2_s);
    SUM_OF(spill_s);
#undef SUM_OF
}

/* ---- plans ---- */

/* Add a group to the totals; -1 if a byte total would overflow 64 bits. */
static int add_totals(fe_sim_totals *t, const fe_sim_group_result *r)
{
    t->kernels += r->launch == FE_LAUNCH_KERNEL;
    t->extern_calls += r->launch == FE_LAUNCH_EXTERN;
    t->views += r->launch == FE_LAUNCH_NONE;
    t->tiled += r->split > 1;
    t->overflowing += r->overflow_bytes > 0;
    t->spilling += r->spill_bytes > 0;
    t->flops += r->flops;   /* the loader checked the model's FLOP total */
    if (__builtin_add_overflow(t->l3_bytes, r->l3_bytes, &t->l3_bytes) ||
        __builtin_add_overflow(t->l2_traffic, r->l2_traffic, &t->l2_traffic) ||
        __builtin_add_overflow(t->reread_bytes, r->reread_bytes, &t->reread_bytes) ||
        __builtin_add_overflow(t->overflow_bytes, r->overflow_bytes, &t->overflow_bytes) ||
        __builtin_add_overflow(t->spill_bytes, r->spill_bytes, &t->spill_bytes))
        return -1;
    if (r->l2_occupancy > t->l2_peak)
        t->l2_peak = r->l2_occupancy;
    t->time_s += r->time_s;
    t->launch_s += r->launch_s;
    t->tile_s += r->tile_s;
    t->collective_s += r->collective_s;
    t->compute_s += r->compute_s;
    t->memory_s += r->memory_s;
    return 0;
}

/* Device memory while each group runs (see the note); fills r->mem_bytes
 * and the totals' peak. diff has room for ngroups + 1. */
static void device_memory(const fe_plan *p, fe_sim_report *r, int64_t *diff)
{
    const fe_graph *g = p->g;
    int32_t ng = p->ngroups;
    int64_t weights = 0;
    memset(diff, 0, ((size_t)ng + 1) * sizeof *diff);
    for (int32_t i = 0; i < ng; i++)
        r->mem_bytes[i] = 0;
    for (int32_t id = 0; id < g->ntensors; id++) {
        const fe_tensor *t = fe_graph_tensor(g, id);
        if (t->kind == FE_WEIGHT) {
            weights += t->bytes;
            continue;
        }
        int32_t start = t->producer >= 0 ? p->group_of[t->producer] : 0;
        int32_t end = start;
        for (int32_t j = 0; j < t->ncons; j++) {
            int32_t gr = p->group_of[fe_tensor_consumer(g, t, j)];
            if (gr > end)
                end = gr;
        }
        if (t->flags & FE_T_OUTPUT)
            end = ng - 1;
        if (t->producer >= 0 && end == start && !(t->flags & FE_T_OUTPUT)) {
            /* An intermediate of one group: in L3 only if it overflowed. */
            if (r->groups[start].overflow_bytes > 0)
                r->mem_bytes[start] += t->bytes;
            continue;
        }
        diff[start] += t->bytes;
        diff[end + 1] -= t->bytes;
    }
    for (int32_t i = 0; i < p->ncopies; i++) {
        const fe_tensor *t = fe_graph_tensor(g, p->copies[i].tensor);
        int32_t end = fe_plan_copy_group(p, p->copies[i].tensor);
        for (int32_t j = 0; j < t->ncons; j++) {
            int32_t gr = p->group_of[fe_tensor_consumer(g, t, j)];
            if (gr > end)
                end = gr;
        }
        diff[fe_plan_copy_group(p, p->copies[i].tensor)] += t->bytes;
        diff[end + 1] -= t->bytes;
    }
    int64_t live = 0, peak = weights;
    for (int32_t i = 0; i < ng; i++) {
        live += diff[i];
        r->mem_bytes[i] += weights + live;
        if (r->mem_bytes[i] > peak)
            peak = r->mem_bytes[i];
    }
    r->total.weight_bytes = weights;
    r->total.mem_peak = peak;
}

int fe_sim_plan(const fe_plan *p, const fe_machine *m, fe_sim_report *out, fe_error *err)
{
    memset(out, 0, sizeof *out);
    int32_t ng = p->ngroups, most = 1;
    for (int32_t i = 0; i < ng; i++) {
        if (p->groups[i].n > most)
            most = p->groups[i].n;
        if (p->groups[i].split < 0 || p->groups[i].split > FE_PLAN_MAX_SPLIT)
            return fe_error_set(err, FE_EINPUT, "group %d: split must be 0 (the default) or "
                                FE_PLAN_SPLIT_RULE ", got %d", (int)i, (int)p->groups[i].split);
    }
    size_t slots = ng > 0 ? (size_t)ng : 1u;
    out->groups = calloc(slots, sizeof *out->groups);
    out->start_s = calloc(slots, sizeof *out->start_s);
    out->mem_bytes = calloc(slots, sizeof *out->mem_bytes);
    out->copies = calloc(p->ncopies > 0 ? (size_t)p->ncopies : 1u, sizeof *out->copies);
    int32_t *copy_at = calloc(p->ncopies > 0 ? (size_t)p->ncopies : 1u, sizeof *copy_at);
    step *steps = malloc((size_t)most * sizeof *steps);
    int64_t *diff = malloc((slots + 1) * sizeof *diff);
    if (!out->groups || !out->start_s || !out->mem_bytes || !out->copies || !copy_at || !steps ||
        !diff) {
        free(copy_at);
        free(steps);
        free(diff);
        fe_sim_report_free(out);
        return fe_error_set(err, FE_ENOMEM, "out of memory simulating a plan of %d groups",
                            (int)ng);
    }
    out->g = p->g;
    out->plan = p;
    out->machine = *m;
    out->ngroups = ng;
    out->ncopies = p->ncopies;
    for (int32_t c = 0; c < p->ncopies; c++) {
        copy_at[c] = fe_plan_copy_group(p, p->copies[c].tensor);
        fe_sim_copy(fe_graph_tensor(p->g, p->copies[c].tensor)->bytes, 0, m, &out->copies[c]);
        add_totals(&out->total, &out->copies[c]);   /* one tensor's bytes cannot overflow */
        out->total.copies++;
    }
    double clock = 0;
    for (int32_t i = 0; i < ng; i++) {
        const fe_group *gr = &p->groups[i];
        for (int32_t c = 0; c < p->ncopies; c++)
            if (copy_at[c] == i)
                clock += out->copies[c].time_s;
        const int32_t *mem = fe_group_nodes(p, gr);
        gview s = {p->g, mem, gr->n, p->group_of, i, mem[0], mem[gr->n - 1]};
        int split = gr->split > 0 ? gr->split : 0;
        if (m->executor[0]) {   /* as the executor runs the group */
            int rc = fe_sim_group(p->g, m, mem, gr->n, split, &out->groups[i], err);
            if (rc == FE_OK && add_totals(&out->total, &out->groups[i]) != 0)
                rc = too_large(err, gr->n, gr->split);
            if (rc != FE_OK) {
                free(copy_at);
                free(steps);
                free(diff);
                fe_sim_report_free(out);
                fe_error_prefix(err, "group %d: ", (int)i);
                return rc;
            }
        } else if (price(&s, m, split, steps, &out->groups[i]) != 0 ||
                   add_totals(&out->total, &out->groups[i]) != 0) {
            free(copy_at);
            free(steps);
            free(diff);
            fe_sim_report_free(out);
            too_large(err, gr->n, gr->split);
            fe_error_prefix(err, "group %d: ", (int)i);
            return FE_EINPUT;
        }
        out->start_s[i] = clock;
        clock += out->groups[i].time_s;
    }
    device_memory(p, out, diff);
    free(copy_at);
    free(steps);
    free(diff);
    int rc = finite_time(out->total.time_s, m, err);
    if (rc != FE_OK)
        fe_sim_report_free(out);
    return rc;
}

void fe_sim_report_free(fe_sim_report *r)
{
    if (!r)
        return;
    free(r->groups);
    free(r->start_s);
    free(r->mem_bytes);
    free(r->copies);
    memset(r, 0, sizeof *r);
}

int fe_sim_resolve_splits(fe_plan *p, const fe_machine *m, fe_error *err)
{
    int auto_splits = 0;
    for (int32_t gi = 0; gi < p->ngroups; gi++)
        auto_splits += p->groups[gi].split == 0;
    if (!auto_splits)
        return FE_OK;
    fe_sim_report rep;
    int rc = fe_sim_plan(p, m, &rep, err);
    if (rc != FE_OK)
        return rc;
    for (int32_t gi = 0; gi < p->ngroups; gi++)
        if (p->groups[gi].split == 0)
            p->groups[gi].split = rep.groups[gi].split;
    fe_sim_report_free(&rep);
    return FE_OK;
}
