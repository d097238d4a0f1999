/* cuda_src.h: an analysed fused group (group/fused_ir.h) printed as one
 * CUDA C kernel, and the launch shape it was written for.
 *
 * Note on the three shapes of kernel.
 *
 *   elementwise   no row ops: a thread per element of the rows x columns
 *                 domain, in a grid-stride loop; every value a register.
 *   rows          row ops (reductions over the columns, softmax, norms):
 *                 a warp per row when a row has at most 1024 columns,
 *                 else a block of up to 1024 threads; each thread holds
 *                 K = columns / threads values of every FULL value in a
 *                 register array, and row ops are shuffle (and shared
 *                 memory) reductions. Large K spills to local memory,
 *                 which the compiler reports (cuda_build.h).
 *   columns       column reductions (over the row axes): a thread per
 *                 column, looping over the rows, accumulating in double
 *                 as the CPU does.
 *
 * Every shape, stride and offset is a constant of the source, so the
 * source is the kernel's structural signature (the on-disk cache's key).
 */
#ifndef FE_CUDA_SRC_H
#define FE_CUDA_SRC_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "fused_ir.h"

enum { FE_CUDA_ELEM, FE_CUDA_ROWS, FE_CUDA_COLS };

typedef struct fe_cuda_shape {
    int kind;                  /* FE_CUDA_* */
    unsigned grid, threads;    /* 1-D launch */
    int per_thread;            /* K: values of a FULL value each thread holds */
    int held;                  /* values a thread holds at once: its arrays of K (the
                                  program's slots and the inputs it reads up front) x K */
} fe_cuda_shape;

/* The kernel computing p, named name, for a device of sms
 * multiprocessors: its source (caller frees) and launch shape. Its
 * parameters are p's inputs' data pointers in p->ins order, then its
 * outputs' in p->outs order. NULL with FE_EINPUT when p uses what the
 * generator does not take, saying what, or FE_ENOMEM. */
char *fe_cuda_src(const fe_k_fused *p, const char *name, int sms, fe_cuda_shape *shape,
                  fe_error *err);

/* What every generated kernel starts with (cuda_src.c): u16, dtype
 * conversions written with PTX's (h2f, f2h for f16; b2f, f2b for bf16;
 * f2i float to integer as the CPU converts), NaN-keeping mxn / mnn and
 * the four-element vector loads and stores. NVRTC needs no header for it. */
extern const char fe_cuda_prelude[];
/* The C type of an element of dtype dt in a kernel (f16, bf16: u16). */
const char *fe_cuda_ctype(int dt);
/* Print the expression converting ptr[off] of dtype dt to float, and the
 * statement storing float v at ptr[off] as dtype dt, as the CPU converts. */
void fe_cuda_load_expr(FILE *f, int dt, const char *ptr, const char *off);
void fe_cuda_store_stmt(FILE *f, int dt, const char *ptr, const char *off, const char *v);

#endif
