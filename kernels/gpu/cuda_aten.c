/* cuda_aten.c: kernels for the integer work of exported models
 * (cuda_aten.h). What each computes is the CPU kernel's, as ops/aten.c's
 * validation describes it (fe_k_aten_plan_of) or as ops/elemwise.c runs a
 * registry op on integers: loads as fe_k_load_i64 reads (floats truncated,
 * bools 0/1), arithmetic in unsigned long long where the CPU wraps, stores
 * as fe_k_store_i64 narrows. Float arithmetic the CPU rounds step by step
 * is written with __fadd_rn and friends, which the compiler never fuses
 * into an FMA. A thread per output element in a grid-stride loop, except
 * cumsum: a thread per column of its axis, summing down it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aten.h"
#include "convert.h"
#include "cuda_aten.h"
#include "cuda_lower.h"
#include "node.h"
#include "ops.h"

/* ---- expressions ---- */

/* ptr[off] of dtype dt as fe_k_load_i64 reads it. */
static void load_i64(FILE *f, int dt, const char *ptr, const char *off)
{
    if (dt == FE_I64 || dt == FE_I32 || dt == FE_I8) {
        fprintf(f, "(long long)%s[%s]", ptr, off);
    } else if (dt == FE_BOOL) {
        fprintf(f, "(long long)(%s[%s] != 0)", ptr, off);
    } else {
        fprintf(f, "f2i(");
        fe_cuda_load_expr(f, dt, ptr, off);
        fprintf(f, ")");
    }
}

/* Statement storing long long v at ptr[off] as fe_k_store_i64 does. */
static void store_i64(FILE *f, int dt, const char *ptr, const char *off, const char *v)
{
    char fv[512];
    switch (dt) {
    case FE_I64: fprintf(f, "%s[%s] = %s;", ptr, off, v); break;
    case FE_I32: fprintf(f, "%s[%s] = (int)(unsigned)(unsigned long long)(%s);", ptr, off, v); break;
    case FE_I8: fprintf(f, "%s[%s] = (signed char)(unsigned char)(unsigned long long)(%s);", ptr, off, v); break;
    case FE_BOOL: fprintf(f, "%s[%s] = (%s) != 0;", ptr, off, v); break;
    default:
        snprintf(fv, sizeof fv, "(float)(%s)", v);
        fe_cuda_store_stmt(f, dt, ptr, off, fv);
    }
}

/* Long long v as dtype dt holds it (aten.c's wrap_to). */
static void wrap_expr(char *buf, size_t n, int dt, const char *v)
{
    if (dt == FE_I32)
        snprintf(buf, n, "(long long)(int)(unsigned)(unsigned long long)(%s)", v);
    else if (dt == FE_I8)
        snprintf(buf, n, "(long long)(signed char)(unsigned char)(unsigned long long)(%s)", v);
    else if (dt == FE_BOOL)
        snprintf(buf, n, "(long long)((%s) != 0)", v);
    else
        snprintf(buf, n, "(%s)", v);
}

/* Float v rounded to f16 or bf16 as fe_k_round_to does (other dtypes: v). */
static void round_f(char *buf, size_t n, int dt, const char *v)
{
    if (dt == FE_F16)
        snprintf(buf, n, "h2f(f2h(%s))", v);
    else if (dt == FE_BF16)
        snprintf(buf, n, "b2f(f2b(%s))", v);
    else
        snprintf(buf, n, "(%s)", v);
}

/* A double literal C++ reads back exactly. */
static void dbl_lit(char *buf, size_t n, double v)
{
    char t[40];
    snprintf(t, sizeof t, "%.17g", v);
    snprintf(buf, n, "%s%s", t, strpbrk(t, ".e") ? "" : ".0");
}

/* The offset in operand (rank tr, shape ts: right-aligned against the
 * output's yr dims ys, size-1 dims broadcast) of output element var. */
static void bcast_off(FILE *f, const char *var, int yr, const int64_t *ys, int tr, const int64_t *ts)
{
    long long st = 1, inner = 1;
    int any = 0;
    fprintf(f, "(");
    for (int a = yr - 1; a >= 0; a--) {
        int ta = a - (yr - tr);
        if (ta >= 0 && ts[ta] != 1 && ys[a] != 1) {
            fprintf(f, "%s(%s / %lld %% %lld) * %lld", any ? " + " : "", var, inner, (long long)ys[a], st);
            any = 1;
        }
        if (ta >= 0)
            st *= ts[ta];
        inner *= ys[a];
    }
    fprintf(f, "%s)", any ? "" : "0");
}

/* Prelude, index type and signature: n's inputs as pointers of their
 * dtypes (utype: of their sizes, for kernels that move bytes), then out
 * (dtype odt) and the fault flag; the loop's head over total elements. */
static void head(FILE *f, const fe_graph *g, const fe_node *n, int bytes, int64_t total)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int64_t largest = total > y->numel ? total : y->numel;
    for (int k = 0; k < n->nin; k++) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, k));
        largest = t->numel > largest ? t->numel : largest;
    }
    fputs(fe_cuda_prelude, f);
    fe_cuda_index_type(f, largest);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(");
    for (int k = 0; k < n->nin; k++) {
        int dt = fe_graph_tensor(g, fe_node_input(g, n, k))->dtype;
        fprintf(f, "const %s *__restrict__ i%d, ", bytes ? fe_cuda_utype(fe_dtype_size(dt))
                                                        : fe_cuda_ctype(dt), k);
    }
    fprintf(f, "%s *__restrict__ out, int *fault)\n{\n",
            bytes ? fe_cuda_utype(fe_dtype_size(y->dtype)) : fe_cuda_ctype(y->dtype));
    fe_cuda_loop(f, total);
}

static void tail(FILE *f)
{
    fprintf(f, "  }\n  (void)fault;\n}\n");
}

/* ---- the aten customs ---- */

/* Operand k of a binary op (a tensor input, or args.other) as the common
 * dtype holds it, in a (isfl: float) or as long long. */
static void bin_operand(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                        int k, int isfl)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    char var[8], off[1024], v[1400];
    snprintf(var, sizeof var, "%c", 'a' + k);
    if (k == 1 && p->scalar) {
        /* the 0-d scalar, cast to the common dtype here as the CPU casts it */
        if (isfl) {
            float s = p->scalar_dtype == FE_F32 ? p->sf : (float)p->si;
            unsigned u;
            if (p->cdt != FE_F32 && p->scalar_dtype != p->cdt)
                fe_k_round_to(p->cdt, &s, 1);
            memcpy(&u, &s, 4);
            fprintf(f, "    const float b = __uint_as_float(0x%08xu);\n", u);
        } else {
            unsigned char cell[8];
            int64_t s = p->si;
            fe_k_store_i64(cell, p->cdt, 0, &s, 1);
            fe_k_load_i64(cell, p->cdt, 0, &s, 1);
            fprintf(f, "    const long long b = (long long)0x%llxULL;\n", (unsigned long long)s);
        }
        return;
    }
    const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, k));
    char ptr[16];
    snprintf(ptr, sizeof ptr, "i%d", k);
    FILE *o = fmemopen(off, sizeof off, "w");
    if (!o)
        return;
    bcast_off(o, "e", y->rank, fe_tensor_shape(g, y), t->rank, fe_tensor_shape(g, t));
    fclose(o);
    if (isfl) {
        char ld[1100];
        FILE *l = fmemopen(ld, sizeof ld, "w");
        if (!l)
            return;
        fe_cuda_load_expr(l, t->dtype, ptr, off);
        fclose(l);
        if (p->cdt != FE_F32 && t->dtype != p->cdt)
            round_f(v, sizeof v, p->cdt, ld);
        else
            snprintf(v, sizeof v, "%s", ld);
        fprintf(f, "    const float %s = %s;\n", var, v);
    } else {
        char ld[1100];
        FILE *l = fmemopen(ld, sizeof ld, "w");
        if (!l)
            return;
        load_i64(l, t->dtype, ptr, off);
        fclose(l);
        if (t->dtype != p->cdt)
            wrap_expr(v, sizeof v, p->cdt, ld);
        else
            snprintf(v, sizeof v, "%s", ld);
        fprintf(f, "    const long long %s = %s;\n", var, v);
    }
}

static void binary_src(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                       int64_t *total)
{
    static const char *const cmp[] = {"==", "!=", "<", "<=", ">", ">="};
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int isfl = fe_dtype_is_float(p->cdt);
    *total = y->numel;
    head(f, g, n, 0, y->numel);
    bin_operand(f, g, n, p, 0, isfl);
    bin_operand(f, g, n, p, 1, isfl);
    fprintf(f, "    const long long r = ");
    if (p->op <= FE_K_ATEN_GE)   /* IEEE: NaN is unequal to all, ordered with none */
        fprintf(f, "(long long)(a %s b)", cmp[p->op]);
    else if (p->op == FE_K_ATEN_AND || p->op == FE_K_ATEN_OR || p->op == FE_K_ATEN_XOR)
        fprintf(f, "a %s b", p->op == FE_K_ATEN_AND ? "&" : p->op == FE_K_ATEN_OR ? "|" : "^");
    else if (p->op == FE_K_ATEN_LAND)
        fprintf(f, "(long long)(a != 0 && b != 0)");
    else if (p->op == FE_K_ATEN_LOR)
        fprintf(f, "(long long)(a != 0 || b != 0)");
    else
        fprintf(f, "(long long)((a != 0) != (b != 0))");
    fprintf(f, ";\n    ");
    store_i64(f, y->dtype, "out", "e", "r");
    fprintf(f, "\n");
    tail(f);
}

static void arange_src(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                       int64_t *total)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    *total = p->size;
    head(f, g, n, 0, p->size);
    if (fe_k_dtype_is_int(y->dtype)) {
        /* torch truncates start and step to int64 first */
        fprintf(f, "    const long long v = (long long)((unsigned long long)0x%llxULL + "
                   "(unsigned long long)0x%llxULL * (unsigned long long)e);\n    ",
                (unsigned long long)p->start_i, (unsigned long long)p->step_i);
        store_i64(f, y->dtype, "out", "e", "v");
    } else if (y->dtype == FE_F32) {
        char s0[48], st[48];   /* accumulated in double, as torch's CPU */
        dbl_lit(s0, sizeof s0, p->start);
        dbl_lit(st, sizeof st, p->step);
        fprintf(f, "    out[e] = (float)__dadd_rn(%s, __dmul_rn(%s, (double)e));", s0, st);
    } else {
        union { float f; unsigned u; } s0 = {p->start_f}, st = {p->step_f};
        fprintf(f, "    const float v = __fadd_rn(__uint_as_float(0x%08xu), __fmul_rn("
                   "__uint_as_float(0x%08xu), (float)e));\n    ", s0.u, st.u);
        fe_cuda_store_stmt(f, y->dtype, "out", "e", "v");
    }
    fprintf(f, "\n");
    tail(f);
}

static void fill_src(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                     int64_t *total)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int es = fe_dtype_size(y->dtype);
    unsigned long long bits = 0;
    for (int b = es - 1; b >= 0; b--)   /* little-endian, as the card */
        bits = bits << 8 | p->cell[b];
    *total = y->numel;
    head(f, g, n, 1, y->numel);
    fprintf(f, "    out[e] = (%s)0x%llxULL;\n", fe_cuda_utype(es), bits);
    tail(f);
}

/* x's dims around axis ax: outer x len x inner (a 0-d x: 1 x 1 x 1). */
static void split(const fe_graph *g, const fe_tensor *x, int ax, int64_t *outer, int64_t *len,
                  int64_t *inner)
{
    const int64_t *xs = fe_tensor_shape(g, x);
    *outer = *inner = 1;
    *len = x->rank ? xs[ax] : 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < ax)
            *outer *= xs[i];
        else if (i > ax)
            *inner *= xs[i];
    }
}

static void cumsum_src(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                       int64_t *total)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int64_t outer, L, inner;
    char ld[256], v[512];
    split(g, x, p->axis, &outer, &L, &inner);
    *total = outer * inner;
    head(f, g, n, 0, *total);
    fprintf(f, "    const IX o = e / %lld, i = e %% %lld;\n", (long long)inner, (long long)inner);
    int odt = y->dtype, isint = fe_k_dtype_is_int(odt);
    /* torch casts x to the output's dtype, then sums in int64, double
     * (f32) or float (f16, bf16), rounding only what it stores */
    fprintf(f, "    %s acc = 0;\n    for (IX l = 0; l < %lld; l++) {\n      const IX off = (o * %lld + l) * %lld + i;\n",
            isint ? "unsigned long long" : odt == FE_F32 ? "double" : "float", (long long)L,
            (long long)L, (long long)inner);
    FILE *l = fmemopen(ld, sizeof ld, "w");
    if (!l)
        return;
    if (isint)
        load_i64(l, x->dtype, "i0", "off");
    else
        fe_cuda_load_expr(l, x->dtype, "i0", "off");
    fclose(l);
    if (isint) {
        wrap_expr(v, sizeof v, odt, ld);
        fprintf(f, "      acc += (unsigned long long)%s;\n      ", v);
        store_i64(f, odt, "out", "off", "(long long)acc");
    } else {
        round_f(v, sizeof v, odt, ld);
        fprintf(f, "      acc += %s;\n      ", v);
        fe_cuda_store_stmt(f, odt, "out", "off", odt == FE_F32 ? "(float)acc" : "acc");
    }
    fprintf(f, "\n    }\n");
    tail(f);
}

/* Orders above this keep diff on the host: a thread holds n + 1 values. */
enum { DIFF_MAX_N = 64 };

static void diff_src(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                     int64_t *total)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int odt = y->dtype, isint = fe_k_dtype_is_int(odt);
    int part[3] = {p->pre, 0, p->app};
    int64_t len[3] = {0, 0, 0}, outer, inner, olen;
    for (int k = 0; k < 3; k++)
        if (part[k] >= 0)
            len[k] = fe_tensor_shape(g, fe_graph_tensor(g, fe_node_input(g, n, part[k])))[p->axis];
    split(g, y, p->axis, &outer, &olen, &inner);
    *total = y->numel;
    head(f, g, n, 0, y->numel);
    fprintf(f, "    const IX i = e %% %lld, t = e / %lld, k = t %% %lld, o = t / %lld;\n"
               "    %s w[%lld];\n    for (int j = 0; j <= %lld; j++) {\n      const IX l = k + j;\n",
            (long long)inner, (long long)inner, (long long)(olen ? olen : 1),
            (long long)(olen ? olen : 1), isint ? "long long" : "float", (long long)p->n + 1,
            (long long)p->n);
    /* the joined tensor (prepend, x, append) has the output's dtype */
    int64_t at = 0;
    int first = 1;
    for (int k = 0; k < 3; k++) {
        if (part[k] < 0 || !len[k])
            continue;
        const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, part[k]));
        char ptr[16], off[160], ld[512], v[700];
        snprintf(ptr, sizeof ptr, "i%d", part[k]);
        snprintf(off, sizeof off, "(o * %lld + l - %lld) * %lld + i", (long long)len[k],
                 (long long)at, (long long)inner);
        FILE *l = fmemopen(ld, sizeof ld, "w");
        if (!l)
            return;
        if (isint)
            load_i64(l, t->dtype, ptr, off);
        else
            fe_cuda_load_expr(l, t->dtype, ptr, off);
        fclose(l);
        if (isint)
            wrap_expr(v, sizeof v, odt == FE_BOOL ? FE_BOOL : FE_I64, ld);
        else
            round_f(v, sizeof v, odt, ld);
        fprintf(f, "      %sif (l < %lld) w[j] = %s;\n", first ? "" : "else ", (long long)(at + len[k]), v);
        first = 0;
        at += len[k];
    }
    /* each order a subtraction of the previous in place, as the CPU's
     * passes: f16 and bf16 round after every one */
    char d[160];
    if (odt == FE_BOOL)
        snprintf(d, sizeof d, "(long long)(w[j + 1] != w[j])");
    else if (isint)
        snprintf(d, sizeof d, "(long long)((unsigned long long)w[j + 1] - (unsigned long long)w[j])");
    else
        round_f(d, sizeof d, odt, "w[j + 1] - w[j]");
    fprintf(f, "    }\n    for (int q = %lld; q > 0; q--)\n      for (int j = 0; j < q; j++) w[j] = %s;\n    ",
            (long long)p->n, d);
    if (isint)
        store_i64(f, odt, "out", "e", "w[0]");
    else
        fe_cuda_store_stmt(f, odt, "out", "e", "w[0]");
    fprintf(f, "\n");
    tail(f);
}

static void index_src(FILE *f, const fe_graph *g, const fe_node *n, const fe_k_aten_plan *p,
                      int64_t *total)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *xs = fe_tensor_shape(g, x), *ys = fe_tensor_shape(g, y);
    int64_t xst[FE_MAX_RANK];
    fe_k_strides(xs, x->rank, xst);
    *total = y->numel;
    head(f, g, n, 1, y->numel);
    fprintf(f, "    IX r = e, c, xo = 0;\n    int bad = 0;\n");
    for (int b = 0; b < p->brank; b++)
        fprintf(f, "    IX b%d = 0;\n", b);
    /* x's trailing dims, then the leading ones: x's or the indices' */
    int k = y->rank - 1;
    for (int d = x->rank - 1; d > p->last; d--, k--)
        fprintf(f, "    c = r %% %lld; r /= %lld; xo += c * %lld;\n", (long long)ys[k],
                (long long)ys[k], (long long)xst[d]);
    for (int j = p->nlead - 1; j >= 0; j--, k--) {
        fprintf(f, "    c = r %% %lld; r /= %lld; ", (long long)ys[k], (long long)ys[k]);
        if (p->lead_x[j] >= 0)
            fprintf(f, "xo += c * %lld;\n", (long long)xst[p->lead_x[j]]);
        else
            fprintf(f, "b%d = c;\n", p->lead_b[j]);
    }
    for (int d = p->first; d <= p->last; d++) {
        if (p->src[d] < 0)
            continue;
        const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, p->src[d]));
        const int64_t *ts = fe_tensor_shape(g, t);
        long long st = 1;
        fprintf(f, "    {\n      long long v = (long long)((const %s *)i%d)[0",
                t->dtype == FE_I64 ? "long long" : "int", p->src[d]);
        for (int b = p->brank - 1; b >= 0; b--) {   /* t broadcast to the indices' shape */
            int tb = b - (p->brank - t->rank);
            if (tb >= 0 && ts[tb] != 1)
                fprintf(f, " + b%d * %lld", b, st);
            if (tb >= 0)
                st *= ts[tb];
        }
        fprintf(f, "];\n      if (v < 0) v += %lld;\n      if (v < 0 || v >= %lld) bad = 1;\n"
                   "      else xo += (IX)v * %lld;\n    }\n", (long long)xs[d], (long long)xs[d],
                (long long)xst[d]);
    }
    fprintf(f, "    if (bad) { *fault = 1; out[e] = 0; }\n    else out[e] = i0[xo];\n");
    tail(f);
}

static void copy_src(FILE *f, const fe_graph *g, const fe_node *n, int64_t *total)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    *total = y->numel;
    head(f, g, n, 1, y->numel);
    fprintf(f, "    out[e] = i0[e];\n");
    tail(f);
}

/* A source from a printer of FILE *, its launch over total elements. */
static char *finish(char **s, FILE *f, int64_t total, int sms, fe_cuda_shape *shape, fe_error *err)
{
    if (fclose(f) || !*s) {
        free(*s);
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    }
    fe_cuda_grid(total, sms, shape);
    return *s;
}

char *fe_cuda_aten_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *err)
{
    fe_k_aten_plan p;
    if (n->op != FE_OP_CUSTOM)
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s) is not a custom op", fe_node_name(g, n),
                            fe_node_op_name(n)), NULL;
    if (fe_k_aten_plan_of(g, n, &p, err))
        return NULL;
    if (p.kernel == FE_K_ATEN_OTHER)
        return fe_error_set(err, FE_EINPUT, "node '%s': aten '%s' has no CUDA kernel", fe_node_name(g, n),
                            fe_node_attr_str(g, n, "aten", "?")), NULL;
    if (p.kernel == FE_K_ATEN_DIFF && p.n > DIFF_MAX_N)
        return fe_error_set(err, FE_EINPUT, "node '%s': a diff of order %lld (the card's kernel "
                            "holds at most %d values a thread)", fe_node_name(g, n), (long long)p.n,
                            DIFF_MAX_N + 1), NULL;
    char *s = NULL;
    size_t len = 0;
    int64_t total = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: aten %s '%s'\n", fe_node_attr_str(g, n, "aten", "?"), fe_node_name(g, n));
    switch (p.kernel) {
    case FE_K_ATEN_BINARY: binary_src(f, g, n, &p, &total); break;
    case FE_K_ATEN_ARANGE: arange_src(f, g, n, &p, &total); break;
    case FE_K_ATEN_FILL: fill_src(f, g, n, &p, &total); break;
    case FE_K_ATEN_CUMSUM: cumsum_src(f, g, n, &p, &total); break;
    case FE_K_ATEN_DIFF: diff_src(f, g, n, &p, &total); break;
    case FE_K_ATEN_INDEX: index_src(f, g, n, &p, &total); break;
    default: copy_src(f, g, n, &total); break;
    }
    return finish(&s, f, total, sms, shape, err);
}

/* ---- the registry's position ops: compare, arange, trilu ---- */

/* trilu: the element where column - row >= diagonal (upper) or <= it
 * (lower) of the last two axes, else zero bits, as positions.c copies. */
static void trilu_src(FILE *f, const fe_graph *g, const fe_node *n, int64_t *total)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *ys = fe_tensor_shape(g, y);
    int64_t rows = ys[y->rank - 2], cols = ys[y->rank - 1];
    int upper = fe_node_attr_bool(g, n, "upper", 1);
    long long d = (long long)fe_node_attr_int(g, n, "diagonal", 0);
    *total = y->numel;
    head(f, g, n, 1, y->numel);
    fprintf(f, "    const long long c = (long long)e %% %lldLL, r = ((long long)e / %lldLL) %% %lldLL;\n"
               "    out[e] = c - r %s (%lldLL) ? i0[e] : 0;\n", (long long)cols, (long long)cols,
            (long long)rows, upper ? ">=" : "<=", d);
    tail(f);
}

char *fe_cuda_position_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                           fe_error *err)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    fe_k_aten_plan p;
    if (n->op == FE_OP_COMPARE && fe_k_compare_plan(g, n, &p, err))
        return NULL;
    if (n->op == FE_OP_ARANGE) {
        int64_t s0 = fe_node_attr_int(g, n, "start", 0), st = fe_node_attr_int(g, n, "step", 1);
        /* positions.c computes in int64 and converts: exact in double below 2^53 */
        p = (fe_k_aten_plan){.kernel = FE_K_ATEN_ARANGE, .size = y->numel, .start_i = s0,
                             .step_i = st, .start = (double)s0, .step = (double)st,
                             .start_f = (float)s0, .step_f = (float)st};
    }
    char *s = NULL;
    size_t len = 0;
    int64_t total = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: %s '%s'\n", fe_node_op_name(n), fe_node_name(g, n));
    switch (n->op) {
    case FE_OP_COMPARE: binary_src(f, g, n, &p, &total); break;
    case FE_OP_ARANGE: arange_src(f, g, n, &p, &total); break;
    case FE_OP_TRILU: trilu_src(f, g, n, &total); break;
    default:
        fclose(f);
        free(s);
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s) is not compare, arange or trilu",
                            fe_node_name(g, n), fe_node_op_name(n)), NULL;
    }
    return finish(&s, f, total, sms, shape, err);
}

/* ---- registry elementwise ops on integers ---- */

static int int_unary(int op)
{
    return op == FE_OP_RELU || op == FE_OP_NEG || op == FE_OP_ABS || op == FE_OP_CAST;
}

static int int_binary(int op)
{
    return op == FE_OP_ADD || op == FE_OP_SUB || op == FE_OP_MUL || op == FE_OP_DIV ||
           op == FE_OP_MAXIMUM || op == FE_OP_MINIMUM || op == FE_OP_POW || op == FE_OP_WHERE;
}

char *fe_cuda_int_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                      fe_error *err)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    int op = n->op, want = op == FE_OP_WHERE ? 3 : int_binary(op) ? 2 : 1;
    if (!fe_k_dtype_is_int(y->dtype) || y->dtype == FE_BOOL || n->nout != 1)
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s): not an integer result",
                            fe_node_name(g, n), fe_node_op_name(n)), NULL;
    if (!int_unary(op) && !int_binary(op))   /* the CPU computes those in float, then truncates */
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s): an integer %s computed in float (no "
                            "exact CUDA kernel)", fe_node_name(g, n), fe_node_op_name(n),
                            fe_node_op_name(n)), NULL;
    fe_k_scalar sv;
    fe_k_tensor st;
    int sidx = -1;
    if (n->nin == want - 1 && want > 1) {
        if (!fe_k_node_scalar(g, n, y->dtype, &sv, &st, &sidx) || sidx < 0 || sidx >= want)
            return fe_error_set(err, FE_EINPUT, "node '%s' (%s): operands the CPU kernel refuses too",
                                fe_node_name(g, n), fe_node_op_name(n)), NULL;
    } else if (n->nin != want) {
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s): operands the CPU kernel refuses too",
                            fe_node_name(g, n), fe_node_op_name(n)), NULL;
    }
    if (op == FE_OP_CAST && fe_graph_tensor(g, fe_node_input(g, n, 0))->numel != y->numel)
        return fe_error_set(err, FE_EINPUT, "cast: input and output sizes differ"), NULL;
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: %s '%s' on integers\n", fe_node_op_name(n), fe_node_name(g, n));
    if (op == FE_OP_POW)   /* elemwise.c's ipow: wrapping, negative exponents as integers do */
        fprintf(f, "static __device__ long long ipow(long long b, long long e) {\n"
                   "  if (e < 0) return b == 1 ? 1 : b == -1 ? (e & 1 ? -1 : 1) : 0;\n"
                   "  unsigned long long r = 1, x = (unsigned long long)b;\n"
                   "  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }\n"
                   "  return (long long)r;\n}\n");
    head(f, g, n, 0, y->numel);
    /* operands: tensors broadcast (a cast is flat), the scalar in place */
    for (int k = 0, in = 0; k < want; k++) {
        if (k == sidx) {
            fprintf(f, "    const long long v%d = (long long)0x%llxULL;\n", k, (unsigned long long)sv.i);
            continue;
        }
        const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, in));
        char ptr[16], off[1024];
        snprintf(ptr, sizeof ptr, "i%d", in++);
        FILE *o = fmemopen(off, sizeof off, "w");
        if (!o) {
            fclose(f);
            free(s);
            return fe_error_set(err, FE_ENOMEM, "cuda: out of memory"), NULL;
        }
        if (op == FE_OP_CAST)
            fprintf(o, "e");
        else
            bcast_off(o, "e", y->rank, fe_tensor_shape(g, y), t->rank, fe_tensor_shape(g, t));
        fclose(o);
        fprintf(f, "    const long long v%d = ", k);
        load_i64(f, t->dtype, ptr, off);
        fprintf(f, ";\n");
    }
    const char *u = "(unsigned long long)";
    fprintf(f, "    const long long r = ");
    switch (op) {
    case FE_OP_RELU: fprintf(f, "v0 > 0 ? v0 : 0"); break;
    case FE_OP_NEG: fprintf(f, "(long long)(0ULL - %sv0)", u); break;
    case FE_OP_ABS: fprintf(f, "v0 < 0 ? (long long)(0ULL - %sv0) : v0", u); break;
    case FE_OP_CAST: fprintf(f, "v0"); break;
    case FE_OP_ADD: fprintf(f, "(long long)(%sv0 + %sv1)", u, u); break;
    case FE_OP_SUB: fprintf(f, "(long long)(%sv0 - %sv1)", u, u); break;
    case FE_OP_MUL: fprintf(f, "(long long)(%sv0 * %sv1)", u, u); break;
    /* a zero divisor gives 0 and INT64_MIN / -1 wraps, as the CPU's */
    case FE_OP_DIV: fprintf(f, "v1 == 0 ? 0 : v1 == -1 ? (long long)(0ULL - %sv0) : v0 / v1", u); break;
    case FE_OP_MAXIMUM: fprintf(f, "v0 > v1 ? v0 : v1"); break;
    case FE_OP_MINIMUM: fprintf(f, "v0 < v1 ? v0 : v1"); break;
    case FE_OP_POW: fprintf(f, "ipow(v0, v1)"); break;
    default: fprintf(f, "v0 ? v1 : v2"); break;   /* where: the condition read as an integer */
    }
    fprintf(f, ";\n    ");
    store_i64(f, y->dtype, "out", "e", "r");
    fprintf(f, "\n");
    tail(f);
    return finish(&s, f, y->numel, sms, shape, err);
}
