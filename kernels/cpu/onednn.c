/* onednn.c: oneDNN primitives on our buffers (see onednn.h).
 *
 * One CPU engine and one stream for the process. Memory objects are made
 * once per primitive with no buffer and pointed at the caller's buffers on
 * every run, so a run allocates nothing. The primitive cache of oneDNN
 * (1024 entries by default) makes a repeated layer's primitive cheap to
 * create a second time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "onednn.h"

enum { M_SRC, M_WEI, M_BIAS, M_DST, M_WPLAIN, M_WSCALE, M_NFIX };

struct fe_k_dnn {
    dnnl_primitive_t prim, reorder;
    dnnl_memory_t mem[M_NFIX];
    dnnl_memory_t post[FE_K_DNN_MAX_POST];
    int npost, binary[FE_K_DNN_MAX_POST];
    int bias;
    void *wbuf;                 /* the reordered weights */
    char impl[64];
};

static dnnl_engine_t eng;
static dnnl_stream_t strm;
static dnnl_status_t eng_status = dnnl_runtime_error;
static pthread_once_t eng_once = PTHREAD_ONCE_INIT;

static void eng_init(void)
{
    eng_status = dnnl_engine_create(&eng, dnnl_cpu, 0);
    if (eng_status == dnnl_success)
        eng_status = dnnl_stream_create(&strm, eng, dnnl_stream_default_flags);
}

const char *fe_k_dnn_version(void)
{
    static char v[32];
    const dnnl_version_t *d = dnnl_version();
    snprintf(v, sizeof v, "%d.%d.%d", d->major, d->minor, d->patch);
    return v;
}

static void dense_strides(int n, const dnnl_dims_t dims, dnnl_dims_t st)
{
    int64_t s = 1;
    for (int i = n - 1; i >= 0; i--) {
        st[i] = s;
        s *= dims[i] > 0 ? dims[i] : 1;
    }
}

/* A dense f32 md of dims d[0..n), or its last two axes read swapped (t):
 * logical dims [.., c, r] over the stored [.., r, c]. */
static dnnl_status_t md_dense(dnnl_memory_desc_t *md, int n, const int64_t *d, int t)
{
    dnnl_dims_t dims, st;
    for (int i = 0; i < n; i++)
        dims[i] = d[i];
    dense_strides(n, dims, st);
    if (t && n >= 2) {
        int64_t x = dims[n - 2];
        dims[n - 2] = dims[n - 1];
        dims[n - 1] = x;
        x = st[n - 2];
        st[n - 2] = st[n - 1];
        st[n - 1] = x;
    }
    return dnnl_memory_desc_init_by_strides(md, n, dims, dnnl_f32, st);
}

static int fail(fe_error *e, const char *what, dnnl_status_t s)
{
    return fe_error_set(e, FE_EINPUT, "oneDNN %s failed (status %d)", what, (int)s);
}

void fe_k_dnn_free(fe_k_dnn *d)
{
    if (!d)
        return;
    if (d->prim)
        dnnl_primitive_destroy(d->prim);
    if (d->reorder)
        dnnl_primitive_destroy(d->reorder);
    for (int i = 0; i < M_NFIX; i++)
        if (d->mem[i])
            dnnl_memory_destroy(d->mem[i]);
    for (int i = 0; i < d->npost; i++)
        if (d->post[i])
            dnnl_memory_destroy(d->post[i]);
    free(d->wbuf);
    free(d);
}

/* The op descriptor's memory descriptors: src, weights (plain and as
 * asked), bias, dst. */
typedef struct mds {
    dnnl_memory_desc_t src, wei, wplain, bias, dst;
} mds;

static dnnl_status_t make_mds(const fe_k_dnn_spec *sp, mds *m)
{
    dnnl_status_t s;
    int n = sp->rank;
    memset(m, 0, sizeof *m);
    if (sp->conv) {
        int64_t w[5];
        int wr = 4;
        if (sp->groups > 1) {     /* ours [O, C/g, kh, kw] is oneDNN's goihw in memory */
            w[0] = sp->groups;
            w[1] = sp->b[0] / sp->groups;
            memcpy(w + 2, sp->b + 1, 3 * sizeof(int64_t));
            wr = 5;
        } else {
            memcpy(w, sp->b, 4 * sizeof(int64_t));
        }
        if ((s = md_dense(&m->src, 4, sp->a, 0)) || (s = md_dense(&m->wplain, wr, w, 0)) ||
            (s = md_dense(&m->dst, 4, sp->y, 0)))
            return s;
        if (sp->bias && (s = md_dense(&m->bias, 1, sp->b, 0)))
            return s;
        m->wei = m->wplain;
        if (sp->wany) {
            dnnl_dims_t dims;
            for (int i = 0; i < wr; i++)
                dims[i] = w[i];
            s = dnnl_memory_desc_init_by_tag(&m->wei, wr, dims, dnnl_f32, dnnl_format_tag_any);
        }
        return s;
    }
    if ((s = md_dense(&m->src, n, sp->a, sp->ta)) || (s = md_dense(&m->wplain, n, sp->b, sp->tb)) ||
        (s = md_dense(&m->dst, n, sp->y, 0)))
        return s;
    if (sp->bias) {     /* [1, .., 1, N] */
        int64_t bd[FE_MAX_RANK];
        for (int i = 0; i < n; i++)
            bd[i] = i == n - 1 ? sp->y[i] : 1;
        if ((s = md_dense(&m->bias, n, bd, 0)))
            return s;
    }
    m->wei = m->wplain;
    if (sp->wany)
        s = dnnl_memory_desc_init_by_tag(&m->wei, n, m->wplain.dims, dnnl_f32, dnnl_format_tag_any);
    return s;
}

static dnnl_status_t make_attr(const fe_k_dnn_spec *sp, dnnl_primitive_attr_t *attr)
{
    dnnl_post_ops_t po = NULL;
    dnnl_status_t s = dnnl_primitive_attr_create(attr);
    if (s || (s = dnnl_post_ops_create(&po)))
        return s;
    for (int i = 0; i < sp->npost && !s; i++) {
        const fe_k_dnn_post *p = &sp->post[i];
        if (p->kind == FE_K_DNN_BINARY) {
            dnnl_memory_desc_t md;
            s = md_dense(&md, sp->rank, p->shape, 0);
            if (!s)
                s = dnnl_post_ops_append_binary(po, (dnnl_alg_kind_t)p->alg, &md);
        } else if (p->kind == FE_K_DNN_SUM) {
            s = dnnl_post_ops_append_sum(po, 1.0f);
        } else {
            s = dnnl_post_ops_append_eltwise(po, 1.0f, (dnnl_alg_kind_t)p->alg, p->alpha, p->beta);
        }
    }
    if (!s)
        s = dnnl_primitive_attr_set_post_ops(*attr, po);
    dnnl_post_ops_destroy(po);
    return s;
}

fe_k_dnn *fe_k_dnn_new(const fe_k_dnn_spec *sp, fe_error *why)
{
    mds m;
    dnnl_primitive_attr_t attr = NULL, rattr = NULL;
    dnnl_primitive_desc_t pd = NULL, rpd = NULL;
    dnnl_memory_desc_t osmd;
    dnnl_status_t s;
    fe_k_dnn *d = NULL;
    pthread_once(&eng_once, eng_init);
    if (eng_status)
        return fail(why, "engine creation", eng_status), NULL;
    if (sp->npost > FE_K_DNN_MAX_POST)
        return fe_error_set(why, FE_EINPUT, "more than %d post-ops", FE_K_DNN_MAX_POST), NULL;
    if ((s = make_mds(sp, &m))) {
        fail(why, "memory descriptor", s);
        goto out;
    }
    if ((s = make_attr(sp, &attr))) {
        fail(why, "post-op", s);
        goto out;
    }
    if (sp->conv) {
        dnnl_convolution_desc_t cd;
        dnnl_dims_t st = {sp->stride[0], sp->stride[1]}, dl = {sp->dil[0] - 1, sp->dil[1] - 1};
        dnnl_dims_t pl = {sp->pad[0], sp->pad[1]}, pr;
        for (int k = 0; k < 2; k++)   /* what the output size leaves over on the far side */
            pr[k] = (sp->y[2 + k] - 1) * sp->stride[k] - sp->a[2 + k] +
                    (sp->b[2 + k] - 1) * sp->dil[k] + 1 - sp->pad[k];
        s = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                      dnnl_convolution_direct, &m.src, &m.wei,
                                                      sp->bias ? &m.bias : NULL, &m.dst, st, dl,
                                                      pl, pr);
        if (!s)
            s = dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL);
    } else {
        dnnl_matmul_desc_t md;
        s = dnnl_matmul_desc_init(&md, &m.src, &m.wei, sp->bias ? &m.bias : NULL, &m.dst);
        if (!s)
            s = dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL);
    }
    if (s) {
        fe_error_set(why, FE_EINPUT, "oneDNN has no %s for it (status %d)",
                     sp->conv ? "convolution" : "matmul", (int)s);
        goto out;
    }
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    if (strstr(impl, "ref")) {
        fe_error_set(why, FE_EINPUT, "oneDNN has only its reference implementation (%s) for it", impl);
        goto out;
    }
    if (!(d = calloc(1, sizeof *d))) {
        fe_error_set(why, FE_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(d->impl, sizeof d->impl, "%s", impl);
    d->bias = sp->bias;
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    s = dnnl_primitive_create(&d->prim, pd);
    if (!s)
        s = dnnl_memory_create(&d->mem[M_SRC], &m.src, eng, DNNL_MEMORY_NONE);
    if (!s)
        s = dnnl_memory_create(&d->mem[M_DST], &m.dst, eng, DNNL_MEMORY_NONE);
    if (!s && d->bias)
        s = dnnl_memory_create(&d->mem[M_BIAS], &m.bias, eng, DNNL_MEMORY_NONE);
    if (!s && (sp->wscale || !dnnl_memory_desc_equal(wmd, &m.wplain))) {
        size_t bytes = dnnl_memory_desc_get_size(wmd);
        d->wbuf = aligned_alloc(64, (bytes + 63) / 64 * 64);
        s = d->wbuf ? dnnl_primitive_attr_create(&rattr) : dnnl_out_of_memory;
        if (!s && sp->wscale) {   /* one runtime factor per output channel: o, or g and o */
            float rt = DNNL_RUNTIME_F32_VAL;
            dnnl_dims_t od = {sp->b[0]};
            s = dnnl_primitive_attr_set_output_scales(rattr, 1, sp->groups > 1 ? 3 : 1, &rt);
            if (!s)
                s = dnnl_memory_desc_init_by_tag(&osmd, 1, od, dnnl_f32, dnnl_a);
            if (!s)
                s = dnnl_memory_create(&d->mem[M_WSCALE], &osmd, eng, DNNL_MEMORY_NONE);
        }
        if (!s)
            s = dnnl_reorder_primitive_desc_create(&rpd, &m.wplain, eng, wmd, eng, rattr);
        if (!s)
            s = dnnl_primitive_create(&d->reorder, rpd);
        if (!s)
            s = dnnl_memory_create(&d->mem[M_WPLAIN], &m.wplain, eng, DNNL_MEMORY_NONE);
        if (!s)
            s = dnnl_memory_create(&d->mem[M_WEI], wmd, eng, d->wbuf);
    } else if (!s) {
        s = dnnl_memory_create(&d->mem[M_WEI], &m.wplain, eng, DNNL_MEMORY_NONE);
    }
    for (int i = 0; i < sp->npost && !s; i++) {
        d->npost = i + 1;
        d->binary[i] = sp->post[i].kind == FE_K_DNN_BINARY;
        if (d->binary[i]) {
            dnnl_memory_desc_t md;
            s = md_dense(&md, sp->rank, sp->post[i].shape, 0);
            if (!s)
                s = dnnl_memory_create(&d->post[i], &md, eng, DNNL_MEMORY_NONE);
        }
    }
    if (s) {
        fail(why, "primitive creation", s);
        fe_k_dnn_free(d);
        d = NULL;
    }
out:
    if (rpd)
        dnnl_primitive_desc_destroy(rpd);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (rattr)
        dnnl_primitive_attr_destroy(rattr);
    return d;
}

int fe_k_dnn_run(fe_k_dnn *d, const void *src, const void *wei, const void *bias,
                 const float *wscale, void *dst, void *const *post_args, fe_error *err)
{
    dnnl_exec_arg_t a[4 + FE_K_DNN_MAX_POST];
    int n = 0;
    dnnl_status_t s = dnnl_success;
    if (d->reorder) {
        dnnl_exec_arg_t r[3] = {{DNNL_ARG_FROM, d->mem[M_WPLAIN]}, {DNNL_ARG_TO, d->mem[M_WEI]},
                                {DNNL_ARG_ATTR_OUTPUT_SCALES, d->mem[M_WSCALE]}};
        if (d->mem[M_WSCALE])
            s = dnnl_memory_set_data_handle(d->mem[M_WSCALE], (void *)wscale);
        if (s || (s = dnnl_memory_set_data_handle(d->mem[M_WPLAIN], (void *)wei)) ||
            (s = dnnl_primitive_execute(d->reorder, strm, d->mem[M_WSCALE] ? 3 : 2, r)))
            return fe_error_set(err, FE_ERUNTIME, "oneDNN weights reorder failed (status %d)", (int)s);
    } else if ((s = dnnl_memory_set_data_handle(d->mem[M_WEI], (void *)wei))) {
        return fe_error_set(err, FE_ERUNTIME, "oneDNN: bad weights buffer (status %d)", (int)s);
    }
    s = dnnl_memory_set_data_handle(d->mem[M_SRC], (void *)src);
    if (!s)
        s = dnnl_memory_set_data_handle(d->mem[M_DST], dst);
    if (!s && d->bias)
        s = dnnl_memory_set_data_handle(d->mem[M_BIAS], (void *)bias);
    a[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, d->mem[M_SRC]};
    a[n++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, d->mem[M_WEI]};
    a[n++] = (dnnl_exec_arg_t){DNNL_ARG_DST, d->mem[M_DST]};
    if (d->bias)
        a[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, d->mem[M_BIAS]};
    for (int i = 0; i < d->npost && !s; i++)
        if (d->binary[i]) {
            s = dnnl_memory_set_data_handle(d->post[i], post_args[i]);
            a[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1, d->post[i]};
        }
    if (!s)
        s = dnnl_primitive_execute(d->prim, strm, n, a);
    if (s)
        return fe_error_set(err, FE_ERUNTIME, "oneDNN execution failed (status %d)", (int)s);
    return FE_OK;
}

const char *fe_k_dnn_impl(const fe_k_dnn *d) { return d->impl; }
int fe_k_dnn_reorders(const fe_k_dnn *d) { return d->reorder != NULL; }
