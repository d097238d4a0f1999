/* fused_run.c: running a compiled fused program (fused_prog.h) tile by
 * tile on threads. Apart from fused_compile.c, as SQLite's vdbe.c is from
 * vdbeaux.c: this file only reads the program, and owns the per-thread
 * state it runs in.
 *
 * Execution takes a tile (a row, and a column segment of at most T values;
 * whole rows when the program reduces) and runs the instructions over it:
 * each one a vectorised pass over T floats in L1/L2, or a register run
 * (I_VM) bound to the tile and handed to the vector-program evaluator.
 *
 * Whole-row programs prefetch the next row's direct inputs while the row
 * op (softmax) computes, so that loading a row and computing the previous
 * one overlap instead of taking turns.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "convert.h"
#include "elemwise.h"
#include "fused_prog.h"
#include "injective.h"
#include "iter.h"
#include "norm.h"
#include "ops.h"
#include "reduce.h"
#include "vecprog.h"

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
    int nr;                        /* whole rows in the tile (p->pack), 1 for a segment */
    float *stage;                  /* nstage areas of T floats: staged inputs' rows */
    fe_k_pf vpf;                   /* then: the inputs a run streams, AHEAD floats on */
    int64_t vpfstep[4];            /* and how far each moves per row */
    /* the run vb is bound to (-1: none or stale), its tile, and whether
     * the next row's binding is this one moved by each entry's step */
    int vb_run, vb_adv;
    int64_t vb_row, vb_c0, vb_w;
    float vsums[FE_K_VSUMS] __attribute__((aligned(64)));   /* FE_V_SSQ's partial sums */
} __attribute__((aligned(ISOLATE))) tstate;   /* written per tile by its thread */

/* Forget what a thread's state says about earlier tiles (row-invariant
 * loads held in slots, the bound run): the buffers may differ from the
 * last run's. */
static void forget_tiles(const fe_k_prog *p, tstate *ts)
{
    for (int k = 0; k < p->f.nins; k++)
        ts->last_c0[k] = -1;
    ts->vb_run = -1;
}

int fe_k_prog_alloc_threads(fe_k_prog *p)
{
    p->nthreads = 1;
#ifdef _OPENMP
    p->nthreads = omp_get_max_threads();
#endif
    for (int k = 0; k < p->f.nouts; k++)
        if (p->f.outs[k].acc &&
            !(p->accbuf[k] = malloc(((size_t)(p->nthreads + 1) * (size_t)p->f.C + 1) * sizeof(double))))
            return -1;
    /* per thread: slots (64-byte aligned), row values, input pointers */
    size_t ts = ((size_t)p->T + 16) & ~(size_t)15;
    size_t per = (size_t)(p->f.nslots + p->nstage) * ts * sizeof(float) + 64 +
                 (size_t)(p->maxent + 1) * (FE_K_VLANES * sizeof(float) + sizeof(vsrc)) +
                 (size_t)(p->maxops + 1) * sizeof(fe_k_vbound) + 64 +
                 (size_t)(p->f.nrowv + 1) * sizeof(float) +
                 (size_t)(p->f.nins + 1) * (sizeof(float *) + 2 * sizeof(int64_t)) + 64;
    per = (per + ISOLATE - 1) & ~(size_t)(ISOLATE - 1);
    size_t tsb = (size_t)p->nthreads * sizeof(tstate);
    void *m = NULL;
    void *t = NULL;
    if (posix_memalign(&t, 4096, whole_pages(tsb)))
        return -1;
    p->ts = memset(t, 0, tsb);
    if (posix_memalign(&m, 4096, whole_pages(per * (size_t)p->nthreads)))
        return -1;
    p->mem = m;
    p->ss = (int64_t)ts;
    for (int t = 0; t < p->nthreads; t++) {
        char *b = (char *)m + per * (size_t)t;
        tstate *s = &p->ts[t];
        s->slots = (float *)b;
        b += (size_t)p->f.nslots * ts * sizeof(float);
        s->stage = (float *)b;
        b += (size_t)p->nstage * ts * sizeof(float);
        s->vbc = (float *)b;      /* 64-byte aligned: slots are whole lines */
        b += (size_t)(p->maxent + 1) * FE_K_VLANES * sizeof(float);
        s->vtab = (vsrc *)b;
        b += (size_t)(p->maxent + 1) * sizeof(vsrc);
        s->vb = (fe_k_vbound *)b;
        b += (size_t)(p->maxops + 1) * sizeof(fe_k_vbound);
        s->rowv = (float *)b;
        b += (size_t)(p->f.nrowv + 1) * sizeof(float);
        b = (char *)(((uintptr_t)b + 7) & ~(uintptr_t)7);
        s->inptr = (const float **)b;
        b += (size_t)(p->f.nins + 1) * sizeof(float *);
        s->inoff = (int64_t *)b;
        b += (size_t)(p->f.nins + 1) * sizeof(int64_t);
        s->last_c0 = (int64_t *)b;
        forget_tiles(p, s);
        s->res_row = -1;
        s->nr = 1;
    }
    return 0;
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
    case K_CONST: *stride = 0; return p->f.consts + o.idx;
    case K_ANCHOR: return anchor;
    default: return NULL;
    }
}

static void gather_cols(const pin *in, const void *data, int64_t off, int64_t c0, int64_t w, float *d)
{
    for (int64_t j = 0; j < w; j++)
        fe_k_load_f32(data, in->dtype, off + in->ctab[c0 + j], d + j, 1);
}

/* Where input in's row `row` starts in its tensor, in elements. */
static inline int64_t in_row(const fe_k_prog *p, const pin *in, int64_t row)
{
    return in->rowinv ? in->base : fe_k_row_at(&p->f, in->base, in->rst, row);
}

/* A tile of nr whole rows from `row` (p->pack): input in's rows loaded
 * end to end into d. */
static void load_rows(const fe_k_prog *p, const pin *in, const void *data, int64_t row, int nr,
                      float *d)
{
    for (int r = 0; r < nr; r++, d += p->f.C) {
        int64_t off = in_row(p, in, row + r);
        if (in->col == COL_GENERAL)
            gather_cols(in, data, off, 0, p->f.C, d);
        else
            fe_k_load_f32(data, in->dtype, off, d, p->f.C);
    }
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
            const pout *o = &p->f.outs[v->out];
            s->p = (float *)bufs[o->tensor].data + fe_k_out_row(&p->f, o, row) + c0;
            s->nt = o->nt && !((uintptr_t)s->p % (FE_K_VLANES * sizeof(float)));
            s->step = o->strided ? o->rst[0] : p->f.C;
            adv &= !o->nt || s->step % FE_K_VLANES == 0;   /* alignment, so nt, stays */
            adv &= !o->strided || p->f.nrdims == 1;
            continue;
        }
        int st;
        const float *x = loc(p, ts, v->o, anchor, &st);
        if (v->o.kind == K_ROW || v->o.kind == K_ANCHOR)
            adv = 0;
        if (v->o.kind == K_IN && !p->f.ins[v->o.idx].rowinv) {
            s->step = p->f.ins[v->o.idx].rst[0];
            adv &= p->f.nrdims == 1 && p->f.ins[v->o.idx].direct;
        }
        if (st) {
            s->p = (float *)x;
            if (ts->ahead && v->o.kind == K_IN && (!p->f.ins[v->o.idx].rowinv || p->f.rows == 1))
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
        const instr *in = &p->f.code[i];
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
            const pin *pi = &p->f.ins[in->aux];
            int64_t key = c0 * (p->T + 1) + w;   /* what the slot holds */
            if (pi->rowinv && ts->last_c0[in->aux] == key)
                break;
            if (ts->nr > 1)
                load_rows(p, pi, bufs[pi->tensor].data, row, ts->nr, d);
            else if (pi->col == COL_GENERAL)
                gather_cols(pi, bufs[pi->tensor].data, ts->inoff[in->aux], c0, w, d);
            else
                fe_k_load_f32(bufs[pi->tensor].data, pi->dtype, ts->inoff[in->aux] + c0, d, w);
            if (pi->rowinv)
                ts->last_c0[in->aux] = key;
            break;
        }
        case I_LOADROW: {
            const pin *pi = &p->f.ins[in->aux];
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
                const pout *o = &p->f.outs[in->st - 1];
                float *y = (float *)bufs[o->tensor].data + fe_k_out_row(&p->f, o, row) + c0;
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
                                    (float *)bufs[p->f.outs[in->st - 1].tensor].data +
                                        fe_k_out_row(&p->f, &p->f.outs[in->st - 1], row) + c0,
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
        case I_STORE: {   /* each row of the tile where it goes (one, unless p->pack) */
            const pout *o = &p->f.outs[in->aux];
            const float *a = loc(p, ts, in->a, anchor, &sa);
            int64_t rw = w / ts->nr;
            for (int r = 0; r < ts->nr; r++)
                (o->nt ? fe_k_store_f32_nt : fe_k_store_f32)(bufs[o->tensor].data, o->dtype,
                                                            fe_k_out_row(&p->f, o, row + r) + c0, a + r * rw, rw);
            break;
        }
        case I_COLACC: {   /* likewise, each row into the thread's columns */
            const pout *o = &p->f.outs[in->aux];
            double *acc = p->accbuf[in->aux] + (size_t)(1 + (ts - p->ts)) * (size_t)p->f.C + c0;
            const float *a = loc(p, ts, in->a, anchor, &sa);
            int64_t rw = w / ts->nr;
            for (int r = 0; r < ts->nr; r++)
                fe_k_col_accumulate(o->acc, acc, a + r * rw, rw);
            break;
        }
        case I_STOREROW:
            if (c0 == 0) {
                const pout *o = &p->f.outs[in->aux];
                fe_k_store_f32(bufs[o->tensor].data, o->dtype, row, loc(p, ts, in->a, anchor, &sa), 1);
            }
            break;
        }
    }
}

/* How many rows ahead a view's strided rows are prefetched. */
#define PFROWS 8

/* Run the program on row `row`, columns [c0, c0 + w) (w <= T). */
static void exec_seg(const fe_k_prog *p, tstate *ts, const fe_k_tensor *bufs, int64_t row,
                     int64_t c0, int64_t w, const float *anchor)
{
    /* a program that is one register pass moving on to the next row needs
     * no input offsets (advance_run moves its pointers) */
    if (p->nexec == 1 && p->f.code[0].code == I_VM && can_advance(ts, p->f.code[0].aux, row, c0, w)) {
        exec_range(p, ts, bufs, row, c0, w, anchor);
        return;
    }
    /* one row axis (the common case) needs no division */
    for (int k = 0; k < p->f.nins; k++) {
        const pin *in = &p->f.ins[k];
        int64_t off = in_row(p, in, row);
        ts->inoff[k] = off;
        if (in->direct && ts->nr > 1 && p->xins[k].stage) {   /* its rows end to end */
            float *d = ts->stage + (p->xins[k].stage - 1) * p->ss;
            load_rows(p, in, bufs[in->tensor].data, row, ts->nr, d);
            ts->inptr[k] = d;
        } else if (in->direct) {
            ts->inptr[k] = (const float *)bufs[in->tensor].data + off + c0;
        }
    }
    /* A view's rows jump about in memory (the heads of attention: 64
     * floats every 3 KiB), out of the hardware prefetcher's reach, and
     * its loads waited on memory: fetch the tile PFROWS rows on. */
    for (int k = 0; k < p->f.nins && row + PFROWS < p->f.rows; k++) {
        const pin *in = &p->f.ins[k];
        if (!p->xins[k].pfrows)
            continue;
        size_t es = fe_dtype_size(in->dtype);
        const char *q = (const char *)bufs[in->tensor].data +
                        (size_t)(in->base + fe_k_offset(p->f.nrdims, p->f.rdims, in->rst, row + PFROWS) + c0) * es;
        for (size_t b = 0; b < (size_t)w * es; b += 64)
            __builtin_prefetch(q + b);
    }
    ts->pf.n = 0;
    if (p->f.rowstream && row + 1 < p->f.rows)
        for (int k = 0; k < p->f.nins && ts->pf.n < 2; k++) {
            const pin *in = &p->f.ins[k];
            if (in->direct && !in->rowinv)
                ts->pf.p[ts->pf.n++] = (const float *)bufs[in->tensor].data + in->base +
                                       fe_k_offset(p->f.nrdims, p->f.rdims, in->rst, row + 1);
        }
    exec_range(p, ts, bufs, row, c0, w, anchor);
}

static int check_bufs(const fe_k_prog *p, const fe_k_tensor *bufs, fe_error *err)
{
    for (int k = 0; k < p->f.nins; k++)
        if (!bufs[p->f.ins[k].tensor].data)
            return fe_error_set(err, FE_ERUNTIME, "fused: input tensor %d has no buffer",
                                p->f.ins[k].tensor);
    for (int k = 0; k < p->f.nouts; k++)
        if (!bufs[p->f.outs[k].tensor].data)
            return fe_error_set(err, FE_ERUNTIME, "fused: output tensor %d has no buffer",
                                p->f.outs[k].tensor);
    return FE_OK;
}

/* A copy program (p->f.copy) over elements [e0, e1) of its output: the
 * input's bytes as they are, through the per-op kernels' strided copy
 * (rows of memcpy where the columns are contiguous). Elements [e0, e1)
 * are whole slices of the merged domain's first axis (a split's tile is whole
 * slices of the outer axis, which that axis holds), else 0 and nothing
 * is done. */
static int copy_range(const fe_k_prog *p, const fe_k_tensor *bufs, int64_t e0, int64_t e1)
{
    const pin *in = &p->f.ins[0];
    int64_t inner = p->f.md[0] > 0 ? p->f.rows * p->f.C / p->f.md[0] : 0;
    if (inner <= 0 || e0 % inner || e1 % inner)
        return 0;
    size_t es = fe_dtype_size(in->dtype);
    int64_t shape[FE_MAX_RANK];
    memcpy(shape, p->f.md, (size_t)p->f.mr * sizeof *shape);
    shape[0] = (e1 - e0) / inner;
    fe_k_strided_copy((char *)bufs[p->f.outs[0].tensor].data + (size_t)e0 * es,
                      (const char *)bufs[in->tensor].data + (size_t)(in->base + e0 / inner * in->mst[0]) * es,
                      p->f.mr, shape, in->mst, (int)es);
    return 1;
}

/* Column reductions, before a part runs: each thread's accumulator
 * starts empty, and so does the whole domain's at the first part. */
static void acc_begin(const fe_k_prog *p, int part)
{
    for (int k = 0; k < p->f.nouts; k++) {
        const pout *o = &p->f.outs[k];
        if (!o->acc)
            continue;
        double id = fe_k_reduce_identity(o->acc);
        size_t n = (size_t)p->f.C * (size_t)(part == 0 ? p->nthreads + 1 : p->nthreads);
        double *a = part == 0 ? p->accbuf[k] : p->accbuf[k] + p->f.C;
        for (size_t j = 0; j < n; j++)
            a[j] = id;
    }
}

/* And after: the threads' accumulators fold into the domain's (in thread
 * order, so a run's result does not depend on the schedule's timing
 * beyond which rows each thread took), which the last part finishes (a
 * mean divides by the rows) and writes. */
static void acc_end(const fe_k_prog *p, const fe_k_tensor *bufs, int last)
{
    for (int k = 0; k < p->f.nouts; k++) {
        const pout *o = &p->f.outs[k];
        if (!o->acc)
            continue;
        for (int t = 0; t < p->nthreads; t++)
            fe_k_col_combine(o->acc, p->accbuf[k], p->accbuf[k] + (size_t)(t + 1) * (size_t)p->f.C, p->f.C);
        if (!last)
            continue;
        float *out = bufs[o->tensor].data;
        for (int64_t j0 = 0; j0 < p->f.C; j0 += 1024) {
            float v[1024];
            int64_t n = p->f.C - j0 < 1024 ? p->f.C - j0 : 1024;
            for (int64_t j = 0; j < n; j++)
                v[j] = (float)(o->acc == FE_OP_MEAN ? p->accbuf[k][j0 + j] / (double)p->f.rows
                                                    : p->accbuf[k][j0 + j]);
            fe_k_store_f32(out, o->dtype, j0, v, n);
        }
    }
}

/* Rows per block of a column-blocked program: each thread takes tiles four
 * at a time, so a block gives both threads rows of the same chunk. */
#define ROWBLK 8

int fe_k_prog_run(fe_k_prog *p, const fe_k_tensor *bufs, int part, int nparts, fe_error *err)
{
    int64_t total = p->f.rows * p->f.C;
    int rc = check_bufs(p, bufs, err);
    if (rc)
        return rc;
    if (nparts < 1 || part < 0 || part >= nparts)
        return fe_error_set(err, FE_EINPUT, "fused: part %d of %d", part, nparts);
    /* part t covers outer-axis slices [outer*t/k, outer*(t+1)/k); each slice
     * is total/outer contiguous elements of the (row-major) domain */
    int64_t per = p->f.outer > 0 ? total / p->f.outer : 0;
    int64_t e0 = p->f.outer * part / nparts * per, e1 = p->f.outer * (part + 1) / nparts * per;
    if (p->f.full_rows && p->f.C > 0) {   /* keep whole rows together */
        e0 = (e0 + p->f.C - 1) / p->f.C * p->f.C;
        e1 = part == nparts - 1 ? total : (e1 + p->f.C - 1) / p->f.C * p->f.C;
    }
    if (p->f.nacc)
        acc_begin(p, part);
    if (e0 >= e1 || p->f.C == 0) {
        if (p->f.nacc)
            acc_end(p, bufs, part == nparts - 1);
        return FE_OK;
    }
    if (p->f.copy && copy_range(p, bufs, e0, e1))
        return FE_OK;
    int64_t T = p->f.full_rows ? p->f.C : p->T;
    if (T > p->f.C)
        T = p->f.C;
    int64_t nch = (p->f.C + T - 1) / T;
    int64_t r0 = e0 / p->f.C, r1 = (e1 - 1) / p->f.C + 1;
    int64_t t0 = r0 * nch, t1 = r1 * nch;
    int par = (e1 - e0) >= 16384;
    /* tiles of p->pack whole rows, when the part is whole rows */
    int64_t pk = p->pack > 1 && e0 % p->f.C == 0 && e1 % p->f.C == 0 ? p->pack : 1;
    if (pk > 1) {
        T = pk * p->f.C;
        t0 = 0;
        t1 = (r1 - r0 + pk - 1) / pk;
    }
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
            if (pk > 1) {
                int64_t row = r0 + t * pk;
                ts->nr = (int)(r1 - row < pk ? r1 - row : pk);
                exec_seg(p, ts, bufs, row, 0, ts->nr * p->f.C, NULL);
                ts->nr = 1;
                continue;
            }
            int64_t row = t / nch, ch = t % nch;
            if (p->colblock && nch > 1) {   /* blocks of ROWBLK rows, chunk by chunk */
                int64_t u = t - t0, blk = u / (nch * ROWBLK), rem = u % (nch * ROWBLK);
                int64_t nr = r1 - r0 - blk * ROWBLK < ROWBLK ? r1 - r0 - blk * ROWBLK : ROWBLK;
                row = r0 + blk * ROWBLK + rem % nr;
                ch = rem / nr;
            }
            int64_t lo = ch * T, hi = lo + T < p->f.C ? lo + T : p->f.C;
            if (row * p->f.C + lo < e0)
                lo = e0 - row * p->f.C;
            if (row * p->f.C + hi > e1)
                hi = e1 - row * p->f.C;
            if (lo < hi)
                exec_seg(p, ts, bufs, row, lo, hi - lo, NULL);
        }
        ts->ahead = 0;
        fe_k_stream_fence();
    }
    if (p->f.nacc)
        acc_end(p, bufs, part == nparts - 1);
    return FE_OK;
}

int fe_k_prog_run_all(fe_k_prog *p, const fe_k_tensor *bufs, int nparts, fe_error *err)
{
    fe_k_prog_reset(p);
    for (int part = 0; part < nparts; part++) {
        int rc = fe_k_prog_run(p, bufs, part, nparts, err);
        if (rc)
            return rc;
    }
    return FE_OK;
}

/* Keep the first refusal's cause (several threads may refuse at once). */
static int block_refused(fe_k_prog *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int block_refused(fe_k_prog *p, const char *fmt, ...)
{
    va_list ap;
    #pragma omp critical(fe_k_prog_failure)
    if (!p->failure[0]) {
        va_start(ap, fmt);
        vsnprintf(p->failure, sizeof p->failure, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *fe_k_prog_failure(const fe_k_prog *p)
{
    return p && p->failure[0] ? p->failure : NULL;
}

int fe_k_prog_run_block(fe_k_prog *p, const fe_k_tensor *bufs, int64_t i0, int64_t mc,
                        int64_t j0, int64_t nc, const float *blk, int64_t ld, int tid)
{
    if (tid < 0 || tid >= p->nthreads)
        return block_refused(p, "thread %d of a program compiled for %d", tid, p->nthreads);
    tstate *ts = &p->ts[tid];
    int64_t T = p->f.full_rows ? p->f.C : p->T;
    if (p->f.full_rows && (j0 != 0 || nc != p->f.C))
        return block_refused(p, "the program needs whole rows of %lld columns; the kernel handed "
                             "columns %lld..%lld", (long long)p->f.C, (long long)j0,
                             (long long)(j0 + nc));
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
    p->failure[0] = 0;
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
    if (p->f.full_rows) {
        if (ts->res_row != row) {
            exec_seg(p, ts, bufs, row, 0, p->f.C, NULL);
            ts->res_row = row;
        }
        const float *r = loc(p, ts, p->f.result, NULL, &s);
        memcpy(tmp, r + c0, (size_t)n * sizeof(float));
        return tmp;
    }
    for (int64_t c = 0; c < n; c += p->T) {
        int64_t w = n - c < p->T ? n - c : p->T;
        exec_seg(p, ts, bufs, row, c0 + c, w, NULL);
        memcpy(tmp + c, loc(p, ts, p->f.result, NULL, &s), (size_t)w * sizeof(float));
    }
    return tmp;
}
