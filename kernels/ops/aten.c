/* aten.c: reference kernels for exported aten custom ops (see aten.h).
 *
 * A table maps each aten name to a kernel and to the args keys it reads;
 * any other key is refused, so no argument that changes values is silently
 * ignored. Kernels validate first (arity, args, dtypes, the graph's output
 * shape) and stop there in a dry run, which is how fe_k_aten_check answers
 * without data. Numerics follow PyTorch's CPU kernels, noted where they bite.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aten.h"
#include "aten_call.h"
#include "convert.h"
#include "ops.h"
#include "user_kernel.h"

typedef int (*kern_fn)(const fe_k_acall *c, fe_error *err);

/* ---- arguments ---- */

/* A Python Scalar: ints and bools are integral (bools as 0/1); JSON cannot
 * spell infinities or NaN, so the strings "inf", "-inf" and "nan" stand for
 * them. Returns 0 if v is none of these. */
static int scalar(const json_t *v, double *d, int64_t *i, int *is_float)
{
    if (json_is_integer(v)) {
        *i = (int64_t)json_integer_value(v);
        *d = (double)*i;
        *is_float = 0;
    } else if (json_is_boolean(v)) {
        *i = json_is_true(v);
        *d = (double)*i;
        *is_float = 0;
    } else if (json_is_real(v)) {
        *d = json_real_value(v);
        *i = fe_k_f64_to_i64(*d);
        *is_float = 1;
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "inf") || !strcmp(s, "+inf"))
            *d = INFINITY;
        else if (!strcmp(s, "-inf"))
            *d = -INFINITY;
        else if (!strcmp(s, "nan"))
            *d = NAN;
        else
            return 0;
        *i = fe_k_f64_to_i64(*d);
        *is_float = 1;
    } else {
        return 0;
    }
    return 1;
}

/* fuseeng's dtype names, and torch's for exporters that keep them. */
static int dtype_arg(const char *s)
{
    static const char *const torch[][2] = {
        {"float32", "f32"}, {"float", "f32"}, {"float16", "f16"}, {"half", "f16"},
        {"bfloat16", "bf16"}, {"int64", "i64"}, {"long", "i64"}, {"int32", "i32"},
        {"int", "i32"}, {"int8", "i8"}, {"bool", "bool"},
    };
    int dt = fe_dtype_parse(s);
    if (dt >= 0)
        return dt;
    if (!strncmp(s, "torch.", 6))
        s += 6;
    for (size_t k = 0; k < sizeof torch / sizeof torch[0]; k++)
        if (!strcmp(s, torch[k][0]))
            return fe_dtype_parse(torch[k][1]);
    return -1;
}

/* ---- broadcast walks ----
 * Operands are read a row (the output's last axis) at a time: a row of an
 * operand is either contiguous or one value repeated (stride 0). */

static int bcast_shape(const fe_k_tensor *a, const fe_k_tensor *b, int *rank, int64_t *shape)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t s[FE_MAX_RANK];   /* shape may alias a's or b's */
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        s[i] = da == 1 ? db : da;
    }
    memcpy(shape, s, (size_t)r * sizeof *s);
    *rank = r;
    return 0;
}

/* Element offset of output row r in an operand with broadcast strides st. */
static int64_t row_off(const fe_k_tensor *o, const int64_t *st, int64_t r)
{
    int64_t off = 0;
    for (int d = o->rank - 2; d >= 0; d--) {
        off += (r % o->shape[d]) * st[d];
        r /= o->shape[d];
    }
    return off;
}

/* Integers as the width dt holds them. */
static void wrap_to(int dt, int64_t *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = dt == FE_I32 ? (int32_t)(uint32_t)(uint64_t)v[i]
             : dt == FE_I8 ? (int8_t)(uint8_t)(uint64_t)v[i]
             : dt == FE_BOOL ? v[i] != 0 : v[i];
}

/* Integers as the common dtype idt holds them (a wider operand wraps). */
static void row_i64(const fe_k_tensor *t, int64_t off, int rep, int idt, int64_t *buf, int64_t n)
{
    int64_t m = rep ? 1 : n;
    fe_k_load_i64(t->data, t->dtype, off, buf, m);
    if (t->dtype != idt)
        wrap_to(idt, buf, m);
    for (int64_t i = 1; rep && i < n; i++)
        buf[i] = buf[0];
}

/* Values as the common float dtype fdt holds them (torch casts every
 * operand to it before the op). */
static void row_f32(const fe_k_tensor *t, int64_t off, int rep, int fdt, float *buf, int64_t n)
{
    int64_t m = rep ? 1 : n;
    fe_k_load_f32(t->data, t->dtype, off, buf, m);
    if (fdt != FE_F32 && t->dtype != fdt)
        fe_k_round_to(fdt, buf, m);
    for (int64_t i = 1; rep && i < n; i++)
        buf[i] = buf[0];
}

/* ---- comparisons, bitwise and logical ops ---- */

enum {
    B_EQ = FE_K_ATEN_EQ, B_NE = FE_K_ATEN_NE, B_LT = FE_K_ATEN_LT, B_LE = FE_K_ATEN_LE,
    B_GT = FE_K_ATEN_GT, B_GE = FE_K_ATEN_GE, B_AND = FE_K_ATEN_AND, B_OR = FE_K_ATEN_OR,
    B_XOR = FE_K_ATEN_XOR, B_LAND = FE_K_ATEN_LAND, B_LOR = FE_K_ATEN_LOR, B_LXOR = FE_K_ATEN_LXOR
};

static int64_t bin_i64(int op, int64_t a, int64_t b)
{
    switch (op) {
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return a < b;
    case B_LE: return a <= b;
    case B_GT: return a > b;
    case B_GE: return a >= b;
    case B_AND: return a & b;
    case B_OR: return a | b;
    case B_XOR: return a ^ b;
    case B_LAND: return a && b;
    case B_LOR: return a || b;
    default: return !a != !b;
    }
}

/* NaN compares unequal to everything and is true as a truth value. */
static int64_t bin_f32(int op, float a, float b)
{
    switch (op) {
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return a < b;
    case B_LE: return a <= b;
    case B_GT: return a > b;
    case B_GE: return a >= b;
    case B_LAND: return a != 0 && b != 0;
    case B_LOR: return a != 0 || b != 0;
    default: return (a != 0) != (b != 0);
    }
}

/* torch.promote_types over fuseeng's dtypes; -1 is "none yet". */
static int promote(int x, int y)
{
    if (x < 0 || x == y)
        return y;
    if (y < 0)
        return x;
    int fx = fe_dtype_is_float(x), fy = fe_dtype_is_float(y);
    if (fx || fy)
        return fx && fy ? FE_F32 : fx ? x : y;   /* f16 with bf16 meets at f32 */
    if (x == FE_BOOL || y == FE_BOOL)
        return x == FE_BOOL ? y : x;
    return fe_dtype_size(x) > fe_dtype_size(y) ? x : y;
}

/* torch lets a lower tier (0-d tensors, then Python scalars) change the
 * result only by raising its category (bool < integer < float): an f32 0-d
 * tensor does not widen an f16 tensor, an int64 one does not widen int32. */
static int combine(int higher, int lower)
{
    if (higher < 0)
        return lower;
    if (fe_dtype_is_float(higher))
        return higher;
    if (higher == FE_BOOL || (lower >= 0 && fe_dtype_is_float(lower)))
        return promote(higher, lower);
    return higher;
}

/* The dtype both operands are cast to before the op. b_scalar marks a
 * Python scalar, whose float values count as the default dtype f32. */
static int common_dtype(const fe_k_tensor *a, const fe_k_tensor *b, int b_scalar)
{
    int dim = -1, zero = -1;
    dim = a->rank ? promote(dim, a->dtype) : dim;
    zero = a->rank ? zero : promote(zero, a->dtype);
    if (b_scalar)
        return combine(dim, combine(zero, b->dtype));
    dim = b->rank ? promote(dim, b->dtype) : dim;
    zero = b->rank ? zero : promote(zero, b->dtype);
    return combine(dim, zero);
}

static int bin_loop(int op, const fe_k_tensor *a, const fe_k_tensor *b, int cdt, fe_k_tensor *o,
                    fe_error *err);

static int k_binary(const fe_k_acall *c, fe_error *err)
{
    json_t *other = fe_k_acall_arg(c, "other");
    const fe_k_tensor *a = &c->in[0], *b;
    fe_k_tensor sv;
    int64_t si = 0;
    float sf = 0;
    int scal = 0;
    if (c->n->nin == 2 && !other) {
        b = &c->in[1];
    } else if (c->n->nin == 1 && other) {
        double d;
        int isf;
        if (!scalar(other, &d, &si, &isf))
            return fe_k_acall_fail(c, err, "args.other must be a number or a bool");
        sf = (float)d;
        sv = isf ? fe_k_view(&sf, FE_F32, 0, NULL) : fe_k_view(&si, FE_I64, 0, NULL);
        b = &sv;
        scal = 1;
    } else {
        return fe_k_acall_fail(c, err, "takes two tensor inputs, or one and args.other (it "
                               "has %d input%s%s)", c->n->nin, c->n->nin == 1 ? "" : "s",
                               other ? " and args.other" : "");
    }
    int cdt = common_dtype(a, b, scal), isfl = fe_dtype_is_float(cdt);
    int bitwise = c->op == B_AND || c->op == B_OR || c->op == B_XOR;
    if (bitwise && isfl)
        return fe_k_acall_fail(c, err, "bitwise ops take bool or integer operands, not %s",
                               fe_dtype_name(fe_dtype_is_float(a->dtype) ? a->dtype : b->dtype));
    int rank;
    int64_t shape[FE_MAX_RANK];
    if (bcast_shape(a, b, &rank, shape)) {
        char x[128], y[128];
        return fe_k_acall_fail(c, err, "input shapes %s and %s do not broadcast",
                               fe_k_acall_shape(a, x, sizeof x), fe_k_acall_shape(b, y, sizeof y));
    }
    if (!fe_k_acall_same_shape(c->out, rank, shape))
        return fe_k_acall_out_mismatch(c, err, rank, shape);
    if (c->dry && c->plan) {
        *c->plan = (fe_k_aten_plan){.kernel = FE_K_ATEN_BINARY, .op = c->op, .cdt = cdt,
                                    .scalar = scal, .scalar_dtype = scal ? b->dtype : -1,
                                    .si = si, .sf = sf};
    }
    if (c->dry)
        return FE_OK;
    return bin_loop(c->op, a, b, cdt, c->out, err);
}

/* out = a op b broadcast, both cast to cdt first; out's shape is checked. */
static int bin_loop(int op, const fe_k_tensor *a, const fe_k_tensor *b, int cdt, fe_k_tensor *o,
                    fe_error *err)
{
    int isfl = fe_dtype_is_float(cdt);
    int64_t sa[FE_MAX_RANK], sb[FE_MAX_RANK];
    fe_k_bcast_strides(a, o->rank, o->shape, sa);
    fe_k_bcast_strides(b, o->rank, o->shape, sb);
    int64_t inner = o->rank ? o->shape[o->rank - 1] : 1, numel = fe_k_numel(o);
    int64_t rows = inner ? numel / inner : 0;
    int ra = !o->rank || sa[o->rank - 1] == 0, rb = !o->rank || sb[o->rank - 1] == 0;
    int64_t *res = fe_malloc((size_t)(inner ? inner : 1) * 3 * sizeof *res, err);
    if (!res)
        return FE_ENOMEM;
    int64_t *ia = res + inner, *ib = ia + inner;   /* or floats, same size or less */
    float *fa = (float *)ia, *fb = (float *)ib;
    for (int64_t r = 0; r < rows; r++) {
        int64_t oa = row_off(o, sa, r), ob = row_off(o, sb, r);
        if (isfl) {
            row_f32(a, oa, ra, cdt, fa, inner);
            row_f32(b, ob, rb, cdt, fb, inner);
            for (int64_t i = 0; i < inner; i++)
                res[i] = bin_f32(op, fa[i], fb[i]);
        } else {
            row_i64(a, oa, ra, cdt, ia, inner);
            row_i64(b, ob, rb, cdt, ib, inner);
            for (int64_t i = 0; i < inner; i++)
                res[i] = bin_i64(op, ia[i], ib[i]);
        }
        fe_k_store_i64(o->data, o->dtype, r * inner, res, inner);
    }
    free(res);
    return FE_OK;
}

int fe_k_compare_plan(const fe_graph *g, const fe_node *n, fe_k_aten_plan *p, fe_error *err)
{
    static const char *const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    static const int mirror[] = {B_EQ, B_NE, B_GT, B_GE, B_LT, B_LE};   /* s < x is x > s */
    const char *cmp = fe_node_attr_str(g, n, "cmp", "");
    int op = 0;
    while (op < 6 && strcmp(cmp, names[op]))
        op++;
    if (op == 6)
        return fe_error_set(err, FE_EINPUT, "node '%s' (compare): cmp must be eq, ne, lt, le, gt "
                            "or ge", fe_node_name(g, n));
    *p = (fe_k_aten_plan){.kernel = FE_K_ATEN_BINARY, .op = op, .scalar_dtype = -1};
    fe_k_tensor a = fe_k_graph_view(g, fe_node_input(g, n, 0), NULL), b;
    if (n->nin == 2) {
        b = fe_k_graph_view(g, fe_node_input(g, n, 1), NULL);
        p->cdt = common_dtype(&a, &b, 0);
        return FE_OK;
    }
    const fe_attr *sa = fe_node_attr(g, n, "scalar");
    double v;
    if (n->nin != 1 || !fe_node_scalar(g, n, &v))
        return fe_error_set(err, FE_EINPUT, "node '%s' (compare): needs two tensor inputs, or one "
                            "and attrs.scalar", fe_node_name(g, n));
    /* an integer written as one compares as torch's int, a real as its float */
    p->scalar = 1;
    p->scalar_dtype = sa->type == FE_ATTR_FLOAT ? FE_F32 : FE_I64;
    p->si = fe_k_f64_to_i64(v);
    p->sf = (float)v;
    if (fe_node_attr_int(g, n, "scalar_index", 1) == 0)
        p->op = mirror[op];
    b = fe_k_view(NULL, p->scalar_dtype, 0, NULL);
    p->cdt = common_dtype(&a, &b, 1);
    return FE_OK;
}

int fe_k_compare_run(const fe_k_aten_plan *p, const fe_k_tensor *in, fe_k_tensor *out,
                     fe_error *err)
{
    int64_t si = p->si;
    float sf = p->sf;
    fe_k_tensor st = p->scalar_dtype == FE_F32 ? fe_k_view(&sf, FE_F32, 0, NULL)
                                               : fe_k_view(&si, FE_I64, 0, NULL);
    const fe_k_tensor *b = p->scalar ? &st : &in[1];
    int rank;
    int64_t shape[FE_MAX_RANK];
    if (bcast_shape(&in[0], b, &rank, shape) || rank != out->rank ||
        memcmp(shape, out->shape, sizeof(int64_t) * (size_t)rank))
        return fe_error_set(err, FE_EINPUT, "compare: operands do not broadcast to the output");
    return bin_loop(p->op, &in[0], b, p->cdt, out, err);
}

/* ---- arange ---- */

static int k_arange(const fe_k_acall *c, fe_error *err)
{
    static const char *const keys[3] = {"start", "end", "step"};
    double d[3] = {0, 0, 1};
    int64_t iv[3] = {0, 0, 1};
    int isf[3] = {0, 0, 0};
    if (c->n->nin)
        return fe_k_acall_fail(c, err, "takes no tensor inputs (it has %d)", c->n->nin);
    for (int k = 0; k < 3; k++) {
        json_t *j = fe_k_acall_arg(c, keys[k]);
        if (!j && k == 1)
            return fe_k_acall_fail(c, err, "args.end is required");
        if (j && !scalar(j, &d[k], &iv[k], &isf[k]))
            return fe_k_acall_fail(c, err, "args.%s must be a number", keys[k]);
    }
    int odt = c->out->dtype;
    double start = d[0], end = d[1], step = d[2];
    if (odt == FE_BOOL)
        return fe_k_acall_fail(c, err, "cannot produce bool values (torch has no bool arange)");
    if (step == 0 || isnan(step))
        return fe_k_acall_fail(c, err, "step must be nonzero");
    if (!isfinite(start) || !isfinite(end))
        return fe_k_acall_fail(c, err, "start and end must be finite");
    if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
        return fe_k_acall_fail(c, err, "end %g lies on the wrong side of start %g for step %g", end,
                               start, step);
    /* torch sizes the range in double, except int64 output from integer args,
     * which it divides exactly */
    int64_t size;
    if (odt == FE_I64 && !isf[0] && !isf[1] && !isf[2]) {
        uint64_t span = step > 0 ? (uint64_t)iv[1] - (uint64_t)iv[0] : (uint64_t)iv[0] - (uint64_t)iv[1];
        uint64_t s = step > 0 ? (uint64_t)iv[2] : 0 - (uint64_t)iv[2];
        uint64_t q = span / s + (span % s != 0);
        size = q > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)q;
    } else {
        double sd = ceil((end - start) / step);
        size = sd > 0x1p62 ? INT64_MAX : (int64_t)sd;
    }
    if (c->out->rank != 1 || c->out->shape[0] != size) {
        char b[128];
        return fe_k_acall_fail(c, err, "the range has %lld elements but the graph's output is %s",
                               (long long)size, fe_k_acall_shape(c->out, b, sizeof b));
    }
    if (c->dry && c->plan)
        *c->plan = (fe_k_aten_plan){.kernel = FE_K_ATEN_ARANGE, .size = size, .start_i = iv[0],
                                    .step_i = iv[2], .start = start, .step = step,
                                    .start_f = (float)start, .step_f = (float)step};
    if (c->dry)
        return FE_OK;
    enum { CH = 1024 };
    if (fe_k_dtype_is_int(odt)) {
        /* torch converts start and step to int64 first (truncating fractions),
         * so a fractional step can even repeat one value */
        uint64_t s0 = (uint64_t)iv[0], st = (uint64_t)iv[2];
        int64_t v[CH];
        for (int64_t o = 0; o < size; o += CH) {
            int64_t m = size - o < CH ? size - o : CH;
            for (int64_t i = 0; i < m; i++)
                v[i] = (int64_t)(s0 + st * (uint64_t)(o + i));
            fe_k_store_i64(c->out->data, odt, o, v, m);
        }
        return FE_OK;
    }
    /* f32 accumulates in double and f16/bf16 in float, as torch's CPU
     * accumulate types do. (torch's vectorised path re-bases every vector
     * width, which can move fractional steps by an ulp.) */
    float v[CH];
    float s0 = (float)start, st = (float)step;
    for (int64_t o = 0; o < size; o += CH) {
        int64_t m = size - o < CH ? size - o : CH;
        for (int64_t i = 0; i < m; i++)
            v[i] = odt == FE_F32 ? (float)(start + step * (double)(o + i))
                                 : s0 + st * (float)(o + i);
        fe_k_store_f32(c->out->data, odt, o, v, m);
    }
    return FE_OK;
}

/* ---- diff and cumsum ---- */

/* Split t around axis ax: outer x len x inner. */
static void split(const fe_k_tensor *t, int ax, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    *len = t->rank ? t->shape[ax] : 1;
    for (int i = 0; i < t->rank; i++) {
        if (i < ax)
            *outer *= t->shape[i];
        else if (i > ax)
            *inner *= t->shape[i];
    }
}

/* Which of the inputs after x are prepend and append. torch.diff's
 * prepend/append are tensors, so the exporter moves them to inputs and
 * leaves null in args for the ones not given; a second input is therefore
 * prepend when args.append is null and append when args.prepend is. */
static int diff_parts(const fe_k_acall *c, const fe_k_tensor **pre, const fe_k_tensor **app,
                      fe_error *err)
{
    json_t *pj = json_object_get(c->args, "prepend"), *aj = json_object_get(c->args, "append");
    int pnull = pj && json_is_null(pj), anull = aj && json_is_null(aj);
    int extra = c->n->nin - 1;
    *pre = *app = NULL;
    if ((pj && !pnull) || (aj && !anull))
        return fe_k_acall_fail(c, err,
                               "args.prepend and args.append must be null or absent: pass them as "
                               "tensor inputs");
    if (extra == 0)
        return FE_OK;
    if (extra == 2) {
        if (pnull || anull)
            return fe_k_acall_fail(c, err, "has 3 inputs but args.%s is null",
                                   pnull ? "prepend" : "append");
        *pre = &c->in[1];
        *app = &c->in[2];
        return FE_OK;
    }
    if (extra == 1 && anull != pnull) {
        *(anull ? pre : app) = &c->in[1];
        return FE_OK;
    }
    if (extra == 1)
        return fe_k_acall_fail(c, err,
                               "cannot tell whether the second input is prepend or append: args "
                               "must set exactly one of them to null");
    return fe_k_acall_fail(c, err, "takes 1 to 3 inputs (x, prepend, append), not %d", c->n->nin);
}

static void sub_pass_i64(int is_bool, int64_t *b, int64_t len, int64_t inner)
{
    for (int64_t i = 0; i + inner < len * inner; i++)
        b[i] = is_bool ? b[i + inner] != b[i]
                       : (int64_t)((uint64_t)b[i + inner] - (uint64_t)b[i]);
}

static int k_diff(const fe_k_acall *c, fe_error *err)
{
    int64_t n, dim;
    const fe_k_tensor *pre, *app;
    if (c->n->nin < 1)
        return fe_k_acall_fail(c, err, "needs an input tensor");
    if (fe_k_acall_int_arg(c, "n", 1, &n, err) || fe_k_acall_int_arg(c, "dim", -1, &dim, err) ||
        diff_parts(c, &pre, &app, err))
        return err ? err->code : FE_EINPUT;
    const fe_k_tensor *x = &c->in[0];
    if (n < 0)
        return fe_k_acall_fail(c, err, "n must be >= 0, not %lld", (long long)n);
    if (x->rank == 0)
        return fe_k_acall_fail(c, err, "needs an input of at least one dimension");
    int ax = fe_axis(dim, x->rank);
    if (ax < 0)
        return fe_k_acall_fail(c, err, "dim %lld is out of range for rank %d", (long long)dim,
                               x->rank);
    const fe_k_tensor *parts[3] = {pre, x, app};
    int64_t L = 0, shape[FE_MAX_RANK];
    for (int k = 0; k < 3; k++) {
        const fe_k_tensor *p = parts[k];
        if (!p)
            continue;
        int ok = p->rank == x->rank;
        for (int i = 0; ok && i < x->rank; i++)
            ok = i == ax || p->shape[i] == x->shape[i];
        if (!ok) {
            char a[128], b[128];
            return fe_k_acall_fail(c, err,
                                   "%s has shape %s, which does not join input %s along dim %d",
                                   k ? "append" : "prepend", fe_k_acall_shape(p, a, sizeof a),
                                   fe_k_acall_shape(x, b, sizeof b), ax);
        }
        L += p->shape[ax];
    }
    int64_t olen = L > n ? L - n : 0;
    memcpy(shape, x->shape, sizeof shape);
    shape[ax] = olen;
    if (!fe_k_acall_same_shape(c->out, x->rank, shape))
        return fe_k_acall_out_mismatch(c, err, x->rank, shape);
    if (c->dry && c->plan)
        *c->plan = (fe_k_aten_plan){.kernel = FE_K_ATEN_DIFF, .axis = ax, .n = n,
                                    .pre = pre ? (int)(pre - c->in) : -1,
                                    .app = app ? (int)(app - c->in) : -1};
    if (c->dry)
        return FE_OK;
    int odt = c->out->dtype, isint = fe_k_dtype_is_int(odt);
    int64_t outer, xl, inner;
    split(x, ax, &outer, &xl, &inner);
    size_t cells = (size_t)(L ? L : 1) * (size_t)(inner ? inner : 1);
    int64_t *bi = fe_malloc(cells * sizeof *bi, err);   /* floats use the same storage */
    float *bf = (float *)bi;
    if (!bi)
        return FE_ENOMEM;
    int64_t passes = n < L ? n : L;
    for (int64_t o = 0; o < outer; o++) {
        int64_t pos = 0;
        for (int k = 0; k < 3; k++) {
            const fe_k_tensor *p = parts[k];
            if (!p)
                continue;
            int64_t m = p->shape[ax] * inner;
            if (isint)
                fe_k_load_i64(p->data, p->dtype, o * m, bi + pos, m);
            else
                fe_k_load_f32(p->data, p->dtype, o * m, bf + pos, m);
            pos += m;
        }
        if (odt == FE_BOOL)
            for (int64_t i = 0; i < pos; i++)
                bi[i] = bi[i] != 0;
        if (!isint)
            fe_k_round_to(odt, bf, pos);   /* the joined tensor has the output's dtype */
        for (int64_t k = 0, len = L; k < passes; k++, len--) {
            if (isint) {
                sub_pass_i64(odt == FE_BOOL, bi, len, inner);
            } else {
                /* each order is a separate torch subtraction in the output
                 * dtype, so f16/bf16 round after every pass */
                for (int64_t i = 0; i + inner < len * inner; i++)
                    bf[i] = bf[i + inner] - bf[i];
                fe_k_round_to(odt, bf, (len - 1) * inner);
            }
        }
        if (isint)
            fe_k_store_i64(c->out->data, odt, o * olen * inner, bi, olen * inner);
        else
            fe_k_store_f32(c->out->data, odt, o * olen * inner, bf, olen * inner);
    }
    free(bi);
    return FE_OK;
}

static int k_cumsum(const fe_k_acall *c, fe_error *err)
{
    int64_t dim;
    if (!fe_k_acall_arg(c, "dim"))
        return fe_k_acall_fail(c, err, "args.dim is required");
    if (fe_k_acall_int_arg(c, "dim", 0, &dim, err))
        return err ? err->code : FE_EINPUT;
    if (c->n->nin != 1)
        return fe_k_acall_fail(c, err, "takes one tensor input, not %d", c->n->nin);
    const fe_k_tensor *x = &c->in[0];
    int ax = fe_axis(dim, x->rank ? x->rank : 1);   /* a 0-d tensor takes dim 0 or -1 */
    if (ax < 0)
        return fe_k_acall_fail(c, err, "dim %lld is out of range for rank %d", (long long)dim,
                               x->rank);
    if (!fe_k_acall_same_shape(c->out, x->rank, x->shape))
        return fe_k_acall_out_mismatch(c, err, x->rank, x->shape);
    if (c->dry && c->plan)
        *c->plan = (fe_k_aten_plan){.kernel = FE_K_ATEN_CUMSUM, .axis = x->rank ? ax : 0};
    if (c->dry)
        return FE_OK;
    /* torch casts the input to the output dtype, then sums in its CPU
     * accumulate type (int64, double for f32, float for f16/bf16), rounding
     * only what it stores: a narrower running sum would drift */
    int odt = c->out->dtype, isint = fe_k_dtype_is_int(odt);
    int64_t outer, L, inner;
    split(x, x->rank ? ax : 0, &outer, &L, &inner);
    size_t cells = (size_t)(inner ? inner : 1);
    /* row, then the accumulator (int64, double or float by output dtype) */
    int64_t *row = fe_malloc(cells * 2 * sizeof *row, err);
    if (!row)
        return FE_ENOMEM;
    int64_t *ai = row + cells;
    double *ad = (double *)ai;
    float *rf = (float *)row, *af = (float *)ai;
    for (int64_t o = 0; o < outer; o++) {
        memset(ai, 0, cells * sizeof *ai);   /* 0, 0.0 and 0.0f alike */
        for (int64_t l = 0; l < L; l++) {
            int64_t off = (o * L + l) * inner;
            if (isint) {
                fe_k_load_i64(x->data, x->dtype, off, row, inner);
                wrap_to(odt, row, inner);
                for (int64_t i = 0; i < inner; i++)
                    row[i] = ai[i] = (int64_t)((uint64_t)ai[i] + (uint64_t)row[i]);
                fe_k_store_i64(c->out->data, odt, off, row, inner);
                continue;
            }
            fe_k_load_f32(x->data, x->dtype, off, rf, inner);
            fe_k_round_to(odt, rf, inner);
            if (odt == FE_F32) {
                for (int64_t i = 0; i < inner; i++)
                    rf[i] = (float)(ad[i] += rf[i]);
            } else {
                for (int64_t i = 0; i < inner; i++)
                    rf[i] = af[i] += rf[i];
            }
            fe_k_store_f32(c->out->data, odt, off, rf, inner);
        }
    }
    free(row);
    return FE_OK;
}

/* ---- fills: ones / zeros / full and their new_ / _like forms ---- */

enum { F_ZERO, F_ONE, F_FULL, F_SCALAR };

static int k_fill(const fe_k_acall *c, fe_error *err)
{
    json_t *sz = fe_k_acall_arg(c, "size");
    fe_k_tensor *o = c->out;
    if (c->n->nin > 1)
        return fe_k_acall_fail(c, err,
                               "takes at most one tensor input (whose values it ignores), not %d",
                               c->n->nin);
    if (sz) {
        int64_t shape[FE_MAX_RANK];
        size_t k = json_is_array(sz) ? json_array_size(sz) : 0;
        if (!json_is_array(sz) || k > FE_MAX_RANK)
            return fe_k_acall_fail(c, err, "args.size must be a list of at most %d ints",
                                   FE_MAX_RANK);
        for (size_t i = 0; i < k; i++) {
            json_t *e = json_array_get(sz, i);
            if (!json_is_integer(e))
                return fe_k_acall_fail(c, err, "args.size must be a list of ints");
            shape[i] = (int64_t)json_integer_value(e);
        }
        if (!fe_k_acall_same_shape(o, (int)k, shape))
            return fe_k_acall_out_mismatch(c, err, (int)k, shape);
    }
    double d = c->op == F_ONE;
    int64_t iv = c->op == F_ONE;
    int isf = 0;
    if (c->op == F_FULL || c->op == F_SCALAR) {
        const char *key = c->op == F_FULL ? "fill_value" : "s";
        json_t *v = fe_k_acall_arg(c, key);
        if (!v)
            return fe_k_acall_fail(c, err, "args.%s is required", key);
        if (!scalar(v, &d, &iv, &isf))
            return fe_k_acall_fail(c, err, "args.%s must be a number or a bool", key);
    }
    unsigned char cell[8] = {0};
    size_t es = (size_t)fe_dtype_size(o->dtype);
    if (isf && o->dtype == FE_BOOL)
        iv = d != 0;   /* NaN too, as torch's bool conversion */
    if (!isf || fe_k_dtype_is_int(o->dtype)) {
        fe_k_store_i64(cell, o->dtype, 0, &iv, 1);
    } else {
        float f = (float)d;
        fe_k_store_f32(cell, o->dtype, 0, &f, 1);
    }
    if (c->dry && c->plan) {
        *c->plan = (fe_k_aten_plan){.kernel = FE_K_ATEN_FILL};
        memcpy(c->plan->cell, cell, sizeof cell);
    }
    if (c->dry)
        return FE_OK;
    int64_t numel = fe_k_numel(o);
    if (!numel)
        return FE_OK;
    unsigned char *p = o->data;
    memcpy(p, cell, es);
    for (size_t done = es, total = (size_t)numel * es; done < total;) {
        size_t m = done < total - done ? done : total - done;
        memcpy(p + done, p, m);
        done += m;
    }
    return FE_OK;
}

/* ---- index.Tensor ----
 * x[i0, i1, ...]: the inputs after x index x's leading dims, one tensor
 * each; they broadcast together to B. aten's index also takes None for a
 * dim it leaves whole (x[:, i]); the exporter drops None tensors from the
 * inputs, so such a node must list them as args.indices, one entry per
 * leading dim: null for None, anything else for the next tensor input.
 * Without args.indices every index is a tensor. As in numpy, B replaces the
 * indexed dims where they are adjacent, else B comes first and the other
 * dims follow in order. Boolean masks (data-dependent shapes) are refused. */

typedef struct ix {
    int m;                          /* leading dims given an entry */
    int src[FE_MAX_RANK];           /* input of dim d's index, or -1 */
    int brank;
    int64_t bshape[FE_MAX_RANK];    /* the indices broadcast together */
    int first, last, adjacent;
} ix;

static int index_plan(const fe_k_acall *c, ix *p, fe_error *err)
{
    const fe_k_tensor *x = &c->in[0];
    json_t *ij = fe_k_acall_arg(c, "indices");
    int next = 1;
    if (ij) {
        if (!json_is_array(ij))
            return fe_k_acall_fail(c, err,
                                   "args.indices must be a list (null for a dim taken whole)");
        if (json_array_size(ij) > (size_t)x->rank)
            return fe_k_acall_fail(c, err, "%zu indices for an input of rank %d",
                                   json_array_size(ij), x->rank);
        p->m = (int)json_array_size(ij);
        for (int d = 0; d < p->m; d++)
            p->src[d] = json_is_null(json_array_get(ij, (size_t)d)) ? -1 : next++;
        if (next != c->n->nin)
            return fe_k_acall_fail(c, err,
                                   "args.indices names %d tensors but the node has %d index inputs",
                                   next - 1, c->n->nin - 1);
    } else {
        if (c->n->nin - 1 > x->rank)
            return fe_k_acall_fail(c, err, "%d indices for an input of rank %d", c->n->nin - 1,
                                   x->rank);
        p->m = c->n->nin - 1;
        for (int d = 0; d < p->m; d++)
            p->src[d] = next++;
    }
    p->first = p->last = -1;
    p->brank = 0;
    fe_k_tensor acc = fe_k_view(NULL, FE_I64, 0, NULL);
    for (int d = 0; d < p->m; d++) {
        if (p->src[d] < 0)
            continue;
        const fe_k_tensor *t = &c->in[p->src[d]];
        if (t->dtype == FE_BOOL)
            return fe_k_acall_fail(c, err, "index %d is a boolean mask; only i64 / i32 indices are "
                                   "supported (mask shapes depend on the data)", p->src[d]);
        if (t->dtype != FE_I64 && t->dtype != FE_I32)
            return fe_k_acall_fail(c, err, "index %d is %s; indices must be i64 or i32", p->src[d],
                                   fe_dtype_name(t->dtype));
        if (bcast_shape(&acc, t, &acc.rank, acc.shape)) {
            char a[128], b[128];
            return fe_k_acall_fail(c, err, "index shapes %s and %s do not broadcast",
                                   fe_k_acall_shape(&acc, a, sizeof a),
                                   fe_k_acall_shape(t, b, sizeof b));
        }
        if (p->first < 0)
            p->first = d;
        p->last = d;
    }
    if (p->first < 0)
        return fe_k_acall_fail(c, err, "needs at least one index tensor");
    p->brank = acc.rank;
    memcpy(p->bshape, acc.shape, sizeof p->bshape);
    p->adjacent = 1;
    for (int d = p->first; d <= p->last; d++)
        p->adjacent &= p->src[d] >= 0;
    return FE_OK;
}

/* Output dims before x's trailing block: for each, the x dim it walks or
 * (xd < 0) the B dim bd. */
static int index_lead(const fe_k_tensor *x, const ix *p, int *xd, int *bd)
{
    int k = 0;
    if (p->adjacent)
        for (int d = 0; d < p->first; d++)
            xd[k] = d, bd[k++] = -1;
    for (int b = 0; b < p->brank; b++)
        xd[k] = -1, bd[k++] = b;
    for (int d = p->adjacent ? p->last + 1 : 0; d <= p->last && d < x->rank; d++)
        if (d >= p->m || p->src[d] < 0)
            xd[k] = d, bd[k++] = -1;
    return k;
}

static int k_index(const fe_k_acall *c, fe_error *err)
{
    ix p;
    int xd[2 * FE_MAX_RANK], bd[2 * FE_MAX_RANK];
    int64_t shape[2 * FE_MAX_RANK];
    if (c->n->nin < 2)
        return fe_k_acall_fail(c, err, "needs the input and at least one index tensor");
    if (index_plan(c, &p, err))
        return err ? err->code : FE_EINPUT;
    const fe_k_tensor *x = &c->in[0];
    int lead = index_lead(x, &p, xd, bd), rank = lead;
    for (int k = 0; k < lead; k++)
        shape[k] = xd[k] >= 0 ? x->shape[xd[k]] : p.bshape[bd[k]];
    for (int d = p.last + 1; d < x->rank; d++)
        shape[rank++] = x->shape[d];
    if (rank > FE_MAX_RANK)
        return fe_k_acall_fail(c, err, "the result would have rank %d; at most %d is supported",
                               rank, FE_MAX_RANK);
    if (!fe_k_acall_same_shape(c->out, rank, shape))
        return fe_k_acall_out_mismatch(c, err, rank, shape);
    if (c->out->dtype != x->dtype)
        return fe_k_acall_fail(c, err, "the graph's output is %s but indexing keeps the input's %s",
                               fe_dtype_name(c->out->dtype), fe_dtype_name(x->dtype));
    if (c->dry && c->plan) {
        fe_k_aten_plan *q = c->plan;
        *q = (fe_k_aten_plan){.kernel = FE_K_ATEN_INDEX, .m = p.m, .brank = p.brank,
                              .first = p.first, .last = p.last, .adjacent = p.adjacent};
        memcpy(q->src, p.src, sizeof q->src);
        memcpy(q->bshape, p.bshape, sizeof q->bshape);
        q->nlead = lead;
        memcpy(q->lead_x, xd, sizeof q->lead_x);
        memcpy(q->lead_b, bd, sizeof q->lead_b);
    }
    if (c->dry)
        return FE_OK;
    int64_t xs[FE_MAX_RANK], ist[FE_MAX_RANK][FE_MAX_RANK], chunk = 1;
    fe_k_strides(x->shape, x->rank, xs);
    for (int d = p.last + 1; d < x->rank; d++)
        chunk *= x->shape[d];
    for (int d = p.first; d <= p.last; d++)
        if (p.src[d] >= 0)
            fe_k_bcast_strides(&c->in[p.src[d]], p.brank, p.bshape, ist[d]);
    int64_t numel = fe_k_numel(c->out), nchunks = chunk ? numel / chunk : 0;
    size_t es = (size_t)fe_dtype_size(x->dtype);
    const char *src = x->data;
    char *dst = c->out->data;
    for (int64_t ch = 0; ch < nchunks; ch++) {
        int64_t bi[FE_MAX_RANK], xoff = 0, r = ch;
        for (int k = lead - 1; k >= 0; k--) {
            int64_t i = r % shape[k];
            r /= shape[k];
            if (xd[k] >= 0)
                xoff += i * xs[xd[k]];
            else
                bi[bd[k]] = i;
        }
        for (int d = p.first; d <= p.last; d++) {
            if (p.src[d] < 0)
                continue;
            const fe_k_tensor *t = &c->in[p.src[d]];
            int64_t ioff = 0, v, size = x->shape[d];
            for (int b = 0; b < p.brank; b++)
                ioff += bi[b] * ist[d][b];
            fe_k_load_i64(t->data, t->dtype, ioff, &v, 1);
            int64_t w = v < 0 ? v + size : v;
            if (w < 0 || w >= size)
                return fe_k_acall_fail(c, err, "index %lld is out of range for dim %d of size %lld "
                                       "(index tensor %d)", (long long)v, d, (long long)size,
                                       p.src[d]);
            xoff += w * xs[d];
        }
        memcpy(dst + (size_t)(ch * chunk) * es, src + (size_t)xoff * es, (size_t)chunk * es);
    }
    return FE_OK;
}

/* ---- the table ---- */

typedef struct entry {
    const char *name;
    kern_fn fn;
    int op;
    const char *keys;   /* args it reads (besides the ignored ones below) */
} entry;

/* Placement and allocation hints that never change values. */
static const char *const ignored = "layout device pin_memory memory_format non_blocking";

#define CMP(nm, op) {nm, k_binary, op, "other"}, {nm ".Scalar", k_binary, op, "other"}, \
                    {nm ".Tensor", k_binary, op, "other"}
#define BIT(nm, op) CMP(nm, op), CMP("bitwise_" nm, op), CMP("__" nm "__", op)
#define LOGIC(nm, op) {"logical_" nm, k_binary, op, ""}, {"logical_" nm ".default", k_binary, op, ""}
#define DEF(nm, fn, op, keys) {nm, fn, op, keys}, {nm ".default", fn, op, keys}
#define FILL(nm, op, keys) DEF(nm, k_fill, op, keys)
/* the in-place form (hardswish_) gives the same values in a new tensor */
#define UNARY(nm, op) DEF(nm, fe_k_aten_pointwise, op, ""), DEF(nm "_", fe_k_aten_pointwise, op, "")

static const entry table[] = {
    {"arange", k_arange, 0, "start end step dtype"},
    {"arange.default", k_arange, 0, "end dtype"},
    {"arange.start", k_arange, 0, "start end dtype"},
    {"arange.start_step", k_arange, 0, "start end step dtype"},
    {"diff", k_diff, 0, "n dim prepend append"},
    {"diff.default", k_diff, 0, "n dim prepend append"},
    {"cumsum", k_cumsum, 0, "dim dtype"},
    {"cumsum.default", k_cumsum, 0, "dim dtype"},
    CMP("eq", B_EQ), CMP("ne", B_NE), CMP("lt", B_LT), CMP("le", B_LE), CMP("gt", B_GT),
    CMP("ge", B_GE),
    BIT("and", B_AND), BIT("or", B_OR), BIT("xor", B_XOR),
    LOGIC("and", B_LAND), LOGIC("or", B_LOR), LOGIC("xor", B_LXOR),
    FILL("new_ones", F_ONE, "size dtype"), FILL("new_zeros", F_ZERO, "size dtype"),
    FILL("new_full", F_FULL, "size fill_value dtype"), FILL("ones", F_ONE, "size dtype"),
    FILL("zeros", F_ZERO, "size dtype"), FILL("full", F_FULL, "size fill_value dtype"),
    FILL("ones_like", F_ONE, "dtype"), FILL("zeros_like", F_ZERO, "dtype"),
    FILL("full_like", F_FULL, "fill_value dtype"), FILL("scalar_tensor", F_SCALAR, "s dtype"),
    {"index", k_index, 0, "indices"},
    {"index.Tensor", k_index, 0, "indices"},
    DEF("clone", fe_k_aten_copy, 0, ""), DEF("contiguous", fe_k_aten_copy, 0, ""),
    /* torch.gather; sparse_grad only changes the gradient's layout */
    DEF("gather", fe_k_aten_gather, 0, "dim sparse_grad"),
    /* stable always (aten_sort.c); TopK imports as argsort, slice, gather */
    DEF("argsort", fe_k_aten_argsort, 0, "dim descending stable"),
    {"argsort.stable", fe_k_aten_argsort, 0, "dim descending stable"},
    UNARY("hardswish", FE_OP_HARDSWISH), UNARY("hardsigmoid", FE_OP_HARDSIGMOID),
};

static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; n && (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static const entry *find(const char *aten)
{
    aten = fe_k_acall_bare(aten);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, aten))
            return &table[i];
    return NULL;
}

static int no_kernel(const fe_graph *g, const fe_node *n, const char *aten, fe_error *err)
{
    char names[1024];
    size_t len = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof table / sizeof table[0] && len < sizeof names; i++)
        if (!strchr(table[i].name, '.'))
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? " " : "",
                                    table[i].name);
    const char *want = fe_node_attr_str(g, n, "kernel", NULL);
    if (want)
        return fe_error_set(err, FE_EINPUT, "node '%s' is a custom op asking for kernel '%s', "
                            "which no program registered; load the plugin that has it (fuseeng "
                            "--kernels PLUGIN.so, or fe_kernel_load; docs/kernels.md)",
                            fe_node_name(g, n), want);
    return fe_error_set(err, FE_EINPUT, "node '%s' is a custom op (aten '%s') that fuseeng "
                        "cannot execute: it has no kernel for it; register one (fuseeng --kernels "
                        "PLUGIN.so; docs/kernels.md) or remove it from the graph (aten kernels: %s)",
                        fe_node_name(g, n), aten ? aten : "unknown", names);
}

/* Validate and (unless dry) run node n. */
static int dispatch(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                    fe_k_tensor *out, int dry, fe_k_aten_plan *plan, fe_error *err)
{
    if (n->op != FE_OP_CUSTOM)
        return fe_error_set(err, FE_EINPUT, "node '%s' (%s) is not a custom op",
                            fe_node_name(g, n), fe_node_op_name(n));
    const char *aten = fe_node_attr_str(g, n, "aten", NULL);
    const entry *e = aten ? find(aten) : NULL;
    if (!e)
        return no_kernel(g, n, aten, err);
    fe_k_acall c = {g, n, aten, NULL, in, out, e->op, dry, plan};
    const fe_attr *a = fe_node_attr(g, n, "args");
    if (!a || a->type == FE_ATTR_NULL) {
        c.args = json_object();
    } else if (a->type == FE_ATTR_JSON) {
        json_error_t je;
        c.args = json_loadb(g->blob + a->v.off, (size_t)a->n, 0, &je);
        if (c.args && !json_is_object(c.args)) {
            json_decref(c.args);
            return fe_k_acall_fail(&c, err, "attrs.args must be a JSON object");
        }
    } else {
        return fe_k_acall_fail(&c, err, "attrs.args must be a JSON object");
    }
    if (!c.args)
        return fe_k_acall_fail(&c, err, "attrs.args is not valid JSON");
    const char *key;
    json_t *v;
    int rc = FE_OK;
    json_object_foreach(c.args, key, v) {
        if (!has_word(e->keys, key) && !has_word(ignored, key)) {
            rc = fe_k_acall_fail(&c, err, "unsupported argument args.%s (this kernel reads: %s)",
                                 key, *e->keys ? e->keys : "none");
            break;
        }
    }
    json_t *dt = fe_k_acall_arg(&c, "dtype");
    if (!rc && n->nout != 1)
        rc = fe_k_acall_fail(&c, err, "has %d outputs; aten kernels produce one", n->nout);
    if (!rc && dt && !json_is_string(dt))
        rc = fe_k_acall_fail(&c, err, "args.dtype must be a dtype name or null");
    if (!rc && dt && dtype_arg(json_string_value(dt)) != out->dtype)
        rc = fe_k_acall_fail(&c, err, "args.dtype is '%s' but the graph's output is %s",
                             json_string_value(dt), fe_dtype_name(out->dtype));
    if (!rc && plan) {
        memset(plan, 0, sizeof *plan);
        plan->kernel = e->fn == fe_k_aten_copy ? FE_K_ATEN_COPY : FE_K_ATEN_OTHER;
    }
    if (!rc)
        rc = e->fn(&c, err);
    json_decref(c.args);
    return rc;
}

int fe_k_aten_plan_of(const fe_graph *g, const fe_node *n, fe_k_aten_plan *p, fe_error *err)
{
    const char *user = fe_k_user_kernel(g, n);
    if (user)   /* a registered kernel runs it: there is no plan to describe */
        return fe_error_set(err, FE_EINPUT, "node '%s' runs the registered kernel '%s' (on the "
                            "host)", fe_node_name(g, n), user);
    if (n->op != FE_OP_CUSTOM || n->nout != 1 || n->nin > FE_MAX_IO)
        return dispatch(g, n, NULL, NULL, 1, p, err);   /* names the problem */
    fe_k_tensor *v = fe_calloc((size_t)n->nin + 1, sizeof *v, err);
    if (!v)
        return FE_ENOMEM;
    for (int k = 0; k <= n->nin; k++)
        v[k] = fe_k_graph_view(g, k < n->nin ? fe_node_input(g, n, k) : fe_node_output(g, n, 0),
                               NULL);
    int rc = dispatch(g, n, v, &v[n->nin], 1, p, err);
    free(v);
    return rc;
}

int fe_k_aten_check(const fe_graph *g, const fe_node *n, fe_error *err)
{
    if (fe_k_user_kernel(g, n))
        return fe_k_user_check(g, n, err);
    return fe_k_aten_plan_of(g, n, NULL, err);
}

int fe_k_aten_supported(const fe_graph *g, const fe_node *n)
{
    fe_error err = {0};
    return fe_k_aten_check(g, n, &err) == FE_OK;
}

int fe_k_aten_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                  fe_k_tensor *out, fe_error *err)
{
    if (fe_k_user_kernel(g, n))
        return fe_k_user_run(g, n, in, out, err);
    return dispatch(g, n, in, out, 0, NULL, err);
}
