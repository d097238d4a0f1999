/* cuda_gemm.h: the cuBLAS and cuBLASLt calls a matmul group can be. */
#ifndef FE_CUDA_GEMM_H
#define FE_CUDA_GEMM_H

#include <stdint.h>

#include "cuda.h"
#include "error.h"
#include "graph.h"

/* Matmul n as one strided-batch cuBLAS call into *gm (pointers left 0);
 * 0, or -1 with why when its dtypes or batch broadcasting have none. */
int fe_cuda_gemm_plan(const fe_graph *g, const fe_node *n, fe_cuda_gemm *gm, fe_error *why);

/* A matmul and its epilogue as one cuBLASLt call: the call (pointers set
 * per run), its tensors, and the form's name. */
typedef struct fe_cuda_lt_form {
    fe_cuda_lt lt;
    int32_t a, b, d, c, bias;  /* tensors; c and bias -1 when absent */
    char name[48];             /* "scale+bias+gelu" */
} fe_cuda_lt_form;

/* 1 when the group nodes[0..n) (a matmul first, in topological order;
 * ins and outs its boundary) is one of the forms cuda_gemm.c's note takes,
 * filling f; 0 when not, with why saying what does not fit (left empty
 * when the group is not a matmul and an epilogue at all). */
int fe_cuda_lt_match(const fe_graph *g, const int32_t *nodes, int n, const int32_t *ins, int nins,
                     const int32_t *outs, int nouts, fe_cuda_lt_form *f, fe_error *why);

#endif
