/* onnx_map.h: helpers the op mapping files share (onnx_map.c, onnx_map_nn.c).
 * Private to core/import. An out_k >= 0 names the new value as the node's
 * ONNX output out_k; -1 makes an intermediate value. Each returns NULL (or
 * an error code) with im->err set on failure. */
#ifndef FE_ONNX_MAP_H
#define FE_ONNX_MAP_H

#include "onnx_imp.h"

/* imp_map_nn's answer for an op it does not know. */
#define IMP_NO_MAPPING (-100)

/* 1 and the value if v is a decoded one-element constant. */
int imp_scalar(const imp_val *v, double *out);
/* One node op(x) whose output has dtype and shape; *node its builder index. */
imp_val *imp_op1(imp *im, const char *op, imp_val *x, int dtype, int rank, const int64_t *shape,
                 int out_k, int32_t *node);
/* x op s (index 1) or s op x (index 0) with the `scalar` attribute. */
imp_val *imp_scalar_op(imp *im, const char *op, imp_val *x, double s, int index, int out_k);
imp_val *imp_reshape(imp *im, imp_val *x, int rank, const int64_t *shape, int out_k);

/* Conv, Gemm, MatMul, norms, Softmax, Reduce*, pooling (onnx_map_nn.c):
 * FE_OK, an error code, or IMP_NO_MAPPING. */
int imp_map_nn(imp *im);
/* SAME_UPPER / SAME_LOWER / VALID / NOTSET padding of one spatial axis
 * (size in, kernel k, stride s, dilation d) into begin *b and end *e. */
int imp_window_pads(imp *im, const char *auto_pad, int64_t in, int64_t k, int64_t s, int64_t d,
                    int64_t *b, int64_t *e);
/* Conv of 1-D and 3-D inputs, and 1-D MaxPool / AveragePool, on the 2-D ops
 * (onnx_map_convnd.c). */
int imp_map_convnd(imp *im);
int imp_map_pool1d(imp *im, int max);
/* 3-D MaxPool / AveragePool as a 2-D pool over (H, W), then one over time. */
int imp_map_pool3d(imp *im, int max);
/* Resize, nearest and linear, as matmuls by resampling matrices (onnx_map_resize.c). */
int imp_map_resize(imp *im);
/* TopK as argsort, slice and torch.gather (aten custom nodes; onnx_map_topk.c). */
int imp_map_topk(imp *im);
/* Range, ConstantOfShape, Trilu and comparisons (onnx_map_dims.c): FE_OK,
 * an error code, or IMP_NO_MAPPING. */
int imp_map_dims(imp *im);
/* The node as a `custom` node with a warning naming it; why (NULL: no
 * mapping) says what is missing. Outputs need a known shape. */
int imp_custom(imp *im, const char *why);

#endif
