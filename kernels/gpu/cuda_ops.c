/* cuda_ops.c: data-movement kernels for single ops (cuda_ops.h). Each is
 * a thread per output element in a grid-stride loop, copying elements as
 * unsigned integers of the dtype's size, so one kernel serves every dtype;
 * and all_reduce, which on one host only scales its input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "cuda_lower.h"
#include "cuda_ops.h"
#include "injective.h"
#include "node.h"
#include "ops.h"

static void loop_head(FILE *f, int64_t total)
{
    fprintf(f, "  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < %lldLL;"
               " e += (long long)gridDim.x * blockDim.x) {\n", (long long)total);
}

/* out = concat(inputs, axis): each output element from the operand whose
 * part of the axis holds it. */
static int concat_src(FILE *f, const fe_graph *g, const fe_node *n, int64_t *total, fe_error *err)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *ys = fe_tensor_shape(g, y);
    int axis = fe_axis(fe_node_attr_int(g, n, "axis", 0), y->rank);
    if (axis < 0)
        return fe_error_set(err, FE_EINPUT, "node '%s' (concat): axis out of range", fe_node_name(g, n));
    int64_t post = 1;
    for (int i = axis + 1; i < y->rank; i++)
        post *= ys[i];
    const char *u = fe_cuda_utype(fe_dtype_size(y->dtype));
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(");
    for (int k = 0; k < n->nin; k++) {
        if (fe_graph_tensor(g, fe_node_input(g, n, k))->dtype != y->dtype)
            return fe_error_set(err, FE_EINPUT, "node '%s' (concat): operands of another dtype",
                                fe_node_name(g, n));
        fprintf(f, "const %s *__restrict__ i%d, ", u, k);
    }
    fprintf(f, "%s *__restrict__ out, int *fault)\n{\n", u);
    *total = y->numel;
    loop_head(f, y->numel);
    fprintf(f, "    const long long o = e / %lldLL, r = e %% %lldLL, p = r / %lldLL, q = r %% %lldLL;\n",
            (long long)(ys[axis] * post), (long long)(ys[axis] * post), (long long)post,
            (long long)post);
    int64_t off = 0;
    for (int k = 0; k < n->nin; k++) {
        int64_t s = fe_tensor_shape(g, fe_graph_tensor(g, fe_node_input(g, n, k)))[axis];
        if (s == 0)
            continue;
        fprintf(f, "    %sif (p < %lldLL) out[e] = i%d[o * %lldLL + (p - %lldLL) * %lldLL + q];\n",
                off ? "else " : "", (long long)(off + s), k, (long long)(s * post), (long long)off,
                (long long)post);
        off += s;
    }
    fprintf(f, "  }\n}\n");
    return 0;
}

/* out = data taken at idx along axis (embedding: axis 0), negative
 * indices counting from the end, as the CPU's fe_k_gather does. */
static int gather_src(FILE *f, const fe_graph *g, const fe_node *n, int64_t *total, fe_error *err)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *ix = fe_graph_tensor(g, fe_node_input(g, n, 1));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *xs = fe_tensor_shape(g, x);
    int axis = n->op == FE_OP_EMBEDDING ? 0 : fe_axis(fe_node_attr_int(g, n, "axis", 0), x->rank);
    if (axis < 0 || x->rank == 0)
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s): axis out of range", fe_node_name(g, n),
                            fe_node_op_name(n));
    if (ix->dtype != FE_I64 && ix->dtype != FE_I32)
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s): indices of dtype %s have no CUDA kernel",
                            fe_node_name(g, n), fe_node_op_name(n), fe_dtype_name(ix->dtype));
    int64_t B = 1, N = xs[axis], I = ix->numel;
    for (int i = axis + 1; i < x->rank; i++)
        B *= xs[i];
    const char *u = fe_cuda_utype(fe_dtype_size(x->dtype));
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ data, "
               "const %s *__restrict__ idx, %s *__restrict__ out, int *fault)\n{\n",
            u, ix->dtype == FE_I64 ? "long long" : "int", u);
    *total = y->numel;
    loop_head(f, y->numel);
    fprintf(f, "    const long long t = e / %lldLL, b = e %% %lldLL, a = t / %lldLL, i = t %% %lldLL;\n"
               "    long long v = (long long)idx[i];\n"
               "    if (v < 0) v += %lldLL;\n"
               "    if (v < 0 || v >= %lldLL) { *fault = 1; out[e] = 0; }\n"
               "    else out[e] = data[(a * %lldLL + v) * %lldLL + b];\n  }\n}\n",
            (long long)B, (long long)B, (long long)(I ? I : 1), (long long)(I ? I : 1), (long long)N,
            (long long)N, (long long)N, (long long)B);
    return 0;
}

/* out = pad(x): each output element's source along every axis as the
 * CPU's pad_src maps it (constant: none, replicate: the edge, reflect:
 * mirrored without repeating the edge), or the fill value's bits. */
static int pad_src(FILE *f, const fe_graph *g, const fe_node *n, int64_t *total, fe_error *err)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *xs = fe_tensor_shape(g, x), *ys = fe_tensor_shape(g, y);
    int64_t pads[2 * FE_MAX_RANK + 1], before[FE_MAX_RANK] = {0}, after[FE_MAX_RANK] = {0};
    int64_t st[FE_MAX_RANK];
    int k = fe_node_attr_ints(g, n, "pads", pads, 2 * FE_MAX_RANK + 1), rank = x->rank;
    const char *mode = fe_node_attr_str(g, n, "mode", "constant");
    int m = !strcmp(mode, "constant") ? FE_K_PAD_CONSTANT : !strcmp(mode, "reflect") ? FE_K_PAD_REFLECT
          : !strcmp(mode, "replicate") ? FE_K_PAD_REPLICATE : -1;
    /* what fe_k_pad refuses runs on the host, which says why */
    if (k < 0 || k % 2 || k / 2 > rank || m < 0 || x->dtype != y->dtype || y->rank != rank)
        return fe_error_set(err, FE_EINPUT, "pads or mode the CPU kernel refuses too");
    for (int i = 0; i < k / 2; i++) {
        before[rank - 1 - i] = pads[2 * i];
        after[rank - 1 - i] = pads[2 * i + 1];
    }
    for (int i = 0; i < rank; i++)
        if (xs[i] + before[i] + after[i] != ys[i] || (m == FE_K_PAD_REFLECT && (before[i] > 0 ||
            after[i] > 0) && (before[i] >= xs[i] || after[i] >= xs[i])))
            return fe_error_set(err, FE_EINPUT, "pads the CPU kernel refuses too");
    int es = fe_dtype_size(x->dtype);
    unsigned char fill[8];
    fe_k_pad_fill(x->dtype, fe_node_attr_float(g, n, "value", 0.0), fill);
    unsigned long long bits = 0;
    for (int b = es - 1; b >= 0; b--)   /* little-endian, as the card */
        bits = bits << 8 | fill[b];
    fe_k_strides(xs, rank, st);
    const char *u = fe_cuda_utype(es);
    fe_cuda_index_type(f, x->numel > y->numel ? x->numel : y->numel);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "%s *__restrict__ out, int *fault)\n{\n", u, u);
    *total = y->numel;
    fe_cuda_loop(f, y->numel);
    fprintf(f, "    IX r = e, src = 0, s;\n    bool in = true;\n");
    for (int i = rank - 1; i >= 0; i--) {
        long long Y = (long long)ys[i], X = (long long)xs[i], B = (long long)before[i];
        if (i > 0)
            fprintf(f, "    s = r %% %lld - %lld; r /= %lld;\n", Y, B, Y);
        else
            fprintf(f, "    s = r - %lld;\n", B);
        if (m == FE_K_PAD_CONSTANT || X <= 0)
            fprintf(f, "    if (s < 0 || s >= %lld) in = false;\n", X);
        else if (m == FE_K_PAD_REPLICATE)
            fprintf(f, "    s = s < 0 ? 0 : s >= %lld ? %lld : s;\n", X, X - 1);
        else if (X == 1)
            fprintf(f, "    s = 0;\n");
        else
            fprintf(f, "    s %%= %lld; if (s < 0) s += %lld; if (s >= %lld) s = %lld - s;\n",
                    2 * (X - 1), 2 * (X - 1), X, 2 * (X - 1));
        if (st[i] && X > 1)
            fprintf(f, "    src += s * %lld;\n", (long long)st[i]);
    }
    fprintf(f, "    out[e] = in ? x[src] : (%s)0x%llxULL;\n  }\n  (void)fault;\n}\n", u, bits);
    return 0;
}

/* all_reduce on one host: every rank holds x, so a sum is x * world_size
 * and avg / mean / max / min are x, in float as fe_k_scale multiplies
 * (an f32 scalar). Integers keep the CPU's i64 arithmetic: the host. */
static int allreduce_src(FILE *f, const fe_graph *g, const fe_node *n, int64_t *total, fe_error *err)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int64_t ws = fe_node_attr_int(g, n, "world_size", -1);
    const char *red = fe_node_attr_str(g, n, "reduce", "sum");
    int sum = !strcmp(red, "sum");
    if (ws < 1 || (!sum && strcmp(red, "avg") && strcmp(red, "mean") && strcmp(red, "max") &&
                   strcmp(red, "min")))
        return fe_error_set(err, FE_EINPUT, "world_size or reduce the CPU kernel refuses too");
    if (fe_k_dtype_is_int(y->dtype) || x->numel != y->numel)
        return fe_error_set(err, FE_EINPUT, "all_reduce into %s: integer arithmetic",
                            fe_dtype_name(y->dtype));
    union { float f; unsigned u; } sc = {sum ? (float)ws : 1.0f};
    fputs(fe_cuda_prelude, f);
    fe_cuda_index_type(f, y->numel);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "%s *__restrict__ y, int *fault)\n{\n", fe_cuda_ctype(x->dtype), fe_cuda_ctype(y->dtype));
    *total = y->numel;
    fe_cuda_loop(f, y->numel);
    fprintf(f, "    const float v = ");
    fe_cuda_load_expr(f, x->dtype, "x", "e");
    fprintf(f, " * __uint_as_float(0x%08xu);   /* %s over %lld ranks */\n    ", sc.u, red, (long long)ws);
    fe_cuda_store_stmt(f, y->dtype, "y", "e", "v");
    fprintf(f, "\n  }\n  (void)fault;\n}\n");
    return 0;
}

char *fe_cuda_src_node(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *err)
{
    char *s = NULL;
    size_t len = 0;
    int64_t total = 0;
    int rc;
    if (n->op != FE_OP_CONCAT && n->op != FE_OP_GATHER && n->op != FE_OP_EMBEDDING &&
        n->op != FE_OP_PAD && n->op != FE_OP_ALL_REDUCE)
        return fe_error_set(err, FE_EINPUT, "no CUDA kernel for %s yet", fe_node_op_name(n)), NULL;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: %s '%s'\n", fe_node_op_name(n), fe_node_name(g, n));
    rc = n->op == FE_OP_CONCAT ? concat_src(f, g, n, &total, err)
       : n->op == FE_OP_PAD ? pad_src(f, g, n, &total, err)
       : n->op == FE_OP_ALL_REDUCE ? allreduce_src(f, g, n, &total, err)
       : gather_src(f, g, n, &total, err);
    fclose(f);
    if (rc) {
        free(s);
        return NULL;
    }
    fe_cuda_grid(total, sms, shape);
    return s;
}
