/* pool.c: max_pool2d and avg_pool2d (see pool.h). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "convert.h"
#include "pool.h"

static int check(const fe_k_tensor *x, const fe_k_tensor *y, const char *op, fe_error *err)
{
    if (x->rank != 4 || y->rank != 4 || x->shape[0] != y->shape[0] || x->shape[1] != y->shape[1])
        return fe_error_set(err, FE_EINPUT, "%s: input and output must be [N, C, H, W] with equal N, C", op);
    return FE_OK;
}

static int pool(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, int is_max,
                fe_error *err)
{
    int64_t H = x->shape[2], W = x->shape[3], OH = y->shape[2], OW = y->shape[3];
    int64_t planes = x->shape[0] * x->shape[1];
    int fail = 0, efail = 0;
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        float *in = malloc((size_t)(H * W + 1) * sizeof(float));
        float *out = malloc((size_t)(OH * OW + 1) * sizeof(float));
        if (!in || !out) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(static)
        for (int64_t pl = 0; pl < planes; pl++) {
            if (!in || !out)
                continue;
            fe_k_load_f32(x->data, x->dtype, pl * H * W, in, H * W);
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    int64_t y0 = oy * p->stride[0] - p->pad[0], x0 = ox * p->stride[1] - p->pad[1];
                    float v;
                    if (is_max) {
                        v = -INFINITY;
                        for (int64_t ky = 0; ky < p->kernel[0]; ky++) {
                            int64_t iy = y0 + ky * p->dil[0];
                            if (iy < 0 || iy >= H)
                                continue;
                            for (int64_t kx = 0; kx < p->kernel[1]; kx++) {
                                int64_t ix = x0 + kx * p->dil[1];
                                if (ix < 0 || ix >= W)
                                    continue;
                                float e = in[iy * W + ix];
                                if (e > v || e != e)
                                    v = e;
                                if (v != v)
                                    goto done;
                            }
                        }
                    } else {
                        /* PyTorch: the window clipped to the padded input
                         * sets count_include_pad's divisor, the window
                         * clipped to the input the other one */
                        int64_t y1 = y0 + p->kernel[0], x1 = x0 + p->kernel[1];
                        if (y1 > H + p->pad[0])
                            y1 = H + p->pad[0];
                        if (x1 > W + p->pad[1])
                            x1 = W + p->pad[1];
                        int64_t padded = (y1 - y0) * (x1 - x0);
                        int64_t ya = y0 < 0 ? 0 : y0, xa = x0 < 0 ? 0 : x0;
                        int64_t yb = y1 > H ? H : y1, xb = x1 > W ? W : x1;
                        float s = 0.0f;
                        for (int64_t iy = ya; iy < yb; iy++)
                            for (int64_t ix = xa; ix < xb; ix++)
                                s += in[iy * W + ix];
                        int64_t cnt = p->count_include_pad ? padded : (yb - ya) * (xb - xa);
                        v = s / (float)cnt;
                    }
                done:
                    out[oy * OW + ox] = v;
                }
            if (!p->epi)
                fe_k_store_f32(y->data, y->dtype, pl * OH * OW, out, OH * OW);
            else if (p->epi(p->ectx, pl, 1, 0, OH * OW, out, OH * OW, tid)) {
                #pragma omp atomic write
                efail = 1;
            }
        }
        free(in);
        free(out);
    }
    if (fail)
        return fe_error_set(err, FE_ENOMEM, "pool2d: out of memory");
    if (efail)
        return fe_error_set(err, FE_ERUNTIME, "pool2d: epilogue failed");
    return FE_OK;
}

int fe_k_max_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err)
{
    int rc = check(x, y, "max_pool2d", err);
    return rc ? rc : pool(x, p, y, 1, err);
}

int fe_k_avg_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err)
{
    int rc = check(x, y, "avg_pool2d", err);
    return rc ? rc : pool(x, p, y, 0, err);
}
