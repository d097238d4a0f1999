/* onnx_map_topk.c: ONNX TopK onto the CPU kernels' aten ops: `argsort` of
 * the input along the axis (a custom node, attrs.aten argsort.stable,
 * descending for the largest), a `slice` of its first k indices, and
 * torch.gather of the values at them (a custom node, attrs.aten
 * gather.default). No composition of registry ops sorts; the aten kernels
 * run these nodes (on CUDA as host steps). The sort is stable, so equal
 * values come in index order, as the ONNX operator specifies; `sorted` 0
 * leaves the order open, and this one is sorted too.
 */
#include <stdio.h>
#include <string.h>

#include "onnx_map.h"

/* A custom node running aten op `aten` with attrs.args `args` (JSON) on
 * ins into o, whose shape it declares (custom outputs must be). */
static int aten_node(imp *im, const char *aten, const char *args, imp_val **ins, int nin,
                     imp_val *o, int64_t flops)
{
    if (fe_builder_tensor(im->b, fe_strtab_str(im->strs, o->tensor), o->dtype, FE_ACTIVATION,
                          o->rank, o->shape, 0) < 0)
        return imp_sync(im);
    im->taken[o->tensor] |= IMP_DECLARED;   /* a graph output: declared once, here */
    int32_t nd = imp_emit(im, "custom", ins, nin, o);
    im->ncustom++;
    if (nd < 0 || fe_builder_attr_str(im->b, nd, "aten", aten) ||
        fe_builder_attr_json(im->b, nd, "args", args, strlen(args)) ||
        fe_builder_attr_str(im->b, nd, "pattern", "opaque") ||
        fe_builder_attr_int(im->b, nd, "flops", flops) ||
        fe_builder_attr_str(im->b, nd, "onnx_op", "TopK"))
        return im->err->code ? im->err->code : imp_sync(im);
    return FE_OK;
}

int imp_map_topk(imp *im)
{
    imp_val *x = imp_in(im, 0), *kv = imp_opt(im, 1);   /* opset 9: k an attribute */
    int64_t axis, k = imp_attr_int(im->node, "k", 0);
    if (imp_axis(im, "axis", imp_attr_int(im->node, "axis", -1), x->rank, 0, &axis))
        return im->err->code;
    if ((kv ? imp_const_ints(kv, &k, 1) != 1 : !imp_attr(im->node, "k")) || FE_IS_SYM(k))
        return imp_fail(im, "k must be a constant of one integer (export with a fixed k)");
    for (int d = 0; d < x->rank; d++)
        if (FE_IS_SYM(x->shape[d]))
            return imp_fail(im, "needs fixed sizes, but dim %d is symbolic dim '%s' (give it a "
                            "fixed size when exporting)", d, imp_dim_name(im, x->shape[d]));
    int64_t len = x->shape[axis];
    if (k < 1 || k > len)
        return imp_fail(im, "k is %lld; it must be 1 to %lld, the size of axis %lld (an empty "
                        "result is not supported)", (long long)k, (long long)len, (long long)axis);
    if (x->dtype == FE_BOOL)
        return imp_fail(im, "sorts a bool tensor; TopK takes numbers");
    int largest = (int)imp_attr_int(im->node, "largest", 1);
    int64_t n = imp_numel(x->shape, x->rank), shape[FE_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = k;
    int want_idx = im->node->n_output > 1 && im->node->output[1][0];
    char args[96];
    snprintf(args, sizeof args, "{\"dim\": %lld, \"descending\": %s, \"stable\": true}",
             (long long)axis, largest ? "true" : "false");
    imp_val *order = imp_tmp(im, FE_I64, x->rank, x->shape), *idx, *in[2];
    int lg = 1;
    while ((1LL << lg) < len)
        lg++;
    if (!order || aten_node(im, "argsort.stable", args, &x, 1, order, n * lg))
        return im->err->code;
    /* the first k indices: the ONNX output 1 when named */
    idx = want_idx ? imp_out(im, 1, FE_I64, x->rank, shape) : imp_tmp(im, FE_I64, x->rank, shape);
    in[0] = order;
    int32_t nd = idx ? imp_emit(im, "slice", in, 1, idx) : -1;
    if (nd < 0 || fe_builder_attr_int(im->b, nd, "axis", axis) ||
        fe_builder_attr_int(im->b, nd, "start", 0) || fe_builder_attr_int(im->b, nd, "end", k))
        return im->err->code ? im->err->code : imp_sync(im);
    imp_val *vals = imp_out(im, 0, x->dtype, x->rank, shape);
    in[0] = x, in[1] = idx;
    snprintf(args, sizeof args, "{\"dim\": %lld}", (long long)axis);
    return vals ? aten_node(im, "gather.default", args, in, 2, vals, imp_numel(shape, x->rank))
                : im->err->code;
}
