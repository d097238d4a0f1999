/* cuda_ops.c: data-movement kernels for single ops (cuda_ops.h). Each is
 * a thread per output element in a grid-stride loop, copying elements as
 * unsigned integers of the dtype's size, so one kernel serves every dtype.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_ops.h"
#include "ops.h"

static const char *utype(int bytes)
{
    return bytes == 1 ? "unsigned char" : bytes == 2 ? "unsigned short" : bytes == 4 ? "unsigned"
                                                                                 : "unsigned long long";
}

static void launch(int64_t total, int sms, fe_cuda_shape *sh)
{
    int64_t g = (total + 255) / 256, cap = (int64_t)(sms > 0 ? sms : 1) * 128;
    memset(sh, 0, sizeof *sh);
    sh->kind = FE_CUDA_ELEM;
    sh->threads = 256;
    sh->grid = (unsigned)(g < 1 ? 1 : g < cap ? g : cap);
    sh->per_thread = 1;
}

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
    const char *u = utype(fe_dtype_size(y->dtype));
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
    const char *u = utype(fe_dtype_size(x->dtype));
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

char *fe_cuda_src_node(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *err)
{
    char *s = NULL;
    size_t len = 0;
    int64_t total = 0;
    int rc;
    if (n->op != FE_OP_CONCAT && n->op != FE_OP_GATHER && n->op != FE_OP_EMBEDDING)
        return fe_error_set(err, FE_EINPUT, "no CUDA kernel for %s yet", fe_node_op_name(n)), NULL;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: %s '%s'\n", fe_node_op_name(n), fe_node_name(g, n));
    rc = n->op == FE_OP_CONCAT ? concat_src(f, g, n, &total, err) : gather_src(f, g, n, &total, err);
    fclose(f);
    if (rc) {
        free(s);
        return NULL;
    }
    launch(total, sms, shape);
    return s;
}
