/* fused.c: the fused tile executor (see fused.h).
 *
 * Note on the program model.
 *
 * Every tensor the group touches is aligned (numpy-style, right aligned) to
 * one iteration domain D, and D is viewed as ROWS x COLS: the column axes
 * are the trailing axes a row reduction runs over (or, for a purely
 * elementwise group, the longest run of trailing axes every operand walks
 * contiguously). Each value of the program is then either
 *
 *     FULL  varies along the columns: a vector of one tile's width, held in a
 *           scratch slot (or read in place from an f32 input, zero-copy), or
 *     ROW   constant along the columns: one float per row (a reduction's
 *           result, an operand broadcast over the columns, a scalar).
 *
 *          cols ->
 *   rows  [x x x x x x]  FULL     [r]  ROW
 *     |   [x x x x x x]           [r]
 *     v   [x x x x x x]           [r]
 *
 * Compilation walks the group's nodes in topological order and emits one
 * instruction per op (plus loads of external inputs at first use, rounding to
 * f16/bf16/bool where a tensor has that dtype so fused and unfused agree, and
 * a store right after each value that leaves the group), allocating scratch
 * slots by liveness (a dying operand's slot is reused in place).
 *
 * Inference batch_norm compiles to a few instructions: its per-channel
 * factor w / sqrt(var + eps) (ROW values when the channels are rows, as for
 * NCHW with the spatial axes as columns), then (x - mean) * factor + b. Its
 * [C] parameters are placed on the input's axis 1 (padded_val), not
 * right-aligned as numpy broadcasting would put them.
 *
 * Two peepholes: t = a * b followed by t + c (t dying there) becomes one
 * multiply-add, and a softmax / rms_norm whose result only leaves the group
 * writes it straight to the output with streaming stores.
 *
 * Execution takes a tile (a row, and a column segment of at most T values;
 * whole rows when the program reduces) and runs the instructions over it:
 * each one a vectorised pass over T floats in L1/L2. Adjacent domain axes
 * that every operand traverses the same way (both broadcast or both full)
 * are merged first, so a same-shape elementwise group is one long row.
 * Outputs larger than half the last-level cache use streaming stores.
 *
 * Register runs. A pass per op costs a store and a load per vector per op,
 * which for cheap ops (relu, a multiply by a weight) is most of their cost
 * and, on memory-bound groups, turns one stream through memory into several
 * through L1. So after compilation every maximal run of elementwise
 * instructions that have a vector form (and the stores of f32 outputs
 * between them) becomes one I_VM instruction: a vector program
 * (vecprog.h) that takes a strip of vectors at a time through all of the
 * run's ops with the current value in registers. A value goes to its slot
 * only when something other than the next op reads it (a spill), and a
 * store of the run's last value goes straight from registers to the
 * output, streaming when the output is large. Ops without a vector form
 * (erf GELU, sin, log, converting loads, row ops) keep their passes and
 * split runs; a run holds at least one op (worth_a_run). A run that makes
 * the row an rms_norm normalises also sums its squares (FE_V_SSQ).
 *
 * Whole-row programs prefetch the next row's direct inputs while the row
 * op (softmax) computes, so that loading a row and computing the previous
 * one overlap instead of taking turns.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cache.h"
#include "convert.h"
#include "elemwise.h"
#include "fused.h"
#include "iter.h"
#include "node.h"
#include "norm.h"
#include "ops.h"
#include "reduce.h"
#include "vecprog.h"

enum { K_NONE, K_SLOT, K_IN, K_ROW, K_CONST, K_ANCHOR };
enum {
    I_LOAD, I_LOADROW, I_EXPAND, I_UNARY, I_BINARY, I_WHERE, I_ROUND, I_REDUCE,
    I_SOFTMAX, I_RMS, I_LN, I_STORE, I_STOREROW, I_FMA, I_VM
};
enum { COL_CONTIG, COL_BCAST, COL_GENERAL };

typedef struct opnd {
    int8_t kind;
    int32_t idx;
} opnd;

typedef struct instr {
    uint8_t code;
    int16_t op;      /* FE_OP_* or dtype (ROUND) */
    int16_t aux;     /* gelu tanh, log softmax, input / output index, VM run */
    int16_t st;      /* softmax / rms_norm: output index + 1 it streams to, 0 none */
    int16_t mx;      /* fma: also the row max of d into row value mx - 1, 0 none */
    float f;         /* eps */
    opnd d, a, b, c;
} instr;

typedef struct pin {
    int32_t tensor;
    int dtype;
    int col;                       /* COL_* */
    int direct;                    /* f32 and contiguous: read in place */
    int rowinv;                    /* the same data for every row */
    int64_t rst[FE_MAX_RANK];      /* strides over the row axes */
    int64_t *ctab;                 /* COL_GENERAL: offset of each column */
} pin;

typedef struct pout {
    int32_t tensor;
    int dtype;
    int nt;                        /* non-temporal stores */
} pout;

/* A run of elementwise instructions evaluated in registers (vecprog.h):
 * ops[op0, op0 + nops) over table entries [ent0, ent0 + nent). */
typedef struct vrun {
    int op0, nops, ent0, nent;
    int ssq;                       /* row value its FE_V_SSQ sums into, -1 none */
} vrun;

/* A table entry: where an operand lives, or the output a store writes. */
typedef struct vent {
    opnd o;
    int out;                       /* output index, -1 for an operand */
} vent;

/* An op of a run: fe_k_vcode's code; e[k] is the table entry of operand k
 * when the code's form has it in memory. */
typedef struct vop {
    int16_t code;
    int8_t e[3];
} vop;

/* A table entry bound to a tile. */
typedef struct vsrc {
    float *p;
    int bc;                        /* p holds FE_K_VLANES copies of one value */
    int nt;
    int64_t step;                  /* how far p moves from one row to the next */
} vsrc;

/* Per-thread state is written tile by tile, so no two threads' state and
 * nothing else may share a 128-byte block (the pair of lines this core's
 * prefetcher fetches together): thread states are 128-byte multiples, in
 * blocks of whole pages. Allocated beside the heap's other objects, one
 * program's states ran Add+RMSNorm at 74% of copy against 88% (measured
 * in turns, the same program compiled again). */
#define ISOLATE 128

static size_t whole_pages(size_t bytes)
{
    return (bytes + 4095) & ~(size_t)4095;
}

typedef struct tstate {
    float *slots;
    vsrc *vtab;                    /* the bound table of the run being executed */
    fe_k_vbound *vb;               /* and its ops */
    float *vbc;                    /* FE_K_VLANES copies of each broadcast value */
    float *rowv;
    const float **inptr;
    int64_t *inoff;
    int64_t *last_c0;              /* row-invariant loads: what the slot holds */
    int64_t res_row;               /* prologue: row held in the result slot */
    fe_k_pf pf;                    /* whole rows: the next row's direct inputs */
    int ahead;                     /* this thread's next tile follows this one in memory */
    fe_k_pf vpf;                   /* then: the inputs a run streams, AHEAD floats on */
    int64_t vpfstep[4];            /* and how far each moves per row */
    /* the run vb is bound to (-1: none or stale), its tile, and whether
     * the next row's binding is this one moved by each entry's step */
    int vb_run, vb_adv;
    int64_t vb_row, vb_c0, vb_w;
    float vsums[FE_K_VSUMS] __attribute__((aligned(64)));   /* FE_V_SSQ's partial sums */
} __attribute__((aligned(ISOLATE))) tstate;   /* written per tile by its thread */

struct fe_k_prog {
    int nrdims;                    /* row axes (coalesced) */
    int64_t rdims[FE_MAX_RANK];
    int64_t rows, C;
    int64_t outer;                 /* size of the domain's outermost axis (TLF) */
    int full_rows;
    int rowpf;                     /* a streaming row op prefetches the next row (tstate.pf) */
    int64_t T;                     /* tile width in floats */
    int colblock;                  /* tiles go column chunk by column chunk over blocks of
                                    * rows, so the row-invariant inputs' chunk stays in L1 */
    int ahead;                     /* its register passes prefetch their streamed inputs
                                    * AHEAD (whole rows, or a program that is one pass over
                                    * tiles that follow each other in memory) */
    int64_t ss;                    /* slot stride in floats (T and padding) */
    int nins, nouts, ncode, nslots, nrowv, nconsts, nops, nloads;
    pin *ins;
    pout *outs;
    instr *code;
    float *consts;
    opnd result;
    int nthreads;
    tstate *ts;
    void *mem;                     /* one block for all thread states */
    vrun *runs;
    vop *vops;
    vent *vents;
    int nruns, nvops, nvents, maxent, maxops, nvm;   /* nvm: instructions inside runs */
    int nexec;                     /* code[0, nexec) after runs replaced instructions */
};

/* ---- compile-time values ---- */

typedef struct val {
    int32_t tensor;
    int64_t ds[FE_MAX_RANK];       /* shape aligned to the domain */
    int full;
    int last;                      /* last consuming node (program index) */
    int ext;                       /* external input index, -1 if produced */
    int nonkeep;                   /* reduction output without keepdim */
    int dedicated;                 /* slot never reused */
    int chan_rank;                 /* > 0: a batch_norm parameter [C], viewed as axis 1 of
                                    * an input of this rank (so [C, 1, 1] for NCHW) */
    opnd at;
} val;

typedef struct cc {
    const fe_k_prog_spec *sp;
    const fe_graph *g;
    fe_error *err;
    val *v;
    int nv;
    int r;                         /* domain rank (before merging) */
    int64_t D[FE_MAX_RANK];
    int s;                         /* split, -1 while free */
    /* merged axes */
    int mr;
    int64_t MD[FE_MAX_RANK];
    int mstart[FE_MAX_RANK + 1];   /* original axis each merged axis starts at */
    int ms;                        /* merged split */
    int *slot_free;
    int cap_slots;
    fe_k_prog *p;
    int cap_code, cap_consts;
} cc;

static int fail(cc *c, const char *fmt, const char *a, const char *b)
{
    fe_error_set(c->err, FE_EINPUT, fmt, a, b);
    return -1;
}

static int vfind(const cc *c, int32_t t)
{
    for (int i = 0; i < c->nv; i++)
        if (c->v[i].tensor == t)
            return i;
    return -1;
}

static int vadd(cc *c, int32_t t)
{
    int i = vfind(c, t);
    if (i >= 0)
        return i;
    memset(&c->v[c->nv], 0, sizeof(val));
    c->v[c->nv].tensor = t;
    c->v[c->nv].ext = -1;
    c->v[c->nv].last = -1;
    return c->nv++;
}

static int is_reduce(int op)
{
    return op == FE_OP_SUM || op == FE_OP_MEAN || op == FE_OP_AMAX || op == FE_OP_AMIN;
}

static int is_rowop(int op)
{
    return is_reduce(op) || op == FE_OP_SOFTMAX || op == FE_OP_LOG_SOFTMAX ||
           op == FE_OP_RMS_NORM || op == FE_OP_LAYER_NORM;
}

static int supported(int op)
{
    return (op >= FE_OP_RELU && op <= FE_OP_WHERE) || is_rowop(op) || op == FE_OP_BATCH_NORM;
}

/* real shape of tensor t padded on the left to rank r */
static int padded(const cc *c, int32_t t, int r, int64_t *out)
{
    const fe_tensor *tt = fe_graph_tensor(c->g, t);
    const int64_t *sh = fe_tensor_shape(c->g, tt);
    if (tt->rank > r)
        return -1;
    for (int i = 0; i < r; i++)
        out[i] = i < r - tt->rank ? 1 : sh[i - (r - tt->rank)];
    return 0;
}

/* The same for value v: a batch_norm parameter sits on its input's axis 1,
 * not right-aligned as numpy broadcasting would put it. */
static int padded_val(const cc *c, const val *v, int r, int64_t *out)
{
    if (v->chan_rank <= 0)
        return padded(c, v->tensor, r, out);
    int a = r - v->chan_rank + 1;
    if (a < 0 || a >= r)
        return -1;
    for (int i = 0; i < r; i++)
        out[i] = 1;
    out[a] = fe_graph_tensor(c->g, v->tensor)->numel;
    return 0;
}

static int fits(const int64_t *ds, const int64_t *D, int r)
{
    for (int i = 0; i < r; i++)
        if (ds[i] != 1 && ds[i] != D[i])
            return 0;
    return 1;
}

/* ---- code emission ---- */

static int emit(cc *c, instr in)
{
    fe_k_prog *p = c->p;
    if (p->ncode == c->cap_code) {
        int cap = c->cap_code ? 2 * c->cap_code : 32;
        instr *n = realloc(p->code, (size_t)cap * sizeof(instr));
        if (!n)
            return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
        p->code = n;
        c->cap_code = cap;
    }
    p->code[p->ncode++] = in;
    return 0;
}

static int new_slot(cc *c, int dedicated)
{
    for (int i = 0; i < c->p->nslots && !dedicated; i++)
        if (c->slot_free[i]) {
            c->slot_free[i] = 0;
            return i;
        }
    if (c->p->nslots == c->cap_slots) {
        int cap = c->cap_slots ? 2 * c->cap_slots : 16;
        int *n = realloc(c->slot_free, (size_t)cap * sizeof(int));
        if (!n)
            return -1;
        c->slot_free = n;
        c->cap_slots = cap;
    }
    c->slot_free[c->p->nslots] = 0;
    return c->p->nslots++;
}

static opnd mk(int kind, int idx)
{
    opnd o = {(int8_t)kind, idx};
    return o;
}

static opnd konst(cc *c, float v)
{
    fe_k_prog *p = c->p;
    if (p->nconsts == c->cap_consts) {
        int cap = c->cap_consts ? 2 * c->cap_consts : 8;
        float *n = realloc(p->consts, (size_t)cap * sizeof(float));
        if (!n)
            return mk(K_NONE, 0);
        p->consts = n;
        c->cap_consts = cap;
    }
    p->consts[p->nconsts] = v;
    return mk(K_CONST, p->nconsts++);
}

/* Location of value vi, emitting the load of an external input at first use. */
static opnd use(cc *c, int vi)
{
    val *v = &c->v[vi];
    if (v->at.kind != K_NONE)
        return v->at;
    pin *in = &c->p->ins[v->ext];
    instr li;
    memset(&li, 0, sizeof li);
    li.aux = (int16_t)v->ext;
    if (!v->full) {
        v->at = mk(K_ROW, c->p->nrowv++);
        li.code = I_LOADROW;
    } else if (in->direct) {
        v->at = mk(K_IN, v->ext);
        return v->at;
    } else {
        v->dedicated = in->rowinv;
        int s = new_slot(c, v->dedicated);
        if (s < 0)
            return mk(K_NONE, 0);
        v->at = mk(K_SLOT, s);
        li.code = I_LOAD;
        c->p->nloads++;
    }
    li.d = v->at;
    if (emit(c, li))
        return mk(K_NONE, 0);
    return v->at;
}

/* A FULL operand for row ops: expand a ROW value into a fresh slot. */
static opnd as_full(cc *c, opnd o, int *tmp_slot)
{
    *tmp_slot = -1;
    if (o.kind != K_ROW && o.kind != K_CONST)
        return o;
    int s = new_slot(c, 0);
    instr e;
    memset(&e, 0, sizeof e);
    e.code = I_EXPAND;
    e.d = mk(K_SLOT, s);
    e.a = o;
    emit(c, e);
    *tmp_slot = s;
    return e.d;
}

static void release(cc *c, int node_idx, const int32_t *ins, int nin)
{
    for (int k = 0; k < nin; k++) {
        int vi = vfind(c, ins[k]);
        if (vi < 0)
            continue;
        val *v = &c->v[vi];
        if (v->last == node_idx && v->at.kind == K_SLOT && !v->dedicated) {
            c->slot_free[v->at.idx] = 1;
            v->last = -2;   /* released once even if an input repeats */
        }
    }
}

static int store_index(const cc *c, int32_t t)
{
    for (int i = 0; i < c->sp->nstores; i++)
        if (c->sp->stores[i] == t)
            return i;
    return -1;
}

static int emit_store(cc *c, int vi)
{
    int si = store_index(c, c->v[vi].tensor);
    if (si < 0)
        return 0;
    instr st;
    memset(&st, 0, sizeof st);
    st.code = c->v[vi].full ? I_STORE : I_STOREROW;
    st.aux = (int16_t)si;
    st.a = c->v[vi].at;
    return emit(c, st);
}

/* Emit one instruction d = op(a, b) (b may be K_NONE for a unary op). */
static int emit_op(cc *c, int code, int op, opnd d, opnd a, opnd b)
{
    instr in;
    memset(&in, 0, sizeof in);
    in.code = (int16_t)code;
    in.op = (int16_t)op;
    in.d = d;
    in.a = a;
    in.b = b;
    return emit(c, in);
}

/* batch_norm as fe_k_batch_norm computes it: the factor k = w / sqrt(var +
 * eps) once per channel, then y = (x - mean) * k + b in one multiply-add.
 * The channels are usually rows (the spatial axes are the columns), so k
 * costs a few scalar operations per row; for a 2-D input they are columns
 * and k is a vector like any other. Leaves the multiply-add's operands in
 * a[0..3) and its temporary slots in tmp[]. */
static int gen_batch_norm(cc *c, const fe_node *n, const int32_t *ins, opnd *a, int *tmp)
{
    opnd x = use(c, vfind(c, ins[0])), w = use(c, vfind(c, ins[1])), b = use(c, vfind(c, ins[2]));
    opnd m = use(c, vfind(c, ins[3])), v = use(c, vfind(c, ins[4]));
    opnd eps = konst(c, (float)fe_node_attr_float(c->g, n, "eps", 1e-5));
    int chan_full = c->v[vfind(c, ins[1])].full;
    int ks = chan_full ? new_slot(c, 0) : -1, xs = new_slot(c, 0);
    if (x.kind == K_NONE || w.kind == K_NONE || b.kind == K_NONE || m.kind == K_NONE ||
        v.kind == K_NONE || eps.kind == K_NONE || xs < 0 || (chan_full && ks < 0))
        return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
    opnd k = chan_full ? mk(K_SLOT, ks) : mk(K_ROW, c->p->nrowv++);
    if (emit_op(c, I_BINARY, FE_OP_ADD, k, v, eps) || emit_op(c, I_UNARY, FE_OP_SQRT, k, k, k) ||
        emit_op(c, I_UNARY, FE_OP_RECIPROCAL, k, k, k) || emit_op(c, I_BINARY, FE_OP_MUL, k, k, w) ||
        emit_op(c, I_BINARY, FE_OP_SUB, mk(K_SLOT, xs), x, m))
        return -1;
    a[0] = mk(K_SLOT, xs);
    a[1] = k;
    a[2] = b;
    tmp[0] = xs;
    tmp[1] = ks;
    return 0;
}

/* Emit the instructions of node k (program index ni). */
static int gen_node(cc *c, int ni)
{
    const fe_graph *g = c->g;
    const fe_node *n = fe_graph_node(g, c->sp->nodes[ni]);
    int32_t ins[FE_MAX_IO];
    int op = n->op, nin = n->nin;
    int ov = vfind(c, fe_node_output(g, n, 0));
    val *o = &c->v[ov];
    opnd a[3] = {{0, 0}, {0, 0}, {0, 0}};
    instr in;
    int tmp[3] = {-1, -1, -1};

    for (int k = 0; k < nin; k++)
        ins[k] = fe_node_input(g, n, k);
    memset(&in, 0, sizeof in);
    in.op = (int16_t)op;

    if (op == FE_OP_WHERE || (op >= FE_OP_ADD && op <= FE_OP_POW)) {
        int want = op == FE_OP_WHERE ? 3 : 2;
        if (nin == want) {
            for (int k = 0; k < want; k++)
                a[k] = use(c, vfind(c, ins[k]));
        } else {
            double sv;
            int idx = (int)fe_node_attr_int(g, n, "scalar_index", op == FE_OP_WHERE ? 2 : 1);
            if (nin != want - 1 || !fe_node_scalar(g, n, &sv) || idx < 0 || idx >= want)
                return fail(c, "node '%s' (%s): needs a scalar operand", fe_node_name(g, n),
                            fe_node_op_name(n));
            for (int k = 0, j = 0; k < want; k++)
                a[k] = k == idx ? konst(c, (float)sv) : use(c, vfind(c, ins[j++]));
        }
        in.code = op == FE_OP_WHERE ? I_WHERE : I_BINARY;
    } else if (op <= FE_OP_CAST) {
        a[0] = use(c, vfind(c, ins[0]));
        in.code = I_UNARY;
        in.aux = op == FE_OP_GELU && !strcmp(fe_node_attr_str(g, n, "approximate", "none"), "tanh");
    } else if (is_reduce(op)) {
        a[0] = as_full(c, use(c, vfind(c, ins[0])), &tmp[0]);
        in.code = I_REDUCE;
    } else if (op == FE_OP_SOFTMAX || op == FE_OP_LOG_SOFTMAX) {
        a[0] = as_full(c, use(c, vfind(c, ins[0])), &tmp[0]);
        in.code = I_SOFTMAX;
        in.aux = op == FE_OP_LOG_SOFTMAX;
    } else if (op == FE_OP_BATCH_NORM) {
        if (gen_batch_norm(c, n, ins, a, tmp))
            return -1;
        in.code = I_FMA;
    } else {
        int layer = op == FE_OP_LAYER_NORM;
        a[0] = as_full(c, use(c, vfind(c, ins[0])), &tmp[0]);
        if (nin > 1)
            a[1] = as_full(c, use(c, vfind(c, ins[1])), &tmp[1]);
        if (layer && nin > 2)
            a[2] = as_full(c, use(c, vfind(c, ins[2])), &tmp[2]);
        in.code = layer ? I_LN : I_RMS;
        in.f = (float)fe_node_attr_float(g, n, "eps", layer ? 1e-5 : 1e-6);
    }
    for (int k = 0; k < 3; k++)
        if (a[k].kind == K_NONE && k < (in.code == I_WHERE ? 3 : in.code == I_BINARY ? 2 : 1))
            return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
    in.a = a[0];
    in.b = a[1];
    in.c = a[2];

    /* peephole: t = a * b; y = t + c with t dying here is one multiply-add
     * (one rounding instead of two) */
    if (in.code == I_BINARY && op == FE_OP_ADD && c->p->ncode > 0) {
        instr *prev = &c->p->code[c->p->ncode - 1];
        for (int k = 0; k < 2; k++) {
            int vi = a[k].kind == K_SLOT ? vfind(c, ins[k < nin ? k : 0]) : -1;
            if (vi < 0 || prev->code != I_BINARY || prev->op != FE_OP_MUL ||
                prev->d.kind != K_SLOT || prev->d.idx != a[k].idx || !c->v[vi].full ||
                c->v[vi].last != ni || c->v[vi].tensor == c->sp->result ||
                store_index(c, c->v[vi].tensor) >= 0 || (nin == 2 && ins[0] == ins[1]))
                continue;
            opnd other = a[1 - k];
            release(c, ni, ins, nin);
            int sl = o->full ? new_slot(c, 0) : -1;
            if (o->full && sl < 0)
                return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
            o->at = o->full ? mk(K_SLOT, sl) : mk(K_ROW, c->p->nrowv++);
            prev = &c->p->code[c->p->ncode - 1];
            prev->code = I_FMA;
            prev->c = other;
            prev->d = o->at;
            goto emitted;
        }
    }

    /* free dying operands first so the result can take their slot */
    release(c, ni, ins, nin);
    for (int k = 0; k < 3; k++)
        if (tmp[k] >= 0)
            c->slot_free[tmp[k]] = 1;
    if (o->full) {
        int s = new_slot(c, 0);
        if (s < 0)
            return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
        o->at = mk(K_SLOT, s);
    } else {
        o->at = mk(K_ROW, c->p->nrowv++);
    }
    in.d = o->at;
    /* peephole: a softmax / rms_norm whose result only leaves the group
     * writes it straight to the (f32) output, streaming */
    if ((in.code == I_SOFTMAX || in.code == I_RMS) && o->full && o->last < 0 &&
        o->tensor != c->sp->result && store_index(c, o->tensor) >= 0 &&
        fe_graph_tensor(g, o->tensor)->dtype == FE_F32 &&
        c->p->outs[store_index(c, o->tensor)].nt) {
        in.st = (int16_t)(store_index(c, o->tensor) + 1);
        c->p->rowpf = 1;
        /* and the multiply-add that writes its input (x * scale + mask)
         * finds the row max as it goes, saving the softmax its first pass */
        instr *prev = c->p->ncode > 0 ? &c->p->code[c->p->ncode - 1] : NULL;
        if (in.code == I_SOFTMAX && prev && prev->code == I_FMA && prev->d.kind == K_SLOT &&
            in.a.kind == K_SLOT && prev->d.idx == in.a.idx && !prev->mx) {
            prev->mx = (int16_t)(c->p->nrowv + 1);
            in.c = mk(K_ROW, c->p->nrowv++);
        }
        if (emit(c, in))
            return -1;
        c->p->nops++;
        c->slot_free[o->at.idx] = 1;
        return 0;
    }
    if (emit(c, in))
        return -1;
emitted:
    c->p->nops++;
    {
        int dt = fe_graph_tensor(g, o->tensor)->dtype;
        if (dt == FE_F16 || dt == FE_BF16 || dt == FE_BOOL) {
            instr r;
            memset(&r, 0, sizeof r);
            r.code = I_ROUND;
            r.op = (int16_t)dt;
            r.d = o->at;
            if (emit(c, r))
                return -1;
        }
    }
    if (o->last < 0 && o->tensor != c->sp->result && o->at.kind == K_SLOT && store_index(c, o->tensor) < 0)
        c->slot_free[o->at.idx] = 1;   /* dead value (no consumer, not stored) */
    return emit_store(c, ov);
}

/* ---- analysis ---- */

/* Reduced domain axes of row op node n: sets *lo (first column axis). */
static int row_axes(cc *c, const fe_node *n, int *lo)
{
    const fe_graph *g = c->g;
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    int ri = x->rank, off = c->r - ri, op = n->op;
    if (is_reduce(op)) {
        long m = fe_k_node_axes(g, n, ri);
        if (m <= 0)
            return fail(c, "node '%s' (%s): reduces no axis or has bad axes", fe_node_name(g, n),
                        fe_node_op_name(n));
        int first = -1;
        for (int i = 0; i < ri; i++)
            if ((m >> i) & 1) {
                if (first < 0)
                    first = i;
            } else if (first >= 0) {
                return fail(c, "node '%s' (%s): reduces axes that are not the trailing ones",
                            fe_node_name(g, n), fe_node_op_name(n));
            }
        *lo = first + off;
        return 0;
    }
    if (op == FE_OP_SOFTMAX || op == FE_OP_LOG_SOFTMAX) {
        int ax = fe_axis(fe_node_attr_int(g, n, "axis", -1), ri);
        if (ax != ri - 1)
            return fail(c, "node '%s' (%s): only a softmax over the last axis fuses",
                        fe_node_name(g, n), fe_node_op_name(n));
        *lo = c->r - 1;
        return 0;
    }
    {
        fe_k_tensor xv = fe_k_view(NULL, x->dtype, ri, fe_tensor_shape(g, x));
        int64_t tmp[FE_MAX_RANK + 1];
        int k = fe_node_attr_ints(g, n, "normalized_shape", tmp, FE_MAX_RANK + 1);
        if (fe_k_node_norm_size(g, n, &xv) < 0)
            return fail(c, "node '%s' (%s): bad normalized_shape", fe_node_name(g, n),
                        fe_node_op_name(n));
        if (k < 0)
            k = 1;
        *lo = c->r - k;
        return 0;
    }
}

/* Values, domain, alignment and the split. */
static int analyse(cc *c)
{
    const fe_graph *g = c->g;
    const fe_k_prog_spec *sp = c->sp;

    /* values and op checks */
    if (sp->anchor >= 0)
        vadd(c, sp->anchor);
    for (int ni = 0; ni < sp->nnodes; ni++) {
        const fe_node *n = fe_graph_node(g, sp->nodes[ni]);
        if (!supported(n->op))
            return fail(c, "node '%s' is %s, which the fused executor does not run (only "
                        "elementwise, broadcast, batch_norm and row-reduction ops)", fe_node_name(g, n),
                        fe_node_op_name(n));
        if (n->nout != 1)
            return fail(c, "node '%s' (%s): more than one output", fe_node_name(g, n),
                        fe_node_op_name(n));
        for (int k = 0; k < n->nin; k++) {
            int vi = vadd(c, fe_node_input(g, n, k));
            c->v[vi].last = ni;
        }
        int ov = vadd(c, fe_node_output(g, n, 0));
        int dt = fe_graph_tensor(g, c->v[ov].tensor)->dtype;
        if (fe_k_dtype_is_int(dt) && dt != FE_BOOL)
            return fail(c, "node '%s' (%s): produces an integer tensor; the fused executor "
                        "computes in float", fe_node_name(g, n), fe_node_op_name(n));
        if (is_reduce(n->op) && !fe_node_attr_bool(g, n, "keepdim", 0))
            c->v[ov].nonkeep = 1;
    }
    /* batch_norm parameters: [C] tensors read along the input's axis 1,
     * so each must come from outside and be used by batch_norm alone */
    for (int ni = 0; ni < sp->nnodes; ni++) {
        const fe_node *n = fe_graph_node(g, sp->nodes[ni]);
        const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
        for (int k = 0; k < n->nin; k++) {
            val *v = &c->v[vfind(c, fe_node_input(g, n, k))];
            int chan = n->op == FE_OP_BATCH_NORM && k > 0 ? x->rank : 0;
            if (!chan && v->chan_rank == 0)
                continue;
            if (v->chan_rank != 0 && v->chan_rank != chan)
                return fail(c, "node '%s' (%s): a batch_norm parameter is also read another way "
                            "in the group", fe_node_name(g, n), fe_node_op_name(n));
            if (x->rank < 2 || fe_graph_tensor(g, v->tensor)->rank != 1)
                return fail(c, "node '%s' (%s): needs an input of rank >= 2 and 1-D parameters",
                            fe_node_name(g, n), fe_node_op_name(n));
            v->chan_rank = chan;
        }
    }
    /* which values are produced here */
    for (int i = 0; i < c->nv; i++) {
        const fe_tensor *t = fe_graph_tensor(g, c->v[i].tensor);
        int produced = 0;
        for (int ni = 0; ni < sp->nnodes && !produced; ni++)
            produced = t->producer == sp->nodes[ni];
        if (!produced && c->v[i].tensor != sp->anchor)
            c->v[i].ext = c->p->nins++;
    }
    if (sp->result >= 0) {
        int ri = vfind(c, sp->result);
        if (ri < 0 || c->v[ri].ext >= 0)
            return fail(c, "fused: the prologue result %s is not produced by the program%s",
                        fe_tensor_name(g, fe_graph_tensor(g, sp->result)), "");
        c->v[ri].last = sp->nnodes;   /* live to the end */
    }

    /* domain */
    if (sp->domain) {
        c->r = sp->domain_rank;
        memcpy(c->D, sp->domain, (size_t)c->r * sizeof(int64_t));
    } else {
        c->r = 0;
        for (int i = 0; i < c->nv; i++)
            if (!c->v[i].nonkeep && fe_graph_tensor(g, c->v[i].tensor)->rank > c->r)
                c->r = fe_graph_tensor(g, c->v[i].tensor)->rank;
        for (int i = 0; i < c->r; i++)
            c->D[i] = 1;
        for (int i = 0; i < c->nv; i++) {
            int64_t ds[FE_MAX_RANK];
            if (c->v[i].nonkeep)
                continue;
            if (padded_val(c, &c->v[i], c->r, ds))
                return fail(c, "fused: tensor %s does not fit the group's domain%s",
                            fe_tensor_name(g, fe_graph_tensor(g, c->v[i].tensor)), "");
            for (int a = 0; a < c->r; a++) {
                if (ds[a] == c->D[a] || ds[a] == 1)
                    continue;
                if (c->D[a] != 1)
                    return fail(c, "fused: tensor %s does not broadcast with the rest of the "
                                "group%s", fe_tensor_name(g, fe_graph_tensor(g, c->v[i].tensor)), "");
                c->D[a] = ds[a];
            }
        }
    }

    /* alignment, node by node; row ops fix the split */
    c->s = sp->domain ? sp->split : -1;
    for (int i = 0; i < c->nv; i++)
        if (c->v[i].ext >= 0 || c->v[i].tensor == sp->anchor) {
            if (padded_val(c, &c->v[i], c->r, c->v[i].ds) || !fits(c->v[i].ds, c->D, c->r))
                return fail(c, "fused: input %s does not broadcast to the group's domain%s",
                            fe_tensor_name(g, fe_graph_tensor(g, c->v[i].tensor)), "");
        }
    for (int ni = 0; ni < sp->nnodes; ni++) {
        const fe_node *n = fe_graph_node(g, sp->nodes[ni]);
        val *o = &c->v[vfind(c, fe_node_output(g, n, 0))];
        for (int k = 0; k < n->nin; k++) {
            const val *iv = &c->v[vfind(c, fe_node_input(g, n, k))];
            if (iv->nonkeep)
                return fail(c, "node '%s' (%s) consumes a reduction without keepdim inside the "
                            "group", fe_node_name(g, n), fe_node_op_name(n));
        }
        if (is_rowop(n->op)) {
            int lo;
            const val *x = &c->v[vfind(c, fe_node_input(g, n, 0))];
            if (row_axes(c, n, &lo))
                return -1;
            if (c->s < 0)
                c->s = lo;
            else if (c->s != lo)
                return fail(c, "node '%s' (%s): row reductions over different axes in one group",
                            fe_node_name(g, n), fe_node_op_name(n));
            for (int a = lo; a < c->r; a++)
                if (x->ds[a] != c->D[a])
                    return fail(c, "node '%s' (%s): its input is broadcast along the reduced axes",
                                fe_node_name(g, n), fe_node_op_name(n));
            memcpy(o->ds, x->ds, sizeof o->ds);
            if (is_reduce(n->op))
                for (int a = lo; a < c->r; a++)
                    o->ds[a] = 1;
            /* norm weights / bias broadcast to the input */
            for (int k = 1; k < n->nin; k++) {
                const val *w = &c->v[vfind(c, fe_node_input(g, n, k))];
                for (int a = 0; a < c->r; a++)
                    if (w->ds[a] != 1 && w->ds[a] != x->ds[a])
                        return fail(c, "node '%s' (%s): weight does not broadcast", fe_node_name(g, n),
                                    fe_node_op_name(n));
            }
        } else {
            for (int a = 0; a < c->r; a++)
                o->ds[a] = 1;
            for (int k = 0; k < n->nin; k++) {
                const val *iv = &c->v[vfind(c, fe_node_input(g, n, k))];
                for (int a = 0; a < c->r; a++)
                    if (iv->ds[a] != 1)
                        o->ds[a] = iv->ds[a];
            }
            int64_t real[FE_MAX_RANK];
            if (padded(c, o->tensor, c->r, real) || memcmp(real, o->ds, (size_t)c->r * sizeof(int64_t)))
                return fail(c, "node '%s' (%s): output shape disagrees with its operands in the "
                            "group's domain", fe_node_name(g, n), fe_node_op_name(n));
        }
    }
    if (sp->result >= 0 && memcmp(c->v[vfind(c, sp->result)].ds, c->D, (size_t)c->r * sizeof(int64_t)))
        return fail(c, "fused: the prologue result %s does not cover the operand%s",
                    fe_tensor_name(g, fe_graph_tensor(g, sp->result)), "");
    /* stores: full outputs cover the domain; row outputs hold one value per row */
    for (int k = 0; k < sp->nstores; k++) {
        int vi = vfind(c, sp->stores[k]);
        if (vi < 0 || c->v[vi].ext >= 0)
            return fail(c, "fused: stored tensor %s is not produced by the group%s",
                        fe_tensor_name(g, fe_graph_tensor(g, sp->stores[k])), "");
        if (memcmp(c->v[vi].ds, c->D, (size_t)c->r * sizeof(int64_t))) {
            int ok = c->s >= 0;
            for (int a = 0; a < c->r && ok; a++)
                ok = a < c->s ? c->v[vi].ds[a] == c->D[a] : c->v[vi].ds[a] == 1;
            if (!ok)
                return fail(c, "fused: output %s is smaller than the group's domain (it would "
                            "be written more than once)%s",
                            fe_tensor_name(g, fe_graph_tensor(g, sp->stores[k])), "");
        }
    }
    return 0;
}

/* Merge adjacent axes every external operand and output treats alike
 * (both broadcast or both full), dropping size-1 axes; never across the
 * column split. */
static void merge_axes(cc *c)
{
    int m = 0, prev = -1, split_seen = 0;
    for (int a = 0; a < c->r; a++) {
        if (c->D[a] == 1)
            continue;
        int boundary = c->s >= 0 && a >= c->s && !split_seen;
        if (boundary)
            split_seen = 1;
        int same = prev >= 0 && !boundary;
        for (int i = 0; i < c->nv && same; i++) {
            const val *v = &c->v[i];
            if (v->ext < 0 && store_index(c, v->tensor) < 0 && v->tensor != c->sp->anchor &&
                v->tensor != c->sp->result)
                continue;
            same = (v->ds[prev] == 1) == (v->ds[a] == 1);
        }
        if (same) {
            c->MD[m - 1] *= c->D[a];
        } else {
            c->mstart[m] = a;
            c->MD[m] = c->D[a];
            m++;
        }
        prev = a;
    }
    if (m == 0) {
        c->mstart[0] = 0;
        c->MD[0] = 1;
        m = 1;
    }
    c->mstart[m] = c->r;
    c->mr = m;
    if (c->s < 0) {
        c->ms = m - 1;
    } else {
        c->ms = m;      /* no column axis left: C = 1 */
        for (int i = 0; i < m; i++)
            if (c->mstart[i] >= c->s && c->D[c->mstart[i]] != 1) {
                c->ms = i;
                break;
            }
    }
    c->mstart[0] = 0;   /* leading size-1 axes belong to the first merged axis */
}

/* merged shape of a value */
static void mshape(const cc *c, const val *v, int64_t *ms)
{
    for (int i = 0; i < c->mr; i++) {
        int full = 0;
        for (int a = c->mstart[i]; a < c->mstart[i + 1]; a++)
            if (v->ds[a] != 1)
                full = 1;
        ms[i] = full ? c->MD[i] : 1;
    }
}

static int layout(cc *c)
{
    fe_k_prog *p = c->p;
    int ms = c->ms, mr = c->mr;
    p->nrdims = ms;
    p->rows = 1;
    for (int i = 0; i < ms; i++) {
        p->rdims[i] = c->MD[i];
        p->rows *= c->MD[i];
    }
    p->C = 1;
    for (int i = ms; i < mr; i++)
        p->C *= c->MD[i];
    p->outer = c->r ? c->D[0] : 1;
    for (int i = 0; i < c->nv; i++) {
        val *v = &c->v[i];
        int64_t sh[FE_MAX_RANK], st[FE_MAX_RANK], acc = 1;
        mshape(c, v, sh);
        v->full = 0;
        for (int a = ms; a < mr; a++)
            if (sh[a] != 1)
                v->full = 1;
        if (v->ext < 0)
            continue;
        pin *in = &p->ins[v->ext];
        in->tensor = v->tensor;
        in->dtype = fe_graph_tensor(c->g, v->tensor)->dtype;
        for (int a = mr - 1; a >= 0; a--) {
            st[a] = sh[a] == 1 ? 0 : acc;
            acc *= sh[a];
        }
        in->rowinv = 1;
        for (int a = 0; a < ms; a++) {
            in->rst[a] = st[a];
            if (st[a])
                in->rowinv = 0;
        }
        int contig = 1, bc = 1;
        int64_t cs = 1;
        for (int a = mr - 1; a >= ms; a--) {
            if (st[a] != 0)
                bc = 0;
            if (st[a] != cs)
                contig = 0;
            cs *= c->MD[a];
        }
        in->col = bc ? COL_BCAST : contig ? COL_CONTIG : COL_GENERAL;
        in->direct = in->col == COL_CONTIG && in->dtype == FE_F32;
        if (in->col == COL_GENERAL) {
            if (p->C > (1 << 24))
                return fail(c, "fused: input %s is broadcast inside %s columns", fe_tensor_name(c->g,
                            fe_graph_tensor(c->g, v->tensor)), "too many");
            in->ctab = malloc((size_t)p->C * sizeof(int64_t));
            if (!in->ctab)
                return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
            for (int64_t j = 0; j < p->C; j++)
                in->ctab[j] = fe_k_offset(mr - ms, c->MD + ms, st + ms, j);
        }
    }
    return 0;
}

/* ---- register runs ---- */

/* The vector-program code of instruction in, or -1 when it keeps its tile
 * pass. Only ops producing a FULL value qualify (a ROW result is one float
 * per row), and only stores of f32 outputs. */
static int vm_code(const fe_k_prog *p, const instr *in)
{
    switch (in->code) {
    case I_UNARY:
        if (in->d.kind != K_SLOT)
            return -1;
        return in->op == FE_OP_CAST ? FE_V_LD : fe_k_vop_unary(in->op, in->aux);
    case I_BINARY: return in->d.kind == K_SLOT ? fe_k_vop_binary(in->op) : -1;
    case I_FMA: return in->d.kind == K_SLOT && !in->mx ? FE_V_FMA : -1;
    case I_WHERE: return in->d.kind == K_SLOT ? FE_V_WHERE : -1;
    case I_EXPAND: return FE_V_LD;
    case I_STORE:
        return p->outs[in->aux].dtype == FE_F32 && in->a.kind != K_ROW && in->a.kind != K_CONST
               ? FE_V_ST : -1;
    default: return -1;
    }
}

static int same_opnd(opnd x, opnd y)
{
    return x.kind == y.kind && x.idx == y.idx;
}

static int reads_slot(const instr *in, int s)
{
    const opnd *o[3] = {&in->a, &in->b, &in->c};
    for (int k = 0; k < 3; k++)
        if (o[k]->kind == K_SLOT && o[k]->idx == s)
            return 1;
    return in->code == I_ROUND && in->d.kind == K_SLOT && in->d.idx == s;
}

/* Is slot s read after instruction k0 before it is written again? */
static int slot_live_after(const fe_k_prog *p, const instr *code, int n, int k0, int s)
{
    for (int k = k0 + 1; k < n; k++) {
        if (reads_slot(&code[k], s))
            return 1;
        if (code[k].d.kind == K_SLOT && code[k].d.idx == s)
            return 0;
    }
    return p->result.kind == K_SLOT && p->result.idx == s;
}

/* Translation state of one run: which value the accumulator holds (an
 * operand, and for a slot the instruction that defined it) and, per slot,
 * the instruction of the run that defined its current value (-1: before
 * the run, so it is in memory). */
typedef struct vtr {
    opnd acc;
    int acc_def;
    int *def;
    char *spill;      /* per instruction of the run: its result goes to memory too */
    int ssq;          /* the instruction whose row sum of squares the run finds, -1 none */
    int emit;
} vtr;

static int vm_push_op(cc *c, vop op)
{
    fe_k_prog *p = c->p;
    vop *n = realloc(p->vops, (size_t)(p->nvops + 1) * sizeof *n);
    if (!n)
        return -1;
    p->vops = n;
    p->vops[p->nvops++] = op;
    return 0;
}

static int vm_entry(cc *c, const vrun *r, opnd o, int out)
{
    fe_k_prog *p = c->p;
    for (int e = r->ent0; e < p->nvents; e++)
        if (same_opnd(p->vents[e].o, o) && p->vents[e].out == out)
            return e - r->ent0;
    vent *n = realloc(p->vents, (size_t)(p->nvents + 1) * sizeof *n);
    if (!n)
        return -2;
    p->vents = n;
    p->vents[p->nvents].o = o;
    p->vents[p->nvents].out = out;
    return p->nvents++ - r->ent0;
}

static int in_acc(const vtr *t, opnd o)
{
    return same_opnd(t->acc, o) && (o.kind != K_SLOT || t->acc_def == t->def[o.idx]);
}

/* Operand o read from memory: a table entry (marking the instruction of
 * the run that defined a slot's value for a spill). -2 on OOM. */
static int vm_mem(cc *c, vtr *t, const vrun *r, opnd o)
{
    if (o.kind == K_SLOT && t->def[o.idx] >= 0)
        t->spill[t->def[o.idx]] = 1;
    return t->emit ? vm_entry(c, r, o, -1) : 0;
}

static int vm_emit(cc *c, vtr *t, int code, unsigned form, const int *e)
{
    vop op = {(int16_t)fe_k_vcode(code, form), {(int8_t)e[0], (int8_t)e[1], (int8_t)e[2]}};
    return t->emit ? vm_push_op(c, op) : 0;
}

/* Make o the accumulator (an LD unless it already is). */
static int vm_load(cc *c, vtr *t, const vrun *r, opnd o)
{
    int e[3] = {0, 0, 0};
    if (in_acc(t, o))
        return 0;
    e[0] = vm_mem(c, t, r, o);
    if (e[0] < -1 || vm_emit(c, t, FE_V_LD, 1, e))
        return -1;
    t->acc = o;
    t->acc_def = o.kind == K_SLOT ? t->def[o.idx] : -1;
    return 0;
}

/* Emit op `code` on operands src[0..nsrc) in one of the evaluator's forms
 * (fe_k_vform_ok): one operand in the accumulator, loading the first when
 * none is; add, mul and fma put theirs first, as their operands commute. */
static int vm_op(cc *c, vtr *t, const vrun *r, int code, opnd *src, int nsrc)
{
    int e[3] = {0, 0, 0}, ai = -1;
    if (code == FE_V_LD)
        return vm_load(c, t, r, src[0]);
    if (nsrc == 1) {
        if (vm_load(c, t, r, src[0]))
            return -1;
        return vm_emit(c, t, code, 0, e);
    }
    for (int k = 0; k < nsrc && ai < 0; k++)
        if (in_acc(t, src[k]))
            ai = k;
    if (ai < 0) {
        if (vm_load(c, t, r, src[0]))
            return -1;
        ai = 0;
    }
    if (ai > 0 && (code == FE_V_ADD || code == FE_V_MUL)) {
        opnd x = src[0];
        src[0] = src[ai];
        src[ai] = x;
        ai = 0;
    }
    unsigned form = 0;
    for (int k = 0; k < nsrc; k++) {
        if (k == ai)
            continue;
        e[k] = vm_mem(c, t, r, src[k]);
        if (e[k] < -1)
            return -1;
        form |= 1u << k;
    }
    return vm_emit(c, t, code, form, e);
}

/* One pass over the run code[k0, k1): with emit clear it only finds the
 * spills; with emit set it appends the vector ops. */
static int vm_translate(cc *c, vtr *t, vrun *r, const instr *code, int n, int k0, int k1)
{
    fe_k_prog *p = c->p;
    t->acc = mk(K_NONE, 0);
    t->acc_def = -1;
    for (int s = 0; s < p->nslots; s++)
        t->def[s] = -1;
    for (int k = k0; k < k1; k++) {
        const instr *in = &code[k];
        int vc = vm_code(p, in), ki = k - k0;
        int e[3] = {0, 0, 0};
        if (vc == FE_V_ST) {
            if (vm_load(c, t, r, in->a))
                return -1;
            e[0] = t->emit ? vm_entry(c, r, mk(K_NONE, 0), in->aux) : 0;
            if (e[0] < 0 || vm_emit(c, t, FE_V_ST, 1, e))
                return -1;
            continue;
        }
        opnd src[3] = {in->a, in->b, in->c};
        int nsrc = in->code == I_FMA || in->code == I_WHERE ? 3 : in->code == I_BINARY ? 2 : 1;
        if (vm_op(c, t, r, vc, src, nsrc))
            return -1;
        t->def[in->d.idx] = ki;
        t->acc = in->d;
        t->acc_def = ki;
        if (t->emit && t->spill[ki]) {
            e[0] = vm_entry(c, r, in->d, -1);
            if (e[0] < 0 || vm_emit(c, t, FE_V_ST, 1, e))
                return -1;
        }
        if (ki == t->ssq && vm_emit(c, t, FE_V_SSQ, 0, (int[3]){0, 0, 0}))
            return -1;
    }
    /* values still needed after the run go to memory */
    for (int s = 0; s < p->nslots; s++)
        if (t->def[s] >= 0 && slot_live_after(p, code, n, k1 - 1, s))
            t->spill[t->def[s]] = 1;
    return 0;
}

/* Forget what a thread's state says about earlier tiles (row-invariant
 * loads held in slots, the bound run): the buffers may differ from the
 * last run's. */
static void forget_tiles(const fe_k_prog *p, tstate *ts)
{
    for (int k = 0; k < p->nins; k++)
        ts->last_c0[k] = -1;
    ts->vb_run = -1;
}

/* Whether instructions [k0, k1) should become a register pass: whenever
 * they hold an op beyond loads and stores. Values stay in registers, and
 * the pass prefetches its inputs and runs over long tiles, where a tile
 * pass over 1024 floats leaves the hardware prefetcher alone. Even a lone
 * cheap op gains (relu over f32 [4096, 4096]: 77 -> 91 GB/s; a product
 * with per-column weights: 41 -> 86; Add+RMSNorm's add, beside its row
 * op: 2.85 -> 2.47 ms; the softmax prologue x * s + mask: even). The first,
 * switch-based evaluator paid 2-3 cycles of dispatch per op and vector,
 * and lone cheap ops had kept their tile loops then. */
static int worth_a_run(const fe_k_prog *p, const instr *code, int k0, int k1)
{
    for (int k = k0; k < k1; k++) {
        int vc = vm_code(p, &code[k]);
        if (vc != FE_V_ST && vc != FE_V_LD)
            return 1;
    }
    return 0;
}

/* Tile width of a program that is one register pass: its slots hold
 * spills only, and a longer tile pays the per-tile binding less often
 * (measured with 16-lane vectors: SwiGLU and GELU went from 46-49 GB/s at
 * 4096 floats to 55-57 GB/s at 16384; longer tiles gained nothing more). */
static const int64_t vm_tile = 16384;

/* Replace each maximal run of register-capable instructions by one I_VM
 * instruction. Table indices are int8_t: a run is cut at 24 instructions
 * (at most 4 entries each). */
static int build_runs(cc *c)
{
    fe_k_prog *p = c->p;
    int n = p->ncode, out = 0;
    instr *code = p->code;
    instr *nc = malloc((size_t)(n ? n : 1) * sizeof(instr));
    vtr t;
    t.def = malloc((size_t)(p->nslots + 1) * sizeof(int));
    t.spill = malloc((size_t)(n + 1));
    if (fe_k_vop_binary(FE_OP_ADD) < 0) {   /* no vector programs on this build */
        free(nc);
        free(t.def);
        free(t.spill);
        return 0;
    }
    if (!nc || !t.def || !t.spill)
        goto oom;
    for (int k = 0; k < n;) {
        if (vm_code(p, &code[k]) < 0) {
            nc[out++] = code[k++];
            continue;
        }
        int k1 = k;
        while (k1 < n && k1 - k < 24 && vm_code(p, &code[k1]) >= 0)
            k1++;
        if (!worth_a_run(p, code, k, k1)) {
            while (k < k1)
                nc[out++] = code[k++];
            continue;
        }
        vrun *rn = realloc(p->runs, (size_t)(p->nruns + 1) * sizeof(vrun));
        if (!rn)
            goto oom;
        p->runs = rn;
        vrun *r = &p->runs[p->nruns];
        r->op0 = p->nvops;
        r->ent0 = p->nvents;
        memset(t.spill, 0, (size_t)(n + 1));
        t.emit = 0;
        t.ssq = -1;
        if (vm_translate(c, &t, r, code, n, k, k1))
            goto oom;
        /* An rms_norm right after the run, of a row the run makes: the run
         * sums its squares as it goes, saving the rms_norm a pass over the
         * row (Add+RMSNorm: 88.5 -> 92% of copy, in turns). */
        r->ssq = -1;
        if (k1 < n && code[k1].code == I_RMS && code[k1].a.kind == K_SLOT &&
            code[k1].c.kind == K_NONE && t.def[code[k1].a.idx] >= 0) {
            t.ssq = t.def[code[k1].a.idx];
            r->ssq = p->nrowv++;
            code[k1].c = mk(K_ROW, r->ssq);
        }
        t.emit = 1;
        if (vm_translate(c, &t, r, code, n, k, k1))
            goto oom;
        r->nops = p->nvops - r->op0;
        r->nent = p->nvents - r->ent0;
        if (r->nent > p->maxent)
            p->maxent = r->nent;
        if (r->nops > p->maxops)
            p->maxops = r->nops;
        instr vi;
        memset(&vi, 0, sizeof vi);
        vi.code = I_VM;
        vi.aux = (int16_t)p->nruns++;
        nc[out++] = vi;
        p->nvm += k1 - k;
        k = k1;
    }
    memcpy(code, nc, (size_t)out * sizeof(instr));
    p->nexec = out;
    free(nc);
    free(t.def);
    free(t.spill);
    return 0;
oom:
    free(nc);
    free(t.def);
    free(t.spill);
    return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
}

fe_k_prog *fe_k_prog_compile(const fe_k_prog_spec *spec, fe_error *err)
{
    cc c;
    memset(&c, 0, sizeof c);
    c.sp = spec;
    c.g = spec->g;
    c.err = err;
    c.p = calloc(1, sizeof(fe_k_prog));
    c.v = calloc((size_t)(3 * spec->nnodes + FE_MAX_IO + 4), sizeof(val));
    if (!c.p || !c.v) {
        free(c.p);
        free(c.v);
        fe_error_set(err, FE_ENOMEM, "fused: out of memory");
        return NULL;
    }
    /* nodes can have many inputs (where: 3, concat is not here): size v generously */
    {
        int need = 1;
        for (int i = 0; i < spec->nnodes; i++)
            need += fe_graph_node(spec->g, spec->nodes[i])->nin + 1;
        val *nv = realloc(c.v, (size_t)need * sizeof(val));
        if (!nv)
            goto oom;
        c.v = nv;
    }
    fe_k_prog *p = c.p;
    p->result = mk(K_NONE, 0);
    if (analyse(&c))
        goto fail;
    p->ins = calloc((size_t)(p->nins ? p->nins : 1), sizeof(pin));
    p->outs = calloc((size_t)(spec->nstores ? spec->nstores : 1), sizeof(pout));
    if (!p->ins || !p->outs)
        goto oom;
    merge_axes(&c);
    if (layout(&c))
        goto fail;
    p->full_rows = 0;
    for (int ni = 0; ni < spec->nnodes; ni++)
        if (is_rowop(fe_graph_node(c.g, spec->nodes[ni])->op))
            p->full_rows = 1;
    p->nouts = spec->nstores;
    for (int k = 0; k < spec->nstores; k++) {
        const fe_tensor *t = fe_graph_tensor(c.g, spec->stores[k]);
        p->outs[k].tensor = spec->stores[k];
        p->outs[k].dtype = t->dtype;
        p->outs[k].nt = (long)t->bytes >= fe_k_cache_llc() / 2;
    }
    /* the anchor is injected; store it first if it leaves the group */
    if (spec->anchor >= 0) {
        int av = vfind(&c, spec->anchor);
        if (av < 0)
            av = vadd(&c, spec->anchor);
        c.v[av].at = mk(K_ANCHOR, 0);
        c.v[av].full = 1;
        if (emit_store(&c, av))
            goto fail;
    }
    for (int ni = 0; ni < spec->nnodes; ni++)
        if (gen_node(&c, ni))
            goto fail;
    if (spec->result >= 0)
        p->result = c.v[vfind(&c, spec->result)].at;
    p->nexec = p->ncode;
    if (build_runs(&c))
        goto fail;

    /* tile width: whole rows when reducing; else short segments (4 KiB per
     * slot): reads of one tile and the streaming stores of the previous one
     * then overlap best (measured: 1024 floats beat 8192 by 20-30% on
     * memory-bound groups) */
    if (p->full_rows) {
        /* its register passes prefetch AHEAD as well as the row op its next
         * row: without the first, Add+RMSNorm ran 15% slower; without the
         * second, 16% (softmax 1.4x) */
        p->T = p->C;
        p->ahead = 1;
    } else {
        int64_t t = 4096 / (p->nslots > 0 ? p->nslots : 1);
        t = t < 512 ? 512 : t > 1024 ? 1024 : t;
        int vm = p->nexec == 1 && p->code[0].code == I_VM;
        if (vm)
            t = vm_tile;
        /* Inputs that walk the columns but are the same on every row
         * (per-column weights, x * a + b) are read again by every row. A
         * vector program keeps whole rows when the weights' rows fit in a
         * quarter of L2: its prefetch keeps the streamed inputs coming, and
         * the weights are read from L2 (chain6, three weights on 4096
         * columns: 76 GB/s, against 58-62 with L1-sized chunks). Otherwise
         * the tile is capped so that the weights' segments stay in L1 (32
         * KiB with the streamed input), and tiles go chunk by chunk over
         * blocks of rows (fe_k_prog_run): with three such weights on 4096
         * columns, tile passes went from 26 to 40-44 GB/s (measured). */
        int nw = 0;
        for (int k = 0; k < p->nins; k++)
            nw += p->ins[k].rowinv && p->ins[k].col != COL_BCAST;
        int in_l2 = vm && (int64_t)nw * p->C * (int64_t)sizeof(float) <= fe_k_cache_l2() / 4;
        if (nw > 0 && p->rows > 1 && !in_l2) {
            int64_t cap = 32768 / (4 * (nw + 1));
            cap = cap < 256 ? 256 : cap;
            if (t > cap)
                t = cap;
            p->colblock = 1;
        }
        /* A column-blocked program's next tile is not AHEAD floats on. */
        p->ahead = vm && !p->colblock;
        t &= ~(int64_t)63;
        p->T = p->C < t ? p->C : t;
    }
    if (p->T < 1)
        p->T = 1;
    p->nthreads = 1;
#ifdef _OPENMP
    p->nthreads = omp_get_max_threads();
#endif
    {
        /* per thread: slots (64-byte aligned), row values, input pointers */
        size_t ts = ((size_t)p->T + 16) & ~(size_t)15;
        size_t per = (size_t)p->nslots * ts * sizeof(float) + 64 +
                     (size_t)(p->maxent + 1) * (FE_K_VLANES * sizeof(float) + sizeof(vsrc)) +
                     (size_t)(p->maxops + 1) * sizeof(fe_k_vbound) + 64 +
                     (size_t)(p->nrowv + 1) * sizeof(float) +
                     (size_t)(p->nins + 1) * (sizeof(float *) + 2 * sizeof(int64_t)) + 64;
        per = (per + ISOLATE - 1) & ~(size_t)(ISOLATE - 1);
        size_t tsb = (size_t)p->nthreads * sizeof(tstate);
        void *m = NULL;
        void *t = NULL;
        if (posix_memalign(&t, 4096, whole_pages(tsb)))
            goto oom;
        p->ts = memset(t, 0, tsb);
        if (posix_memalign(&m, 4096, whole_pages(per * (size_t)p->nthreads)))
            goto oom;
        p->mem = m;
        p->ss = (int64_t)ts;
        for (int t = 0; t < p->nthreads; t++) {
            char *b = (char *)m + per * (size_t)t;
            tstate *s = &p->ts[t];
            s->slots = (float *)b;
            b += (size_t)p->nslots * ts * sizeof(float);
            s->vbc = (float *)b;      /* 64-byte aligned: slots are whole lines */
            b += (size_t)(p->maxent + 1) * FE_K_VLANES * sizeof(float);
            s->vtab = (vsrc *)b;
            b += (size_t)(p->maxent + 1) * sizeof(vsrc);
            s->vb = (fe_k_vbound *)b;
            b += (size_t)(p->maxops + 1) * sizeof(fe_k_vbound);
            s->rowv = (float *)b;
            b += (size_t)(p->nrowv + 1) * sizeof(float);
            b = (char *)(((uintptr_t)b + 7) & ~(uintptr_t)7);
            s->inptr = (const float **)b;
            b += (size_t)(p->nins + 1) * sizeof(float *);
            s->inoff = (int64_t *)b;
            b += (size_t)(p->nins + 1) * sizeof(int64_t);
            s->last_c0 = (int64_t *)b;
            forget_tiles(p, s);
            s->res_row = -1;
        }
    }
    free(c.v);
    free(c.slot_free);
    if (getenv("FE_DUMP_PROG"))
        fe_k_prog_dump(p, stderr);
    return p;
oom:
    fe_error_set(err, FE_ENOMEM, "fused: out of memory");
fail:
    free(c.v);
    free(c.slot_free);
    fe_k_prog_free(c.p);
    return NULL;
}

void fe_k_prog_free(fe_k_prog *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->nins && p->ins; k++)
        free(p->ins[k].ctab);
    free(p->ins);
    free(p->outs);
    free(p->code);
    free(p->consts);
    free(p->ts);
    free(p->mem);
    free(p->runs);
    free(p->vops);
    free(p->vents);
    free(p);
}

int64_t fe_k_prog_rows(const fe_k_prog *p) { return p->rows; }
int64_t fe_k_prog_cols(const fe_k_prog *p) { return p->C; }
int fe_k_prog_full_rows(const fe_k_prog *p) { return p->full_rows; }

char *fe_k_prog_describe(const fe_k_prog *p, char *buf, size_t size)
{
    int nt = 0;
    for (int k = 0; k < p->nouts; k++)
        nt += p->outs[k].nt;
    int n = snprintf(buf, size, "%d ops in %d instrs, %lld rows x %lld cols, tile %lld%s, %d slots, "
                     "%d converting loads%s", p->nops, p->ncode, (long long)p->rows, (long long)p->C,
                     (long long)(p->full_rows ? p->C : p->T), p->full_rows ? " (whole rows)" : "",
                     p->nslots, p->nloads, nt ? ", streaming stores" : "");
    int nssq = 0;
    for (int k = 0; k < p->nruns; k++)
        nssq += p->runs[k].ssq >= 0;
    if (p->nruns && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ", %d instrs in %d register pass%s", p->nvm,
                      p->nruns, p->nruns == 1 ? "" : "es");
    if (nssq && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (%d summing squares for rms_norm)", nssq);
    return buf;
}

static void dump_opnd(FILE *f, opnd o)
{
    static const char *k[] = {"-", "slot", "in", "row", "const", "anchor"};
    fprintf(f, " %s%d", k[o.kind], o.idx);
}

void fe_k_prog_dump(const fe_k_prog *p, FILE *f)
{
    static const char *names[] = {"load", "loadrow", "expand", "unary", "binary", "where", "round",
                                  "reduce", "softmax", "rms", "ln", "store", "storerow", "fma", "vm"};
    fprintf(f, "rows %lld x cols %lld, tile %lld, %d slots\n", (long long)p->rows, (long long)p->C,
            (long long)p->T, p->nslots);
    for (int k = 0; k < p->nins; k++)
        fprintf(f, "  in%d: tensor %d dtype %d col %d direct %d rowinv %d\n", k, p->ins[k].tensor,
                p->ins[k].dtype, p->ins[k].col, p->ins[k].direct, p->ins[k].rowinv);
    for (int i = 0; i < p->nexec; i++) {
        const instr *in = &p->code[i];
        if (in->code == I_VM) {
            const vrun *r = &p->runs[in->aux];
            fprintf(f, "  vm       %d ops:", r->nops);
            for (int k = 0; k < r->nops; k++) {
                const vop *o = &p->vops[r->op0 + k];
                fprintf(f, " %d/%d(%d,%d,%d)", FE_V_OP(o->code), FE_V_INMEM(o->code), o->e[0],
                        o->e[1], o->e[2]);
            }
            for (int e = 0; e < r->nent; e++) {
                const vent *v = &p->vents[r->ent0 + e];
                if (v->out >= 0)
                    fprintf(f, " [%d]=out%d", e, v->out);
                else {
                    fprintf(f, " [%d]=", e);
                    dump_opnd(f, v->o);
                }
            }
            fprintf(f, "\n");
            continue;
        }
        fprintf(f, "  %-8s op %d aux %d st %d ->", names[in->code], in->op, in->aux, in->st);
        dump_opnd(f, in->d);
        fprintf(f, " <-");
        dump_opnd(f, in->a);
        dump_opnd(f, in->b);
        dump_opnd(f, in->c);
        fprintf(f, "\n");
    }
}

/* ---- execution ---- */

/* Where operand o's values for the current segment are (stride 0: one
 * value for the whole segment). */
static inline const float *loc(const fe_k_prog *p, tstate *ts, opnd o, const float *anchor,
                               int *stride)
{
    *stride = 1;
    switch (o.kind) {
    case K_SLOT: return ts->slots + o.idx * p->ss;
    case K_IN: return ts->inptr[o.idx];
    case K_ROW: *stride = 0; return ts->rowv + o.idx;
    case K_CONST: *stride = 0; return p->consts + o.idx;
    case K_ANCHOR: return anchor;
    default: return NULL;
    }
}

static void gather_cols(const pin *in, const void *data, int64_t off, int64_t c0, int64_t w, float *d)
{
    for (int64_t j = 0; j < w; j++)
        fe_k_load_f32(data, in->dtype, off + in->ctab[c0 + j], d + j, 1);
}

/* How far ahead of a vector program its streamed inputs are pulled into
 * cache, in floats: the program fills the out-of-order window with its
 * arithmetic, so the hardware prefetcher's requests alone leave it waiting
 * (measured on chain6's program over whole 4096-float rows with its three
 * per-column weights: 27 GB/s without, 55 at 512 ahead, 70 at 1024, 76 at
 * 2048 and at 4096). */
#define AHEAD 2048

/* Add a stream to pf, once: an input read by two ops of a run (chain6's x,
 * read by its first op and its last) is one stream to prefetch. */
static void pf_add(tstate *ts, const float *p, int64_t step)
{
    fe_k_pf *pf = &ts->vpf;
    for (int k = 0; k < pf->n; k++)
        if (pf->p[k] == p)
            return;
    if (pf->n < 4) {
        ts->vpfstep[pf->n] = step;
        pf->p[pf->n++] = p;
    }
}

/* Bind run r's table to the tile: slots, inputs and the anchor walk the
 * tile; row values and constants become vector-wide broadcasts; outputs
 * point at the tile's first element, streaming when the output asks for it
 * and the tile start is aligned to a vector. When the thread's next tile
 * follows in memory, inputs read from their tensors are prefetched AHEAD
 * floats on: all of them in a one-row program (an elementwise op over a
 * whole tensor, whose inputs count as row-invariant), otherwise those that
 * are not row-invariant (those stay in cache from row to row). Eight-vector
 * strips need this: with only the hardware prefetcher, SwiGLU and GELU ran
 * 10-20% slower at eight than at four. */
static void bind_run(const fe_k_prog *p, tstate *ts, const vrun *r, const fe_k_tensor *bufs,
                     int64_t row, int64_t c0, const float *anchor)
{
    int adv = 1;
    ts->vpf.n = 0;
    for (int e = 0; e < r->nent; e++) {
        const vent *v = &p->vents[r->ent0 + e];
        vsrc *s = &ts->vtab[e];
        s->bc = 0;
        s->nt = 0;
        s->step = 0;
        if (v->out >= 0) {
            const pout *o = &p->outs[v->out];
            s->p = (float *)bufs[o->tensor].data + row * p->C + c0;
            s->nt = o->nt && !((uintptr_t)s->p % (FE_K_VLANES * sizeof(float)));
            s->step = p->C;
            adv &= !o->nt || p->C % FE_K_VLANES == 0;   /* alignment, so nt, stays */
            continue;
        }
        int st;
        const float *x = loc(p, ts, v->o, anchor, &st);
        if (v->o.kind == K_ROW || v->o.kind == K_ANCHOR)
            adv = 0;
        if (v->o.kind == K_IN && !p->ins[v->o.idx].rowinv) {
            s->step = p->ins[v->o.idx].rst[0];
            adv &= p->nrdims == 1 && p->ins[v->o.idx].direct;
        }
        if (st) {
            s->p = (float *)x;
            if (ts->ahead && v->o.kind == K_IN && (!p->ins[v->o.idx].rowinv || p->rows == 1))
                pf_add(ts, (const float *)((uintptr_t)x + AHEAD * sizeof(float)), s->step);
            continue;
        }
        float *b = ts->vbc + FE_K_VLANES * e;
        for (int k = 0; k < FE_K_VLANES; k++)
            b[k] = x[0];
        s->p = b;
        s->bc = 1;
        s->step = 0;
    }
    for (int k = 0; k < r->nops; k++) {
        const vop *o = &p->vops[r->op0 + k];
        fe_k_vbound *v = &ts->vb[k];
        unsigned bcast = 0;
        v->nt = 0;
        for (int j = 0; j < 3; j++)
            if ((FE_V_INMEM(o->code) >> j) & 1) {
                const vsrc *s = &ts->vtab[o->e[j]];
                v->p[j] = s->p;
                bcast |= (unsigned)s->bc << j;
                v->nt = s->nt;
            }
        v->code = fe_k_vbcast(o->code, bcast);
        if (FE_V_OP(o->code) == FE_V_SSQ)
            v->p[0] = ts->vsums;
    }
    ts->vb[r->nops].code = fe_k_vcode(FE_V_END, 0);   /* vb has maxops + 1 entries */
    ts->vb_adv = adv;
}

/* Whether vb, bound to run `run`, moves on to this tile by advance_run. */
static int can_advance(const tstate *ts, int run, int64_t row, int64_t c0, int64_t w)
{
    return ts->vb_run == run && ts->vb_adv && row == ts->vb_row + 1 && c0 == ts->vb_c0 &&
           w == ts->vb_w;
}

/* Run r bound to the row after the one it was bound to: every pointer
 * moved by its entry's step (bind_run found that this is all that
 * changes: no row values, and inputs whose row offset is a multiple of
 * the row). Per-tile binding was 3-5% of a register pass over
 * 4096-float rows. */
static void advance_run(const fe_k_prog *p, tstate *ts, const vrun *r)
{
    for (int k = 0; k < r->nops; k++) {
        const vop *o = &p->vops[r->op0 + k];
        fe_k_vbound *v = &ts->vb[k];
        for (int j = 0; j < 3; j++)
            if ((FE_V_INMEM(o->code) >> j) & 1)
                v->p[j] += ts->vtab[o->e[j]].step;
    }
    for (int k = 0; k < ts->vpf.n; k++)
        ts->vpf.p[k] = (const float *)((uintptr_t)ts->vpf.p[k] +
                                       (uintptr_t)ts->vpfstep[k] * sizeof(float));
}

/* The instructions on row `row`, columns [c0, c0 + w), input offsets set. */
static void exec_range(const fe_k_prog *p, tstate *ts, const fe_k_tensor *bufs, int64_t row,
                       int64_t c0, int64_t w, const float *anchor)
{
    for (int i = 0; i < p->nexec; i++) {
        const instr *in = &p->code[i];
        int sd, sa, sb, sc;
        if (in->code == I_VM) {
            const vrun *r = &p->runs[in->aux];
            if (can_advance(ts, in->aux, row, c0, w)) {
                advance_run(p, ts, r);
            } else {
                bind_run(p, ts, r, bufs, row, c0, anchor);
                ts->vb_run = in->aux;
                ts->vb_c0 = c0;
                ts->vb_w = w;
            }
            ts->vb_row = row;
            if (r->ssq >= 0)
                memset(ts->vsums, 0, sizeof ts->vsums);
            fe_k_vrun(ts->vb, w, &ts->vpf);
            if (r->ssq >= 0)
                ts->rowv[r->ssq] = fe_k_vsums_total(ts->vsums);
            continue;
        }
        float *d = (float *)loc(p, ts, in->d, anchor, &sd);
        int64_t n = sd ? w : 1;
        switch (in->code) {
        case I_LOAD: {
            const pin *pi = &p->ins[in->aux];
            int64_t key = c0 * (p->T + 1) + w;   /* what the slot holds */
            if (pi->rowinv && ts->last_c0[in->aux] == key)
                break;
            if (pi->col == COL_GENERAL)
                gather_cols(pi, bufs[pi->tensor].data, ts->inoff[in->aux], c0, w, d);
            else
                fe_k_load_f32(bufs[pi->tensor].data, pi->dtype, ts->inoff[in->aux] + c0, d, w);
            if (pi->rowinv)
                ts->last_c0[in->aux] = key;
            break;
        }
        case I_LOADROW: {
            const pin *pi = &p->ins[in->aux];
            fe_k_load_f32(bufs[pi->tensor].data, pi->dtype, ts->inoff[in->aux], d, 1);
            break;
        }
        case I_EXPAND: {
            const float *a = loc(p, ts, in->a, anchor, &sa);
            float v = a[0];
            #pragma omp simd
            for (int64_t j = 0; j < w; j++)
                d[j] = v;
            break;
        }
        case I_UNARY: {
            const float *a = loc(p, ts, in->a, anchor, &sa);
            fe_k_unary_f32(in->op, in->aux, a, d, n);
            break;
        }
        case I_BINARY: {
            const float *a = loc(p, ts, in->a, anchor, &sa);
            const float *b = loc(p, ts, in->b, anchor, &sb);
            fe_k_binary_f32(in->op, a, sa, b, sb, d, n);
            break;
        }
        case I_WHERE: {
            const float *c = loc(p, ts, in->a, anchor, &sc);
            const float *a = loc(p, ts, in->b, anchor, &sa);
            const float *b = loc(p, ts, in->c, anchor, &sb);
            fe_k_where_f32(c, sc, a, sa, b, sb, d, n);
            break;
        }
        case I_ROUND:
            fe_k_round_to(in->op, d, n);
            break;
        case I_REDUCE:
            d[0] = fe_k_row_reduce(in->op, loc(p, ts, in->a, anchor, &sa), w);
            break;
        case I_FMA: {
            const float *a = loc(p, ts, in->a, anchor, &sa);
            const float *b = loc(p, ts, in->b, anchor, &sb);
            const float *c = loc(p, ts, in->c, anchor, &sc);
            if (in->mx)
                ts->rowv[in->mx - 1] = fe_k_fma_f32_max(a, sa, b, sb, c, sc, d, n);
            else
                fe_k_fma_f32(a, sa, b, sb, c, sc, d, n);
            break;
        }
        case I_SOFTMAX:
            if (in->st) {
                const float *x = loc(p, ts, in->a, anchor, &sa);
                float *y = (float *)bufs[p->outs[in->st - 1].tensor].data + row * p->C + c0;
                float m = in->c.kind == K_ROW ? ts->rowv[in->c.idx] : fe_k_row_max(x, w);
                fe_k_row_softmax_nt_max(x, d, y, w, in->aux, m, &ts->pf);
            } else {
                fe_k_row_softmax(loc(p, ts, in->a, anchor, &sa), d, w, in->aux);
            }
            break;
        case I_RMS: {
            const float *ss = in->c.kind == K_ROW ? &ts->rowv[in->c.idx] : NULL;
            if (in->st)
                fe_k_row_rmsnorm_nt(loc(p, ts, in->a, anchor, &sa),
                                    in->b.kind ? loc(p, ts, in->b, anchor, &sb) : NULL,
                                    (float *)bufs[p->outs[in->st - 1].tensor].data + row * p->C + c0,
                                    w, in->f, ss, &ts->pf);
            else
                fe_k_row_rmsnorm(loc(p, ts, in->a, anchor, &sa),
                                 in->b.kind ? loc(p, ts, in->b, anchor, &sb) : NULL, d, w, in->f,
                                 ss);
            break;
        }
        case I_LN:
            fe_k_row_layernorm(loc(p, ts, in->a, anchor, &sa),
                               in->b.kind ? loc(p, ts, in->b, anchor, &sb) : NULL,
                               in->c.kind ? loc(p, ts, in->c, anchor, &sc) : NULL, d, w, in->f);
            break;
        case I_STORE: {
            const pout *o = &p->outs[in->aux];
            const float *a = loc(p, ts, in->a, anchor, &sa);
            if (o->nt)
                fe_k_store_f32_nt(bufs[o->tensor].data, o->dtype, row * p->C + c0, a, w);
            else
                fe_k_store_f32(bufs[o->tensor].data, o->dtype, row * p->C + c0, a, w);
            break;
        }
        case I_STOREROW:
            if (c0 == 0) {
                const pout *o = &p->outs[in->aux];
                fe_k_store_f32(bufs[o->tensor].data, o->dtype, row, loc(p, ts, in->a, anchor, &sa), 1);
            }
            break;
        }
    }
}

/* Run the program on row `row`, columns [c0, c0 + w) (w <= T). */
static void exec_seg(const fe_k_prog *p, tstate *ts, const fe_k_tensor *bufs, int64_t row,
                     int64_t c0, int64_t w, const float *anchor)
{
    /* a program that is one register pass moving on to the next row needs
     * no input offsets (advance_run moves its pointers) */
    if (p->nexec == 1 && p->code[0].code == I_VM && can_advance(ts, p->code[0].aux, row, c0, w)) {
        exec_range(p, ts, bufs, row, c0, w, anchor);
        return;
    }
    /* one row axis (the common case) needs no division */
    for (int k = 0; k < p->nins; k++) {
        const pin *in = &p->ins[k];
        int64_t off = in->rowinv ? 0
                      : p->nrdims == 1 ? row * in->rst[0]
                                       : fe_k_offset(p->nrdims, p->rdims, in->rst, row);
        ts->inoff[k] = off;
        if (in->direct)
            ts->inptr[k] = (const float *)bufs[in->tensor].data + off + c0;
    }
    ts->pf.n = 0;
    if (p->rowpf && row + 1 < p->rows)
        for (int k = 0; k < p->nins && ts->pf.n < 2; k++) {
            const pin *in = &p->ins[k];
            if (in->direct && !in->rowinv)
                ts->pf.p[ts->pf.n++] = (const float *)bufs[in->tensor].data +
                                       fe_k_offset(p->nrdims, p->rdims, in->rst, row + 1);
        }
    exec_range(p, ts, bufs, row, c0, w, anchor);
}

static int check_bufs(const fe_k_prog *p, const fe_k_tensor *bufs, fe_error *err)
{
    for (int k = 0; k < p->nins; k++)
        if (!bufs[p->ins[k].tensor].data)
            return fe_error_set(err, FE_ERUNTIME, "fused: input tensor %d has no buffer",
                                p->ins[k].tensor);
    for (int k = 0; k < p->nouts; k++)
        if (!bufs[p->outs[k].tensor].data)
            return fe_error_set(err, FE_ERUNTIME, "fused: output tensor %d has no buffer",
                                p->outs[k].tensor);
    return FE_OK;
}

/* Rows per block of a column-blocked program: each thread takes tiles four
 * at a time, so a block gives both threads rows of the same chunk. */
#define ROWBLK 8

int fe_k_prog_run(fe_k_prog *p, const fe_k_tensor *bufs, int part, int nparts, fe_error *err)
{
    int64_t total = p->rows * p->C;
    int rc = check_bufs(p, bufs, err);
    if (rc)
        return rc;
    if (nparts < 1 || part < 0 || part >= nparts)
        return fe_error_set(err, FE_EINPUT, "fused: part %d of %d", part, nparts);
    /* part t covers outer-axis slices [outer*t/k, outer*(t+1)/k); each slice
     * is total/outer contiguous elements of the (row-major) domain */
    int64_t per = p->outer > 0 ? total / p->outer : 0;
    int64_t e0 = p->outer * part / nparts * per, e1 = p->outer * (part + 1) / nparts * per;
    if (p->full_rows && p->C > 0) {   /* keep whole rows together */
        e0 = (e0 + p->C - 1) / p->C * p->C;
        e1 = part == nparts - 1 ? total : (e1 + p->C - 1) / p->C * p->C;
    }
    if (e0 >= e1 || p->C == 0)
        return FE_OK;
    int64_t T = p->full_rows ? p->C : p->T;
    if (T > p->C)
        T = p->C;
    int64_t nch = (p->C + T - 1) / T;
    int64_t r0 = e0 / p->C, r1 = (e1 - 1) / p->C + 1;
    int64_t t0 = r0 * nch, t1 = r1 * nch;
    int par = (e1 - e0) >= 16384;
    /* Tiles are handed out in chunks of about 1M elements (4 MiB of each
     * f32 tensor), or fewer so that each thread gets at least eight chunks
     * (the dynamic schedule's balancing). Smaller chunks interleave the
     * threads' streams finely, which the memory system serves worse
     * (measured against 256K-element chunks, in turns with copy: GELU 87
     * -> 99 GB/s, chain6 79 -> 86, Add+RMSNorm 67 -> 80; softmax over
     * 2048-float rows had gone from 35 ms in chunks of 4 rows to 28.6 in
     * chunks of 32). */
    int64_t chunk = ((int64_t)1 << 20) / T, fair = (t1 - t0) / (8 * (int64_t)p->nthreads);
    if (chunk > fair)
        chunk = fair;
    if (chunk < 4)
        chunk = 4;
    #pragma omp parallel num_threads(p->nthreads) if (par)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        tstate *ts = &p->ts[tid];
        forget_tiles(p, ts);
        ts->ahead = p->ahead;
        /* dynamic: on a shared machine one thread may get less of its core,
         * and the other then takes more tiles instead of waiting for it */
        #pragma omp for schedule(dynamic, chunk)
        for (int64_t t = t0; t < t1; t++) {
            int64_t row = t / nch, ch = t % nch;
            if (p->colblock && nch > 1) {   /* blocks of ROWBLK rows, chunk by chunk */
                int64_t u = t - t0, blk = u / (nch * ROWBLK), rem = u % (nch * ROWBLK);
                int64_t nr = r1 - r0 - blk * ROWBLK < ROWBLK ? r1 - r0 - blk * ROWBLK : ROWBLK;
                row = r0 + blk * ROWBLK + rem % nr;
                ch = rem / nr;
            }
            int64_t lo = ch * T, hi = lo + T < p->C ? lo + T : p->C;
            if (row * p->C + lo < e0)
                lo = e0 - row * p->C;
            if (row * p->C + hi > e1)
                hi = e1 - row * p->C;
            if (lo < hi)
                exec_seg(p, ts, bufs, row, lo, hi - lo, NULL);
        }
        ts->ahead = 0;
        fe_k_stream_fence();
    }
    return FE_OK;
}

int fe_k_prog_run_block(fe_k_prog *p, const fe_k_tensor *bufs, int64_t i0, int64_t mc,
                        int64_t j0, int64_t nc, const float *blk, int64_t ld, int tid)
{
    if (tid < 0 || tid >= p->nthreads)
        return -1;
    tstate *ts = &p->ts[tid];
    int64_t T = p->full_rows ? p->C : p->T;
    if (p->full_rows && (j0 != 0 || nc != p->C))
        return -1;
    forget_tiles(p, ts);
    for (int64_t i = 0; i < mc; i++)
        for (int64_t c = 0; c < nc; c += T) {
            int64_t w = nc - c < T ? nc - c : T;
            exec_seg(p, ts, bufs, i0 + i, j0 + c, w, blk + i * ld + c);
        }
    return 0;
}

void fe_k_prog_reset(fe_k_prog *p)
{
    for (int t = 0; t < p->nthreads; t++) {
        forget_tiles(p, &p->ts[t]);
        p->ts[t].res_row = -1;
    }
}

const float *fe_k_prog_result_row(fe_k_prog *p, const fe_k_tensor *bufs, int64_t row,
                                  int64_t c0, int64_t n, float *tmp)
{
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    tstate *ts = &p->ts[tid];
    int s;
    if (p->full_rows) {
        if (ts->res_row != row) {
            exec_seg(p, ts, bufs, row, 0, p->C, NULL);
            ts->res_row = row;
        }
        const float *r = loc(p, ts, p->result, NULL, &s);
        memcpy(tmp, r + c0, (size_t)n * sizeof(float));
        return tmp;
    }
    for (int64_t c = 0; c < n; c += p->T) {
        int64_t w = n - c < p->T ? n - c : p->T;
        exec_seg(p, ts, bufs, row, c0 + c, w, NULL);
        memcpy(tmp + c, loc(p, ts, p->result, NULL, &s), (size_t)w * sizeof(float));
    }
    return tmp;
}
