/* datafiles.c: the data files of a run opened, compared, written (see datafiles.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datafiles.h"

void fe_df_close(fe_df_files *d)
{
    fe_st_close(d->weights);
    fe_st_close(d->inputs);
    fe_st_close(d->expect);
    memset(d, 0, sizeof *d);
}

int fe_df_open(fe_df_files *d, const fe_graph *g, const char *weights, const char *inputs,
               const char *expect, fe_error *err)
{
    const char *path[3] = {weights, inputs, expect};
    fe_st_file **slot[3] = {&d->weights, &d->inputs, &d->expect};
    memset(d, 0, sizeof *d);
    for (int r = 0; r < 3; r++) {
        if (!path[r])
            continue;
        if (!(*slot[r] = fe_st_open(path[r], err)) || fe_datacheck(g, *slot[r], r, err)) {
            int rc = err ? err->code : FE_EINPUT;
            fe_df_close(d);
            return rc;
        }
    }
    return FE_OK;
}

void fe_df_text(const fe_df_files *d, FILE *f)
{
    if (!d->weights && !d->inputs)
        return;
    fprintf(f, "data       weights %s%s, inputs %s%s\n", d->weights ? "from " : "random",
            d->weights ? fe_st_path(d->weights) : "", d->inputs ? "from " : "random",
            d->inputs ? fe_st_path(d->inputs) : "");
}

void fe_df_json(const fe_df_files *d, fe_jw *w)
{
    if (!d->weights && !d->inputs)
        return;
    const fe_st_file *f[2] = {d->weights, d->inputs};
    for (int i = 0; i < 2; i++) {
        fe_jw_key(w, i ? "inputs" : "weights");
        if (f[i])
            fe_jw_str(w, fe_st_path(f[i]));
        else
            fe_jw_null(w);
    }
}

int fe_df_expect(const fe_graph *g, const fe_exec_result *r, const fe_st_file *f, double rtol,
                 fe_cmp *cmp, fe_error *err)
{
    memset(cmp, 0, sizeof *cmp);
    if (!(cmp->items = calloc((size_t)r->noutputs + 1, sizeof *cmp->items)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    cmp->n = r->noutputs;
    cmp->ok = 1;
    for (int i = 0; i < r->noutputs; i++) {
        int32_t t = r->tensors[i];
        const fe_tensor *tt = fe_graph_tensor(g, t);
        const fe_st_tensor *want = fe_st_find(f, fe_tensor_name(g, tt));
        if (!want) {   /* fe_df_check let it through: only if f is another file */
            fe_cmp_free(cmp);
            return fe_error_set(err, FE_EINPUT, "%s: has no tensor '%s'", fe_st_path(f),
                                fe_tensor_name(g, tt));
        }
        /* The kernels' loaders read whole elements: copy unaligned data. */
        const void *ref = want->data;
        void *copy = NULL;
        if ((uintptr_t)ref % (uintptr_t)fe_dtype_size(tt->dtype)) {
            if (!(copy = malloc((size_t)want->nbytes + 1))) {
                fe_cmp_free(cmp);
                return fe_error_set(err, FE_ENOMEM, "out of memory");
            }
            memcpy(copy, ref, (size_t)want->nbytes);
            ref = copy;
        }
        fe_cmp_buffers(ref, r->outputs[i].data, tt->dtype, tt->numel,
                       rtol > 0 ? rtol : fe_cmp_rtol_expect(g, t), &cmp->items[i]);
        free(copy);
        cmp->items[i].tensor = t;
        cmp->ok &= cmp->items[i].ok;
    }
    return FE_OK;
}

int fe_df_save(const fe_graph *g, const fe_exec_result *r, const char *path, fe_error *err)
{
    fe_st_writer *w = fe_st_writer_new(path, err);
    if (!w)
        return err ? err->code : FE_ENOMEM;
    for (int i = 0; i < r->noutputs; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= r->tensors[j] == r->tensors[i];
        const fe_tensor *tt = fe_graph_tensor(g, r->tensors[i]);
        if (!dup && fe_st_writer_add(w, fe_tensor_name(g, tt), tt->dtype, tt->rank,
                                     fe_tensor_shape(g, tt), r->outputs[i].data, tt->bytes, err)) {
            fe_st_writer_abort(w);
            return err ? err->code : FE_EINPUT;
        }
    }
    return fe_st_writer_finish(w, err);
}
