/* cuda_lower.c: the pieces of a lowered op (cuda_lower.h). */
#include <stdlib.h>
#include <string.h>

#include "cuda_lower.h"

static fe_cuda_piece *grow(fe_cuda_lowering *lw, fe_error *err)
{
    if (lw->n == lw->cap) {
        int cap = lw->cap ? 2 * lw->cap : 8;
        fe_cuda_piece *p = realloc(lw->p, (size_t)cap * sizeof *p);
        if (!p)
            return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
        lw->p = p;
        lw->cap = cap;
    }
    fe_cuda_piece *p = &lw->p[lw->n];
    memset(p, 0, sizeof *p);
    return p;
}

int fe_cuda_lower_kernel(fe_cuda_lowering *lw, char *src, const fe_cuda_shape *sh,
                         const fe_cuda_buf *args, int nargs, int fault, fe_error *err)
{
    if (nargs > FE_CUDA_PIECE_ARGS) {
        free(src);
        return fe_error_set(err, FE_EINPUT, "cuda: a kernel of %d parameters", nargs);
    }
    fe_cuda_piece *p = grow(lw, err);
    if (!p) {
        free(src);
        return FE_ENOMEM;
    }
    p->kind = FE_CUDA_PIECE_KERNEL;
    p->src = src;
    p->shape = *sh;
    memcpy(p->args, args, (size_t)nargs * sizeof *args);
    p->nargs = nargs;
    p->fault = fault;
    lw->n++;
    return FE_OK;
}

int fe_cuda_lower_gemm(fe_cuda_lowering *lw, const fe_cuda_gemm *gm, fe_cuda_buf a,
                       fe_cuda_buf b, fe_cuda_buf c, fe_error *err)
{
    fe_cuda_piece *p = grow(lw, err);
    if (!p)
        return FE_ENOMEM;
    p->kind = FE_CUDA_PIECE_GEMM;
    p->gm = *gm;
    p->ga = a;
    p->gb = b;
    p->gc = c;
    lw->n++;
    return FE_OK;
}

int64_t fe_cuda_lower_scratch(fe_cuda_lowering *lw, int64_t bytes)
{
    int64_t off = (lw->scratch + 255) & ~(int64_t)255;
    lw->scratch = off + (bytes > 0 ? bytes : 0);
    return off;
}

int64_t fe_cuda_scratch_cap(int64_t dflt)
{
    const char *e = getenv("FUSEENG_CUDA_SCRATCH_MIB");
    if (!e || !*e)
        return dflt;
    long long m = strtoll(e, NULL, 10);
    return m > 0 ? (int64_t)m << 20 : 0;
}

void fe_cuda_lowering_clear(fe_cuda_lowering *lw)
{
    for (int i = 0; i < lw->n; i++)
        free(lw->p[i].src);
    free(lw->p);
    memset(lw, 0, sizeof *lw);
}

void fe_cuda_grid(int64_t total, int sms, fe_cuda_shape *sh)
{
    int64_t g = (total + 255) / 256, cap = (int64_t)(sms > 0 ? sms : 1) * 128;
    memset(sh, 0, sizeof *sh);
    sh->kind = FE_CUDA_ELEM;
    sh->threads = 256;
    sh->grid = (unsigned)(g < 1 ? 1 : g < cap ? g : cap);
    sh->per_thread = 1;
}

void fe_cuda_index_type(FILE *f, int64_t largest)
{
    int small = largest < ((int64_t)1 << 31) - ((int64_t)1 << 25);
    fprintf(f, "typedef %s IX;\n", small ? "int" : "long long");
}

void fe_cuda_loop(FILE *f, int64_t total)
{
    fprintf(f, "  for (IX e = (IX)blockIdx.x * blockDim.x + threadIdx.x; e < (IX)%lld; "
               "e += (IX)gridDim.x * blockDim.x) {\n", (long long)total);
}

const char *fe_cuda_utype(int bytes)
{
    return bytes == 1 ? "unsigned char" : bytes == 2 ? "unsigned short" : bytes == 4 ? "unsigned"
                                                                                 : "unsigned long long";
}
