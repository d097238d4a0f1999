/* fused_prog.c: a compiled fused program as a value (fused_prog.h):
 * freeing it, its sizes, and describing it for "how" strings and dumps.
 * Neither compiling nor running: both fused_compile.c and fused_run.c
 * stay about one thing.
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

char *fe_k_prog_describe(const fe_k_prog *p, char *buf, size_t size)
{
    int nt = 0;
    for (int k = 0; k < p->nouts; k++)
        nt += p->outs[k].nt;
    int n = snprintf(buf, size, "%d ops in %d instrs, %lld rows x %lld cols, tile %lld%s, %d slots, "
                     "%d converting loads%s", p->nops, p->ncode, (long long)p->rows, (long long)p->C,
                     (long long)(p->full_rows ? p->C : p->T), p->full_rows ? " (whole rows)" : "",
                     p->nslots, p->nloads, nt ? ", streaming stores" : "");
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

static void dump_opnd(FILE *f, opnd o)
{
    static const char *k[] = {"-", "slot", "in", "row", "const", "anchor"};
    fprintf(f, " %s%d", k[o.kind], o.idx);
}

void fe_k_prog_dump(const fe_k_prog *p, FILE *f)
{
    static const char *names[] = {"load", "loadrow", "expand", "unary", "binary", "where", "round",
                                  "reduce", "softmax", "rms", "ln", "store", "storerow", "fma", "vm"};
    fprintf(f, "rows %lld x cols %lld, tile %lld, %d slots\n", (long long)p->rows, (long long)p->C,
            (long long)p->T, p->nslots);
    for (int k = 0; k < p->nins; k++)
        fprintf(f, "  in%d: tensor %d dtype %d col %d direct %d rowinv %d\n", k, p->ins[k].tensor,
                p->ins[k].dtype, p->ins[k].col, p->ins[k].direct, p->ins[k].rowinv);
    for (int i = 0; i < p->nexec; i++) {
        const instr *in = &p->code[i];
        if (in->code == I_VM) {
            const vrun *r = &p->runs[in->aux];
            fprintf(f, "  vm       %d ops:", r->nops);
            for (int k = 0; k < r->nops; k++) {
                const vop *o = &p->vops[r->op0 + k];
                fprintf(f, " %d/%d(%d,%d,%d)", FE_V_OP(o->code), FE_V_INMEM(o->code), o->e[0],
                        o->e[1], o->e[2]);
            }
            for (int e = 0; e < r->nent; e++) {
                const vent *v = &p->vents[r->ent0 + e];
                if (v->out >= 0)
                    fprintf(f, " [%d]=out%d", e, v->out);
                else {
                    fprintf(f, " [%d]=", e);
                    dump_opnd(f, v->o);
                }
            }
            fprintf(f, "\n");
            continue;
        }
        fprintf(f, "  %-8s op %d aux %d st %d ->", names[in->code], in->op, in->aux, in->st);
        dump_opnd(f, in->d);
        fprintf(f, " <-");
        dump_opnd(f, in->a);
        dump_opnd(f, in->b);
        dump_opnd(f, in->c);
        fprintf(f, "\n");
    }
}
