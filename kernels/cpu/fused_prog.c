/* fused_prog.c: a compiled fused program as a value (fused_prog.h):
 * freeing it, its sizes, and describing it in one line for "how" strings
 * (fused_show.c lists it whole). Neither compiling nor running: both
 * fused_compile.c and fused_run.c stay about one thing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fused_prog.h"
#include "vecprog.h"

void fe_k_prog_free(fe_k_prog *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->nins && p->ins; k++)
        free(p->ins[k].ctab);
    for (int k = 0; k < p->nouts && p->outs; k++)
        free(p->outs[k].accbuf);
    free(p->ins);
    free(p->outs);
    free(p->code);
    free(p->consts);
    free(p->ts);
    free(p->mem);
    free(p->runs);
    free(p->vops);
    free(p->vents);
    free(p);
}

int64_t fe_k_prog_rows(const fe_k_prog *p) { return p->rows; }
int64_t fe_k_prog_cols(const fe_k_prog *p) { return p->C; }
int fe_k_prog_full_rows(const fe_k_prog *p) { return p->full_rows; }
int fe_k_prog_nops(const fe_k_prog *p) { return p->nops; }

/* Does program p only copy its one input to its one output of the same
 * dtype (a transpose, a slice, an expand, a chain of views stored)? Such a
 * program moves bytes as they are, with the per-op kernels' strided copy
 * (fused_run.c): through the tiles and the f32 slot, an f16 transpose ran
 * at 0.3-0.8x of the op's own copy and a stepped slice at 0.3x. */
int fe_k_prog_copy_only(const fe_k_prog *p)
{
    if (p->nins != 1 || p->nouts != 1 || p->full_rows || p->ins[0].dtype != p->outs[0].dtype ||
        p->outs[0].strided)
        return 0;
    for (int i = 0; i < p->nexec; i++)
        if ((p->code[i].code != I_LOAD && p->code[i].code != I_STORE) || p->code[i].a.kind == K_ANCHOR)
            return 0;
    return 1;
}

char *fe_k_prog_describe(const fe_k_prog *p, char *buf, size_t size)
{
    int nt = 0;
    for (int k = 0; k < p->nouts; k++)
        nt += p->outs[k].nt;
    int n = snprintf(buf, size, "%d ops in %d instrs, %lld rows x %lld cols, tile %lld%s, %d slots, "
                     "%d converting loads%s", p->nops, p->ncode, (long long)p->rows, (long long)p->C,
                     (long long)(p->full_rows ? p->C : p->T),
                     p->full_rows ? " (whole rows)" : p->pack > 1 ? " (whole rows end to end)" : "",
                     p->nslots, p->nloads, nt ? ", streaming stores" : "");
    if (p->copy && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ", bytes copied as they are");
    int nssq = 0;
    for (int k = 0; k < p->nruns; k++)
        nssq += p->runs[k].ssq >= 0;
    if (p->nruns && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ", %d instrs in %d register pass%s", p->nvm,
                      p->nruns, p->nruns == 1 ? "" : "es");
    if (nssq && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (%d summing squares for rms_norm)", nssq);
    return buf;
}
