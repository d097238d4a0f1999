/* cuda_dnn.c: conv2d and the pools on the GPU (cuda_dnn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_dnn.h"
#include "node.h"
#include "ops.h"

#define COL_CAP ((int64_t)64 << 20)   /* scratch bytes of one conv's im2col */

/* The sizes of a convolution, checked as fe_k_conv2d checks them. */
typedef struct cgeo {
    int64_t N, C, H, W, O, kh, kw, OH, OW, G, Cg, Og, K, P;
    int dx, dw, db, dy;        /* dtypes; db -1 without a bias */
    fe_k_conv cv;              /* stride, pad, dil, groups */
} cgeo;

static int conv_geo(const fe_graph *g, const fe_node *n, cgeo *c, fe_error *why)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *w = fe_graph_tensor(g, fe_node_input(g, n, 1));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const fe_tensor *b = n->nin > 2 ? fe_graph_tensor(g, fe_node_input(g, n, 2)) : NULL;
    memset(c, 0, sizeof *c);
    if (fe_k_node_conv(g, n, &c->cv, why))
        return -1;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4)
        return fe_error_set(why, FE_EINPUT, "conv2d of rank %d x %d", x->rank, w->rank), -1;
    const int64_t *xs = fe_tensor_shape(g, x), *ws = fe_tensor_shape(g, w), *ys = fe_tensor_shape(g, y);
    c->N = xs[0], c->C = xs[1], c->H = xs[2], c->W = xs[3];
    c->O = ws[0], c->kh = ws[2], c->kw = ws[3], c->OH = ys[2], c->OW = ys[3];
    c->G = c->cv.groups;
    if (c->G < 1 || c->C % c->G || c->O % c->G || ws[1] != c->C / c->G || ys[0] != c->N ||
        ys[1] != c->O || (b && b->numel != c->O))
        return fe_error_set(why, FE_EINPUT, "conv2d: shapes or groups the CPU kernel refuses too"), -1;
    c->Cg = c->C / c->G;
    c->Og = c->O / c->G;
    c->K = c->Cg * c->kh * c->kw;
    c->P = c->OH * c->OW;
    c->dx = x->dtype, c->dw = w->dtype, c->dy = y->dtype, c->db = b ? b->dtype : -1;
    return 0;
}

static int float_dt(int dt)
{
    return dt == FE_F32 || dt == FE_F16 || dt == FE_BF16;
}

static void head(FILE *f, const fe_graph *g, const fe_node *n, const char *what, int64_t largest)
{
    fprintf(f, "// fuseeng: %s '%s': %s\n", fe_node_op_name(n), fe_node_name(g, n), what);
    fputs(fe_cuda_prelude, f);
    fe_cuda_index_type(f, largest);
}

/* Close memory stream f, which wrote *s: *s, or NULL when it failed. */
static char *finish(FILE *f, char **s, fe_error *why)
{
    if (fclose(f)) {
        free(*s);
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    }
    return *s;
}

/* A thread per output element, summing c, ky, kx in the CPU's direct
 * loop's order, then the bias. */
static char *direct_src(const fe_graph *g, const fe_node *n, const cgeo *c, fe_error *why)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    int64_t big = c->N * c->C * c->H * c->W, ny = c->N * c->O * c->P, nw = c->O * c->K;
    big = big > ny ? big : ny;
    head(f, g, n, "direct convolution, a thread per output element", big > nw ? big : nw);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "const %s *__restrict__ w, ", fe_cuda_ctype(c->dx), fe_cuda_ctype(c->dw));
    if (c->db >= 0)
        fprintf(f, "const %s *__restrict__ b, ", fe_cuda_ctype(c->db));
    fprintf(f, "%s *__restrict__ y, int *fault)\n{\n", fe_cuda_ctype(c->dy));
    fe_cuda_loop(f, ny);
    fprintf(f, "    const IX ox = e %% %lld, t1 = e / %lld, oy = t1 %% %lld, t2 = t1 / %lld;\n"
               "    const IX o = t2 %% %lld, img = t2 / %lld;\n"
               "    const IX xb = (img * %lld + o / %lld * %lld) * %lld, wb = o * %lld;\n"
               "    float acc = 0.0f;\n"
               "    for (IX c = 0; c < %lld; c++)\n"
               "      for (IX ky = 0; ky < %lld; ky++) {\n"
               "        const IX iy = oy * %lld - %lld + ky * %lld;\n"
               "        if (iy < 0 || iy >= %lld) continue;\n"
               "        for (IX kx = 0; kx < %lld; kx++) {\n"
               "          const IX ix = ox * %lld - %lld + kx * %lld;\n"
               "          if (ix < 0 || ix >= %lld) continue;\n"
               "          acc += ",
            (long long)c->OW, (long long)c->OW, (long long)c->OH, (long long)c->OH,
            (long long)c->O, (long long)c->O, (long long)c->C, (long long)c->Og, (long long)c->Cg,
            (long long)(c->H * c->W), (long long)c->K, (long long)c->Cg, (long long)c->kh,
            (long long)c->cv.stride[0], (long long)c->cv.pad[0], (long long)c->cv.dil[0],
            (long long)c->H, (long long)c->kw, (long long)c->cv.stride[1], (long long)c->cv.pad[1],
            (long long)c->cv.dil[1], (long long)c->W);
    char off[160];
    snprintf(off, sizeof off, "wb + (c * %lld + ky) * %lld + kx", (long long)c->kh, (long long)c->kw);
    fe_cuda_load_expr(f, c->dw, "w", off);
    fprintf(f, " * ");
    snprintf(off, sizeof off, "xb + (c * %lld + iy) * %lld + ix", (long long)c->H, (long long)c->W);
    fe_cuda_load_expr(f, c->dx, "x", off);
    fprintf(f, ";\n        }\n      }\n");
    if (c->db >= 0) {
        fprintf(f, "    acc += ");
        fe_cuda_load_expr(f, c->db, "b", "o");
        fprintf(f, ";\n");
    }
    fprintf(f, "    ");
    fe_cuda_store_stmt(f, c->dy, "y", "e", "acc");
    fprintf(f, "\n  }\n  (void)fault;\n}\n");
    return finish(f, &s, why);
}

/* y[n, o, p] = bias[o], converted to y's dtype: the GEMMs add onto it. */
static char *bias_src(const fe_graph *g, const fe_node *n, const cgeo *c, fe_error *why)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    int64_t ny = c->N * c->O * c->P;
    head(f, g, n, "the bias, which the GEMMs add onto", ny);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ b, "
               "%s *__restrict__ y, int *fault)\n{\n", fe_cuda_ctype(c->db), fe_cuda_ctype(c->dy));
    fe_cuda_loop(f, ny);
    fprintf(f, "    const float v = ");
    char off[96];
    snprintf(off, sizeof off, "e / %lld %% %lld", (long long)c->P, (long long)c->O);
    fe_cuda_load_expr(f, c->db, "b", off);
    fprintf(f, ";\n    ");
    fe_cuda_store_stmt(f, c->dy, "y", "e", "v");
    fprintf(f, "\n  }\n  (void)fault;\n}\n");
    return finish(f, &s, why);
}

/* col of nb images (x points at the first): row (i, c, ky, kx) over every
 * channel c, so that group g's K rows of image i are one block. Elements
 * are moved as they are (0 is 0 in every float dtype). */
static char *im2col_src(const fe_graph *g, const fe_node *n, const cgeo *c, int64_t nb,
                        fe_error *why)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    int64_t total = nb * c->C * c->kh * c->kw * c->P, nx = nb * c->C * c->H * c->W;
    const char *u = fe_cuda_utype(fe_dtype_size(c->dx));
    char what[96];
    snprintf(what, sizeof what, "im2col of %lld image%s", (long long)nb, nb == 1 ? "" : "s");
    head(f, g, n, what, total > nx ? total : nx);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "%s *__restrict__ col, int *fault)\n{\n", u, u);
    fe_cuda_loop(f, total);
    fprintf(f, "    const IX p = e %% %lld, r = e / %lld, kx = r %% %lld, r2 = r / %lld;\n"
               "    const IX ky = r2 %% %lld, ch = r2 / %lld;\n"   /* ch: image * C + channel */
               "    const IX iy = p / %lld * %lld - %lld + ky * %lld, ix = p %% %lld * %lld - %lld + kx * %lld;\n"
               "    col[e] = iy >= 0 && iy < %lld && ix >= 0 && ix < %lld ? x[(ch * %lld + iy) * %lld + ix] : (%s)0;\n"
               "  }\n  (void)fault;\n}\n",
            (long long)c->P, (long long)c->P, (long long)c->kw, (long long)c->kw, (long long)c->kh,
            (long long)c->kh, (long long)c->OW, (long long)c->cv.stride[0], (long long)c->cv.pad[0],
            (long long)c->cv.dil[0], (long long)c->OW, (long long)c->cv.stride[1],
            (long long)c->cv.pad[1], (long long)c->cv.dil[1], (long long)c->H, (long long)c->W,
            (long long)c->H, (long long)c->W, u);
    return finish(f, &s, why);
}

/* The GEMMs of images [n0, n0 + nb), whose col starts at buffer b (the
 * scratch, or x itself for a 1x1 convolution). */
static int chunk_gemms(fe_cuda_lowering *lw, const cgeo *c, int32_t tw, int32_t ty, fe_cuda_buf b,
                       int64_t n0, int64_t nb, fe_error *err)
{
    int64_t KK = c->C * c->kh * c->kw, ex = fe_dtype_size(c->dx), ey = fe_dtype_size(c->dy);
    fe_cuda_gemm gm;
    memset(&gm, 0, sizeof gm);
    gm.dtype_ab = c->dx;
    gm.dtype_c = c->dy;
    gm.m = c->Og;
    gm.n = c->P;
    gm.k = c->K;
    gm.acc = c->db >= 0;
    int rc = FE_OK;
    if (c->G == 1 || nb > c->G) {
        /* a call per group, the images its batch */
        gm.batch = nb;
        gm.sa = 0;
        gm.sb = KK * c->P;
        gm.sc = c->O * c->P;
        for (int64_t gi = 0; gi < c->G && rc == FE_OK; gi++) {
            fe_cuda_buf bb = b;
            bb.off += gi * c->K * c->P * ex;
            rc = fe_cuda_lower_gemm(lw, &gm, fe_cuda_tbuf(tw, gi * c->Og * c->K * ex), bb,
                                    fe_cuda_tbuf(ty, (n0 * c->O + gi * c->Og) * c->P * ey), err);
        }
        return rc;
    }
    /* a call per image, the groups its batch */
    gm.batch = c->G;
    gm.sa = c->Og * c->K;
    gm.sb = c->K * c->P;
    gm.sc = c->Og * c->P;
    for (int64_t i = 0; i < nb && rc == FE_OK; i++) {
        fe_cuda_buf bb = b;
        bb.off += i * KK * c->P * ex;
        rc = fe_cuda_lower_gemm(lw, &gm, fe_cuda_tbuf(tw, 0), bb,
                                fe_cuda_tbuf(ty, (n0 + i) * c->O * c->P * ey), err);
    }
    return rc;
}

int fe_cuda_conv_lower(const fe_graph *g, const fe_node *n, int sms, fe_cuda_lowering *lw,
                       fe_error *why)
{
    cgeo c;
    fe_cuda_shape sh;
    char *src;
    if (conv_geo(g, n, &c, why))
        return FE_EINPUT;
    int32_t tx = fe_node_input(g, n, 0), tw = fe_node_input(g, n, 1), ty = fe_node_output(g, n, 0);
    int32_t tb = c.db >= 0 ? fe_node_input(g, n, 2) : -1;
    int64_t ny = c.N * c.O * c.P;
    if (ny == 0)
        return FE_OK;   /* nothing to write */
    int gemm = float_dt(c.dx) && c.dw == c.dx && float_dt(c.dy) && c.Og >= 8 && c.K >= 8;
    if (!gemm) {
        if (!(src = direct_src(g, n, &c, why)))
            return why->code;
        fe_cuda_grid(ny, sms, &sh);
        fe_cuda_buf a[4] = {fe_cuda_tbuf(tx, 0), fe_cuda_tbuf(tw, 0)};
        int na = 2;
        if (tb >= 0)
            a[na++] = fe_cuda_tbuf(tb, 0);
        a[na++] = fe_cuda_tbuf(ty, 0);
        return fe_cuda_lower_kernel(lw, src, &sh, a, na, 1, why);
    }
    int rc = FE_OK;
    if (tb >= 0) {
        if (!(src = bias_src(g, n, &c, why)))
            return why->code;
        fe_cuda_grid(ny, sms, &sh);
        fe_cuda_buf a[2] = {fe_cuda_tbuf(tb, 0), fe_cuda_tbuf(ty, 0)};
        if ((rc = fe_cuda_lower_kernel(lw, src, &sh, a, 2, 1, why)))
            return rc;
    }
    int64_t ex = fe_dtype_size(c.dx), chw = c.C * c.H * c.W;
    if (c.kh == 1 && c.kw == 1 && c.cv.stride[0] == 1 && c.cv.stride[1] == 1 && c.cv.pad[0] == 0 &&
        c.cv.pad[1] == 0 && c.OH == c.H && c.OW == c.W)
        return chunk_gemms(lw, &c, tw, ty, fe_cuda_tbuf(tx, 0), 0, c.N, why);   /* col = x */
    int64_t per = c.C * c.kh * c.kw * c.P * ex;   /* one image's col */
    int64_t cap = fe_cuda_scratch_cap(COL_CAP);
    int64_t nb = per > 0 && cap / per > 1 ? cap / per : 1;
    nb = nb < c.N ? nb : c.N;
    int64_t off = fe_cuda_lower_scratch(lw, nb * per);
    for (int64_t n0 = 0; n0 < c.N && rc == FE_OK; n0 += nb) {
        int64_t k = c.N - n0 < nb ? c.N - n0 : nb;
        if (!(src = im2col_src(g, n, &c, k, why)))
            return why->code;
        fe_cuda_grid(k * c.C * c.kh * c.kw * c.P, sms, &sh);
        fe_cuda_buf a[2] = {fe_cuda_tbuf(tx, n0 * chw * ex), fe_cuda_sbuf(off)};
        rc = fe_cuda_lower_kernel(lw, src, &sh, a, 2, 1, why);
        if (rc == FE_OK)
            rc = chunk_gemms(lw, &c, tw, ty, fe_cuda_sbuf(off), n0, k, why);
    }
    return rc;
}

/* ---- pools ---- */

char *fe_cuda_pool_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *why)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int mx = n->op == FE_OP_MAX_POOL2D;
    fe_k_pool p;
    if (fe_k_node_pool(g, n, &p, why))
        return NULL;
    const int64_t *xs = fe_tensor_shape(g, x), *ys = fe_tensor_shape(g, y);
    if (x->rank != 4 || y->rank != 4 || xs[0] != ys[0] || xs[1] != ys[1])
        return fe_error_set(why, FE_EINPUT, "%s: input and output must be [N, C, H, W] with equal "
                            "N, C", fe_node_op_name(n)), NULL;
    int64_t H = xs[2], W = xs[3], OH = ys[2], OW = ys[3];
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    head(f, g, n, "a thread per output element", x->numel > y->numel ? x->numel : y->numel);
    fprintf(f, "#define W_ ((IX)%lld)\n", (long long)W);   /* the input's width */
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "%s *__restrict__ y, int *fault)\n{\n", fe_cuda_ctype(x->dtype), fe_cuda_ctype(y->dtype));
    fe_cuda_loop(f, y->numel);
    fprintf(f, "    const IX ox = e %% %lld, t = e / %lld, oy = t %% %lld, xb = t / %lld * %lld;\n"
               "    const IX y0 = oy * %lld - %lld, x0 = ox * %lld - %lld;\n",
            (long long)OW, (long long)OW, (long long)OH, (long long)OH, (long long)(H * W),
            (long long)p.stride[0], (long long)p.pad[0], (long long)p.stride[1], (long long)p.pad[1]);
    if (mx) {
        fprintf(f, "    float v = -__int_as_float(0x7f800000);\n"
                   "    for (IX ky = 0; ky < %lld; ky++) {\n"
                   "      const IX iy = y0 + ky * %lld;\n"
                   "      if (iy < 0 || iy >= %lld) continue;\n"
                   "      for (IX kx = 0; kx < %lld; kx++) {\n"
                   "        const IX ix = x0 + kx * %lld;\n"
                   "        if (ix < 0 || ix >= %lld) continue;\n"
                   "        const float u = ",
                (long long)p.kernel[0], (long long)p.dil[0], (long long)H, (long long)p.kernel[1],
                (long long)p.dil[1], (long long)W);
        fe_cuda_load_expr(f, x->dtype, "x", "xb + iy * W_ + ix");
        fprintf(f, ";\n        if (u > v || u != u) v = u;\n      }\n    }\n");
    } else {
        /* the CPU's integer arithmetic, windows outside the input too */
        fprintf(f, "    IX y1 = y0 + %lld, x1 = x0 + %lld;\n"
                   "    if (y1 > %lld) y1 = %lld;\n"
                   "    if (x1 > %lld) x1 = %lld;\n"
                   "    const IX ya = y0 < 0 ? 0 : y0, xa = x0 < 0 ? 0 : x0;\n"
                   "    const IX yb = y1 > %lld ? %lld : y1, xb_ = x1 > %lld ? %lld : x1;\n"
                   "    float s = 0.0f;\n"
                   "    for (IX iy = ya; iy < yb; iy++)\n"
                   "      for (IX ix = xa; ix < xb_; ix++)\n"
                   "        s += ",
                (long long)p.kernel[0], (long long)p.kernel[1], (long long)(H + p.pad[0]),
                (long long)(H + p.pad[0]), (long long)(W + p.pad[1]), (long long)(W + p.pad[1]),
                (long long)H, (long long)H, (long long)W, (long long)W);
        fe_cuda_load_expr(f, x->dtype, "x", "xb + iy * W_ + ix");
        fprintf(f, ";\n    const float v = s / (float)(%s);\n",
                p.count_include_pad ? "(y1 - y0) * (x1 - x0)" : "(yb - ya) * (xb_ - xa)");
    }
    fprintf(f, "    ");
    fe_cuda_store_stmt(f, y->dtype, "y", "e", "v");
    fprintf(f, "\n  }\n  (void)fault;\n}\n");
    fe_cuda_grid(y->numel, sms, shape);
    return finish(f, &s, why);
}
