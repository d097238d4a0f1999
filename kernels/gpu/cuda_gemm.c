/* cuda_gemm.c: a matmul as a cuBLAS call, and a matmul with its epilogue
 * as one cuBLASLt call (cuda_gemm.h). Graph facts only: whether a group
 * runs so, and which way is faster, is cuda_group.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_gemm.h"
#include "node.h"
#include "ops.h"

static int matmul_dims(const fe_tensor *t, const int64_t *sh, int tr, int first, int64_t *rows,
                       int64_t *cols)
{
    if (t->rank == 1) {   /* a vector: a row of A, or a column of B */
        *rows = first ? 1 : sh[0];
        *cols = first ? sh[0] : 1;
        return 0;
    }
    *rows = sh[t->rank - (tr ? 1 : 2)];
    *cols = sh[t->rank - (tr ? 2 : 1)];
    return 0;
}

/* Batch count and stride of operand t (rank r, batch axes r - 2) for an
 * output batch of ob axes yb[0..ob): 0 stride when it has one matrix,
 * -1 when it broadcasts only some axes (no single stride). */
static int64_t batch_stride(const fe_tensor *t, const int64_t *sh, const int64_t *yb, int ob,
                            int64_t mat)
{
    int tb = t->rank > 2 ? t->rank - 2 : 0;
    int64_t n = 1;
    for (int i = 0; i < tb; i++)
        n *= sh[i];
    if (n == 1)
        return 0;
    if (tb != ob)
        return -1;
    for (int i = 0; i < tb; i++)
        if (sh[i] != yb[i])
            return -1;
    return mat;
}

int fe_cuda_gemm_plan(const fe_graph *g, const fe_node *n, fe_cuda_gemm *gm, fe_error *why)
{
    const fe_tensor *a = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *b = fe_graph_tensor(g, fe_node_input(g, n, 1));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *as = fe_tensor_shape(g, a), *bs = fe_tensor_shape(g, b), *ys = fe_tensor_shape(g, y);
    int fl = a->dtype == FE_F32 || a->dtype == FE_F16 || a->dtype == FE_BF16;
    int yl = y->dtype == FE_F32 || y->dtype == FE_F16 || y->dtype == FE_BF16;
    memset(gm, 0, sizeof *gm);
    /* cuBLAS's pairs with f32 compute: A and B alike, C theirs or f32 */
    if (a->dtype != b->dtype || !fl || !yl || (y->dtype != a->dtype && y->dtype != FE_F32) ||
        a->rank < 1 || b->rank < 1)
        return fe_error_set(why, FE_EINPUT, "matmul of %s x %s into %s has no cuBLAS call",
                            fe_dtype_name(a->dtype), fe_dtype_name(b->dtype), fe_dtype_name(y->dtype)), -1;
    gm->ta = a->rank > 1 && fe_node_attr_bool(g, n, "transpose_a", 0);
    gm->tb = b->rank > 1 && fe_node_attr_bool(g, n, "transpose_b", 0);
    int64_t kb;
    matmul_dims(a, as, gm->ta, 1, &gm->m, &gm->k);
    matmul_dims(b, bs, gm->tb, 0, &kb, &gm->n);
    if (kb != gm->k)
        return fe_error_set(why, FE_EINPUT, "matmul: inner sizes %lld and %lld differ",
                            (long long)gm->k, (long long)kb), -1;
    int ob = y->rank - (a->rank > 1) - (b->rank > 1);
    if (ob < 0)
        ob = 0;
    gm->batch = 1;
    for (int i = 0; i < ob; i++)
        gm->batch *= ys[i];
    gm->sa = batch_stride(a, as, ys, ob, gm->m * gm->k);
    gm->sb = batch_stride(b, bs, ys, ob, gm->k * gm->n);
    gm->sc = gm->m * gm->n;
    if (gm->sa < 0 || gm->sb < 0)
        return fe_error_set(why, FE_EINPUT, "matmul broadcasts part of its batch axes (no single "
                            "strided-batch cuBLAS call)"), -1;
    gm->dtype_ab = a->dtype;
    gm->dtype_c = y->dtype;
    return 0;
}

/* Note on the forms taken. A group of one matmul and the elementwise
 * epilogue after it,
 *
 *   y = act(alpha (a @ b) + c + bias)
 *
 * can run as one cublasLtMatmul instead of cuBLAS and a kernel. Taken, in
 * member order: muls and divs of the product by a scalar attribute (alpha;
 * only before any add, since Lt scales the product alone); at most one add
 * of a tensor broadcast along the output's last axis, every other axis 1
 * (Lt's bias: one value per row of its column-major D, which is per
 * element of our last axis) and at most one add of a tensor of the
 * output's shape (Lt's C, beta 1), in either order; then at most one relu,
 * or gelu with approximate "tanh" (Lt's GELU is the tanh form: an erf gelu
 * is another function). Every tensor of the chain has the product's shape
 * and dtype, the bias and C too (Lt reads both in D's type); each feeds
 * only the next member, and the chain's last tensor is the group's one
 * output: an intermediate read elsewhere would need a store Lt does not
 * make. Anything else (a scale after an add, sub, silu, a second bias, an
 * f32 bias of an f16 product) keeps cuBLAS and a kernel. */

static int same_shape(const fe_graph *g, const fe_tensor *x, const fe_tensor *y)
{
    return x->rank == y->rank &&
           !memcmp(fe_tensor_shape(g, x), fe_tensor_shape(g, y), (size_t)x->rank * sizeof(int64_t));
}

/* [..., 1, N] against y [..., N]: Lt's bias vector. */
static int bias_shape(const fe_graph *g, const fe_tensor *x, const fe_tensor *y)
{
    const int64_t *xs = fe_tensor_shape(g, x), *ys = fe_tensor_shape(g, y);
    if (x->rank < 1 || y->rank < 1 || x->rank > y->rank || xs[x->rank - 1] != ys[y->rank - 1])
        return 0;
    for (int i = 0; i < x->rank - 1; i++)
        if (xs[i] != 1)
            return 0;
    return 1;
}

static void form_add(fe_cuda_lt_form *f, const char *part)
{
    size_t l = strlen(f->name);
    snprintf(f->name + l, sizeof f->name - l, "%s%s", l ? "+" : "", part);
}

int fe_cuda_lt_match(const fe_graph *g, const int32_t *nodes, int n, const int32_t *ins, int nins,
                     const int32_t *outs, int nouts, fe_cuda_lt_form *f, fe_error *why)
{
    const fe_node *mm = fe_graph_node(g, nodes[0]);
    memset(f, 0, sizeof *f);
    f->c = f->bias = -1;
    f->lt.alpha = 1.0f;
    if (n < 2 || mm->op != FE_OP_MATMUL)
        return 0;
    if (fe_cuda_gemm_plan(g, mm, &f->lt.gm, why))   /* the matmul runs on the host: said there */
        return memset(why, 0, sizeof *why), 0;
    int32_t cur = fe_node_output(g, mm, 0);
    const fe_tensor *y = fe_graph_tensor(g, cur);
    double alpha = 1.0;
    int phase = 0;   /* 0: scales may come, 1: after an add, 2: after the activation */
    for (int i = 1; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        const char *on = fe_node_op_name(nd), *nm = fe_node_name(g, nd);
        if (fe_graph_tensor(g, cur)->ncons != 1 || fe_k_ids_has(outs, nouts, cur))
            return fe_error_set(why, FE_EINPUT, "'%s' is read outside the epilogue",
                                fe_tensor_name(g, fe_graph_tensor(g, cur))), 0;
        int k = nd->nin > 0 && fe_node_input(g, nd, 0) == cur ? 0
              : nd->nin > 1 && fe_node_input(g, nd, 1) == cur ? 1 : -1;
        if (k < 0 || nd->nout != 1)
            return fe_error_set(why, FE_EINPUT, "'%s' is not a link of the chain after the matmul",
                                nm), 0;
        const fe_tensor *o = fe_graph_tensor(g, fe_node_output(g, nd, 0));
        if (!same_shape(g, o, y) || o->dtype != y->dtype)
            return fe_error_set(why, FE_EINPUT, "'%s' changes the product's shape or dtype", nm), 0;
        double sv;
        if ((nd->op == FE_OP_MUL || nd->op == FE_OP_DIV) && nd->nin == 1 && fe_node_scalar(g, nd, &sv)) {
            if (phase > 0)
                return fe_error_set(why, FE_EINPUT, "%s '%s' scales after an add (Lt's alpha "
                                    "scales the product alone)", on, nm), 0;
            if (nd->op == FE_OP_DIV && fe_node_attr_int(g, nd, "scalar_index", 1) != 1)
                return fe_error_set(why, FE_EINPUT, "div '%s' divides a scalar by the product", nm), 0;
            alpha = nd->op == FE_OP_MUL ? alpha * sv : alpha / sv;
            if (!strstr(f->name, "scale"))
                form_add(f, "scale");
        } else if (nd->op == FE_OP_ADD && nd->nin == 2) {
            int32_t ot = fe_node_input(g, nd, 1 - k);
            const fe_tensor *x = fe_graph_tensor(g, ot);
            if (phase > 1)
                return fe_error_set(why, FE_EINPUT, "add '%s' follows the activation", nm), 0;
            if (ot == cur || !fe_k_ids_has(ins, nins, ot) || x->dtype != y->dtype)
                return fe_error_set(why, FE_EINPUT, "add '%s' adds %s, not a tensor of the "
                                    "product's dtype from outside the group", nm,
                                    ot == cur ? "the product to itself" : "another"), 0;
            if (same_shape(g, x, y) && f->c < 0) {
                f->c = ot;
                form_add(f, "residual");
            } else if (bias_shape(g, x, y) && f->bias < 0) {
                f->bias = ot;
                form_add(f, "bias");
            } else {
                return fe_error_set(why, FE_EINPUT, "add '%s' is neither the one bias along the "
                                    "last axis nor the one residual of the output's shape", nm), 0;
            }
            phase = 1;
        } else if (nd->op == FE_OP_RELU ||
                   (nd->op == FE_OP_GELU &&
                    !strcmp(fe_node_attr_str(g, nd, "approximate", "none"), "tanh"))) {
            if (phase == 2)
                return fe_error_set(why, FE_EINPUT, "a second activation '%s'", nm), 0;
            f->lt.act = nd->op == FE_OP_RELU ? FE_CUDA_ACT_RELU : FE_CUDA_ACT_GELU_TANH;
            form_add(f, nd->op == FE_OP_RELU ? "relu" : "gelu");
            phase = 2;
        } else {
            return fe_error_set(why, FE_EINPUT, "%s '%s' is not among cuBLASLt's epilogues%s", on,
                                nm, nd->op == FE_OP_GELU ? " (its GELU is the tanh form; this "
                                "gelu is the erf one)" : ""), 0;
        }
        cur = fe_node_output(g, nd, 0);
    }
    if (nouts != 1 || outs[0] != cur)
        return fe_error_set(why, FE_EINPUT, "the group has outputs besides the epilogue's last"), 0;
    f->a = fe_node_input(g, mm, 0);
    f->b = fe_node_input(g, mm, 1);
    f->d = cur;
    f->lt.alpha = (float)alpha;
    f->lt.has_c = f->c >= 0;
    f->lt.has_bias = f->bias >= 0;
    /* a batch of a's rows times one b is one taller product */
    fe_cuda_gemm *gm = &f->lt.gm;
    if (gm->batch > 1 && gm->sb == 0 && !gm->ta && gm->sa == gm->m * gm->k) {
        gm->m *= gm->batch;
        gm->batch = 1;
        gm->sa = 0;
        gm->sc = gm->m * gm->n;
    }
    return 1;
}
