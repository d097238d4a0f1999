/* fused_prog.h: the compiled fused program, private to the files of the
 * fused tile executor (fused.h is its public face, for group.c).
 *
 * The executor was one file that both compiled a group into a program and
 * ran it. As SQLite builds its bytecode in vdbeaux.c and runs it in
 * vdbe.c, the two are now apart: fused_compile.c (with its last pass,
 * register runs, in fused_vm.c) writes this struct; fused_run.c reads it
 * and runs it tile by tile on threads, in per-thread state of its own;
 * fused_prog.c frees and describes it. The runner's hot path calls only
 * its own static functions and the kernels, so the seam costs no inlining.
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
 * A reduction over the row axes (a column reduction: a mean over a
 * batch, a max down each column) is neither: its result is complete only
 * when every row has been seen. I_COLACC folds a FULL value's tile into
 * a per-thread column accumulator, and the run combines the threads'
 * accumulators into the output when it ends; so nothing in the program
 * can read that result (a later program, group_stages.c, does).
 *
 *          cols ->
 *   rows  [x x x x x x]  FULL     [r]  ROW
 *     |   [x x x x x x]           [r]
 *     v   [x x x x x x]           [r]
 */
#ifndef FE_FUSED_PROG_H
#define FE_FUSED_PROG_H

#include <stdint.h>

#include "error.h"
#include "fused.h"
#include "iter.h"

enum { K_NONE, K_SLOT, K_IN, K_ROW, K_CONST, K_ANCHOR };
enum {
    I_LOAD, I_LOADROW, I_EXPAND, I_UNARY, I_BINARY, I_WHERE, I_ROUND, I_REDUCE,
    I_SOFTMAX, I_RMS, I_LN, I_STORE, I_STOREROW, I_FMA, I_VM, I_COLACC
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
    int64_t mst[FE_MAX_RANK];      /* strides over all the merged axes (md) */
    int64_t *ctab;                 /* COL_GENERAL: offset of each column */
    int64_t base;                  /* offset of domain element 0 (a sliced view) */
    int32_t view;                  /* the view of tensor it is read as, or -1 */
    int pfrows;                    /* rows not in memory order: prefetch rows ahead */
    int stage;                     /* read in place, but a tile of whole rows (pack) needs
                                    * them end to end: staging area stage - 1 gets them */
} pin;

typedef struct pout {
    int32_t tensor;
    int dtype;
    int nt;                        /* non-temporal stores */
    int acc;                       /* a column reduction's result (its FE_OP_*), 0 none:
                                    * each thread's rows are folded into a column vector
                                    * of its own, combined when the run ends */
    double *accbuf;                /* then: C doubles for the whole domain, then C per thread */
    int strided;                   /* written into part of tensor (a concat's operand): row r
                                    * starts at base + offset of r over rst, not at r * C */
    int64_t base;
    int64_t rst[FE_MAX_RANK];
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

/* Per-thread state: the runner's (fused_run.c). */
typedef struct tstate tstate;

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
    int pack;                      /* > 1: a tile is that many whole rows (narrow rows: the
                                    * per-tile work paid once for them all), else one
                                    * row's column segment */
    int copy;                      /* the program only copies its one input to its one
                                    * output, same dtype: bytes are moved as they are */
    int mr;                        /* the merged domain: md[0, mr), rows then columns */
    int64_t md[FE_MAX_RANK];
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
    int nacc;                      /* outputs that are column reductions (pout.acc) */
    int nstage;                    /* inputs staged for whole-row tiles (pin.stage) */
};

/* Where domain row `row` starts in a tensor read or written from element
 * base with strides rst over the row axes (one row axis, the common case,
 * needs no division). */
static inline int64_t fe_k_row_at(const fe_k_prog *p, int64_t base, const int64_t *rst, int64_t row)
{
    return base + (p->nrdims == 1 ? row * rst[0] : fe_k_offset(p->nrdims, p->rdims, rst, row));
}

/* Where row `row` of output o starts in its tensor, in elements. */
static inline int64_t fe_k_out_row(const fe_k_prog *p, const pout *o, int64_t row)
{
    return o->strided ? fe_k_row_at(p, o->base, o->rst, row) : row * p->C;
}

static inline opnd mk(int kind, int idx)
{
    opnd o = {(int8_t)kind, idx};
    return o;
}

/* Replace each maximal run of register-capable instructions of p->code by
 * one I_VM instruction (fused_vm.c); 0, or -1 with FE_ENOMEM in err. */
int fe_k_prog_build_runs(fe_k_prog *p, fe_error *err);

/* Whether p only copies its one input to its one output of the same
 * dtype, so the runner may move the bytes as they are (fused_prog.c). */
int fe_k_prog_copy_only(const fe_k_prog *p);

/* Choose p's tile width T and its streaming (colblock, ahead) from its
 * code and inputs (fused_tile.c). */
void fe_k_prog_tile(fe_k_prog *p);

/* Allocate p's per-thread states for its tile width, slots, row values,
 * inputs and runs (fused_run.c); 0, or -1 when out of memory (p->ts and
 * p->mem are then freed by fe_k_prog_free). */
int fe_k_prog_alloc_threads(fe_k_prog *p);

#endif
