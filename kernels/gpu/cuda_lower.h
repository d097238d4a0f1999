/* cuda_lower.h: one op lowered for the GPU as a short program of pieces,
 * each a generated kernel or a cuBLAS call over buffers: a graph tensor's,
 * or the group's scratch memory at an offset.
 *
 * A convolution is a few such pieces (a bias fill, then per chunk of
 * images an im2col kernel into scratch and a GEMM from it), attention
 * three (scores by GEMM into scratch, a softmax kernel, a GEMM into the
 * output). The lowering only says what runs in which order; the group
 * (cuda_group.c) turns pieces into steps, compiles the kernels, sizes one
 * scratch allocation for its largest lowering when it is compiled, and
 * fills in the pointers when it runs.
 */
#ifndef FE_CUDA_LOWER_H
#define FE_CUDA_LOWER_H

#include <stdint.h>
#include <stdio.h>

#include "cuda.h"
#include "cuda_src.h"
#include "error.h"

/* A buffer a piece reads or writes: graph tensor t (>= 0), or the group's
 * scratch (t == FE_CUDA_SCRATCH), from byte offset off. */
#define FE_CUDA_SCRATCH (-2)
typedef struct fe_cuda_buf {
    int32_t t;
    int64_t off;
} fe_cuda_buf;

enum { FE_CUDA_PIECE_KERNEL, FE_CUDA_PIECE_GEMM };
#define FE_CUDA_PIECE_ARGS 8

typedef struct fe_cuda_piece {
    int kind;
    char *src;                 /* a kernel: its source (owned) and launch; */
    fe_cuda_shape shape;
    fe_cuda_buf args[FE_CUDA_PIECE_ARGS];   /* its pointer parameters, */
    int nargs, fault;          /* then the fault flag (int *) when fault */
    fe_cuda_gemm gm;           /* a GEMM: sizes, strides, dtypes; */
    fe_cuda_buf ga, gb, gc;    /* its operands (gm's pointers are set per run) */
} fe_cuda_piece;

typedef struct fe_cuda_lowering {
    fe_cuda_piece *p;
    int n, cap;
    int64_t scratch;           /* bytes of scratch the pieces use */
} fe_cuda_lowering;

/* Append a kernel piece: src (taken over, also on failure), its launch and
 * its nargs (<= FE_CUDA_PIECE_ARGS) pointer parameters. FE_OK or FE_ENOMEM. */
int fe_cuda_lower_kernel(fe_cuda_lowering *lw, char *src, const fe_cuda_shape *sh,
                         const fe_cuda_buf *args, int nargs, int fault, fe_error *err);
/* Append a GEMM piece C = A B (or C += A B with gm->acc) on buffers a, b, c. */
int fe_cuda_lower_gemm(fe_cuda_lowering *lw, const fe_cuda_gemm *gm, fe_cuda_buf a,
                       fe_cuda_buf b, fe_cuda_buf c, fe_error *err);
/* Reserve bytes of scratch (256-byte aligned, as cuBLAS and vector
 * accesses like): the offset of the reserved part. */
int64_t fe_cuda_lower_scratch(fe_cuda_lowering *lw, int64_t bytes);
/* The most scratch one lowered op may take: dflt bytes, or
 * $FUSEENG_CUDA_SCRATCH_MIB MiB when set (0: the least, one image or one
 * batch a chunk, so that a test reaches the chunk loops with small
 * graphs). An op that needs more runs in chunks. */
int64_t fe_cuda_scratch_cap(int64_t dflt);
/* Free the pieces' sources and the list; *lw is empty after. */
void fe_cuda_lowering_clear(fe_cuda_lowering *lw);

/* Buffer helpers: tensor t, scratch at off. */
static inline fe_cuda_buf fe_cuda_tbuf(int32_t t, int64_t off) { fe_cuda_buf b = {t, off}; return b; }
static inline fe_cuda_buf fe_cuda_sbuf(int64_t off) { fe_cuda_buf b = {FE_CUDA_SCRATCH, off}; return b; }

/* The launch of a kernel that walks total elements in a grid-stride loop
 * of 256-thread blocks: enough blocks to fill sms multiprocessors many
 * times over, never more than the elements need. */
void fe_cuda_grid(int64_t total, int sms, fe_cuda_shape *sh);
/* Print "typedef T IX;", T the index type of a kernel whose offsets stay
 * below largest: int when they fit with a margin for a grid-stride loop's
 * last step (64-bit division costs several times 32-bit's), else long
 * long. Constants are then printed bare: C++ gives each a type that holds
 * it, so that arithmetic stays 32-bit where everything fits. */
void fe_cuda_index_type(FILE *f, int64_t largest);
/* Print the head of a grid-stride loop over IX e in [0, total), its brace
 * left open. */
void fe_cuda_loop(FILE *f, int64_t total);
/* The unsigned C type of elements of bytes bytes (1, 2, 4 or 8), for
 * kernels that move elements without reading them. */
const char *fe_cuda_utype(int bytes);

#endif
