/* attention.h: scaled dot-product attention,
 * softmax(q k^T * scale + mask) v, with PyTorch's conventions: a bool mask
 * keeps positions where it is true, a float mask is added, causal keeps
 * key j <= query i (top-left aligned), a fully masked row gives NaN.
 */
#ifndef FE_ATTENTION_H
#define FE_ATTENTION_H

#include "error.h"
#include "ktensor.h"

typedef struct fe_k_sdpa {
    const fe_k_tensor *q, *k, *v;   /* [.., L, E], [.., S, E], [.., S, Ev] */
    const fe_k_tensor *mask;        /* NULL, or broadcastable to [.., L, S] */
    int causal;
    double scale;                   /* <= 0 or NaN: 1 / sqrt(E) */
    fe_k_tensor *y;                 /* [.., L, Ev] with q's batch axes */
} fe_k_sdpa;

/* Runs per batch as two GEMMs on the blocked engine; the scores of one
 * batch ([L, S] float32) are the only intermediate. Returns FE_OK, FE_EINPUT
 * (shapes) or FE_ENOMEM, with err set. */
int fe_k_sdpa_run(const fe_k_sdpa *a, fe_error *err);

#endif
