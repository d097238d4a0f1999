/* onednn.h: one oneDNN convolution or matmul primitive with its post-ops
 * (Debian's libdnnl 2.6, its OpenMP build, so it runs on the same libgomp
 * thread pool as our kernels). The primitive is created once and run on our
 * own buffers: activations stay dense row-major (NCHW is oneDNN's abcd),
 * nothing is copied; only the weights may be reordered into the layout the
 * implementation prefers, once per run. Everything is float32.
 */
#ifndef FE_ONEDNN_H
#define FE_ONEDNN_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

#define FE_K_DNN_MAX_POST 32

enum { FE_K_DNN_ELTWISE, FE_K_DNN_BINARY, FE_K_DNN_SUM };

/* One post-op: an eltwise (alg a dnnl_alg_kind_t eltwise value, with its
 * alpha and beta), a binary one (alg a dnnl binary kind) whose second
 * operand is a dense f32 tensor of dims shape[0..rank), rank being the
 * destination's, each dim equal to the destination's or 1, or a sum (adds
 * what the destination held before the run). */
typedef struct fe_k_dnn_post {
    int kind;
    int alg;
    float alpha, beta;
    int64_t shape[FE_MAX_RANK];
} fe_k_dnn_post;

typedef struct fe_k_dnn_spec {
    int conv;                          /* 1 conv2d, 0 matmul */
    /* conv2d: x [N, C, H, W], w [O, C/groups, KH, KW], y [N, O, OH, OW] */
    int64_t stride[2], pad[2], dil[2], groups;
    int bias;                          /* a bias: conv2d's [O], matmul's [N] */
    int wscale;                        /* the weights are scaled per output channel
                                          (conv2d) at every run, while reordered */
    /* matmul: a, b and y of rank `rank` (1-D operands are not taken);
     * ta / tb read a / b with their last two axes swapped */
    int ta, tb;
    int rank;                          /* of x/a, w/b and y (4 for conv2d) */
    int64_t a[FE_MAX_RANK], b[FE_MAX_RANK], y[FE_MAX_RANK];
    int npost;
    fe_k_dnn_post post[FE_K_DNN_MAX_POST];
    int wany;                          /* let oneDNN choose the weights' layout */
} fe_k_dnn_spec;

typedef struct fe_k_dnn fe_k_dnn;

/* Create the primitive (and the weights' reorder when it wants another
 * layout). NULL with why set when oneDNN cannot create it, or has only its
 * reference implementation for it (slower than our kernels by far).
 * Caller frees with fe_k_dnn_free. */
fe_k_dnn *fe_k_dnn_new(const fe_k_dnn_spec *sp, fe_error *why);
void fe_k_dnn_free(fe_k_dnn *d);

/* Run it on dense f32 buffers: post_args[i] is binary post-op i's operand
 * (ignored for the others); bias is NULL without one, wscale (one factor
 * per output channel) NULL without spec.wscale. */
int fe_k_dnn_run(fe_k_dnn *d, const void *src, const void *wei, const void *bias,
                 const float *wscale, void *dst, void *const *post_args, fe_error *err);

/* oneDNN's name of the implementation ("jit:avx2", "gemm:jit", ...) and
 * whether the weights are reordered; static / owned by d. */
const char *fe_k_dnn_impl(const fe_k_dnn *d);
int fe_k_dnn_reorders(const fe_k_dnn *d);

/* The library's version, "2.6.3"; static storage. */
const char *fe_k_dnn_version(void);

#endif
