/* fused_show.c: a compiled fused program as a reader sees it (fuseeng run
 * --show-kernels), as Inductor's output code shows its Triton kernels:
 * the domain and its tile width, what each input and output is, then the
 * instructions as statements over named values.
 *
 *   t3      a scratch tile (one tile's width of floats, in L1)
 *   row2    one float per row (a reduction's result, a row-wise operand)
 *   in0     input 0, out1 output 1 (named in the header)
 *   anchor  the matmul / conv output block an epilogue reads
 *   acc     the register accumulator of a register pass (vecprog.h)
 */
#include <stdio.h>

#include "fused_prog.h"
#include "ops.h"
#include "vecprog.h"

static void opnd_text(FILE *f, const fe_k_prog *p, opnd o)
{
    switch (o.kind) {
    case K_SLOT: fprintf(f, "t%d", o.idx); break;
    case K_IN: fprintf(f, "in%d", o.idx); break;
    case K_ROW: fprintf(f, "row%d", o.idx); break;
    case K_CONST: fprintf(f, "%g", (double)p->f.consts[o.idx]); break;
    case K_ANCHOR: fprintf(f, "anchor"); break;
    default: fprintf(f, "-"); break;
    }
}

static const char *op_name(int op)
{
    return op >= 0 && op < FE_NOPS ? fe_op_get(op)->name : "?";
}

/* Names of the register evaluator's ops (FE_V_*). */
_Static_assert(FE_V_NOPS == 27, "a new FE_V_ op needs its name in vop_name");
static const char *vop_name(int v)
{
    static const char *const names[FE_V_NOPS] = {
        [FE_V_LD] = "load", [FE_V_ST] = "store", [FE_V_RELU] = "relu", [FE_V_SILU] = "silu",
        [FE_V_SIGMOID] = "sigmoid", [FE_V_TANH] = "tanh", [FE_V_EXP] = "exp", [FE_V_NEG] = "neg",
        [FE_V_ABS] = "abs", [FE_V_SQRT] = "sqrt", [FE_V_RSQRT] = "rsqrt", [FE_V_RECIP] = "recip",
        [FE_V_GELU_TANH] = "gelu_tanh", [FE_V_HARDSIGMOID] = "hardsigmoid",
        [FE_V_HARDSWISH] = "hardswish", [FE_V_SIN] = "sin", [FE_V_COS] = "cos", [FE_V_ADD] = "add", [FE_V_SUB] = "sub", [FE_V_MUL] = "mul",
        [FE_V_DIV] = "div", [FE_V_MAX] = "max", [FE_V_MIN] = "min", [FE_V_FMA] = "fma",
        [FE_V_WHERE] = "where", [FE_V_SSQ] = "ssq", [FE_V_END] = "end"};
    return v >= 0 && v < FE_V_NOPS && names[v] ? names[v] : "?";
}

/* Operand k of a register op: its table entry when in memory, else acc. */
static void vopnd_text(FILE *f, const fe_k_prog *p, const vrun *r, const vop *o, int k)
{
    if (!(FE_V_INMEM(o->code) & (1 << k))) {
        fprintf(f, "acc");
        return;
    }
    const vent *e = &p->vents[r->ent0 + o->e[k]];
    if (e->out >= 0)
        fprintf(f, "out%d", e->out);
    else
        opnd_text(f, p, e->o);
}

static int vop_arity(int v)
{
    if (v == FE_V_FMA || v == FE_V_WHERE)
        return 3;
    if (v >= FE_V_ADD && v <= FE_V_MIN)
        return 2;
    return 1;
}

static void show_run(FILE *f, const fe_k_prog *p, const vrun *r, const char *indent)
{
    fprintf(f, "%sregister pass, %d ops on strips of %d x %d floats:\n", indent, r->nops,
            FE_K_VSTRIP, FE_K_VLANES);
    for (int k = 0; k < r->nops; k++) {
        const vop *o = &p->vops[r->op0 + k];
        int v = FE_V_OP(o->code);
        fprintf(f, "%s  ", indent);
        if (v == FE_V_LD) {
            fprintf(f, "acc = ");
            vopnd_text(f, p, r, o, 0);
        } else if (v == FE_V_ST) {
            vopnd_text(f, p, r, o, 0);
            fprintf(f, " = acc");
        } else if (v == FE_V_SSQ) {
            fprintf(f, "row%d += sum(acc * acc)", r->ssq);
        } else {
            fprintf(f, "acc = %s(", vop_name(v));
            for (int a = 0; a < vop_arity(v); a++) {
                fprintf(f, a ? ", " : "");
                vopnd_text(f, p, r, o, a);
            }
            fprintf(f, ")");
        }
        fprintf(f, "\n");
    }
}

/* One instruction as a statement: d = what(a, b, c). */
static void show_instr(FILE *f, const fe_k_prog *p, const instr *in, const char *indent)
{
    fprintf(f, "%s", indent);
    switch (in->code) {
    case I_STORE:
    case I_STOREROW:
        fprintf(f, "out%d = ", in->aux);
        opnd_text(f, p, in->a);
        fprintf(f, in->code == I_STOREROW ? "  (one value per row)\n" : "\n");
        return;
    case I_ROUND:
        opnd_text(f, p, in->d);
        fprintf(f, " = round to %s\n", fe_dtype_name(in->op));
        return;
    case I_COLACC:
        fprintf(f, "out%d = %s down each column of ", in->aux, op_name(p->f.outs[in->aux].acc));
        opnd_text(f, p, in->a);
        fprintf(f, "  (each thread's rows folded in, the threads combined when the run ends)\n");
        return;
    default:
        break;
    }
    opnd_text(f, p, in->d);
    fprintf(f, " = ");
    switch (in->code) {
    case I_LOAD: fprintf(f, "load in%d", in->aux); break;
    case I_LOADROW: fprintf(f, "load in%d (one value per row)", in->aux); break;
    case I_EXPAND:
        fprintf(f, "expand ");
        opnd_text(f, p, in->a);
        break;
    case I_UNARY:
        fprintf(f, "%s(", op_name(in->op));
        opnd_text(f, p, in->a);
        fprintf(f, ")");
        break;
    case I_BINARY:
    case I_WHERE:
    case I_FMA:
        fprintf(f, "%s(", in->code == I_BINARY ? op_name(in->op) : in->code == I_WHERE ? "where" : "fma");
        opnd_text(f, p, in->a);
        fprintf(f, ", ");
        opnd_text(f, p, in->b);
        if (in->code != I_BINARY) {
            fprintf(f, ", ");
            opnd_text(f, p, in->c);
        }
        fprintf(f, ")");
        if (in->code == I_FMA && in->mx)
            fprintf(f, ", row%d = its row max", in->mx - 1);
        break;
    case I_REDUCE:
        fprintf(f, "%s over the row of ", op_name(in->op));
        opnd_text(f, p, in->a);
        break;
    case I_SOFTMAX:
    case I_RMS:
    case I_LN:
        fprintf(f, "%s(", in->code == I_SOFTMAX ? (in->aux ? "log_softmax" : "softmax")
                          : in->code == I_RMS ? "rms_norm" : "layer_norm");
        opnd_text(f, p, in->a);
        if (in->code != I_SOFTMAX && in->b.kind) {
            fprintf(f, ", weight ");
            opnd_text(f, p, in->b);
        }
        if (in->code == I_LN && in->c.kind) {
            fprintf(f, ", bias ");
            opnd_text(f, p, in->c);
        }
        if (in->code != I_SOFTMAX)
            fprintf(f, ", eps %g", (double)in->f);
        fprintf(f, ")");
        if (in->code == I_RMS && in->c.kind == K_ROW)
            fprintf(f, " with the sum of squares row%d", in->c.idx);
        if (in->st)
            fprintf(f, ", streamed to out%d", in->st - 1);
        break;
    default:
        fprintf(f, "instruction %d", in->code);
        break;
    }
    fprintf(f, "\n");
}

void fe_k_prog_show(const fe_k_prog *p, const fe_graph *g, const char *indent, FILE *f)
{
    static const char *const cols[] = {"walks the columns", "one value broadcast along the columns",
                                       "gathered column by column"};
    fprintf(f, "%sdomain %lld rows x %lld columns; %s %lld floats; %d scratch tile%s; %d thread%s%s\n",
            indent, (long long)p->f.rows, (long long)p->f.C, p->f.full_rows ? "whole rows of" : "tiles of",
            (long long)(p->f.full_rows ? p->f.C : p->T), p->f.nslots, p->f.nslots == 1 ? "" : "s",
            p->nthreads, p->nthreads == 1 ? "" : "s",
            p->f.copy ? "; bytes copied as they are (the per-op kernels' strided copy)"
            : p->colblock ? "; column chunks over blocks of rows"
            : p->pack > 1 ? "; a tile is whole rows end to end" : "");
    for (int k = 0; k < p->f.nins; k++) {
        const pin *in = &p->f.ins[k];
        const fe_tensor *t = fe_graph_tensor(g, in->tensor);
        fprintf(f, "%sin%d   %s %s", indent, k, fe_tensor_name(g, t), fe_dtype_name(in->dtype));
        if (in->view >= 0) {   /* a folded view: its strided load */
            fprintf(f, " viewed as %s (offset %lld, row strides", fe_tensor_name(g,
                    fe_graph_tensor(g, in->view)), (long long)in->base);
            for (int a = 0; a < p->f.nrdims; a++)
                fprintf(f, "%s%lld", a ? "," : " ", (long long)in->rst[a]);
            if (in->col == COL_GENERAL && p->f.C > 1)
                fprintf(f, ", columns at %lld, %lld, ..", (long long)in->ctab[0], (long long)in->ctab[1]);
            fprintf(f, ")");
        }
        fprintf(f, ": %s%s%s\n", cols[in->col], in->direct ? ", read in place" : "",
                in->rowinv ? ", the same for every row" : "");
    }
    for (int k = 0; k < p->f.nouts; k++) {
        const pout *o = &p->f.outs[k];
        fprintf(f, "%sout%d  %s %s%s", indent, k, fe_tensor_name(g, fe_graph_tensor(g, o->tensor)),
                fe_dtype_name(o->dtype), o->nt ? ": streaming stores (past the caches)" : "");
        if (o->strided) {   /* a concat's operand: its part of the concat */
            fprintf(f, "%s part from offset %lld, row strides", o->nt ? ";" : ":", (long long)o->base);
            for (int a = 0; a < p->f.nrdims; a++)
                fprintf(f, "%s%lld", a ? ", " : " ", (long long)o->rst[a]);
        }
        if (o->acc)
            fprintf(f, "%s a column %s of the whole domain", o->nt || o->strided ? ";" : ":",
                    op_name(o->acc));
        fprintf(f, "\n");
    }
    for (int i = 0; i < p->nexec; i++) {
        const instr *in = &p->f.code[i];
        if (in->code == I_VM)
            show_run(f, p, &p->runs[in->aux], indent);
        else
            show_instr(f, p, in, indent);
    }
}
