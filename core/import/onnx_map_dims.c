/* onnx_map_dims.c: the ONNX operators that compute with symbolic dims
 * (docs/import.md#symbolic-dims), onto arange, expand, trilu and compare.
 *
 * An export with dynamic_axes builds positions and causal masks from the
 * sequence length: Range(0, S, 1), ConstantOfShape([S, S]) -> Trilu,
 * comparisons of positions. Folding would fix them at one value of S
 * (onnx_fold.c leaves them here instead); mapped, they keep S, so that
 * `--dim S=V` moves them with every shape. The logical ops on bools (Not,
 * And, Or, Xor: masks combined, Swin's `Not` of its attention mask) map
 * here too, onto compare, minimum and maximum.
 */
#include <string.h>

#include "onnx_map.h"

/* Range(0, S, 1) on a dim name: arange with end S. */
static int map_range(imp *im)
{
    imp_val *lim = imp_in(im, 1);
    if (!imp_sym_scalar(lim))
        return IMP_NO_MAPPING;
    int64_t end = lim->iv[0];
    int dtype = imp_in(im, 0)->dtype;
    imp_val *o = imp_out(im, 0, dtype, 1, &end);
    int32_t nd = o ? imp_emit(im, "arange", NULL, 0, o) : -1;
    if (nd < 0 || fe_builder_attr_ints(im->b, nd, "end", &end, 1) ||
        (dtype != FE_I64 && fe_builder_attr_str(im->b, nd, "dtype", fe_dtype_name(dtype))))
        return im->err->code ? im->err->code : imp_sync(im);
    return FE_OK;
}

/* ConstantOfShape of a shape naming dims: its one value as a weight of
 * ones' shape, expanded to the shape. */
static int map_constant_of_shape(imp *im)
{
    int64_t spec[FE_MAX_RANK], ones[FE_MAX_RANK];
    int r = imp_const_ints(imp_in(im, 0), spec, FE_MAX_RANK);
    if (r < 1)
        return IMP_NO_MAPPING;
    if (imp_check_shape(im, spec, r, "the shape input"))
        return im->err->code;
    const Onnx__AttributeProto *a = imp_attr(im->node, "value");
    imp_val fill = {.is_const = 1, .dtype = FE_F32, .numel = 1};
    double zero = 0;
    if (a && a->t) {
        if (imp_const_from_proto(im, &fill, a->t, "value"))
            return im->err->code;
    } else {
        fill.fv = &zero;
    }
    if (fill.numel != 1 || (!fill.iv && !fill.fv))
        return imp_fail(im, "attribute 'value' holds %lld elements; it must hold one",
                        (long long)fill.numel);
    for (int d = 0; d < r; d++)
        ones[d] = 1;
    imp_val *c = imp_tmp(im, fill.dtype, r, ones);
    if (!c)
        return im->err->code;
    c->tensor = -1;   /* a constant: a weight once read */
    im->taken[c->name] &= (uint8_t)~IMP_TENSOR;
    if (!imp_const_new(im, c, fill.dtype, r, ones))
        return im->err->code;
    if (c->iv)
        c->iv[0] = imp_ci(&fill, 0);
    else
        c->fv[0] = imp_cf(&fill, 0);
    int32_t nd;
    imp_val *o = imp_op1(im, "expand", c, fill.dtype, r, spec, 0, &nd);
    return o && !fe_builder_attr_ints(im->b, nd, "shape", spec, r) ? FE_OK : im->err->code;
}

/* Trilu of a tensor (a causal mask of a symbolic size): trilu. */
static int map_trilu(imp *im)
{
    imp_val *x = imp_in(im, 0), *kv = imp_opt(im, 1);
    double k = 0;
    if (kv && !imp_scalar(kv, &k))
        return imp_custom(im, "a diagonal that is not a constant");
    if (x->rank < 2)
        return imp_fail(im, "input has rank %d; Trilu takes a matrix (rank >= 2)", x->rank);
    int32_t nd;
    int upper = (int)imp_attr_int(im->node, "upper", 1);
    imp_val *o = imp_op1(im, "trilu", x, x->dtype, x->rank, x->shape, 0, &nd);
    if (!o || (!upper && fe_builder_attr_bool(im->b, nd, "upper", 0)) ||
        (k != 0 && fe_builder_attr_int(im->b, nd, "diagonal", imp_f2i(k))))
        return im->err->code;
    return FE_OK;
}

/* Equal, Less, Greater, LessOrEqual, GreaterOrEqual: compare, with a
 * one-element constant side as the scalar (mirrored when it comes first). */
static int map_compare(imp *im, const char *cmp)
{
    static const char *const ops[] = {"eq", "lt", "gt", "le", "ge"};
    static const char *const mirror[] = {"eq", "gt", "lt", "ge", "le"};
    int c = 0;
    while (strcmp(ops[c], cmp))
        c++;
    imp_val *a = imp_in(im, 0), *b = imp_in(im, 1);
    double s;
    imp_val *x = NULL, *in[2] = {a, b};
    int nin = 2;
    const char *use = cmp;
    if (imp_scalar(b, &s) && b->rank <= a->rank && !a->is_const)
        x = a;
    else if (imp_scalar(a, &s) && a->rank <= b->rank && !b->is_const)
        x = b, use = mirror[c];
    int rank;
    int64_t shape[FE_MAX_RANK];
    if (x) {
        rank = x->rank;
        memcpy(shape, x->shape, sizeof shape);
        in[0] = x;
        nin = 1;
    } else if (imp_broadcast(im, a, b, &rank, shape)) {
        return im->err->code;
    }
    imp_val *o = imp_out(im, 0, FE_BOOL, rank, shape);
    int32_t nd = o ? imp_emit(im, "compare", in, nin, o) : -1;
    if (nd < 0 || fe_builder_attr_str(im->b, nd, "cmp", use))
        return im->err->code ? im->err->code : imp_sync(im);
    if (x) {
        const imp_val *sv = x == a ? b : a;
        int isint = sv->iv != NULL && !(x->dtype == FE_F32 || x->dtype == FE_F16 ||
                                        x->dtype == FE_BF16);
        if (isint ? fe_builder_attr_int(im->b, nd, "scalar", sv->iv[0])
                  : fe_builder_attr_float(im->b, nd, "scalar", s))
            return imp_sync(im);
    }
    return FE_OK;
}

/* Not, And, Or, Xor of bool tensors: a bool is 0 or 1, so not is x == 0,
 * and the minimum, or the maximum, xor a != b (compare and the broadcast
 * ops read bools as numbers and write a bool result as nonzero). */
static int map_logical(imp *im, const char *op)
{
    imp_val *a = imp_in(im, 0), *b = op[0] == 'N' ? NULL : imp_in(im, 1);
    if (a->dtype != FE_BOOL || (b && b->dtype != FE_BOOL))
        return imp_fail(im, "takes bool tensors, has %s%s%s (not a valid ONNX model: re-export "
                        "it)", fe_dtype_name(a->dtype), b ? " and " : "",
                        b ? fe_dtype_name(b->dtype) : "");
    int32_t nd;
    if (!b) {
        imp_val *o = imp_op1(im, "compare", a, FE_BOOL, a->rank, a->shape, 0, &nd);
        if (!o || fe_builder_attr_str(im->b, nd, "cmp", "eq") ||
            fe_builder_attr_int(im->b, nd, "scalar", 0))
            return im->err->code ? im->err->code : imp_sync(im);
        return FE_OK;
    }
    int rank;
    int64_t shape[FE_MAX_RANK];
    if (imp_broadcast(im, a, b, &rank, shape))
        return im->err->code;
    imp_val *o = imp_out(im, 0, FE_BOOL, rank, shape), *in[2] = {a, b};
    const char *ours = op[0] == 'A' ? "minimum" : op[0] == 'O' ? "maximum" : "compare";
    nd = o ? imp_emit(im, ours, in, 2, o) : -1;
    if (nd < 0 || (op[0] == 'X' && fe_builder_attr_str(im->b, nd, "cmp", "ne")))
        return im->err->code ? im->err->code : imp_sync(im);
    return FE_OK;
}

int imp_map_dims(imp *im)
{
    const char *op = im->node->op_type;
    if (!strcmp(op, "Range"))
        return map_range(im);
    if (!strcmp(op, "ConstantOfShape"))
        return map_constant_of_shape(im);
    if (!strcmp(op, "Trilu"))
        return map_trilu(im);
    if (!strcmp(op, "Equal"))
        return map_compare(im, "eq");
    if (!strcmp(op, "Less"))
        return map_compare(im, "lt");
    if (!strcmp(op, "Greater"))
        return map_compare(im, "gt");
    if (!strcmp(op, "LessOrEqual"))
        return map_compare(im, "le");
    if (!strcmp(op, "GreaterOrEqual"))
        return map_compare(im, "ge");
    if (!strcmp(op, "Not") || !strcmp(op, "And") || !strcmp(op, "Or") || !strcmp(op, "Xor"))
        return map_logical(im, op);
    return IMP_NO_MAPPING;
}
