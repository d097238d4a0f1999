/* fused_views.c: folding view ops into the fused executor's loads.
 *
 * A view op moves no data: reshape, transpose (permute), slice (any
 * positive step) and expand only change which element of their source
 * sits at each index. Applied to a tensor read through an affine index map
 *
 *     element(i0, .., ik) = src[off + i0 * st0 + .. + ik * stk]
 *
 * each gives another affine map over the same source:
 *
 *     transpose  permutes the (shape, stride) pairs
 *     slice      off += start * st[axis]; st[axis] *= step
 *     expand     a broadcast axis (size 1, or a new leading one) gets stride 0
 *     reshape    splits and merges axes; a run of old axes can be merged
 *                only if they are contiguous among themselves
 *                (st[a] == st[a+1] * shape[a+1]), as in PyTorch's
 *                computeStride. Otherwise the view is not affine (a
 *                reshape of a transposed tensor that merges its swapped
 *                axes) and the program cannot be a strided load.
 *
 * So a chain of views of a group input is no instruction at all: the
 * program loads the source with the composed strides and offset
 * (fused_compile.c lays those strides over the domain like any input's).
 */
#include <stdlib.h>
#include <string.h>

#include "fused_views.h"
#include "injective.h"
#include "node.h"
#include "ops.h"

int fe_k_fused_view_op(int op)
{
    return op >= 0 && op < FE_NOPS && (fe_op_get(op)->flags & FE_OPF_VIEW) != 0;
}

void fe_k_sview_of(fe_k_sview *v, const fe_graph *g, int32_t t)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    const int64_t *sh = fe_tensor_shape(g, tt);
    int64_t s = 1;
    memset(v, 0, sizeof *v);
    v->src = t;
    v->rank = tt->rank;
    for (int i = tt->rank - 1; i >= 0; i--) {
        v->shape[i] = sh[i];
        v->st[i] = s;
        s *= sh[i];
    }
}

static int bad(const fe_graph *g, const fe_node *n, const char *why, fe_error *err)
{
    fe_error_set(err, FE_EINPUT, "node '%s' (%s): %s", fe_node_name(g, n), fe_node_op_name(n), why);
    return -1;
}

/* Strides of v reshaped to shape ns[0..nr), or -1 if not affine (PyTorch's
 * computeStride: old axes are taken in chunks that are contiguous among
 * themselves, and each chunk must be exactly a run of new axes). */
static int reshape_strides(const fe_k_sview *v, const int64_t *ns, int nr, int64_t *out)
{
    int64_t numel = 1;
    for (int i = 0; i < v->rank; i++)
        numel *= v->shape[i];
    if (numel == 0 || v->rank == 0) {
        int64_t s = 1;
        for (int i = nr - 1; i >= 0; i--) {
            out[i] = s;
            s *= ns[i] ? ns[i] : 1;
        }
        return 0;
    }
    int vd = nr - 1;
    int64_t base = v->st[v->rank - 1], tn = 1, vn = 1;
    for (int td = v->rank - 1; td >= 0; td--) {
        tn *= v->shape[td];
        if (td == 0 || (v->shape[td - 1] != 1 && v->st[td - 1] != tn * base)) {
            while (vd >= 0 && (vn < tn || ns[vd] == 1)) {
                out[vd] = vn * base;
                vn *= ns[vd];
                vd--;
            }
            if (vn != tn)
                return -1;
            if (td > 0) {
                base = v->st[td - 1];
                tn = 1;
                vn = 1;
            }
        }
    }
    return vd == -1 ? 0 : -1;
}

int fe_k_sview_apply(fe_k_sview *v, const fe_graph *g, const fe_node *n, fe_error *err)
{
    const fe_tensor *ot = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *os = fe_tensor_shape(g, ot);
    int orank = ot->rank;
    int64_t st[FE_MAX_RANK];

    switch (n->op) {
    case FE_OP_RESHAPE:
        if (reshape_strides(v, os, orank, st))
            return bad(g, n, "reshapes a strided view across axes that are not adjacent in memory, "
                       "so it is no strided load", err);
        break;
    case FE_OP_TRANSPOSE: {
        int64_t p[FE_MAX_RANK + 1];
        int k = fe_node_attr_ints(g, n, "perm", p, FE_MAX_RANK + 1);
        if (k == -1) {
            k = v->rank;
            for (int i = 0; i < k; i++)
                p[i] = k - 1 - i;
        }
        if (k != v->rank || orank != v->rank)
            return bad(g, n, "perm must list every axis once", err);
        int seen[FE_MAX_RANK] = {0};
        int64_t sh[FE_MAX_RANK];
        for (int i = 0; i < k; i++) {
            int a = fe_axis(p[i], v->rank);
            if (a < 0 || seen[a]++)
                return bad(g, n, "perm must list every axis once", err);
            sh[i] = v->shape[a];
            st[i] = v->st[a];
        }
        memcpy(v->shape, sh, (size_t)k * sizeof *sh);   /* k == rank: sh is set that far */
        break;
    }
    case FE_OP_SLICE: {
        int axis = fe_axis(fe_node_attr_int(g, n, "axis", 0), v->rank);
        int64_t start = fe_node_attr_int(g, n, "start", 0);
        int64_t end = fe_node_attr_int(g, n, "end", INT64_MAX);
        int64_t step = fe_node_attr_int(g, n, "step", 1);
        const fe_attr *ea = fe_node_attr(g, n, "end");
        if (ea && ea->type == FE_ATTR_NULL)
            end = INT64_MAX;
        if (axis < 0 || orank != v->rank)
            return bad(g, n, "axis out of range", err);
        if (step <= 0)
            return bad(g, n, "step must be > 0", err);
        int64_t len = fe_k_slice_norm(v->shape[axis], &start, &end, step);
        memcpy(st, v->st, sizeof st);
        if (len > 0)
            v->off += start * v->st[axis];
        st[axis] = len > 1 ? v->st[axis] * step : 0;
        v->shape[axis] = len;
        break;
    }
    case FE_OP_EXPAND: {
        int off = orank - v->rank;
        if (off < 0)
            return bad(g, n, "output has fewer axes than its input", err);
        for (int i = 0; i < orank; i++) {
            int j = i - off;
            if (j < 0 || (v->shape[j] == 1 && os[i] != 1))
                st[i] = 0;
            else if (v->shape[j] == os[i])
                st[i] = v->st[j];
            else
                return bad(g, n, "input does not broadcast to the output shape", err);
        }
        break;
    }
    default:
        return bad(g, n, "is not a view", err);
    }
    for (int i = 0; i < orank; i++) {
        if (n->op != FE_OP_RESHAPE && n->op != FE_OP_EXPAND && v->shape[i] != os[i])
            return bad(g, n, "its attributes disagree with its output's shape", err);
        v->shape[i] = os[i];
        v->st[i] = st[i];
    }
    v->rank = orank;
    return 0;
}

void fe_k_sview_domain(const fe_k_sview *v, int r, const int64_t *ds, int64_t *dst)
{
    for (int a = 0; a < r; a++) {
        int j = a - (r - v->rank);
        dst[a] = j < 0 || ds[a] == 1 ? 0 : v->st[j];
    }
}

int fe_k_part_strides(const fe_graph *g, int32_t t, int axis, int64_t off, int r, const int64_t *D,
                      int64_t *dst, int64_t *base)
{
    fe_k_sview v;
    fe_k_sview_of(&v, g, t);
    int lead = r - v.rank;
    if (lead < 0 || axis < 0 || axis >= v.rank || off < 0 || off + D[axis + lead] > v.shape[axis])
        return -1;
    v.shape[axis] = D[axis + lead];   /* a slice along axis */
    for (int a = 0; a < r; a++)
        if (D[a] != (a < lead ? 1 : v.shape[a - lead]))
            return -1;
    *base = off * v.st[axis];
    fe_k_sview_domain(&v, r, D, dst);
    return 0;
}

int fe_k_produced_in(const fe_graph *g, int32_t t, const int32_t *nodes, int n)
{
    int32_t p = fe_graph_tensor(g, t)->producer;
    for (int i = 0; i < n; i++)
        if (nodes[i] == p)
            return 1;
    return 0;
}

int fe_k_view_chain(const fe_graph *g, const int32_t *nodes, int n, int32_t t, int32_t *chain)
{
    int m = 0;
    while (m < n && fe_k_produced_in(g, t, nodes, n)) {
        int32_t p = fe_graph_tensor(g, t)->producer;
        chain[m++] = p;
        t = fe_node_input(g, fe_graph_node(g, p), 0);
    }
    for (int i = 0; i < m / 2; i++) {   /* walked back from the output: reverse */
        int32_t x = chain[i];
        chain[i] = chain[m - 1 - i];
        chain[m - 1 - i] = x;
    }
    return m;
}

/* Whether a node other than a reshape reads t (reshapes of a stored
 * reshape are stored reshapes too). */
static int read_by(const fe_graph *g, int32_t t, const int32_t *nodes, int n)
{
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        for (int k = 0; k < nd->nin && nd->op != FE_OP_RESHAPE; k++)
            if (fe_node_input(g, nd, k) == t)
                return 1;
    }
    return 0;
}

/* Tensors a and b hold the same values right-aligned: their shapes agree
 * once leading 1s are dropped, so broadcasting reads the same element of
 * either at every point of a domain (an unsqueeze(0) of a computed value). */
static int same_aligned(const fe_graph *g, int32_t a, int32_t b)
{
    const fe_tensor *ta = fe_graph_tensor(g, a), *tb = fe_graph_tensor(g, b);
    const int64_t *sa = fe_tensor_shape(g, ta), *sb = fe_tensor_shape(g, tb);
    int i = 0, j = 0;
    while (i < ta->rank && sa[i] == 1)
        i++;
    while (j < tb->rank && sb[j] == 1)
        j++;
    if (ta->rank - i != tb->rank - j)
        return 0;
    for (; i < ta->rank; i++, j++)
        if (sa[i] != sb[j])
            return 0;
    return 1;
}

int fe_k_view_aliased(const fe_graph *g, const fe_node *nd, const int32_t *nodes, int n,
                      int32_t avoid)
{
    if (nd->op != FE_OP_RESHAPE || nd->nin != 1 || nd->nout != 1)
        return 0;
    int32_t src = fe_node_input(g, nd, 0), out = fe_node_output(g, nd, 0);
    return src != avoid && (!read_by(g, out, nodes, n) || same_aligned(g, src, out));
}

int fe_k_fold_views(const fe_graph *g, const int32_t *nodes, int n, int32_t avoid, fe_k_folded *f,
                    fe_error *err)
{
    memset(f, 0, sizeof *f);
    f->keep = malloc((size_t)(n + 1) * sizeof(int32_t));
    f->vt = malloc((size_t)(n + 1) * sizeof(int32_t));
    f->vs = malloc((size_t)(n + 1) * sizeof(fe_k_sview));
    f->aout = malloc((size_t)(n + 1) * sizeof(int32_t));
    f->ain = malloc((size_t)(n + 1) * sizeof(int32_t));
    if (!f->keep || !f->vt || !f->vs || !f->aout || !f->ain)
        return fe_error_set(err, FE_ENOMEM, "fused: out of memory"), -1;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        int32_t src = nd->nin >= 1 ? fe_node_input(g, nd, 0) : -1, out = fe_node_output(g, nd, 0);
        int j = -1, single = nd->nin == 1 && nd->nout == 1;
        for (int k = 0; k < f->nv && src >= 0; k++)
            if (f->vt[k] == src)
                j = k;
        int foldable = fe_k_fused_view_op(nd->op) && single &&
                       (j >= 0 || (src != avoid && !fe_k_produced_in(g, src, nodes, n)));
        fe_k_sview v;
        fe_error e = {0};
        if (foldable) {
            if (j >= 0)
                v = f->vs[j];
            else
                fe_k_sview_of(&v, g, src);
            foldable = fe_k_sview_apply(&v, g, nd, &e) == 0;
        }
        if (foldable) {
            f->vs[f->nv] = v;
            f->vt[f->nv++] = out;
        } else if (fe_k_view_aliased(g, nd, nodes, n, avoid)) {
            for (int k = 0; k < f->nalias; k++)
                if (f->aout[k] == src)
                    src = f->ain[k];   /* a reshape of a stored reshape */
            f->ain[f->nalias] = src;
            f->aout[f->nalias++] = out;
        } else if (e.code) {
            *err = e;   /* a view of an input that is no strided load: its reason */
            return -1;
        } else {
            f->keep[f->nkeep++] = nodes[i];
        }
    }
    return 0;
}

void fe_k_folded_free(fe_k_folded *f)
{
    free(f->keep);
    free(f->vt);
    free(f->vs);
    free(f->aout);
    free(f->ain);
    memset(f, 0, sizeof *f);
}
