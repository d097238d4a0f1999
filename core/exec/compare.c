/* compare.c: plan vs reference numeric comparison (see compare.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "convert.h"

/* least precise float dtype on any path into t: 0 f32, 1 f16, 2 bf16 */
static int worst_dtype(const fe_graph *g, int32_t t, uint8_t *seen)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    int w = tt->dtype == FE_BF16 ? 2 : tt->dtype == FE_F16 ? 1 : 0;
    if (seen[t])
        return w;
    seen[t] = 1;
    if (tt->producer >= 0) {
        const fe_node *n = fe_graph_node(g, tt->producer);
        for (int k = 0; k < n->nin && w < 2; k++) {
            int v = worst_dtype(g, fe_node_input(g, n, k), seen);
            if (v > w)
                w = v;
        }
    }
    return w;
}

double fe_cmp_rtol(const fe_graph *g, int32_t t)
{
    static const double rt[3] = {1e-4, 1e-2, 5e-2};
    uint8_t *seen = calloc((size_t)(g->ntensors ? g->ntensors : 1), 1);
    int w = seen ? worst_dtype(g, t, seen) : 2;
    free(seen);
    return rt[w];
}

double fe_cmp_rtol_expect(const fe_graph *g, int32_t t)
{
    double r = fe_cmp_rtol(g, t);
    return r > 1e-3 ? r : 1e-3;
}

static void cmp_buffers(const void *ref, const void *got, int dt, int64_t n, double rtol,
                        double floor, fe_cmp_item *it);

void fe_cmp_buffers(const void *ref, const void *got, int dt, int64_t n, double rtol,
                    fe_cmp_item *it)
{
    cmp_buffers(ref, got, dt, n, rtol, 0, it);
}

static void cmp_buffers(const void *ref, const void *got, int dt, int64_t n, double rtol,
                        double floor, fe_cmp_item *it)
{
    enum { CH = 1024 };
    memset(it, 0, sizeof *it);
    it->rtol = rtol;
    it->worst = -1;
    if (fe_k_dtype_is_int(dt)) {
        int64_t a[CH], b[CH];
        for (int64_t i = 0; i < n; i += CH) {
            int64_t m = n - i < CH ? n - i : CH;
            fe_k_load_i64(ref, dt, i, a, m);
            fe_k_load_i64(got, dt, i, b, m);
            for (int64_t j = 0; j < m; j++)
                if (a[j] != b[j]) {
                    double d = fabs((double)a[j] - (double)b[j]);
                    if (it->bad == 0 || d > it->max_abs) {
                        it->worst = i + j;
                        it->worst_ref = (double)a[j];
                        it->worst_got = (double)b[j];
                    }
                    if (d > it->max_abs)
                        it->max_abs = d;
                    it->bad++;
                }
        }
        it->max_rel = it->bad ? INFINITY : 0.0;
        it->ok = it->bad == 0;
        return;
    }
    float a[CH], b[CH];
    double ss = 0;
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i += CH) {          /* scale of the reference */
        int64_t m = n - i < CH ? n - i : CH;
        fe_k_load_f32(ref, dt, i, a, m);
        for (int64_t j = 0; j < m; j++)
            if (isfinite(a[j])) {
                ss += (double)a[j] * a[j];
                cnt++;
            }
    }
    double rms = cnt ? sqrt(ss / (double)cnt) : 0.0;
    if (rtol > 0 && rms < floor / rtol)
        rms = floor / rtol;   /* atol = rtol * rms is then the floor */
    if (rms == 0.0)
        rms = 1e-30;
    it->atol = rtol * rms;
    double worst = -1;
    for (int64_t i = 0; i < n; i += CH) {
        int64_t m = n - i < CH ? n - i : CH;
        fe_k_load_f32(ref, dt, i, a, m);
        fe_k_load_f32(got, dt, i, b, m);
        for (int64_t j = 0; j < m; j++) {
            double r = a[j], g = b[j], score;
            if (isnan(r) || isnan(g)) {
                score = isnan(r) && isnan(g) ? 0.0 : INFINITY;
            } else if (isinf(r) || isinf(g)) {
                score = r == g ? 0.0 : INFINITY;
            } else {
                double d = fabs(g - r);
                if (d > it->max_abs)
                    it->max_abs = d;
                score = d / (fabs(r) + rms);   /* <= rtol  <=>  d <= atol + rtol |r| */
            }
            if (score > it->max_rel)
                it->max_rel = score;
            if (score > rtol * (1.0 + 1e-12))
                it->bad++;
            if (score > worst) {
                worst = score;
                it->worst = i + j;
                it->worst_ref = r;
                it->worst_got = g;
            }
        }
    }
    it->ok = it->bad == 0;
}

int fe_exec_compare(const fe_graph *g, const fe_exec_result *ref, const fe_exec_result *got,
                    fe_cmp *cmp, fe_error *err)
{
    return fe_exec_compare_rtol(g, ref, got, -1, cmp, err);
}

int fe_exec_compare_rtol(const fe_graph *g, const fe_exec_result *ref, const fe_exec_result *got,
                         double rtol, fe_cmp *cmp, fe_error *err)
{
    return fe_exec_compare_floor(g, ref, got, rtol, 0, cmp, err);
}

int fe_exec_compare_floor(const fe_graph *g, const fe_exec_result *ref, const fe_exec_result *got,
                          double rtol, double atol_floor, fe_cmp *cmp, fe_error *err)
{
    memset(cmp, 0, sizeof *cmp);
    if (ref->noutputs != got->noutputs)
        return fe_error_set(err, FE_EINPUT, "compare: %d outputs vs %d", ref->noutputs, got->noutputs);
    cmp->items = calloc((size_t)(ref->noutputs + 1), sizeof(fe_cmp_item));
    if (!cmp->items)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    cmp->n = ref->noutputs;
    cmp->ok = 1;
    for (int i = 0; i < ref->noutputs; i++) {
        int32_t t = ref->tensors[i];
        const fe_tensor *tt = fe_graph_tensor(g, t);
        if (got->tensors[i] != t) {
            fe_cmp_free(cmp);
            return fe_error_set(err, FE_EINPUT, "compare: results list different outputs");
        }
        cmp_buffers(ref->outputs[i].data, got->outputs[i].data, tt->dtype, tt->numel,
                    rtol >= 0 ? rtol : fe_cmp_rtol(g, t), atol_floor, &cmp->items[i]);
        cmp->items[i].tensor = t;
        cmp->ok &= cmp->items[i].ok;
    }
    return FE_OK;
}

void fe_cmp_free(fe_cmp *cmp)
{
    free(cmp->items);
    cmp->items = NULL;
    cmp->n = 0;
}
