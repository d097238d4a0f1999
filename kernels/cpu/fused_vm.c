/* fused_vm.c: the fused compiler's last pass, register runs (see
 * vecprog.h): it rewrites a compiled program's tile passes into vector
 * programs. Apart from fused_compile.c because it is a pass over finished
 * code, needing only the program (fused_prog.h), not the group it came
 * from.
 *
 * Note on register runs.
 *
 * A pass per op costs a store and a load per vector per op, which for
 * cheap ops (relu, a multiply by a weight) is most of their cost and, on
 * memory-bound groups, turns one stream through memory into several
 * through L1. So after compilation every maximal run of elementwise
 * instructions that have a vector form (and the stores of f32 outputs
 * between them) becomes one I_VM instruction: a vector program
 * (vecprog.h) that takes a strip of vectors at a time through all of the
 * run's ops with the current value in registers. A value goes to its slot
 * only when something other than the next op reads it (a spill), and a
 * store of the run's last value goes straight from registers to the
 * output, streaming when the output is large. Ops without a vector form
 * (erf GELU, sin, log, converting loads, row ops) keep their passes and
 * split runs; a run holds at least one op (worth_a_run). A run that makes
 * the row an rms_norm normalises also sums its squares (FE_V_SSQ).
 */
#include <stdlib.h>
#include <string.h>

#include "fused_prog.h"
#include "ops.h"
#include "vecprog.h"

/* The vector-program code of instruction in, or -1 when it keeps its tile
 * pass. Only ops producing a FULL value qualify (a ROW result is one float
 * per row), and only stores of f32 outputs. */
static int vm_code(const fe_k_prog *p, const instr *in)
{
    switch (in->code) {
    case I_UNARY:
        if (in->d.kind != K_SLOT)
            return -1;
        return in->op == FE_OP_CAST ? FE_V_LD : fe_k_vop_unary(in->op, in->aux);
    case I_BINARY: return in->d.kind == K_SLOT ? fe_k_vop_binary(in->op) : -1;
    case I_FMA: return in->d.kind == K_SLOT && !in->mx ? FE_V_FMA : -1;
    case I_WHERE: return in->d.kind == K_SLOT ? FE_V_WHERE : -1;
    case I_EXPAND: return FE_V_LD;
    case I_STORE:
        return p->f.outs[in->aux].dtype == FE_F32 && in->a.kind != K_ROW && in->a.kind != K_CONST
               ? FE_V_ST : -1;
    default: return -1;
    }
}

static int same_opnd(opnd x, opnd y)
{
    return x.kind == y.kind && x.idx == y.idx;
}

static int reads_slot(const instr *in, int s)
{
    const opnd *o[3] = {&in->a, &in->b, &in->c};
    for (int k = 0; k < 3; k++)
        if (o[k]->kind == K_SLOT && o[k]->idx == s)
            return 1;
    return in->code == I_ROUND && in->d.kind == K_SLOT && in->d.idx == s;
}

/* Is slot s read after instruction k0 before it is written again? */
static int slot_live_after(const fe_k_prog *p, const instr *code, int n, int k0, int s)
{
    for (int k = k0 + 1; k < n; k++) {
        if (reads_slot(&code[k], s))
            return 1;
        if (code[k].d.kind == K_SLOT && code[k].d.idx == s)
            return 0;
    }
    return p->f.result.kind == K_SLOT && p->f.result.idx == s;
}

/* Translation state of one run: which value the accumulator holds (an
 * operand, and for a slot the instruction that defined it) and, per slot,
 * the instruction of the run that defined its current value (-1: before
 * the run, so it is in memory). */
typedef struct vtr {
    opnd acc;
    int acc_def;
    int *def;
    char *spill;      /* per instruction of the run: its result goes to memory too */
    int ssq;          /* the instruction whose row sum of squares the run finds, -1 none */
    int emit;
} vtr;

static int vm_push_op(fe_k_prog *p, vop op)
{
    vop *n = realloc(p->vops, (size_t)(p->nvops + 1) * sizeof *n);
    if (!n)
        return -1;
    p->vops = n;
    p->vops[p->nvops++] = op;
    return 0;
}

static int vm_entry(fe_k_prog *p, const vrun *r, opnd o, int out)
{
    for (int e = r->ent0; e < p->nvents; e++)
        if (same_opnd(p->vents[e].o, o) && p->vents[e].out == out)
            return e - r->ent0;
    vent *n = realloc(p->vents, (size_t)(p->nvents + 1) * sizeof *n);
    if (!n)
        return -2;
    p->vents = n;
    p->vents[p->nvents].o = o;
    p->vents[p->nvents].out = out;
    return p->nvents++ - r->ent0;
}

static int in_acc(const vtr *t, opnd o)
{
    return same_opnd(t->acc, o) && (o.kind != K_SLOT || t->acc_def == t->def[o.idx]);
}

/* Operand o read from memory: a table entry (marking the instruction of
 * the run that defined a slot's value for a spill). -2 on OOM. */
static int vm_mem(fe_k_prog *p, vtr *t, const vrun *r, opnd o)
{
    if (o.kind == K_SLOT && t->def[o.idx] >= 0)
        t->spill[t->def[o.idx]] = 1;
    return t->emit ? vm_entry(p, r, o, -1) : 0;
}

static int vm_emit(fe_k_prog *p, vtr *t, int code, unsigned form, const int *e)
{
    vop op = {(int16_t)fe_k_vcode(code, form), {(int8_t)e[0], (int8_t)e[1], (int8_t)e[2]}};
    return t->emit ? vm_push_op(p, op) : 0;
}

/* Make o the accumulator (an LD unless it already is). */
static int vm_load(fe_k_prog *p, vtr *t, const vrun *r, opnd o)
{
    int e[3] = {0, 0, 0};
    if (in_acc(t, o))
        return 0;
    e[0] = vm_mem(p, t, r, o);
    if (e[0] < -1 || vm_emit(p, t, FE_V_LD, 1, e))
        return -1;
    t->acc = o;
    t->acc_def = o.kind == K_SLOT ? t->def[o.idx] : -1;
    return 0;
}

/* Emit op `code` on operands src[0..nsrc) in one of the evaluator's forms
 * (fe_k_vform_ok): one operand in the accumulator, loading the first when
 * none is; add, mul and fma put theirs first, as their operands commute. */
static int vm_op(fe_k_prog *p, vtr *t, const vrun *r, int code, opnd *src, int nsrc)
{
    int e[3] = {0, 0, 0}, ai = -1;
    if (code == FE_V_LD)
        return vm_load(p, t, r, src[0]);
    if (nsrc == 1) {
        if (vm_load(p, t, r, src[0]))
            return -1;
        return vm_emit(p, t, code, 0, e);
    }
    for (int k = 0; k < nsrc && ai < 0; k++)
        if (in_acc(t, src[k]))
            ai = k;
    if (ai < 0) {
        if (vm_load(p, t, r, src[0]))
            return -1;
        ai = 0;
    }
    if (ai > 0 && (code == FE_V_ADD || code == FE_V_MUL)) {
        opnd x = src[0];
        src[0] = src[ai];
        src[ai] = x;
        ai = 0;
    }
    unsigned form = 0;
    for (int k = 0; k < nsrc; k++) {
        if (k == ai)
            continue;
        e[k] = vm_mem(p, t, r, src[k]);
        if (e[k] < -1)
            return -1;
        form |= 1u << k;
    }
    return vm_emit(p, t, code, form, e);
}

/* One pass over the run code[k0, k1): with emit clear it only finds the
 * spills; with emit set it appends the vector ops. */
static int vm_translate(fe_k_prog *p, vtr *t, vrun *r, const instr *code, int n, int k0, int k1)
{
    t->acc = mk(K_NONE, 0);
    t->acc_def = -1;
    for (int s = 0; s < p->f.nslots; s++)
        t->def[s] = -1;
    for (int k = k0; k < k1; k++) {
        const instr *in = &code[k];
        int vc = vm_code(p, in), ki = k - k0;
        int e[3] = {0, 0, 0};
        if (vc == FE_V_ST) {
            if (vm_load(p, t, r, in->a))
                return -1;
            e[0] = t->emit ? vm_entry(p, r, mk(K_NONE, 0), in->aux) : 0;
            if (e[0] < 0 || vm_emit(p, t, FE_V_ST, 1, e))
                return -1;
            continue;
        }
        opnd src[3] = {in->a, in->b, in->c};
        int nsrc = in->code == I_FMA || in->code == I_WHERE ? 3 : in->code == I_BINARY ? 2 : 1;
        if (vm_op(p, t, r, vc, src, nsrc))
            return -1;
        t->def[in->d.idx] = ki;
        t->acc = in->d;
        t->acc_def = ki;
        if (t->emit && t->spill[ki]) {
            e[0] = vm_entry(p, r, in->d, -1);
            if (e[0] < 0 || vm_emit(p, t, FE_V_ST, 1, e))
                return -1;
        }
        if (ki == t->ssq && vm_emit(p, t, FE_V_SSQ, 0, (int[3]){0, 0, 0}))
            return -1;
    }
    /* values still needed after the run go to memory */
    for (int s = 0; s < p->f.nslots; s++)
        if (t->def[s] >= 0 && slot_live_after(p, code, n, k1 - 1, s))
            t->spill[t->def[s]] = 1;
    return 0;
}

/* Whether instructions [k0, k1) should become a register pass: whenever
 * they hold an op beyond loads and stores. Values stay in registers, and
 * the pass prefetches its inputs and runs over long tiles, where a tile
 * pass over 1024 floats leaves the hardware prefetcher alone. Even a lone
 * cheap op gains (relu over f32 [4096, 4096]: 77 -> 91 GB/s; a product
 * with per-column weights: 41 -> 86; Add+RMSNorm's add, beside its row
 * op: 2.85 -> 2.47 ms; the softmax prologue x * s + mask: even). The first,
 * switch-based evaluator paid 2-3 cycles of dispatch per op and vector,
 * and lone cheap ops had kept their tile loops then. */
static int worth_a_run(const fe_k_prog *p, const instr *code, int k0, int k1)
{
    for (int k = k0; k < k1; k++) {
        int vc = vm_code(p, &code[k]);
        if (vc != FE_V_ST && vc != FE_V_LD)
            return 1;
    }
    return 0;
}

/* Table indices are int8_t: a run is cut at 24 instructions (at most 4
 * entries each). */
int fe_k_prog_build_runs(fe_k_prog *p, fe_error *err)
{
    int n = p->f.ncode, out = 0;
    instr *code = p->f.code;
    instr *nc = malloc((size_t)(n ? n : 1) * sizeof(instr));
    vtr t;
    t.def = malloc((size_t)(p->f.nslots + 1) * sizeof(int));
    t.spill = malloc((size_t)(n + 1));
    if (fe_k_vop_binary(FE_OP_ADD) < 0) {   /* no vector programs on this build */
        free(nc);
        free(t.def);
        free(t.spill);
        return 0;
    }
    if (!nc || !t.def || !t.spill)
        goto oom;
    for (int k = 0; k < n;) {
        if (vm_code(p, &code[k]) < 0) {
            nc[out++] = code[k++];
            continue;
        }
        int k1 = k;
        while (k1 < n && k1 - k < 24 && vm_code(p, &code[k1]) >= 0)
            k1++;
        if (!worth_a_run(p, code, k, k1)) {
            while (k < k1)
                nc[out++] = code[k++];
            continue;
        }
        vrun *rn = realloc(p->runs, (size_t)(p->nruns + 1) * sizeof(vrun));
        if (!rn)
            goto oom;
        p->runs = rn;
        vrun *r = &p->runs[p->nruns];
        r->op0 = p->nvops;
        r->ent0 = p->nvents;
        memset(t.spill, 0, (size_t)(n + 1));
        t.emit = 0;
        t.ssq = -1;
        if (vm_translate(p, &t, r, code, n, k, k1))
            goto oom;
        /* An rms_norm right after the run, of a row the run makes: the run
         * sums its squares as it goes, saving the rms_norm a pass over the
         * row (Add+RMSNorm: 88.5 -> 92% of copy, in turns). */
        r->ssq = -1;
        if (k1 < n && code[k1].code == I_RMS && code[k1].a.kind == K_SLOT &&
            code[k1].c.kind == K_NONE && t.def[code[k1].a.idx] >= 0) {
            t.ssq = t.def[code[k1].a.idx];
            r->ssq = p->f.nrowv++;
            code[k1].c = mk(K_ROW, r->ssq);
        }
        t.emit = 1;
        if (vm_translate(p, &t, r, code, n, k, k1))
            goto oom;
        r->nops = p->nvops - r->op0;
        r->nent = p->nvents - r->ent0;
        if (r->nent > p->maxent)
            p->maxent = r->nent;
        if (r->nops > p->maxops)
            p->maxops = r->nops;
        instr vi;
        memset(&vi, 0, sizeof vi);
        vi.code = I_VM;
        vi.aux = (int16_t)p->nruns++;
        nc[out++] = vi;
        p->nvm += k1 - k;
        k = k1;
    }
    if (out)   /* a program of no instructions has no code array */
        memcpy(code, nc, (size_t)out * sizeof(instr));
    p->nexec = out;
    free(nc);
    free(t.def);
    free(t.spill);
    return 0;
oom:
    free(nc);
    free(t.def);
    free(t.spill);
    return fe_error_set(err, FE_ENOMEM, "fused: out of memory"), -1;
}
