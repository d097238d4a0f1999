/* cuda_softmax.c: softmax kernels outside the fused analysis
 * (cuda_softmax.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_lower.h"
#include "cuda_softmax.h"
#include "ops.h"

static char *finish(FILE *f, char **s, fe_error *why)
{
    if (fclose(f)) {
        free(*s);
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    }
    return *s;
}

/* ---- over an axis ---- */

char *fe_cuda_softmax_axis_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                               fe_error *why)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *xs = fe_tensor_shape(g, x);
    int axis = fe_axis(fe_node_attr_int(g, n, "axis", -1), x->rank), lg = n->op == FE_OP_LOG_SOFTMAX;
    if ((n->op != FE_OP_SOFTMAX && !lg) || axis < 0 || y->numel != x->numel)
        return fe_error_set(why, FE_EINPUT, "no CUDA kernel for %s over that axis",
                            fe_node_op_name(n)), NULL;
    int64_t A = 1, R = xs[axis], B = 1;
    for (int i = 0; i < axis; i++)
        A *= xs[i];
    for (int i = axis + 1; i < x->rank; i++)
        B *= xs[i];
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: %s '%s' over axis %d: a thread per (outer, inner) pair\n",
            fe_node_op_name(n), fe_node_name(g, n), axis);
    fputs(fe_cuda_prelude, f);
    fe_cuda_index_type(f, x->numel);
    fprintf(f, "#define X_(r) ");
    fe_cuda_load_expr(f, x->dtype, "x", "b_ + (IX)(r) * B_");
    fprintf(f, "\n#define B_ ((IX)%lld)\n"
               "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "%s *__restrict__ y, int *fault)\n{\n", (long long)B, fe_cuda_ctype(x->dtype),
            fe_cuda_ctype(y->dtype));
    fe_cuda_loop(f, A * B);
    fprintf(f, "    const IX b_ = e / B_ * %lld + e %% B_;\n"
               "    float m = -__int_as_float(0x7f800000), z = 0.0f;\n"
               "    for (IX r = 0; r < %lld; r++) m = mxn(m, X_(r));\n"
               "    const bool nan_ = m != m || m == -__int_as_float(0x7f800000);\n"
               "    for (IX r = 0; r < %lld; r++) z += expf(X_(r) - m);\n"
               "    const float q = %s;\n"
               "    for (IX r = 0; r < %lld; r++) {\n"
               "      const float v = nan_ ? __int_as_float(0x7fc00000) : %s;\n      ",
            (long long)(R * B), (long long)R, (long long)R, lg ? "logf(z)" : "1.0f / z", (long long)R,
            lg ? "(X_(r) - m) - q" : "expf(X_(r) - m) * q");
    fe_cuda_store_stmt(f, y->dtype, "y", "b_ + r * B_", "v");
    fprintf(f, "\n    }\n  }\n  (void)fault;\n}\n");
    fe_cuda_grid(A * B, sms, shape);
    return finish(f, &s, why);
}

/* ---- attention scores ---- */

static int pow2_at_least(int64_t v)
{
    int p = 1;
    while (p < v && p < (1 << 20))
        p <<= 1;
    return p;
}

/* The mask's offset of row index `var` (batch * L + query), over the
 * row axes' shape and strides, as fe_k_offset computes it. */
static void mask_row(FILE *f, const fe_cuda_scores *sc, const char *var)
{
    int64_t inner = 1;
    fprintf(f, "(0");
    for (int a = sc->mrank - 1; a >= 0; a--) {
        if (sc->mst[a] && sc->mshape[a] != 1)
            fprintf(f, " + (%s / %lld %% %lld) * %lld", var, (long long)inner, (long long)sc->mshape[a],
                    (long long)sc->mst[a]);
        inner *= sc->mshape[a];
    }
    fprintf(f, ")");
}

/* Group reductions over G threads: a warp's shuffles, then for a block
 * one shared-memory step across its warps. */
static void reductions(FILE *f, int G)
{
    static const char *kinds[2][2] = {{"sum", "a + b"}, {"max", "mxn(a, b)"}};
    for (int r = 0; r < 2; r++) {
        fprintf(f, "static __device__ __forceinline__ float grp_%s(float v) {\n"
                   "  for (int o = 16; o > 0; o >>= 1) { const float a = v, b = __shfl_xor_sync(0xffffffffu, v, o); v = %s; }\n",
                kinds[r][0], kinds[r][1]);
        if (G > 32)
            fprintf(f, "  __shared__ float red_[32];\n"
                       "  __syncthreads();\n"
                       "  if ((threadIdx.x & 31) == 0) red_[threadIdx.x >> 5] = v;\n"
                       "  __syncthreads();\n"
                       "  v = red_[0];\n"
                       "  for (int w = 1; w < %d; w++) { const float a = v, b = red_[w]; v = %s; }\n",
                    G / 32, kinds[r][1]);
        fprintf(f, "  return v;\n}\n");
    }
}

char *fe_cuda_scores_src(const fe_cuda_scores *sc, const char *who, int sms, fe_cuda_shape *shape,
                         fe_error *why)
{
    int64_t S = sc->S;
    int G = S <= 1024 ? 32 : pow2_at_least((S + 15) / 16);
    G = G > 1024 ? 1024 : G;
    int64_t K = (S + G - 1) / G;
    int regs = K <= 32;        /* the row in registers, else read each pass */
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: sdpa '%s': softmax of %lld rows of %lld scores, %d threads a row, %s\n",
            who, (long long)sc->rows, (long long)S, G, regs ? "values in registers" : "read each pass");
    fputs(fe_cuda_prelude, f);
    int64_t big = sc->rows * S, mb = 1;
    for (int a = 0; a < sc->mrank; a++)   /* the mask's largest offset */
        mb += (sc->mshape[a] - 1) * sc->mst[a];
    mb += (S - 1) * sc->mcs;
    big = big > mb ? big : mb;
    big = big > (sc->b0 + 1) * sc->L + sc->rows ? big : (sc->b0 + 1) * sc->L + sc->rows;
    fe_cuda_index_type(f, big);
    reductions(f, G);
    union { float f; unsigned u; } sb = {sc->scale};   /* exact, inf and NaN too */
    fprintf(f, "#define S_ ((IX)%lld)\n#define G_ %d\n#define K_ %lld\n", (long long)S, G, (long long)K);
    /* one score as the CPU makes it: scaled, masked, then causal */
    const char *mt = sc->mask_dt >= 0 ? fe_cuda_ctype(sc->mask_dt) : "float";
    fprintf(f, "static __device__ __forceinline__ float score(const float *__restrict__ sc, "
               "const %s *__restrict__ mask, IX row, IX i, IX mrow, IX j) {\n"
               "  float t = sc[row * S_ + j] * __uint_as_float(0x%08xu); /* scale %.9g */\n", mt, sb.u,
            (double)sc->scale);
    if (sc->mask_dt == FE_BOOL) {
        fprintf(f, "  if (mask[mrow + j * (IX)%lld] == 0) t = -__int_as_float(0x7f800000);\n",
                (long long)sc->mcs);
    } else if (sc->mask_dt >= 0) {
        char off[64];
        snprintf(off, sizeof off, "mrow + j * (IX)%lld", (long long)sc->mcs);
        fprintf(f, "  t += ");
        fe_cuda_load_expr(f, sc->mask_dt, "mask", off);
        fprintf(f, ";\n");
    }
    if (sc->causal)
        fprintf(f, "  if (j > i) t = -__int_as_float(0x7f800000);\n");
    fprintf(f, "  (void)mask; (void)mrow; (void)i;\n  return t;\n}\n");
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) fe_kernel(const float *__restrict__ sc, ",
            G == 32 ? 256 : G);
    if (sc->mask_dt >= 0)
        fprintf(f, "const %s *__restrict__ mask, ", mt);
    fprintf(f, "%s *__restrict__ p, int *fault)\n{\n", fe_cuda_ctype(sc->p_dt));
    if (sc->mask_dt < 0)
        fprintf(f, "  const float *mask = 0;\n");
    if (G == 32)
        fprintf(f, "  const int lane = threadIdx.x & 31;\n"
                   "  for (IX row = (IX)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); row < (IX)%lld;"
                   " row += (IX)gridDim.x * (blockDim.x >> 5)) {\n", (long long)sc->rows);
    else
        fprintf(f, "  const int lane = threadIdx.x;\n"
                   "  for (IX row = blockIdx.x; row < (IX)%lld; row += gridDim.x) {\n", (long long)sc->rows);
    fprintf(f, "    const IX i = row %% %lld, r_ = (IX)%lld + row, mrow = ", (long long)sc->L,
            (long long)(sc->b0 * sc->L));
    mask_row(f, sc, "r_");
    fprintf(f, ";\n    float m = -__int_as_float(0x7f800000), z = 0.0f;\n");
    if (regs)
        fprintf(f, "    float v[K_];\n"
                   "    #pragma unroll\n"
                   "    for (int k = 0; k < K_; k++) {\n"
                   "      const IX j = lane + (IX)k * G_;\n"
                   "      v[k] = j < S_ ? score(sc, mask, row, i, mrow, j) : -__int_as_float(0x7f800000);\n"
                   "      m = mxn(m, v[k]);\n"
                   "    }\n"
                   "#define V_(k, j) v[k]\n");
    else
        fprintf(f, "    for (IX j = lane; j < S_; j += G_) m = mxn(m, score(sc, mask, row, i, mrow, j));\n"
                   "#define V_(k, j) score(sc, mask, row, i, mrow, j)\n");
    fprintf(f, "    m = grp_max(m);\n"
               "    const bool nan_ = m != m || m == -__int_as_float(0x7f800000);\n"
               "    %s\n"
               "    for (int k = 0; k < K_; k++) {\n"
               "      const IX j = lane + (IX)k * G_;\n"
               "      if (j < S_) z += expf(V_(k, j) - m);\n"
               "    }\n"
               "    const float q = 1.0f / grp_sum(z);\n"
               "    %s\n"
               "    for (int k = 0; k < K_; k++) {\n"
               "      const IX j = lane + (IX)k * G_;\n"
               "      if (j >= S_) continue;\n"
               "      const float u = nan_ ? __int_as_float(0x7fc00000) : expf(V_(k, j) - m) * q;\n      ",
            regs ? "#pragma unroll" : "", regs ? "#pragma unroll" : "");
    fe_cuda_store_stmt(f, sc->p_dt, "p", "row * S_ + j", "u");
    fprintf(f, "\n    }\n  }\n#undef V_\n  (void)fault;\n}\n");
    memset(shape, 0, sizeof *shape);
    shape->kind = FE_CUDA_ROWS;
    shape->per_thread = (int)K;
    unsigned cap = (unsigned)(sms > 0 ? sms : 1) * 32;
    if (G == 32) {
        shape->threads = 256;
        int64_t gr = (sc->rows + 7) / 8;
        shape->grid = (unsigned)(gr < cap ? gr : cap);
    } else {
        shape->threads = (unsigned)G;
        shape->grid = (unsigned)(sc->rows < cap ? sc->rows : cap);
    }
    if (shape->grid == 0)
        shape->grid = 1;
    return finish(f, &s, why);
}
