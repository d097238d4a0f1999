/* ktensor.h: fe_k_tensor, the kernels' view of one dense row-major tensor.
 *
 * Kernels never see the graph: they take tensors as a data pointer, a dtype
 * (graph.h's fe_dtype) and a shape. Data is always contiguous row-major;
 * kernels that read operands with broadcasting or transposition compute
 * strides from the shape themselves (fe_k_strides, fe_k_bcast_strides).
 */
#ifndef FE_KTENSOR_H
#define FE_KTENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

typedef struct fe_k_tensor {
    void *data;                   /* not owned by the view */
    int dtype;                    /* fe_dtype */
    int rank;
    int64_t shape[FE_MAX_RANK];
} fe_k_tensor;

/* Number of elements (1 for rank 0). */
static inline int64_t fe_k_numel(const fe_k_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

/* Bytes of the tensor's data. */
static inline size_t fe_k_nbytes(const fe_k_tensor *t)
{
    return (size_t)fe_k_numel(t) * (size_t)fe_dtype_size(t->dtype);
}

/* A view of data with the given dtype and shape. */
static inline fe_k_tensor fe_k_view(void *data, int dtype, int rank, const int64_t *shape)
{
    fe_k_tensor t;
    t.data = data;
    t.dtype = dtype;
    t.rank = rank;
    for (int i = 0; i < FE_MAX_RANK; i++)
        t.shape[i] = i < rank ? shape[i] : 1;
    return t;
}

/* The view of graph tensor t (its dtype and shape) over data. */
static inline fe_k_tensor fe_k_graph_view(const fe_graph *g, int32_t t, void *data)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    return fe_k_view(data, tt->dtype, tt->rank, fe_tensor_shape(g, tt));
}

/* Contiguous element strides of shape[0..rank) into st. */
static inline void fe_k_strides(const int64_t *shape, int rank, int64_t *st)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= shape[i];
    }
}

/* Strides of tensor t read as if broadcast to an output of rank orank
 * (numpy rules, right aligned): size-1 and missing axes get stride 0.
 * Returns -1 if t does not broadcast to oshape. */
static inline int fe_k_bcast_strides(const fe_k_tensor *t, int orank,
                                     const int64_t *oshape, int64_t *st)
{
    int64_t own[FE_MAX_RANK];
    int off = orank - t->rank;
    if (off < 0)
        return -1;
    fe_k_strides(t->shape, t->rank, own);
    for (int i = 0; i < orank; i++) {
        int j = i - off;
        if (j < 0 || t->shape[j] == 1)
            st[i] = 0;
        else if (t->shape[j] == oshape[i])
            st[i] = own[j];
        else
            return -1;
    }
    return 0;
}

#endif
