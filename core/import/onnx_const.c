/* onnx_const.c: constants of an ONNX graph: TensorProtos decoded into
 * values the folder computes with (onnx_fold.c), folded values encoded
 * back as weights, and the element accessors both use.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "onnx_imp.h"

int64_t imp_numel(const int64_t *shape, int rank)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (FE_IS_SYM(shape[i]))
            return -1;
        if (__builtin_mul_overflow(n, shape[i], &n))
            return INT64_MAX;   /* too many to fold or hold; the builder says so */
    }
    return n;
}

int64_t imp_f2i(double d)
{
    if (isnan(d))
        return 0;
    if (d <= (double)IMP_INT_MIN)
        return IMP_INT_MIN;
    if (d >= 0x1p63)
        return INT64_MAX;
    return (int64_t)d;
}

int64_t imp_int(imp *im, int64_t v)
{
    if (v >= IMP_INT_MIN)
        return v;
    if (!im->clamped_noted) {
        im->clamped_noted = 1;
        imp_note(im, "note: %s: integers below -2^63 + 2^31 (such as INT64_MIN, a slice's "
                 "\"from the start\") are read as -2^63 + 2^31, where the importer keeps "
                 "symbolic dims", im->path);
    }
    return IMP_INT_MIN;
}

int imp_is_int(int dtype)
{
    return dtype == FE_I64 || dtype == FE_I32 || dtype == FE_I8 || dtype == FE_BOOL;
}

double imp_cf(const imp_val *v, int64_t i)
{
    return v->fv ? v->fv[i] : (double)v->iv[i];
}

int64_t imp_ci(const imp_val *v, int64_t i)
{
    return v->iv ? v->iv[i] : imp_f2i(v->fv[i]);
}

int imp_const_ints(const imp_val *v, int64_t *out, int max)
{
    if (!v || !v->is_const || (!v->iv && !v->fv) || v->numel > max)
        return -1;
    for (int64_t i = 0; i < v->numel; i++)
        out[i] = imp_ci(v, i);
    return (int)v->numel;
}

imp_val *imp_const_new(imp *im, imp_val *v, int dtype, int rank, const int64_t *shape)
{
    v->is_const = 1;
    v->dtype = dtype;
    v->rank = rank;
    if (rank)
        memmove(v->shape, shape, (size_t)rank * sizeof *shape);
    v->numel = imp_numel(shape, rank);
    v->data = NULL;
    v->iv = NULL;
    v->fv = NULL;
    if (imp_is_int(dtype))
        v->iv = imp_alloc(im, (size_t)(v->numel ? v->numel : 1) * sizeof *v->iv);
    else
        v->fv = imp_alloc(im, (size_t)(v->numel ? v->numel : 1) * sizeof *v->fv);
    return v->iv || v->fv ? v : NULL;
}

/* Elements of a decoded constant in dtype's layout, for a weight. */
static int encode(imp *im, imp_val *v)
{
    int size = fe_dtype_size(v->dtype);
    uint8_t *p = imp_alloc(im, (size_t)(v->numel * size));
    if (!p)
        return im->err->code;
    for (int64_t i = 0; i < v->numel; i++) {
        if (v->iv && FE_IS_SYM(v->iv[i]))
            return imp_fail(im, "a value holding symbolic dim '%s' is read as a tensor; only "
                            "reshape and expand shapes can take a dim name (fix the dim when "
                            "exporting)", imp_dim_name(im, v->iv[i]));
        double d = imp_cf(v, i);
        int64_t n = imp_ci(v, i);
        switch (v->dtype) {
        case FE_F32: { float f = (float)d; memcpy(p + 4 * i, &f, 4); break; }
        case FE_F16: { uint16_t h = fe_k_f32_to_f16((float)d); memcpy(p + 2 * i, &h, 2); break; }
        case FE_BF16: { uint16_t h = fe_k_f32_to_bf16((float)d); memcpy(p + 2 * i, &h, 2); break; }
        case FE_I64: memcpy(p + 8 * i, &n, 8); break;
        case FE_I32: { int32_t x = (int32_t)n; memcpy(p + 4 * i, &x, 4); break; }
        case FE_I8: p[i] = (uint8_t)(int8_t)n; break;
        default: p[i] = n != 0; break;
        }
    }
    v->data = p;
    return FE_OK;
}

/* Decode v's data into iv/fv when it is small. */
static int decode(imp *im, imp_val *v)
{
    if (v->numel > IMP_FOLD_MAX || v->iv || v->fv)
        return FE_OK;
    const uint8_t *p = v->data;
    if (imp_is_int(v->dtype)) {
        if (!(v->iv = imp_alloc(im, (size_t)(v->numel + 1) * sizeof *v->iv)))
            return im->err->code;
    } else if (!(v->fv = imp_alloc(im, (size_t)(v->numel + 1) * sizeof *v->fv))) {
        return im->err->code;
    }
    for (int64_t i = 0; i < v->numel; i++) {
        switch (v->dtype) {
        case FE_F32: { float f; memcpy(&f, p + 4 * i, 4); v->fv[i] = f; break; }
        case FE_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); v->fv[i] = fe_k_f16_to_f32(h); break; }
        case FE_BF16: {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            uint32_t u = (uint32_t)h << 16;
            float f;
            memcpy(&f, &u, 4);
            v->fv[i] = f;
            break;
        }
        case FE_I64: memcpy(&v->iv[i], p + 8 * i, 8); v->iv[i] = imp_int(im, v->iv[i]); break;
        case FE_I32: { int32_t x; memcpy(&x, p + 4 * i, 4); v->iv[i] = x; break; }
        case FE_I8: v->iv[i] = (int8_t)p[i]; break;
        default: v->iv[i] = p[i] != 0; break;
        }
    }
    return FE_OK;
}

int imp_const_encode(imp *im, imp_val *v)
{
    return v->data ? FE_OK : encode(im, v);
}

int imp_const_from_proto(imp *im, imp_val *v, const Onnx__TensorProto *t, const char *what)
{
    const char *name = t->name && t->name[0] ? t->name : "(unnamed)";
    int f64 = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    int dtype = f64 ? FE_F32 : fe_onnx_dtype(t->data_type);
    if (dtype < 0)
        return imp_fail(im, "%s '%s' has type %s, which is not supported (f32, f16, bf16, i64, "
                        "i32, i8, bool; f64 is converted to f32)", what, name,
                        fe_onnx_dtype_name(t->data_type));
    if (t->n_dims > FE_MAX_RANK)
        return imp_fail(im, "%s '%s' has rank %zu (at most %d)", what, name, t->n_dims,
                        FE_MAX_RANK);
    v->is_const = 1;
    v->dtype = dtype;
    v->rank = (int)t->n_dims;
    v->numel = 1;
    for (int i = 0; i < v->rank; i++) {
        if (t->dims[i] < 0 || (t->dims[i] && v->numel > INT64_MAX / 16 / t->dims[i]))
            return imp_fail(im, "%s '%s' has a bad shape (dim %d is %lld)", what, name, i,
                            (long long)t->dims[i]);
        v->shape[i] = t->dims[i];
        v->numel *= t->dims[i];
    }
    int esize = f64 ? 8 : fe_dtype_size(dtype);
    int64_t n = v->numel;
    if (t->has_raw_data) {
        if ((int64_t)t->raw_data.len != n * esize)
            return imp_fail(im, "%s '%s' holds %zu bytes; its shape needs %lld", what, name,
                            t->raw_data.len, (long long)(n * esize));
        if (!f64) {
            v->data = t->raw_data.data;
            return decode(im, v);
        }
    }
    size_t have = f64 ? (t->has_raw_data ? (size_t)n : t->n_double_data)
                : dtype == FE_F32 ? t->n_float_data : dtype == FE_I64 ? t->n_int64_data
                : t->n_int32_data;
    if ((int64_t)have != n)
        return imp_fail(im, "%s '%s' holds %zu values; its shape needs %lld", what, name, have,
                        (long long)n);
    if (f64)
        imp_note(im, "note: %s '%s' is f64; converted to f32", what, name);
    /* Typed fields or f64: into dtype's layout, then decoded as raw data is. */
    uint8_t *p = imp_alloc(im, (size_t)(n * fe_dtype_size(dtype)));
    if (!p)
        return im->err->code;
    for (int64_t i = 0; i < n; i++) {
        if (f64) {
            double d;
            if (t->has_raw_data)
                memcpy(&d, t->raw_data.data + 8 * i, 8);
            else
                d = t->double_data[i];
            ((float *)p)[i] = (float)d;
        } else if (dtype == FE_F32) {
            ((float *)p)[i] = t->float_data[i];
        } else if (dtype == FE_I64) {
            ((int64_t *)p)[i] = t->int64_data[i];
        } else {   /* i32, and f16/bf16 bits, i8, bool: one int32 each (little-endian) */
            int sz = fe_dtype_size(dtype);
            int32_t x = t->int32_data[i];
            memcpy(p + sz * i, &x, (size_t)sz);
        }
    }
    v->data = p;
    return decode(im, v);
}
