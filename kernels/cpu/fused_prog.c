/* fused_prog.c: a CPU fused program as a value (fused_prog.h): freeing
 * it, its sizes, and describing it in one line for "how" strings
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
    for (int k = 0; k < p->f.nouts && p->accbuf; k++)
        free(p->accbuf[k]);
    free(p->accbuf);
    free(p->xins);
    fe_k_fused_clear(&p->f);
    free(p->ts);
    free(p->mem);
    free(p->runs);
    free(p->vops);
    free(p->vents);
    free(p);
}

int64_t fe_k_prog_rows(const fe_k_prog *p) { return p->f.rows; }
int64_t fe_k_prog_cols(const fe_k_prog *p) { return p->f.C; }
int fe_k_prog_full_rows(const fe_k_prog *p) { return p->f.full_rows; }
int fe_k_prog_nops(const fe_k_prog *p) { return p->f.nops; }

char *fe_k_prog_describe(const fe_k_prog *p, char *buf, size_t size)
{
    int nt = 0;
    for (int k = 0; k < p->f.nouts; k++)
        nt += p->f.outs[k].nt;
    int n = snprintf(buf, size, "%d ops in %d instrs, %lld rows x %lld cols, tile %lld%s, %d slots, "
                     "%d converting loads%s", p->f.nops, p->f.ncode, (long long)p->f.rows, (long long)p->f.C,
                     (long long)(p->f.full_rows ? p->f.C : p->T),
                     p->f.full_rows ? " (whole rows)" : p->pack > 1 ? " (whole rows end to end)" : "",
                     p->f.nslots, p->f.nloads, nt ? ", streaming stores" : "");
    if (p->f.copy && n >= 0 && (size_t)n < size)
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
