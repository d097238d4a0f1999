/* fused_prog.h: the CPU's fused program, private to the files of the
 * fused tile executor (fused.h is its public face, for group.c): the
 * analysed group (group/fused_ir.h) lowered for this CPU, with its tiling,
 * register runs and per-thread state.
 *
 * As SQLite builds its bytecode in vdbeaux.c and runs it in vdbe.c, the
 * two are apart: fused_compile.c lowers the analysed group (with its last
 * pass, register runs, in fused_vm.c) into this struct; fused_run.c reads
 * it and runs it tile by tile on threads, in per-thread state of its own;
 * fused_prog.c frees and describes it. The runner's hot path calls only
 * its own static functions and the kernels, so the seam costs no inlining.
 */
#ifndef FE_FUSED_PROG_H
#define FE_FUSED_PROG_H

#include <stdint.h>

#include "error.h"
#include "fused.h"
#include "fused_ir.h"

/* What the CPU adds to an input of the analysed group. */
typedef struct xin {
    int pfrows;                    /* rows not in memory order: prefetch rows ahead */
    int stage;                     /* read in place, but a tile of whole rows (pack) needs
                                    * them end to end: staging area stage - 1 gets them */
} xin;

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
    fe_k_fused f;                  /* the analysed group */
    int64_t T;                     /* tile width in floats */
    int colblock;                  /* tiles go column chunk by column chunk over blocks of
                                    * rows, so the row-invariant inputs' chunk stays in L1 */
    int ahead;                     /* its register passes prefetch their streamed inputs
                                    * AHEAD (whole rows, or a program that is one pass over
                                    * tiles that follow each other in memory) */
    int pack;                      /* > 1: a tile is that many whole rows (narrow rows: the
                                    * per-tile work paid once for them all), else one
                                    * row's column segment */
    int64_t ss;                    /* slot stride in floats (T and padding) */
    xin *xins;                     /* per input of f */
    double **accbuf;               /* per output of f that is a column reduction: C doubles
                                    * for the whole domain, then C per thread, each
                                    * thread's rows folded into its own, combined at the end */
    int nthreads;
    tstate *ts;
    void *mem;                     /* one block for all thread states */
    vrun *runs;
    vop *vops;
    vent *vents;
    int nruns, nvops, nvents, maxent, maxops, nvm;   /* nvm: instructions inside runs */
    int nexec;                     /* f.code[0, nexec) after runs replaced instructions */
    int nstage;                    /* inputs staged for whole-row tiles (xin.stage) */
    char failure[200];             /* why a block was refused, "" if none was */
};

/* Replace each maximal run of register-capable instructions of p->code by
 * one I_VM instruction (fused_vm.c); 0, or -1 with FE_ENOMEM in err. */
int fe_k_prog_build_runs(fe_k_prog *p, fe_error *err);

/* Choose p's tile width T, its streaming (colblock, ahead) and the inputs
 * whose rows it prefetches or stages (xins) from its code and inputs
 * (fused_tile.c). */
void fe_k_prog_tile(fe_k_prog *p);

/* Allocate p's per-thread states for its tile width, slots, row values,
 * inputs and runs (fused_run.c); 0, or -1 when out of memory (p->ts and
 * p->mem are then freed by fe_k_prog_free). */
int fe_k_prog_alloc_threads(fe_k_prog *p);

#endif
