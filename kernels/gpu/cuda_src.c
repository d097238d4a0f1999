/* cuda_src.c: printing an analysed group as CUDA C (cuda_src.h).
 *
 * The instructions are printed in their order, each as a statement over
 * the values it names: a FULL value is a register array s<i>[K] (K values
 * per thread, the columns j = lane + k * G of a group of G threads), a
 * ROW value a scalar r<i> that every thread of the row holds, an input
 * read in place a load at (row, j). The arithmetic is the CPU reference's
 * (kernels/ops/elemwise.c), written again in CUDA: the same formulas, NaN
 * rules and conversions, so that the two agree within rounding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_src.h"
#include "graph.h"
#include "ops.h"

/* Helpers every kernel starts with: dtype conversions written with PTX's
 * conversions and bit operations (NVRTC then needs no header), NaN-keeping
 * max / min, and float to integer as the CPU converts (NaN to 0,
 * saturating). */
const char fe_cuda_prelude[] =
    "typedef unsigned short u16;\n"
    "static __device__ __forceinline__ float h2f(u16 h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "static __device__ __forceinline__ u16 f2h(float f) { u16 h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "static __device__ __forceinline__ float b2f(u16 b) { return __uint_as_float((unsigned)b << 16); }\n"
    "static __device__ __forceinline__ u16 f2b(float f) {\n"
    "  unsigned u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40);\n"
    "  return (u16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
    "}\n"
    "static __device__ __forceinline__ long long f2i(float x) {\n"
    "  if (x != x) return 0;\n"
    "  if (x >= 9.2233720e18f) return 0x7fffffffffffffffLL;\n"
    "  if (x <= -9.2233720e18f) return (long long)(-0x7fffffffffffffffLL - 1);\n"
    "  return (long long)x;\n"
    "}\n"
    "static __device__ __forceinline__ float mxn(float a, float b) { return a != a || a > b ? a : b; }\n"
    "static __device__ __forceinline__ float mnn(float a, float b) { return a != a || a < b ? a : b; }\n"
    "static __device__ __forceinline__ float hard6(float v) { float t = v + 3.0f; t = t < 0.0f ? 0.0f : t; return t > 6.0f ? 6.0f : t; }\n"
    /* four consecutive elements in one access (16 or 8 bytes, aligned) */
    "static __device__ __forceinline__ void ld4_f32(const float *p, float *v) { float4 t = *(const float4 *)p; v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w; }\n"
    "static __device__ __forceinline__ void ld4_f16(const u16 *p, float *v) { uint2 t = *(const uint2 *)p; v[0] = h2f((u16)t.x); v[1] = h2f((u16)(t.x >> 16)); v[2] = h2f((u16)t.y); v[3] = h2f((u16)(t.y >> 16)); }\n"
    "static __device__ __forceinline__ void ld4_bf16(const u16 *p, float *v) { uint2 t = *(const uint2 *)p; v[0] = b2f((u16)t.x); v[1] = b2f((u16)(t.x >> 16)); v[2] = b2f((u16)t.y); v[3] = b2f((u16)(t.y >> 16)); }\n"
    "static __device__ __forceinline__ void st4_f32(float *p, const float *v) { *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]); }\n"
    "static __device__ __forceinline__ void st4_f16(u16 *p, const float *v) { *(uint2 *)p = make_uint2(f2h(v[0]) | ((unsigned)f2h(v[1]) << 16), f2h(v[2]) | ((unsigned)f2h(v[3]) << 16)); }\n"
    "static __device__ __forceinline__ void st4_bf16(u16 *p, const float *v) { *(uint2 *)p = make_uint2(f2b(v[0]) | ((unsigned)f2b(v[1]) << 16), f2b(v[2]) | ((unsigned)f2b(v[3]) << 16)); }\n";

/* A softmax's exponential. Measured on the H200 (softmax(x * 0.125 +
 * mask) over [128, 2048, 2048] f32, share of the device copy's
 * bandwidth): this form, a max and then a sum reduction, 76%; the online
 * softmax (each thread's max and sum of exponentials joined in one
 * reduction) with exp2f of a product 67%; a block walking the heads with
 * the mask row kept in registers 72%, and prefetching the next row
 * changed nothing. */
#define SOFTMAX_EXP "expf(A_ - m_)"

typedef struct gen {
    const fe_k_fused *p;
    FILE *f;
    int kind;
    int K, G;                  /* values per thread, threads per row */
    int rowarr;                /* ROW values differ between a thread's K values (elementwise) */
    int vec;                   /* elementwise over 4 consecutive columns, vector accesses */
    const char *sfx;           /* integer constants' suffix: "" (32-bit indices) or "LL" */
    fe_error *err;
    int bad;                   /* set with err on the first instruction not taken */
} gen;

const char *fe_cuda_ctype(int dt)
{
    switch (dt) {
    case FE_F32: return "float";
    case FE_F16: case FE_BF16: return "u16";
    case FE_I64: return "long long";
    case FE_I32: return "int";
    case FE_I8: return "signed char";
    default: return "unsigned char";
    }
}

/* Expression converting the element at ptr[off] of dtype dt to float. */
void fe_cuda_load_expr(FILE *f, int dt, const char *ptr, const char *off)
{
    switch (dt) {
    case FE_F16: fprintf(f, "h2f(%s[%s])", ptr, off); break;
    case FE_BF16: fprintf(f, "b2f(%s[%s])", ptr, off); break;
    case FE_BOOL: fprintf(f, "(%s[%s] ? 1.0f : 0.0f)", ptr, off); break;
    case FE_F32: fprintf(f, "%s[%s]", ptr, off); break;
    default: fprintf(f, "(float)%s[%s]", ptr, off); break;
    }
}

/* Statement storing float v at ptr[off] as dtype dt. */
void fe_cuda_store_stmt(FILE *f, int dt, const char *ptr, const char *off, const char *v)
{
    switch (dt) {
    case FE_F16: fprintf(f, "%s[%s] = f2h(%s);", ptr, off, v); break;
    case FE_BF16: fprintf(f, "%s[%s] = f2b(%s);", ptr, off, v); break;
    case FE_BOOL: fprintf(f, "%s[%s] = (%s) != 0.0f;", ptr, off, v); break;
    case FE_I64: fprintf(f, "%s[%s] = f2i(%s);", ptr, off, v); break;
    case FE_I32: fprintf(f, "%s[%s] = (int)(unsigned)(unsigned long long)f2i(%s);", ptr, off, v); break;
    case FE_I8: fprintf(f, "%s[%s] = (signed char)(unsigned char)(unsigned long long)f2i(%s);", ptr, off, v); break;
    default: fprintf(f, "%s[%s] = %s;", ptr, off, v); break;
    }
}

/* Expression rounding float v as a store of dtype dt and a load back would. */
static void round_expr(FILE *f, int dt, const char *v)
{
    switch (dt) {
    case FE_F16: fprintf(f, "h2f(f2h(%s))", v); break;
    case FE_BF16: fprintf(f, "b2f(f2b(%s))", v); break;
    case FE_BOOL: fprintf(f, "((%s) != 0.0f ? 1.0f : 0.0f)", v); break;
    case FE_I64: fprintf(f, "(float)f2i(%s)", v); break;
    case FE_I32: fprintf(f, "(float)(int)(unsigned)(unsigned long long)f2i(%s)", v); break;
    case FE_I8: fprintf(f, "(float)(signed char)(unsigned char)(unsigned long long)f2i(%s)", v); break;
    default: fprintf(f, "%s", v); break;
    }
}

/* The offset, over n axes of sizes dims and strides st, of flat index
 * `var` (row-major), as an expression of constants. */
static void offset_expr(FILE *f, int n, const int64_t *dims, const int64_t *st, const char *var,
                        const char *sfx)
{
    int64_t inner = 1;
    int any = 0;
    fprintf(f, "(");
    for (int a = n - 1; a >= 0; a--) {
        if (st[a] != 0 && dims[a] != 1) {
            fprintf(f, "%s", any ? " + " : "");
            if (a == 0 && inner == 1)
                fprintf(f, "%s", var);
            else if (a == 0)
                fprintf(f, "(%s / %lld%s)", var, (long long)inner, sfx);
            else if (inner == 1)
                fprintf(f, "(%s %% %lld%s)", var, (long long)dims[a], sfx);
            else
                fprintf(f, "(%s / %lld%s %% %lld%s)", var, (long long)inner, sfx, (long long)dims[a], sfx);
            fprintf(f, " * %lld%s", (long long)st[a], sfx);
            any = 1;
        }
        inner *= dims[a];
    }
    fprintf(f, "%s)", any ? "" : "0");
}

/* Element offset of input i at (row, j) as an expression. */
static void in_offset(gen *x, int i, char *buf, size_t n)
{
    const fe_k_fused *p = x->p;
    const pin *in = &p->ins[i];
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) {
        snprintf(buf, n, "0");
        return;
    }
    if (in->base)
        fprintf(f, "%lld%s + ", (long long)in->base, x->sfx);
    if (in->rowinv)
        fprintf(f, "0");
    else
        offset_expr(f, p->nrdims, p->rdims, in->rst, "row", x->sfx);
    fprintf(f, " + ");
    if (in->col == COL_CONTIG)
        fprintf(f, "j");
    else if (in->col == COL_BCAST)
        fprintf(f, "0");
    else
        offset_expr(f, p->mr - p->nrdims, p->md + p->nrdims, in->mst + p->nrdims, "j", x->sfx);
    fclose(f);
    snprintf(buf, n, "%s", s ? s : "0");
    free(s);
}

/* Element offset of output o at (row, j). */
static void out_offset(gen *x, int o, char *buf, size_t n)
{
    const fe_k_fused *p = x->p;
    const pout *po = &p->outs[o];
    if (!po->strided) {
        snprintf(buf, n, "row * %lld%s + j", (long long)p->C, x->sfx);
        return;
    }
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) {
        snprintf(buf, n, "0");
        return;
    }
    fprintf(f, "%lld%s + ", (long long)po->base, x->sfx);
    offset_expr(f, p->nrdims, p->rdims, po->rst, "row", x->sfx);
    fprintf(f, " + j");
    fclose(f);
    snprintf(buf, n, "%s", s ? s : "0");
    free(s);
}

/* A float literal of v (finite) that C++ reads back exactly. */
static void float_lit(char *buf, size_t n, double v)
{
    char t[24];
    snprintf(t, sizeof t, "%.9g", v);
    snprintf(buf, n, "%s%sf", t, strpbrk(t, ".e") ? "" : ".0");
}

/* Operand o as an expression inside a loop over k (j set). */
static void opnd_expr(gen *x, opnd o, char *buf, size_t n)
{
    switch (o.kind) {
    case K_SLOT: snprintf(buf, n, "s%d[k]", o.idx); break;
    case K_ROW: snprintf(buf, n, x->rowarr ? "r%d[k]" : "r%d", o.idx); break;
    case K_CONST: {
        float v = x->p->consts[o.idx];
        if (v != v)
            snprintf(buf, n, "__int_as_float(0x7fc00000)");
        else if (v > 3.4e38f || v < -3.4e38f)
            snprintf(buf, n, "%s__int_as_float(0x7f800000)", v < 0 ? "-" : "");
        else
            float_lit(buf, n, (double)v);
        break;
    }
    case K_IN: {
        if (x->vec && x->p->ins[o.idx].col == COL_CONTIG) {
            snprintf(buf, n, "v%d[k]", o.idx);
            break;
        }
        char off[1024], *s = NULL;
        size_t len = 0;
        char ptr[16];
        snprintf(ptr, sizeof ptr, "i%d", o.idx);
        in_offset(x, o.idx, off, sizeof off);
        FILE *f = open_memstream(&s, &len);
        if (f) {
            fe_cuda_load_expr(f, x->p->ins[o.idx].dtype, ptr, off);
            fclose(f);
        }
        snprintf(buf, n, "%s", s ? s : "0.0f");
        free(s);
        break;
    }
    default:
        snprintf(buf, n, "0.0f");
        x->bad = 1;
        fe_error_set(x->err, FE_EINPUT, "cuda: an operand of kind %d has no CUDA form", o.kind);
        break;
    }
}

static void unary_expr(FILE *f, int op, int tanh_gelu, const char *a)
{
    switch (op) {
    case FE_OP_RELU: fprintf(f, "((%s) > 0.0f || (%s) != (%s) ? (%s) : 0.0f)", a, a, a, a); break;
    case FE_OP_GELU:
        if (tanh_gelu)
            fprintf(f, "((%s) / (1.0f + expf(-(1.5957691216057308f * (%s) * (1.0f + 0.044715f * (%s) * (%s))))))",
                    a, a, a, a);
        else
            fprintf(f, "(0.5f * (%s) * (1.0f + erff((%s) * 0.70710678118654752f)))", a, a);
        break;
    case FE_OP_SILU: fprintf(f, "((%s) / (1.0f + expf(-(%s))))", a, a); break;
    case FE_OP_SIGMOID: fprintf(f, "(1.0f / (1.0f + expf(-(%s))))", a); break;
    case FE_OP_TANH: fprintf(f, "tanhf(%s)", a); break;
    case FE_OP_EXP: fprintf(f, "expf(%s)", a); break;
    case FE_OP_LOG: fprintf(f, "logf(%s)", a); break;
    case FE_OP_NEG: fprintf(f, "(-(%s))", a); break;
    case FE_OP_ABS: fprintf(f, "fabsf(%s)", a); break;
    case FE_OP_SQRT: fprintf(f, "sqrtf(%s)", a); break;
    case FE_OP_RSQRT: fprintf(f, "(1.0f / sqrtf(%s))", a); break;
    case FE_OP_RECIPROCAL: fprintf(f, "(1.0f / (%s))", a); break;
    case FE_OP_SIN: fprintf(f, "sinf(%s)", a); break;
    case FE_OP_COS: fprintf(f, "cosf(%s)", a); break;
    case FE_OP_ERF: fprintf(f, "erff(%s)", a); break;
    case FE_OP_HARDSIGMOID: fprintf(f, "(hard6(%s) / 6.0f)", a); break;
    case FE_OP_HARDSWISH: fprintf(f, "((%s) * hard6(%s) / 6.0f)", a, a); break;
    default: fprintf(f, "(%s)", a); break;   /* cast: the rounding follows as I_ROUND */
    }
}

static void binary_expr(FILE *f, int op, const char *a, const char *b)
{
    switch (op) {
    case FE_OP_ADD: fprintf(f, "((%s) + (%s))", a, b); break;
    case FE_OP_SUB: fprintf(f, "((%s) - (%s))", a, b); break;
    case FE_OP_MUL: fprintf(f, "((%s) * (%s))", a, b); break;
    case FE_OP_DIV: fprintf(f, "((%s) / (%s))", a, b); break;
    case FE_OP_MAXIMUM: fprintf(f, "mxn(%s, %s)", a, b); break;
    case FE_OP_MINIMUM: fprintf(f, "mnn(%s, %s)", a, b); break;
    case FE_OP_POW: fprintf(f, "((%s) == 2.0f ? (%s) * (%s) : powf(%s, %s))", b, a, a, a, b); break;
    default: fprintf(f, "(%s)", a); break;
    }
}

/* Open a loop over this thread's columns of the row; close with loop_end. */
static void loop_begin(gen *x)
{
    if (x->vec && x->kind == FE_CUDA_ROWS)
        fprintf(x->f, "    #pragma unroll\n    for (int k = 0; k < K; k++) { const IX j = VJ(k >> 2) + (k & 3); if (j < C) {\n");
    else if (x->vec)
        fprintf(x->f, "    #pragma unroll\n    for (int k = 0; k < 4; k++) { const IX j = j0 + k; {\n");
    else if (x->kind == FE_CUDA_ROWS)
        fprintf(x->f, "    #pragma unroll\n    for (int k = 0; k < K; k++) { const IX j = lane + (IX)k * G; if (j < C) {\n");
    else if (x->kind == FE_CUDA_ELEM)
        fprintf(x->f, "    #pragma unroll\n    for (int k = 0; k < K; k++) { const IX row = rw[k], j = jj[k]; if (row < ROWS) {\n");
    else
        fprintf(x->f, "    { const int k = 0; {\n");
}

static void loop_end(gen *x)
{
    fprintf(x->f, "    }}\n");
}

/* Store expr (over k and j) to output o at every column this thread
 * holds: element by element, or, in vector mode, gathered four at a time
 * into one access each. */
static void store_all(gen *x, int o, const char *expr)
{
    const fe_k_fused *p = x->p;
    char ptr[16], off[1024];
    int dt = p->outs[o].dtype;
    snprintf(ptr, sizeof ptr, "o%d", o);
    out_offset(x, o, off, sizeof off);
    if (!x->vec) {
        loop_begin(x);
        fprintf(x->f, "      ");
        fe_cuda_store_stmt(x->f, dt, ptr, off, expr);
        fprintf(x->f, "\n");
        loop_end(x);
        return;
    }
    const char *sf = dt == FE_F32 ? "f32" : dt == FE_F16 ? "f16" : "bf16";
    fprintf(x->f, "    { float t_[K];\n");
    loop_begin(x);
    fprintf(x->f, "      t_[k] = %s;\n", expr);
    loop_end(x);
    if (x->kind == FE_CUDA_ROWS)
        fprintf(x->f, "    #pragma unroll\n    for (int v = 0; v < K / 4; v++) { const IX j = VJ(v); "
                "if (j < C) st4_%s(%s + (%s), t_ + 4 * v); } }\n", sf, ptr, off);
    else
        fprintf(x->f, "    { const IX j = j0; st4_%s(%s + (%s), t_); } }\n", sf, ptr, off);
}

/* Whether operand o differs between columns: a FULL value, or an input
 * read at the column. */
static int per_column(const gen *x, opnd o)
{
    return o.kind == K_SLOT || (o.kind == K_IN && x->p->ins[o.idx].col != COL_BCAST);
}

/* d = expression over the operands, FULL (in a loop) or ROW (a scalar).
 * A ROW value computed from per-column operands means a row of one
 * column (the analysis calls such values either): the column's thread
 * computes it and, in a row kernel, a max with -inf elsewhere hands it to
 * the row's threads (exact, NaN too). */
static void assign(gen *x, const instr *in, const char *rhs)
{
    opnd d = in->d;
    int col = per_column(x, in->a) || per_column(x, in->b) || per_column(x, in->c);
    if (d.kind == K_SLOT) {
        loop_begin(x);
        fprintf(x->f, "      s%d[k] = %s;\n", d.idx, rhs);
        loop_end(x);
    } else if (x->rowarr) {
        loop_begin(x);
        fprintf(x->f, "      r%d[k] = %s;\n", d.idx, rhs);
        loop_end(x);
    } else if (!col) {
        fprintf(x->f, "    r%d = %s;\n", d.idx, rhs);
    } else if (x->p->C != 1 || x->vec) {
        x->bad = 1;
        fe_error_set(x->err, FE_EINPUT, "cuda: a row value from per-column operands over %lld columns",
                     (long long)x->p->C);
    } else if (x->kind == FE_CUDA_ROWS) {
        fprintf(x->f, "    { float t_ = -__int_as_float(0x7f800000);\n");
        loop_begin(x);
        fprintf(x->f, "      t_ = %s;\n", rhs);
        loop_end(x);
        fprintf(x->f, "    r%d = grp_max(t_); }\n", d.idx);
    } else {
        loop_begin(x);   /* columns: the one column's thread */
        fprintf(x->f, "      r%d = %s;\n", d.idx, rhs);
        loop_end(x);
    }
}

/* The expression of instruction in (unary, binary, where, fma), for its
 * destination's form. */
static char *op_rhs(gen *x, const instr *in)
{
    char a[1200], b[1200], c[1200], *s = NULL;
    size_t len = 0;
    opnd_expr(x, in->a, a, sizeof a);
    if (in->b.kind)
        opnd_expr(x, in->b, b, sizeof b);
    if (in->c.kind)
        opnd_expr(x, in->c, c, sizeof c);
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return NULL;
    switch (in->code) {
    case I_UNARY: unary_expr(f, in->op, in->aux, a); break;
    case I_BINARY: binary_expr(f, in->op, a, b); break;
    case I_WHERE: fprintf(f, "((%s) != 0.0f ? (%s) : (%s))", a, b, c); break;
    case I_FMA: fprintf(f, "fmaf(%s, %s, %s)", a, b, c); break;
    case I_EXPAND: fprintf(f, "%s", a); break;
    default: break;
    }
    fclose(f);
    return s;
}

/* A reduction of the row into scalar dst (declared here when decl) of a
 * FULL operand: the thread's values combined, then the group's
 * (grp_<kind>). kind: sum, max, min; expr over k and j. */
static void row_reduce(gen *x, const char *dst, int decl, const char *kind, const char *expr)
{
    int sum = !strcmp(kind, "sum"), sumd = !strcmp(kind, "sumd"), max = !strcmp(kind, "max");
    const char *id = sum ? "0.0f" : sumd ? "0.0" : max ? "-__int_as_float(0x7f800000)"
                                                       : "__int_as_float(0x7f800000)";
    if (decl)
        fprintf(x->f, "    float %s;\n", dst);
    fprintf(x->f, "    { %s t_ = %s;\n", sumd ? "double" : "float", id);
    loop_begin(x);
    if (sum || sumd)
        fprintf(x->f, "      t_ += %s;\n", expr);
    else
        fprintf(x->f, "      t_ = %s(t_, %s);\n", max ? "mxn" : "mnn", expr);
    loop_end(x);
    fprintf(x->f, "    %s = grp_%s(t_); }\n", dst, kind);
}

/* A row op's result V_ (a macro over k and j): to its slot, or streamed
 * to the output it is stored in (in->st). A row of one column makes it a
 * ROW value, which every thread of the row holds: the one column's
 * thread computes it, a max with -inf elsewhere hands it to all (exact,
 * NaN too). */
static void row_result(gen *x, const instr *in)
{
    if (in->st) {
        store_all(x, in->st - 1, "V_");
    } else if (in->d.kind == K_ROW) {
        fprintf(x->f, "    { float t_ = -__int_as_float(0x7f800000);\n");
        loop_begin(x);
        fprintf(x->f, "      t_ = V_;\n");
        loop_end(x);
        fprintf(x->f, "    r%d = grp_max(t_); }\n", in->d.idx);
    } else {
        char d[64];
        opnd_expr(x, in->d, d, sizeof d);
        loop_begin(x);
        fprintf(x->f, "      %s = V_;\n", d);
        loop_end(x);
    }
    fprintf(x->f, "#undef V_\n");
}

static void gen_instr(gen *x, const instr *in, int pc)
{
    const fe_k_fused *p = x->p;
    FILE *f = x->f;
    char a[1200], off[1024], ptr[16], *rhs;
    switch (in->code) {
    case I_LOAD:
    case I_LOADROW: {
        snprintf(ptr, sizeof ptr, "i%d", in->aux);
        in_offset(x, in->aux, off, sizeof off);
        if (in->code == I_LOADROW && x->rowarr) {
            loop_begin(x);
            fprintf(f, "      { const IX j = 0; r%d[k] = ", in->d.idx);
            fe_cuda_load_expr(f, p->ins[in->aux].dtype, ptr, off);
            fprintf(f, "; (void)j; }\n");
            loop_end(x);
        } else if (in->code == I_LOADROW) {
            fprintf(f, "    { const IX j = 0; r%d = ", in->d.idx);
            fe_cuda_load_expr(f, p->ins[in->aux].dtype, ptr, off);
            fprintf(f, "; (void)j; }\n");
        } else {
            loop_begin(x);
            fprintf(f, "      s%d[k] = ", in->d.idx);
            if (x->vec && p->ins[in->aux].col == COL_CONTIG)
                fprintf(f, "v%d[k]", in->aux);
            else
                fe_cuda_load_expr(f, p->ins[in->aux].dtype, ptr, off);
            fprintf(f, ";\n");
            loop_end(x);
        }
        return;
    }
    case I_EXPAND: case I_UNARY: case I_BINARY: case I_WHERE: case I_FMA:
        rhs = op_rhs(x, in);
        if (!rhs) {
            x->bad = 1;
            fe_error_set(x->err, FE_ENOMEM, "cuda: out of memory");
            return;
        }
        assign(x, in, rhs);
        free(rhs);
        return;
    case I_ROUND: {
        char v[64];
        int loop = in->d.kind == K_SLOT || x->rowarr;
        if (in->d.kind == K_SLOT)
            snprintf(v, sizeof v, "s%d[k]", in->d.idx);
        else
            snprintf(v, sizeof v, x->rowarr ? "r%d[k]" : "r%d", in->d.idx);
        if (loop)
            loop_begin(x);
        fprintf(f, "      %s = ", v);
        round_expr(f, in->op, v);
        fprintf(f, ";\n");
        if (loop)
            loop_end(x);
        return;
    }
    case I_STORE:
        opnd_expr(x, in->a, a, sizeof a);
        store_all(x, in->aux, a);
        return;
    case I_STOREROW:
        opnd_expr(x, in->a, a, sizeof a);
        snprintf(ptr, sizeof ptr, "o%d", in->aux);
        if (x->kind == FE_CUDA_ELEM) {
            loop_begin(x);
            fprintf(f, "      if (j == 0) { ");
            fe_cuda_store_stmt(f, p->outs[in->aux].dtype, ptr, "row", a);
            fprintf(f, " }\n");
            loop_end(x);
            return;
        }
        fprintf(f, "    if (%s) { ", x->kind == FE_CUDA_ROWS ? "lane == 0" : "j == 0");
        fe_cuda_store_stmt(f, p->outs[in->aux].dtype, ptr, "row", a);
        fprintf(f, " }\n");
        return;
    default:
        break;
    }
    if (x->kind != FE_CUDA_ROWS && in->code != I_COLACC) {
        x->bad = 1;
        fe_error_set(x->err, FE_EINPUT, "cuda: instruction %d (a row op) outside a row kernel", pc);
        return;
    }
    if ((in->code == I_SOFTMAX || in->code == I_RMS || in->code == I_LN) && !in->st &&
        in->d.kind == K_ROW && p->C != 1) {
        x->bad = 1;   /* row_result hands a ROW result from the one column only */
        fe_error_set(x->err, FE_EINPUT, "cuda: instruction %d writes a row op of %lld columns into "
                     "a row value", pc, (long long)p->C);
        return;
    }
    switch (in->code) {
    case I_REDUCE: {
        char dst[32];
        opnd_expr(x, in->a, a, sizeof a);
        snprintf(dst, sizeof dst, "r%d", in->d.idx);
        /* sums in double as the CPU reference's: a row that cancels to
         * nearly nothing (the sum of a normalised row) keeps its digits */
        row_reduce(x, dst, 0, in->op == FE_OP_AMAX ? "max" : in->op == FE_OP_AMIN ? "min" : "sumd", a);
        if (in->op == FE_OP_MEAN)
            fprintf(f, "    %s = %s / %.1ff;\n", dst, dst, (double)p->C);
        return;
    }
    case I_SOFTMAX: {
        /* the CPU's rule: a row whose max is NaN or -inf is all NaN */
        opnd_expr(x, in->a, a, sizeof a);
        fprintf(f, "    {\n#define A_ (%s)\n", a);
        row_reduce(x, "m_", 1, "max", "A_");
        fprintf(f, "    int nan_ = m_ != m_ || m_ == -__int_as_float(0x7f800000);\n");
        /* a softmax kept in registers keeps its exponentials from the sum */
        int keep = !in->aux && !in->st && in->d.kind == K_SLOT;
        if (keep) {
            fprintf(f, "    float z_;\n    { float t_ = 0.0f;\n");
            loop_begin(x);
            fprintf(f, "      float e_ = " SOFTMAX_EXP ";\n      t_ += e_;\n      s%d[k] = e_;\n", in->d.idx);
            loop_end(x);
            fprintf(f, "    z_ = grp_sum(t_); }\n");
        } else {
            row_reduce(x, "z_", 1, "sum", SOFTMAX_EXP);
        }
        fprintf(f, "    float q_ = %s;\n", in->aux ? "logf(z_)" : "1.0f / z_");
        if (keep)
            fprintf(f, "#define E_ (s%d[k])\n", in->d.idx);
        fprintf(f, "#define V_ (nan_ ? __int_as_float(0x7fc00000) : %s)\n",
                in->aux ? "(A_ - m_) - q_" : keep ? "E_ * q_" : SOFTMAX_EXP " * q_");
        row_result(x, in);
        fprintf(f, "#undef A_\n%s    }\n", keep ? "#undef E_\n" : "");
        return;
    }
    case I_RMS: case I_LN: {
        char w[1200] = "1.0f", b[1200] = "0.0f", eps[48];
        opnd_expr(x, in->a, a, sizeof a);
        fprintf(f, "    {\n#define A_ (%s)\n", a);
        float_lit(eps, sizeof eps, (double)in->f);
        if (in->b.kind)
            opnd_expr(x, in->b, w, sizeof w);
        if (in->code == I_LN && in->c.kind)
            opnd_expr(x, in->c, b, sizeof b);
        if (in->code == I_LN) {
            row_reduce(x, "mu_", 1, "sum", "A_");
            fprintf(f, "    mu_ = mu_ / %.1ff;\n", (double)p->C);
            row_reduce(x, "v2_", 1, "sum", "(A_ - mu_) * (A_ - mu_)");
        } else {
            row_reduce(x, "v2_", 1, "sum", "A_ * A_");
        }
        fprintf(f, "    float rs_ = 1.0f / sqrtf(v2_ / %.1ff + %s);\n", (double)p->C, eps);
        if (in->code == I_LN)
            fprintf(f, "#define V_ ((A_ - mu_) * rs_ * (%s) + (%s))\n", w, b);
        else
            fprintf(f, "#define V_ (A_ * rs_ * (%s))\n", w);
        row_result(x, in);
        fprintf(f, "#undef A_\n    }\n");
        return;
    }
    case I_COLACC:
        opnd_expr(x, in->a, a, sizeof a);
        fprintf(f, "    { const int k = 0; ");
        switch (p->outs[in->aux].acc) {
        case FE_OP_AMAX: fprintf(f, "float v_ = %s; if (v_ != v_ || v_ > acc%d) acc%d = v_;", a, in->aux, in->aux); break;
        case FE_OP_AMIN: fprintf(f, "float v_ = %s; if (v_ != v_ || v_ < acc%d) acc%d = v_;", a, in->aux, in->aux); break;
        default: fprintf(f, "acc%d += (double)(%s);", in->aux, a); break;
        }
        fprintf(f, " }\n");
        return;
    default:
        x->bad = 1;
        fe_error_set(x->err, FE_EINPUT, "cuda: instruction code %d has no CUDA form", in->code);
        return;
    }
}

/* Group reductions for a group of G threads: a warp's shuffles, and for
 * a block, shared memory across its warps. */
static void reductions(gen *x)
{
    /* sumd: a sum accumulated in double (explicit sum and mean reductions) */
    static const char *kinds[4][3] = {{"sum", "a + b", "float"}, {"max", "mxn(a, b)", "float"},
                                      {"min", "mnn(a, b)", "float"}, {"sumd", "a + b", "double"}};
    for (int r = 0; r < 4; r++) {
        const char *t = kinds[r][2];
        fprintf(x->f, "static __device__ __forceinline__ %s op_%s(%s a, %s b) { return %s; }\n", t,
                kinds[r][0], t, t, kinds[r][1]);
        fprintf(x->f, "static __device__ __forceinline__ %s grp_%s(%s v) {\n", t, kinds[r][0], t);
        fprintf(x->f, "  for (int o = 16; o > 0; o >>= 1) v = op_%s(v, __shfl_xor_sync(0xffffffffu, v, o));\n",
                kinds[r][0]);
        if (x->G > 32) {
            fprintf(x->f, "  __shared__ %s red_[32];\n", t);
            fprintf(x->f, "  __syncthreads();\n"
                          "  if ((threadIdx.x & 31) == 0) red_[threadIdx.x >> 5] = v;\n"
                          "  __syncthreads();\n"
                          "  v = red_[0];\n"
                          "  for (int w = 1; w < %d; w++) v = op_%s(v, red_[w]);\n", x->G / 32, kinds[r][0]);
        }
        fprintf(x->f, "  return v;\n}\n");
    }
}

/* The largest element offset p reaches in any input or output, to pick
 * 32-bit indices when everything fits. */
static int64_t max_offset(const fe_k_fused *p)
{
    int64_t m = p->rows * p->C;
    for (int i = 0; i < p->nins; i++) {
        int64_t o = p->ins[i].base;
        for (int a = 0; a < p->mr; a++)
            o += (p->md[a] - 1) * (p->ins[i].mst[a] < 0 ? -p->ins[i].mst[a] : p->ins[i].mst[a]);
        m = o > m ? o : m;
    }
    for (int k = 0; k < p->nouts; k++) {
        const pout *o = &p->outs[k];
        int64_t e = o->base + p->C;
        for (int a = 0; o->strided && a < p->nrdims; a++)
            e += (p->rdims[a] - 1) * o->rst[a];
        m = e > m ? e : m;
    }
    return m;
}

static int vec_dtype(int dt)
{
    return dt == FE_F32 || dt == FE_F16 || dt == FE_BF16;
}

/* Whether p can take four consecutive columns at a time,
 * each tensor read and written in one aligned access: every input
 * contiguous along the columns (or one value a row) and every output too,
 * in f32, f16 or bf16, with rows starting at multiples of four. */
static int vectorizable(const fe_k_fused *p, int rows)
{
    if (p->C % 4 || p->nacc)
        return 0;
    for (int i = 0; i < p->nins; i++) {
        const pin *in = &p->ins[i];
        if (in->col == COL_GENERAL || (in->col == COL_CONTIG && !vec_dtype(in->dtype)) || in->base % 4)
            return 0;
        for (int a = 0; a < p->nrdims && in->col == COL_CONTIG; a++)
            if (in->rst[a] % 4)
                return 0;
    }
    for (int k = 0; k < p->nouts; k++) {
        const pout *o = &p->outs[k];
        if (!vec_dtype(o->dtype) || o->base % 4)
            return 0;
        for (int a = 0; o->strided && a < p->nrdims; a++)
            if (o->rst[a] % 4)
                return 0;
    }
    for (int i = 0; i < p->ncode && !rows; i++)
        if (p->code[i].code == I_STOREROW)
            return 0;
    return 1;
}

static int pow2_at_least(int64_t v)
{
    int p = 1;
    while (p < v && p < (1 << 20))
        p <<= 1;
    return p;
}

/* Which kernel shape p needs, and its launch. -1 with err when p mixes
 * row ops and column reductions.
 *
 * Note on the sizes. A memory-bound kernel needs many bytes in flight
 * (Little's law: at 4.8 TB/s and ~600 ns, about 20 KB per multiprocessor)
 * in few instructions. Where every tensor's rows allow it (vectorizable),
 * a thread reads four consecutive columns of each input in one access up
 * front: on the H200, swiglu, GELU and chain6 went from 66-84% of the
 * device copy with one scalar element a thread to 96-99%. Otherwise an
 * elementwise thread takes K = 4 elements (8 for 16-bit data) a grid
 * apart. A row kernel is a warp per row up to 512 columns (no
 * __syncthreads), else a block of 64 to 1024 threads, a power of two,
 * holding about 16 values of the row a thread in vector mode and 8
 * otherwise (measured with vectors: 4 and 8 a thread gave softmax over
 * 2048 columns 60% and 76% of copy and add+RMSNorm over 4096 82% and 84%;
 * 16 gave 76% and 93%). */
static int pick_shape(gen *x, int sms, fe_cuda_shape *sh)
{
    const fe_k_fused *p = x->p;
    int rowops = 0, narrow = 1;
    for (int i = 0; i < p->ncode; i++) {
        int c = p->code[i].code;
        rowops |= c == I_REDUCE || c == I_SOFTMAX || c == I_RMS || c == I_LN;
        if (c == I_VM)
            return fe_error_set(x->err, FE_EINPUT, "cuda: a CPU-lowered program"), -1;
    }
    for (int i = 0; i < p->nins; i++)
        narrow &= fe_dtype_size(p->ins[i].dtype) <= 2;
    if (rowops && p->nacc)
        return fe_error_set(x->err, FE_EINPUT, "cuda: row ops and column reductions in one program "
                            "have no CUDA kernel yet"), -1;
    memset(sh, 0, sizeof *sh);
    /* the margin covers a grid-stride loop's last step past the end */
    x->sfx = max_offset(p) < ((int64_t)1 << 31) - ((int64_t)1 << 25) ? "" : "LL";
    unsigned cap = (unsigned)(sms > 0 ? sms : 1) * 32;
    if (p->nacc) {
        sh->kind = FE_CUDA_COLS;
        sh->threads = 128;
        int64_t g = (p->C + 127) / 128;
        sh->grid = (unsigned)(g > 0 ? g : 1);
        x->K = x->G = 1;
    } else if (rowops) {
        sh->kind = FE_CUDA_ROWS;
        int vec = vectorizable(p, 1);
        if (p->C <= 512) {
            x->G = 32;
            sh->threads = 256;
            int64_t g = (p->rows + 7) / 8;
            sh->grid = (unsigned)(g < cap ? g : cap);
        } else {
            int per = vec ? 16 : 8;   /* measured on the H200: see the note above */
            int64_t gg = pow2_at_least((p->C + per - 1) / per);
            x->G = (int)(gg < 64 ? 64 : gg > 1024 ? 1024 : gg);
            sh->threads = (unsigned)x->G;
            sh->grid = (unsigned)(p->rows < cap ? p->rows : cap);
        }
        x->K = (int)((p->C + x->G - 1) / x->G);
        if (vec) {   /* vectors of 4: K a multiple of 4 */
            x->vec = 1;
            x->K = (int)((p->C + 4 * x->G - 1) / (4 * x->G)) * 4;
        }
    } else if (vectorizable(p, 0)) {
        sh->kind = FE_CUDA_ELEM;
        sh->threads = 256;
        x->vec = 1;
        x->K = 4;
        x->G = 1;
        int64_t g = (p->rows * p->C / 4 + 255) / 256;
        sh->grid = (unsigned)(g < cap * 4 ? g : cap * 4);
    } else {
        sh->kind = FE_CUDA_ELEM;
        sh->threads = 256;
        x->K = narrow ? 8 : 4;
        x->G = 1;
        x->rowarr = 1;
        int64_t total = p->rows * p->C, g = (total + 256 * x->K - 1) / (256 * x->K);
        sh->grid = (unsigned)(g < cap * 2 ? g : cap * 2);
    }
    if (sh->grid == 0)
        sh->grid = 1;
    sh->per_thread = x->K;
    x->kind = sh->kind;
    return 0;
}

/* The declarations of the values, then the instructions. A row kernel
 * in vector mode first reads every contiguous input's values of the row
 * (four at a time), so that all its loads are in flight at once. */
static void body(gen *x)
{
    const fe_k_fused *p = x->p;
    for (int i = 0; x->vec && x->kind == FE_CUDA_ROWS && i < p->nins; i++) {
        if (p->ins[i].col != COL_CONTIG)
            continue;
        char off[1024];
        int dt = p->ins[i].dtype;
        in_offset(x, i, off, sizeof off);
        fprintf(x->f, "    float v%d[K];\n    #pragma unroll\n    for (int v = 0; v < K / 4; v++) { const IX j = VJ(v); "
                "if (j < C) ld4_%s(i%d + (%s), v%d + 4 * v); }\n", i,
                dt == FE_F32 ? "f32" : dt == FE_F16 ? "f16" : "bf16", i, off, i);
    }
    if (p->copy && !x->vec && x->kind == FE_CUDA_ELEM) {
        /* a copy moves the values as they are: an i64 or i32 through a
         * float would lose the digits past 2^24 */
        char in[1024], out[1024];
        in_offset(x, 0, in, sizeof in);
        out_offset(x, 0, out, sizeof out);
        loop_begin(x);
        fprintf(x->f, "      o0[%s] = i0[%s];\n", out, in);
        loop_end(x);
        return;
    }
    for (int s = 0; s < p->nslots; s++)
        fprintf(x->f, "    float s%d[K];\n", s);
    for (int r = 0; r < p->nrowv; r++)
        fprintf(x->f, x->rowarr ? "    float r%d[K];\n" : "    float r%d = 0.0f;\n", r);
    for (int i = 0; i < p->ncode && !x->bad; i++)
        gen_instr(x, &p->code[i], i);
}

/* The arrays of K values a row kernel's thread holds: its slots and the
 * inputs it reads up front. */
static int row_arrays(const fe_k_fused *p)
{
    int n = p->nslots;
    for (int i = 0; i < p->nins; i++)
        n += p->ins[i].col == COL_CONTIG;
    return n;
}

char *fe_cuda_src(const fe_k_fused *p, const char *name, int sms, fe_cuda_shape *shape, fe_error *err)
{
    gen x;
    char *s = NULL;
    size_t len = 0;
    memset(&x, 0, sizeof x);
    x.p = p;
    x.err = err;
    if (pick_shape(&x, sms, shape))
        return NULL;
    shape->held = row_arrays(p) * x.K;
    x.f = open_memstream(&s, &len);
    if (!x.f)
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    FILE *f = x.f;
    const char *sfx = x.sfx;
    fprintf(f, "// fuseeng: %s kernel, %lld rows x %lld columns, %d thread%s a row, %d value%s a thread\n",
            shape->kind == FE_CUDA_ROWS ? "rows" : shape->kind == FE_CUDA_COLS ? "columns"
            : x.vec ? "elementwise (vector accesses)" : "elementwise",
            (long long)p->rows, (long long)p->C, x.G, x.G == 1 ? "" : "s", x.K, x.K == 1 ? "" : "s");
    fputs(fe_cuda_prelude, f);
    fprintf(f, "typedef %s IX;\n", sfx[0] ? "long long" : "int");
    if (shape->kind == FE_CUDA_ROWS)
        reductions(&x);
    fprintf(f, "#define K %d\n#define G %d\n#define C ((IX)%lld%s)\n#define ROWS ((IX)%lld%s)\n", x.K,
            x.G, (long long)p->C, sfx, (long long)p->rows, sfx);
    /* No minimum of resident blocks: asking for half the multiprocessor
     * (64 registers) made the row kernels spill, measured on the H200:
     * softmax over 2048 columns 76% -> 48% of copy (93 registers -> 64 and
     * 112 spill bytes), add+RMSNorm 93% -> 24% (128 -> 64, 424 bytes).
     * The bound alone (the block's threads) makes ptxas aim at fewer
     * registers: add+RMSNorm measured 93% of copy with it and 85% without
     * (128 and 138 registers); but a row kernel of six or more value
     * arrays then spilled (NVRTC for sm_90: a 51-op part of hub_conflict,
     * 168 registers and 28 spill bytes with it, 186 and none without), so
     * such a kernel of at most 256 threads (which launches whatever its
     * registers) goes without. */
    if (shape->kind == FE_CUDA_ROWS && shape->threads <= 256 && row_arrays(p) >= 6)
        fprintf(f, "extern \"C\" __global__ void %s(", name);
    else
        fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%u) %s(", shape->threads, name);
    for (int i = 0; i < p->nins; i++)
        fprintf(f, "%sconst %s *__restrict__ i%d", i ? ", " : "", fe_cuda_ctype(p->ins[i].dtype), i);
    for (int o = 0; o < p->nouts; o++)
        fprintf(f, "%s%s *__restrict__ o%d", o || p->nins ? ", " : "", fe_cuda_ctype(p->outs[o].dtype), o);
    fprintf(f, ")\n{\n");
    switch (x.vec && shape->kind == FE_CUDA_ELEM ? -1 : shape->kind) {
    case -1:
        /* four consecutive columns a thread: every contiguous input read
         * in one access up front, so that all are in flight at once */
        fprintf(f, "  for (IX q = (IX)blockIdx.x * blockDim.x + threadIdx.x; q < ROWS * (C / 4);"
                   " q += (IX)gridDim.x * blockDim.x) {\n"
                   "    const IX row = q / (C / 4), j0 = (q - row * (C / 4)) * 4;\n");
        for (int i = 0; i < p->nins; i++) {
            if (p->ins[i].col != COL_CONTIG)
                continue;
            char off[1024];
            int dt = p->ins[i].dtype;
            in_offset(&x, i, off, sizeof off);
            fprintf(f, "    float v%d[4]; { const IX j = j0; ld4_%s(i%d + (%s), v%d); }\n", i,
                    dt == FE_F32 ? "f32" : dt == FE_F16 ? "f16" : "bf16", i, off, i);
        }
        body(&x);
        fprintf(f, "  }\n");
        break;
    case FE_CUDA_ELEM:
        /* K elements a thread, a grid's width apart: each warp's loads of
         * one k are contiguous */
        fprintf(f, "  const IX stride = (IX)gridDim.x * blockDim.x;\n"
                   "  for (IX e = (IX)blockIdx.x * blockDim.x + threadIdx.x; e < ROWS * C; e += stride * K) {\n"
                   "    IX rw[K], jj[K];\n"
                   "    #pragma unroll\n"
                   "    for (int k = 0; k < K; k++) {\n"
                   "      const IX e_ = e + (IX)k * stride;\n"
                   "      rw[k] = e_ < ROWS * C ? e_ / C : ROWS;\n"
                   "      jj[k] = e_ - rw[k] * C;\n"
                   "    }\n");
        body(&x);
        fprintf(f, "  }\n");
        break;
    case FE_CUDA_ROWS:
        if (x.vec)
            fprintf(f, "#define VJ(v) ((lane + (IX)(v) * G) * 4)\n");
        if (x.G == 32)
            fprintf(f, "  const int lane = threadIdx.x & 31;\n"
                       "  for (IX row = (IX)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);"
                       " row < ROWS; row += (IX)gridDim.x * (blockDim.x >> 5)) {\n");
        else
            fprintf(f, "  const int lane = threadIdx.x;\n"
                       "  for (IX row = blockIdx.x; row < ROWS; row += gridDim.x) {\n");
        body(&x);
        fprintf(f, "  }\n");
        break;
    default:
        fprintf(f, "  const IX j = (IX)blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (j >= C) return;\n");
        for (int o = 0; o < p->nouts; o++)
            if (p->outs[o].acc) {
                const char *id = p->outs[o].acc == FE_OP_AMAX ? "-__int_as_float(0x7f800000)"
                                 : p->outs[o].acc == FE_OP_AMIN ? "__int_as_float(0x7f800000)" : "0.0";
                fprintf(f, "  %s acc%d = %s;\n", p->outs[o].acc == FE_OP_AMAX || p->outs[o].acc == FE_OP_AMIN
                        ? "float" : "double", o, id);
            }
        fprintf(f, "  for (IX row = 0; row < ROWS; row++) {\n");
        body(&x);
        fprintf(f, "  }\n");
        for (int o = 0; o < p->nouts; o++)
            if (p->outs[o].acc) {
                char v[64], ptr[16];
                snprintf(v, sizeof v, p->outs[o].acc == FE_OP_MEAN ? "(float)(acc%d / (double)ROWS)"
                                      : "(float)acc%d", o);
                snprintf(ptr, sizeof ptr, "o%d", o);
                fprintf(f, "  ");
                fe_cuda_store_stmt(f, p->outs[o].dtype, ptr, "j", v);
                fprintf(f, "\n");
            }
        break;
    }
    fprintf(f, "}\n");
    fclose(f);
    if (x.bad) {
        free(s);
        return NULL;
    }
    return s;
}
