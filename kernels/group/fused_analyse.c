/* fused_analyse.c: analysing a group into a fused program (fused_ir.h)
 * for any device: its values, domain, alignment and column axis, the
 * merged axes and the inputs' layout, one instruction per op with scratch
 * slots by liveness. A device's lowering takes it from there (the CPU's
 * tiling, register runs and threads: kernels/cpu/fused_compile.c).
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
 * Views first: fused_views.c folds the views of the group's inputs into
 * strided loads (their maps become the inputs' strides and base offsets)
 * and a reshape only stored into a store of its input's values; the rest
 * is compiled.
 *
 * Adjacent domain axes that every operand traverses the same way (both
 * broadcast or both full) are merged first, so a same-shape elementwise
 * group is one long row. Outputs of at least the spec's stream_bytes are
 * written past the caches (the CPU's lowering asks that of outputs larger
 * than half its last-level cache).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "fused_ir.h"
#include "fused_views.h"
#include "iter.h"
#include "node.h"
#include "ops.h"

/* ---- compile-time values ---- */

typedef struct val {
    int32_t tensor;
    int64_t ds[FE_MAX_RANK];       /* shape aligned to the domain */
    int full;
    int last;                      /* last consuming node (program index) */
    int ext;                       /* external input index, -1 if produced */
    int nonkeep;                   /* reduction output without keepdim */
    int colred;                    /* a column reduction's result (its op), 0 none */
    int dedicated;                 /* slot never reused */
    int chan_rank;                 /* > 0: a batch_norm parameter [C], viewed as axis 1 of
                                    * an input of this rank (so [C, 1, 1] for NCHW) */
    int view;                      /* > 0: read as folded view view - 1 (fused_views.h) */
    int64_t vst[FE_MAX_RANK];      /* a view's strides over the domain */
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
    int s;                         /* the column axis, -1 while free */
    /* merged axes */
    int mr;
    int64_t MD[FE_MAX_RANK];
    int mstart[FE_MAX_RANK + 1];   /* original axis each merged axis starts at */
    int ms;                        /* the column axis after merging */
    int *slot_free;
    int cap_slots;
    fe_k_fused *p;
    int cap_code, cap_consts;
    fe_k_folded f;                 /* views folded into loads, reshapes into stores */
    struct {                       /* per store into part of another tensor: */
        int64_t st[FE_MAX_RANK];   /* its strides over the domain */
        int64_t base;
    } *ost;
} cc;

static int fail(cc *c, const char *fmt, const char *a, const char *b)
{
    fe_error_set(c->err, FE_EINPUT, fmt, a, b);
    return -1;
}

/* The tensor whose values t's are: its source if t is a dropped reshape. */
static int32_t unalias(const cc *c, int32_t t)
{
    for (int k = 0; k < c->f.nalias; k++)
        if (c->f.aout[k] == t)
            return c->f.ain[k];
    return t;
}

static int vfind(const cc *c, int32_t t)
{
    t = unalias(c, t);
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
    c->v[c->nv].tensor = unalias(c, t);
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
    fe_k_fused *p = c->p;
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

static opnd konst(cc *c, float v)
{
    fe_k_fused *p = c->p;
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

/* The value output i stores: its own tensor, or a stored reshape's input. */
static int32_t store_val(const cc *c, int i)
{
    return unalias(c, c->sp->stores[i]);
}

/* The first output storing tensor t's values, or -1; *n: how many do. */
static int store_count(const cc *c, int32_t t, int *n)
{
    int first = -1;
    *n = 0;
    for (int i = 0; i < c->sp->nstores; i++)
        if (store_val(c, i) == t && (*n)++ == 0)
            first = i;
    return first;
}

static int store_index(const cc *c, int32_t t)
{
    int n;
    return store_count(c, t, &n);
}

static int emit_store(cc *c, int vi)
{
    for (int i = 0; i < c->sp->nstores; i++) {
        if (store_val(c, i) != c->v[vi].tensor)
            continue;
        instr st;
        memset(&st, 0, sizeof st);
        st.code = c->v[vi].full ? I_STORE : I_STOREROW;
        st.aux = (int16_t)i;
        st.a = c->v[vi].at;
        if (emit(c, st))
            return -1;
    }
    return 0;
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
    int tmp[3] = {-1, -1, -1}, nst;

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
    } else if (is_reduce(op) && o->colred) {
        /* folded into the column accumulator of the output storing it */
        in.code = I_COLACC;
        in.a = as_full(c, use(c, vfind(c, ins[0])), &tmp[0]);
        in.aux = (int16_t)store_index(c, o->tensor);
        if (in.a.kind == K_NONE || emit(c, in))
            return fe_error_set(c->err, FE_ENOMEM, "fused: out of memory"), -1;
        release(c, ni, ins, nin);
        if (tmp[0] >= 0)
            c->slot_free[tmp[0]] = 1;
        c->p->outs[in.aux].acc = op;
        c->p->nacc++;
        c->p->nops++;
        return 0;
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
        o->tensor != c->sp->result && store_count(c, o->tensor, &nst) >= 0 && nst == 1 &&
        fe_graph_tensor(g, o->tensor)->dtype == FE_F32 &&
        c->p->outs[store_index(c, o->tensor)].nt) {
        in.st = (int16_t)(store_index(c, o->tensor) + 1);
        c->p->rowstream = 1;
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

/* Reduced domain axes of row op node n: sets *lo (first column axis);
 * *col is set when n reduces the leading axes instead (a column
 * reduction: then the rows are the reduced axes and *lo the first kept). */
static int row_axes(cc *c, const fe_node *n, int *lo, int *col)
{
    const fe_graph *g = c->g;
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    int ri = x->rank, off = c->r - ri, op = n->op;
    *col = 0;
    if (is_reduce(op)) {
        int kind = fe_k_node_reduce_kind(g, n, lo);
        if (kind < 0)
            return fail(c, "node '%s' (%s): reduces no axis or has bad axes", fe_node_name(g, n),
                        fe_node_op_name(n));
        if (kind == FE_K_RED_OTHER)
            return fail(c, "node '%s' (%s): reduces axes that are neither the leading nor "
                        "the trailing ones", fe_node_name(g, n), fe_node_op_name(n));
        *col = kind == FE_K_RED_COLS;
        *lo += off;
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

/* Strides over the domain of the stores into part of another tensor (a
 * concat's operand's place). */
static int into_strides(cc *c)
{
    const fe_k_prog_spec *sp = c->sp;
    for (int k = 0; sp->into && k < sp->nstores; k++) {
        if (sp->into[k] < 0)
            continue;
        if (fe_k_part_strides(c->g, sp->into[k], sp->into_axis[k], sp->into_off[k], c->r, c->D,
                              c->ost[k].st, &c->ost[k].base))
            return fail(c, "fused: a part of %s does not fit the group's domain%s",
                        fe_tensor_name(c->g, fe_graph_tensor(c->g, sp->into[k])), "");
    }
    return 0;
}

/* Values, domain, alignment and the column axis. */
static int analyse(cc *c)
{
    const fe_graph *g = c->g;
    const fe_k_prog_spec *sp = c->sp;

    /* values and op checks */
    if (sp->anchor >= 0)
        vadd(c, sp->anchor);
    for (int ni = 0; ni < sp->nnodes; ni++) {
        const fe_node *n = fe_graph_node(g, sp->nodes[ni]);
        if (fe_k_fused_view_op(n->op))
            return fail(c, "node '%s' (%s) views a value computed in the group; only views of the "
                        "group's inputs fold into its loads", fe_node_name(g, n), fe_node_op_name(n));
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
    /* a folded view that leaves the group is loaded and stored */
    for (int k = 0; k < sp->nstores; k++)
        for (int j = 0; j < c->f.nv; j++)
            if (c->f.vt[j] == store_val(c, k))
                vadd(c, c->f.vt[j]);
    for (int i = 0; i < c->nv; i++)
        for (int j = 0; j < c->f.nv; j++)
            if (c->f.vt[j] == c->v[i].tensor)
                c->v[i].view = j + 1;
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
        if (ri < 0 || c->v[ri].ext >= 0 || c->v[ri].view)
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

    /* alignment, node by node; row ops fix the column axis */
    c->s = sp->domain ? sp->col_axis : -1;
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
            if (iv->colred)
                return fail(c, "node '%s' (%s) reads a column reduction of the same program (its "
                            "result is complete only after every row)", fe_node_name(g, n),
                            fe_node_op_name(n));
            if (iv->nonkeep)
                return fail(c, "node '%s' (%s) consumes a reduction without keepdim inside the "
                            "group", fe_node_name(g, n), fe_node_op_name(n));
        }
        if (is_rowop(n->op)) {
            int lo, col;
            const val *x = &c->v[vfind(c, fe_node_input(g, n, 0))];
            if (row_axes(c, n, &lo, &col))
                return -1;
            if (c->s < 0)
                c->s = lo;
            else if (c->s != lo)
                return fail(c, "node '%s' (%s): row reductions over different axes in one group",
                            fe_node_name(g, n), fe_node_op_name(n));
            for (int a = col ? 0 : lo; a < c->r; a++)
                if (x->ds[a] != c->D[a])
                    return fail(c, col ? "node '%s' (%s): a column reduction of a value broadcast "
                                "in the group's domain" : "node '%s' (%s): its input is broadcast "
                                "along the reduced axes", fe_node_name(g, n), fe_node_op_name(n));
            memcpy(o->ds, x->ds, sizeof o->ds);
            if (col) {
                if (sp->anchor >= 0 || sp->result >= 0)
                    return fail(c, "node '%s' (%s): a column reduction does not run inside a "
                                "matmul's prologue or epilogue", fe_node_name(g, n), fe_node_op_name(n));
                for (int a = 0; a < lo; a++)
                    o->ds[a] = 1;
                o->colred = n->op;
                int nst;
                if (store_count(c, o->tensor, &nst) < 0 || nst != 1)
                    return fail(c, "node '%s' (%s): a column reduction must be stored once by its "
                                "program", fe_node_name(g, n), fe_node_op_name(n));
                continue;
            }
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
        int vi = vfind(c, store_val(c, k));
        if (vi < 0 || (c->v[vi].ext >= 0 && !c->v[vi].view))
            return fail(c, "fused: stored tensor %s is not produced by the group%s",
                        fe_tensor_name(g, fe_graph_tensor(g, sp->stores[k])), "");
        if (memcmp(c->v[vi].ds, c->D, (size_t)c->r * sizeof(int64_t)) && !c->v[vi].colred) {
            int ok = c->s >= 0;
            for (int a = 0; a < c->r && ok; a++)
                ok = a < c->s ? c->v[vi].ds[a] == c->D[a] : c->v[vi].ds[a] == 1;
            if (!ok)
                return fail(c, "fused: output %s is smaller than the group's domain (it would "
                            "be written more than once)%s",
                            fe_tensor_name(g, fe_graph_tensor(g, sp->stores[k])), "");
        }
    }
    for (int i = 0; i < c->nv; i++)
        if (c->v[i].view)
            fe_k_sview_domain(&c->f.vs[c->v[i].view - 1], c->r, c->v[i].ds, c->v[i].vst);
    return into_strides(c);
}

/* Merge adjacent axes every external operand and output treats alike
 * (both broadcast or both full), dropping size-1 axes; never across the
 * column axis. */
static void merge_axes(cc *c)
{
    int m = 0, prev = -1, col_seen = 0;
    for (int a = 0; a < c->r; a++) {
        if (c->D[a] == 1)
            continue;
        int boundary = c->s >= 0 && a >= c->s && !col_seen;
        if (boundary)
            col_seen = 1;
        int same = prev >= 0 && !boundary;
        for (int i = 0; i < c->nv && same; i++) {
            const val *v = &c->v[i];
            if (v->ext < 0 && store_index(c, v->tensor) < 0 && v->tensor != c->sp->anchor &&
                v->tensor != c->sp->result)
                continue;
            same = (v->ds[prev] == 1) == (v->ds[a] == 1);
            if (v->view)   /* a strided view merges where its strides stay affine */
                same = same && v->vst[prev] == v->vst[a] * c->D[a];
        }
        for (int k = 0; c->sp->into && k < c->sp->nstores && same; k++)   /* so does a part */
            if (c->sp->into[k] >= 0)
                same = c->ost[k].st[prev] == c->ost[k].st[a] * c->D[a];
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

/* Strides over the merged axes of a map with strides dst over the
 * domain: each merged axis moves as its innermost axis of size > 1. */
static void merged_strides(const cc *c, const int64_t *dst, int64_t *st)
{
    for (int i = 0; i < c->mr; i++) {
        st[i] = 0;
        for (int a = c->mstart[i]; a < c->mstart[i + 1]; a++)
            if (c->D[a] != 1)
                st[i] = dst[a];
    }
}

/* Stores into part of another tensor: row strides and base offset. The
 * columns must be contiguous in that tensor, as every store writes them. */
static int into_layout(cc *c)
{
    fe_k_fused *p = c->p;
    const fe_k_prog_spec *sp = c->sp;
    for (int k = 0; sp->into && k < sp->nstores; k++) {
        if (sp->into[k] < 0)
            continue;
        const char *name = fe_tensor_name(c->g, fe_graph_tensor(c->g, sp->into[k]));
        int64_t st[FE_MAX_RANK], cs = 1;
        merged_strides(c, c->ost[k].st, st);
        for (int i = c->mr - 1; i >= c->ms; i--) {
            if (st[i] != cs)
                return fail(c, "fused: the part of %s this program writes is not whole rows of "
                            "it (a concat along a column axis)%s", name, "");
            cs *= c->MD[i];
        }
        int vi = vfind(c, store_val(c, k));
        if (vi < 0 || !c->v[vi].full)
            return fail(c, "fused: a value written into part of %s is one number per row%s", name, "");
        p->outs[k].strided = 1;
        p->outs[k].base = c->ost[k].base;
        memcpy(p->outs[k].rst, st, (size_t)c->ms * sizeof *st);
    }
    return 0;
}

static int layout(cc *c)
{
    fe_k_fused *p = c->p;
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
    p->mr = mr;
    memcpy(p->md, c->MD, (size_t)mr * sizeof *p->md);
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
        in->view = -1;
        if (v->view) {   /* its source, read with the view's strides (merge_axes kept them affine) */
            const fe_k_sview *w = &c->f.vs[v->view - 1];
            merged_strides(c, v->vst, st);
            in->view = v->tensor;
            in->tensor = w->src;
            in->base = w->off;
        }
        memcpy(in->mst, st, (size_t)mr * sizeof *st);
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
        bc = bc && !v->full;   /* an expanded view: full, yet every column reads one element */
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
    return into_layout(c);
}

int fe_k_fused_analyse(fe_k_fused *p, const fe_k_prog_spec *spec, fe_error *err)
{
    fe_k_prog_spec folded = *spec;
    cc c;
    memset(&c, 0, sizeof c);
    c.sp = spec;
    c.g = spec->g;
    c.err = err;
    c.p = p;
    c.v = calloc((size_t)(3 * spec->nnodes + FE_MAX_IO + 4), sizeof(val));
    c.ost = calloc((size_t)spec->nstores + 1, sizeof *c.ost);
    if (!c.v || !c.ost)
        goto oom;
    /* nodes can have many inputs (where: 3, concat is not here): size v generously */
    {
        int need = 1 + spec->nstores;
        for (int i = 0; i < spec->nnodes; i++)
            need += fe_graph_node(spec->g, spec->nodes[i])->nin + 1;
        val *nv = realloc(c.v, (size_t)need * sizeof(val));
        if (!nv)
            goto oom;
        c.v = nv;
    }
    /* views of the inputs become strided loads: compile what remains */
    if (fe_k_fold_views(c.g, spec->nodes, spec->nnodes, spec->anchor, &c.f, err))
        goto fail;
    folded.nodes = c.f.keep;
    folded.nnodes = c.f.nkeep;
    spec = c.sp = &folded;
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
    for (int ni = 0; ni < spec->nnodes; ni++) {
        const fe_node *n = fe_graph_node(c.g, spec->nodes[ni]);
        if (is_rowop(n->op) && !c.v[vfind(&c, fe_node_output(c.g, n, 0))].colred)
            p->full_rows = 1;
    }
    p->nouts = spec->nstores;
    for (int k = 0; k < spec->nstores; k++) {
        int32_t ot = spec->into && spec->into[k] >= 0 ? spec->into[k] : spec->stores[k];
        const fe_tensor *t = fe_graph_tensor(c.g, ot);
        p->outs[k].tensor = ot;
        p->outs[k].dtype = t->dtype;
        p->outs[k].nt = spec->stream_bytes > 0 && (int64_t)t->bytes >= spec->stream_bytes;
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
    for (int i = 0; i < c.nv; i++)
        if (c.v[i].view && store_index(&c, c.v[i].tensor) >= 0) {
            if (use(&c, i).kind == K_NONE)
                goto oom;
            if (emit_store(&c, i))
                goto fail;
        }
    for (int ni = 0; ni < spec->nnodes; ni++)
        if (gen_node(&c, ni))
            goto fail;
    if (p->nacc && p->C > ((int64_t)1 << 22)) {
        fail(&c, "fused: a column reduction over more than 4M columns (each thread would hold "
             "an accumulator that large)%s%s", "", "");
        goto fail;
    }
    if (spec->result >= 0)
        p->result = c.v[vfind(&c, spec->result)].at;
    p->copy = fe_k_fused_copy_only(p);
    /* nodes making integers were refused above, but a view of an i64 input
     * stored through the f32 slots would lose its digits past 2^24: such
     * values leave by a copy program's bytes or not from here */
    for (int k = 0; k < p->nouts && !p->copy; k++)
        if (!fe_k_dtype_f32_exact(p->outs[k].dtype)) {
            fail(&c, "fused: output %s is %s, which float32 does not hold exactly past 2^24; "
                 "only a program that copies its input moves it", fe_tensor_name(c.g,
                 fe_graph_tensor(c.g, p->outs[k].tensor)), fe_dtype_name(p->outs[k].dtype));
            goto fail;
        }
    free(c.v);
    free(c.ost);
    free(c.slot_free);
    fe_k_folded_free(&c.f);
    return 0;
oom:
    fe_error_set(err, FE_ENOMEM, "fused: out of memory");
fail:
    free(c.v);
    free(c.ost);
    free(c.slot_free);
    fe_k_folded_free(&c.f);
    return -1;
}
