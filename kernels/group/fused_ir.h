/* fused_ir.h: a fused group analysed for any device (fused_analyse.c):
 * the iteration domain, where each input is read and each output written,
 * and one instruction per op. A device lowers it: the CPU runs it tile by
 * tile with vector programs (kernels/cpu/fused_prog.h); a GPU's code
 * generator would print it as a kernel. Nothing here knows the device: the
 * one device choice the analysis makes, which outputs bypass the caches,
 * is given in the spec (stream_bytes).
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
#ifndef FE_FUSED_IR_H
#define FE_FUSED_IR_H

#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "iter.h"

typedef struct fe_k_prog_spec {
    const fe_graph *g;
    const int32_t *nodes;      /* the program's nodes, in topological order */
    int nnodes;
    const int32_t *stores;     /* tensors produced here that must be written */
    int nstores;
    int32_t anchor;            /* tensor supplied per block (epilogue), or -1 */
    int32_t result;            /* tensor handed out row by row (prologue), or -1 */
    /* Fixed iteration domain (the anchor's or result's shape) and column
     * axis: columns are domain axes [col_axis, rank). NULL / -1: derived. */
    const int64_t *domain;
    int domain_rank;
    int col_axis;
    /* Stores into part of another tensor (a concat's operands): store k
     * writes its values into tensor into[k] (-1: into stores[k] itself),
     * at offset into_off[k] along that tensor's axis into_axis[k]. NULL:
     * every store writes its own tensor. */
    const int32_t *into;
    const int64_t *into_off;
    const int *into_axis;
    /* Outputs of at least this many bytes are written past the caches
     * (pout.nt): the device's choice, made by its lowering; 0: none. */
    int64_t stream_bytes;
} fe_k_prog_spec;

enum { K_NONE, K_SLOT, K_IN, K_ROW, K_CONST, K_ANCHOR };
/* Instruction codes. I_VM is a lowering's: the CPU's replaces a run of
 * register-capable instructions by one (cpu/fused_vm.c); analysis never
 * emits it. */
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
} pin;

typedef struct pout {
    int32_t tensor;
    int dtype;
    int nt;                        /* written past the caches (spec.stream_bytes) */
    int acc;                       /* a column reduction's result (its FE_OP_*), 0 none:
                                    * complete only when every row has been seen */
    int strided;                   /* written into part of tensor (a concat's operand): row r
                                    * starts at base + offset of r over rst, not at r * C */
    int64_t base;
    int64_t rst[FE_MAX_RANK];
} pout;

/* A fused group analysed: its domain, inputs and outputs, and the code
 * computing it. A device's lowering reads it (the CPU's embeds it in its
 * program, cpu/fused_prog.h) and may rewrite code (cpu/fused_vm.c folds
 * runs of it into I_VM instructions) but adds nothing to it. */
typedef struct fe_k_fused {
    int nrdims;                    /* row axes (coalesced) */
    int64_t rdims[FE_MAX_RANK];
    int64_t rows, C;
    int64_t outer;                 /* size of the domain's outermost axis (split along it) */
    int full_rows;
    int rowstream;                 /* a row op streams its result to an output (instr.st) */
    int copy;                      /* the program only copies its one input to its one
                                    * output, same dtype: bytes are moved as they are */
    int mr;                        /* the merged domain: md[0, mr), rows then columns */
    int64_t md[FE_MAX_RANK];
    int nins, nouts, ncode, nslots, nrowv, nconsts, nops, nloads;
    pin *ins;
    pout *outs;
    instr *code;
    float *consts;
    opnd result;
    int nacc;                      /* outputs that are column reductions (pout.acc) */
} fe_k_fused;

/* Where domain row `row` starts in a tensor read or written from element
 * base with strides rst over the row axes (one row axis, the common case,
 * needs no division). */
static inline int64_t fe_k_row_at(const fe_k_fused *p, int64_t base, const int64_t *rst, int64_t row)
{
    return base + (p->nrdims == 1 ? row * rst[0] : fe_k_offset(p->nrdims, p->rdims, rst, row));
}

/* Where row `row` of output o starts in its tensor, in elements. */
static inline int64_t fe_k_out_row(const fe_k_fused *p, const pout *o, int64_t row)
{
    return o->strided ? fe_k_row_at(p, o->base, o->rst, row) : row * p->C;
}

static inline opnd mk(int kind, int idx)
{
    opnd o = {(int8_t)kind, idx};
    return o;
}

/* Analyse the group spec describes into p (zeroed by the caller). 0, or
 * -1 with FE_EINPUT and why the group cannot run fused, or FE_ENOMEM; p
 * may then hold parts: fe_k_fused_clear frees them either way. */
int fe_k_fused_analyse(fe_k_fused *p, const fe_k_prog_spec *spec, fe_error *err);
/* Free what p holds (not p). */
void fe_k_fused_clear(fe_k_fused *p);

/* Whether p only copies its one input to its one output of the same
 * dtype, so a lowering may move the bytes as they are. */
int fe_k_fused_copy_only(const fe_k_fused *p);

#endif
