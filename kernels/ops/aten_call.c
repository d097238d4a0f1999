/* aten_call.c: the checks and error wording shared by the aten kernels
 * (see aten_call.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "aten_call.h"

const char *fe_k_acall_bare(const char *aten)
{
    if (!strncmp(aten, "aten::", 6))
        return aten + 6;
    if (!strncmp(aten, "aten.", 5))
        return aten + 5;
    return aten;
}

int fe_k_acall_fail(const fe_k_acall *c, fe_error *err, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fe_error_set(err, FE_EINPUT, "node '%s' (aten '%s'): %s", fe_node_name(c->g, c->n),
                        c->aten, what);
}

const char *fe_k_acall_shape(const fe_k_tensor *t, char *buf, size_t size)
{
    return fe_shape_str(t->shape, t->rank, buf, size);
}

int fe_k_acall_same_shape(const fe_k_tensor *t, int rank, const int64_t *shape)
{
    if (t->rank != rank)
        return 0;
    for (int i = 0; i < rank; i++)
        if (t->shape[i] != shape[i])
            return 0;
    return 1;
}

int fe_k_acall_out_mismatch(const fe_k_acall *c, fe_error *err, int rank, const int64_t *shape)
{
    char a[128], b[128];
    return fe_k_acall_fail(c, err, "the op produces shape %s but the graph's output is %s",
                           fe_shape_str(shape, rank, a, sizeof a),
                           fe_k_acall_shape(c->out, b, sizeof b));
}

int fe_k_acall_out_is(const fe_k_acall *c, fe_error *err, int rank, const int64_t *shape,
                      int dtype)
{
    if (!fe_k_acall_same_shape(c->out, rank, shape))
        return fe_k_acall_out_mismatch(c, err, rank, shape);
    if (c->out->dtype != dtype)
        return fe_k_acall_fail(c, err, "the graph's output is %s but the op gives %s",
                               fe_dtype_name(c->out->dtype), fe_dtype_name(dtype));
    return FE_OK;
}

json_t *fe_k_acall_arg(const fe_k_acall *c, const char *key)
{
    json_t *v = json_object_get(c->args, key);
    return v && !json_is_null(v) ? v : NULL;
}

int fe_k_acall_int_arg(const fe_k_acall *c, const char *key, int64_t dflt, int64_t *v,
                       fe_error *err)
{
    json_t *j = fe_k_acall_arg(c, key);
    if (!j) {
        *v = dflt;
        return FE_OK;
    }
    if (!json_is_integer(j))
        return fe_k_acall_fail(c, err, "args.%s must be an integer", key);
    *v = (int64_t)json_integer_value(j);
    return FE_OK;
}
