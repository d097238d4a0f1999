/* onnx_fold.c: folding the nodes of an ONNX graph whose inputs are all
 * known constants.
 *
 * (The constants themselves, decoded and encoded, are onnx_const.c's.)
 *
 * Exports are full of shape arithmetic (Shape -> Gather -> Unsqueeze ->
 * Concat -> Reshape) that is constant once shapes are known. Folding it
 * here turns the Reshape's shape into an attribute instead of a tensor our
 * reshape cannot take. A symbolic dim flows through as an FE_SYM item as
 * long as it is only moved (gathered, concatenated, reshaped, cast), never
 * computed with: reshape and expand shapes accept dim names.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "onnx_imp.h"

/* ---- folding ---- */

/* Offset into an input of shape (rank r) broadcast to out (rank orank) for
 * output element index i. */
static int64_t bidx(int64_t i, const int64_t *out, int orank, const int64_t *in, int r)
{
    int64_t off = 0, stride = 1;
    for (int d = orank - 1; d >= 0; d--) {
        int64_t c = i % out[d];
        i /= out[d];
        int k = d - (orank - r);
        if (k >= 0) {
            if (in[k] != 1)
                off += c * stride;
            stride *= in[k];
        }
    }
    return off;
}

static int bshape(const imp_val *const *in, int n, int *rank, int64_t *shape)
{
    *rank = 0;
    for (int k = 0; k < n; k++)
        if (in[k]->rank > *rank)
            *rank = in[k]->rank;
    for (int d = 0; d < *rank; d++) {
        shape[d] = 1;
        for (int k = 0; k < n; k++) {
            int j = d - (*rank - in[k]->rank);
            if (j < 0 || in[k]->shape[j] == 1)
                continue;
            if (shape[d] != 1 && shape[d] != in[k]->shape[j])
                return -1;
            shape[d] = in[k]->shape[j];
        }
    }
    return 0;
}

static imp_val *out0(imp *im, int dtype, int rank, const int64_t *shape)
{
    int64_t n = imp_numel(shape, rank);
    for (int d = 0; d < rank; d++)
        n = shape[d] < 0 ? -1 : n;   /* symbolic, or no shape */
    if (n < 0 || n > IMP_FOLD_MAX)
        return NULL;
    imp_val *v = imp_out(im, 0, dtype, rank, shape);
    if (!v)
        return NULL;
    v->tensor = -1;
    im->taken[v->name] &= (uint8_t)~IMP_TENSOR;
    return imp_const_new(im, v, dtype, rank, shape);
}

static int sym_in(const imp_val *v)
{
    if (!v->iv)
        return 0;
    for (int64_t i = 0; i < v->numel; i++)
        if (FE_IS_SYM(v->iv[i]))
            return 1;
    return 0;
}

/* v with its dim names replaced by their values (imp_dim_value), in tmp;
 * v itself when it has none. NULL with im->err set when out of memory. */
static imp_val *fixed(imp *im, imp_val *v, imp_val *tmp)
{
    if (!sym_in(v))
        return v;
    *tmp = *v;
    if (!(tmp->iv = imp_alloc(im, (size_t)v->numel * sizeof *tmp->iv)))
        return NULL;
    for (int64_t i = 0; i < v->numel; i++)
        tmp->iv[i] = FE_IS_SYM(v->iv[i]) ? imp_dim_value(im, v->iv[i]) : v->iv[i];
    tmp->data = NULL;
    return tmp;
}

/* The elementwise ops folding knows: inputs, whether the result is bool,
 * whether integer inputs compute in int64 (else in double, as the float
 * ones do). */
enum { E_ADD, E_SUB, E_MUL, E_DIV, E_POW, E_MAX, E_MIN, E_MOD, E_NEG, E_ABS, E_SQRT, E_RECIP,
       E_EXP, E_LOG, E_SIN, E_COS, E_TANH, E_ERF, E_SIGMOID, E_FLOOR, E_CEIL, E_EQUAL, E_LESS,
       E_GREATER, E_NOT, E_AND, E_OR, E_WHERE };

static const struct elem_op {
    const char *op;
    int code, nin, cmp, ints;
} elem_ops[] = {
    {"Add", E_ADD, 2, 0, 1}, {"Sub", E_SUB, 2, 0, 1}, {"Mul", E_MUL, 2, 0, 1},
    {"Div", E_DIV, 2, 0, 1}, {"Pow", E_POW, 2, 0, 0}, {"Max", E_MAX, 2, 0, 1},
    {"Min", E_MIN, 2, 0, 1}, {"Mod", E_MOD, 2, 0, 1}, {"Neg", E_NEG, 1, 0, 1},
    {"Abs", E_ABS, 1, 0, 1}, {"Sqrt", E_SQRT, 1, 0, 0}, {"Reciprocal", E_RECIP, 1, 0, 0},
    {"Exp", E_EXP, 1, 0, 0}, {"Log", E_LOG, 1, 0, 0}, {"Sin", E_SIN, 1, 0, 0},
    {"Cos", E_COS, 1, 0, 0}, {"Tanh", E_TANH, 1, 0, 0}, {"Erf", E_ERF, 1, 0, 0},
    {"Sigmoid", E_SIGMOID, 1, 0, 0}, {"Floor", E_FLOOR, 1, 0, 0}, {"Ceil", E_CEIL, 1, 0, 0},
    {"Equal", E_EQUAL, 2, 1, 0}, {"Less", E_LESS, 2, 1, 0}, {"Greater", E_GREATER, 2, 1, 0},
    {"Not", E_NOT, 1, 1, 0}, {"And", E_AND, 2, 1, 0}, {"Or", E_OR, 2, 1, 0},
    {"Where", E_WHERE, 3, 0, 0},
};

static const struct elem_op *elem_op(const char *op)
{
    for (size_t i = 0; i < sizeof elem_ops / sizeof *elem_ops; i++)
        if (!strcmp(elem_ops[i].op, op))
            return &elem_ops[i];
    return NULL;
}

/* a op b in int64; 0, or an error when it does not fit (or divides by 0). */
static int int_op(imp *im, int code, int64_t a, int64_t b, int64_t *r)
{
    static const char *const sign[] = {[E_ADD] = "+", [E_SUB] = "-", [E_MUL] = "*"};
    int over = 0;
    switch (code) {
    case E_ADD: over = __builtin_add_overflow(a, b, r); break;
    case E_SUB: over = __builtin_sub_overflow(a, b, r); break;
    case E_MUL: over = __builtin_mul_overflow(a, b, r); break;
    case E_DIV:
    case E_MOD:
        if (b == 0)
            return imp_fail(im, "integer %s by zero folding constants (%lld %s 0)",
                            code == E_DIV ? "division" : "modulo", (long long)a,
                            code == E_DIV ? "/" : "%");
        /* Values are at least IMP_INT_MIN, so a / -1 fits. */
        *r = code == E_DIV ? a / b : a % b;
        /* Mod without fmod takes the divisor's sign, as Python does. */
        if (code == E_MOD && !imp_attr_int(im->node, "fmod", 0) && *r && (*r < 0) != (b < 0))
            *r += b;
        break;
    case E_MAX: *r = a > b ? a : b; break;
    case E_MIN: *r = a < b ? a : b; break;
    case E_NEG: *r = -a; break;
    case E_ABS: *r = a < 0 ? -a : a; break;
    default: return -1;
    }
    if (over)
        return imp_fail(im, "int64 overflow folding constants (%lld %s %lld); the model's constant "
                        "arithmetic does not fit int64", (long long)a, sign[code], (long long)b);
    *r = imp_int(im, *r);
    return FE_OK;
}

static double float_op(int code, double a, double b)
{
    switch (code) {
    case E_ADD: return a + b;
    case E_SUB: return a - b;
    case E_MUL: return a * b;
    case E_DIV: return a / b;
    case E_POW: return pow(a, b);
    case E_MAX: return a > b ? a : b;
    case E_MIN: return a < b ? a : b;
    case E_NEG: return -a;
    case E_ABS: return fabs(a);
    case E_SQRT: return sqrt(a);
    case E_RECIP: return 1 / a;
    case E_EXP: return exp(a);
    case E_LOG: return log(a);
    case E_SIN: return sin(a);
    case E_COS: return cos(a);
    case E_TANH: return tanh(a);
    case E_ERF: return erf(a);
    case E_SIGMOID: return 1 / (1 + exp(-a));
    case E_FLOOR: return floor(a);
    case E_CEIL: return ceil(a);
    case E_EQUAL: return a == b;
    case E_LESS: return a < b;
    case E_GREATER: return a > b;
    case E_NOT: return a == 0;
    case E_AND: return a != 0 && b != 0;
    default: return a != 0 || b != 0;   /* E_OR */
    }
}

/* Elementwise ops of one to three inputs: 1 folded, 0 not, -1 error. */
static int fold_elem(imp *im, const struct elem_op *e, imp_val *const *in)
{
    int nin = e->nin, rank, isint = 1;
    int64_t shape[FE_MAX_RANK];
    if (bshape((const imp_val *const *)in, nin, &rank, shape))
        return 0;
    int dtype = e->cmp ? FE_BOOL : in[nin == 3 ? 1 : 0]->dtype;
    for (int k = 0; k < nin; k++)
        if (k != 0 || nin != 3)
            isint &= in[k]->iv != NULL;
    if (e->code == E_MOD && !isint)
        return 0;   /* a float Mod stays a (custom) node */
    /* A dim name is kept where it is only moved (Where's branches, a
     * multiplication by 1); computing with one takes its value. */
    imp_val *inv[3], fx[3];
    for (int k = 0; k < nin; k++)
        if (!(inv[k] = !(nin == 3 && k > 0) && e->code != E_MUL ? fixed(im, in[k], &fx[k]) : in[k]))
            return -1;
    in = inv;
    imp_val *o = out0(im, dtype, rank, shape);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t ia = bidx(i, shape, rank, in[0]->shape, in[0]->rank);
        int64_t ib = nin > 1 ? bidx(i, shape, rank, in[1]->shape, in[1]->rank) : 0;
        if (nin == 3) {
            int64_t ic = bidx(i, shape, rank, in[2]->shape, in[2]->rank);
            int c = imp_cf(in[0], ia) != 0;
            if (o->iv)
                o->iv[i] = c ? imp_ci(in[1], ib) : imp_ci(in[2], ic);
            else
                o->fv[i] = c ? imp_cf(in[1], ib) : imp_cf(in[2], ic);
            continue;
        }
        if (e->code == E_MUL && isint && (FE_IS_SYM(in[0]->iv[ia]) || FE_IS_SYM(in[1]->iv[ib]))) {
            int64_t a = in[0]->iv[ia], b = in[1]->iv[ib];
            if (a == 1 || b == 1)
                o->iv[i] = a == 1 ? b : a;
            else if (int_op(im, E_MUL, FE_IS_SYM(a) ? imp_dim_value(im, a) : a,
                            FE_IS_SYM(b) ? imp_dim_value(im, b) : b, &o->iv[i]))
                return -1;
            continue;
        }
        if (isint && e->ints) {
            if (int_op(im, e->code, imp_ci(in[0], ia), nin > 1 ? imp_ci(in[1], ib) : 0, &o->iv[i]))
                return -1;
            continue;
        }
        double r = float_op(e->code, imp_cf(in[0], ia), nin > 1 ? imp_cf(in[1], ib) : 0);
        if (o->iv)
            o->iv[i] = imp_f2i(r);
        else
            o->fv[i] = r;
    }
    return 1;
}

/* Copy elements of in picked by index map (out element -> in element). */
static int fold_move(imp *im, imp_val *in, int dtype, int rank, const int64_t *shape,
                     int64_t (*map)(int64_t, const void *), const void *ctx)
{
    imp_val *o = out0(im, dtype, rank, shape);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t j = map ? map(i, ctx) : i;
        if (o->iv)
            o->iv[i] = imp_ci(in, j);
        else
            o->fv[i] = imp_cf(in, j);
    }
    return 1;
}

typedef struct gather_ctx {
    const imp_val *idx;
    int64_t outer, n, inner, nidx;
} gather_ctx;

static int64_t gather_map(int64_t i, const void *p)
{
    const gather_ctx *c = p;
    int64_t inner = i % c->inner, k = (i / c->inner) % c->nidx, outer = i / c->inner / c->nidx;
    int64_t j = imp_ci(c->idx, k);
    if (j < 0)
        j += c->n;
    return (outer * c->n + j) * c->inner + inner;
}

typedef struct slice_ctx {
    int rank;
    int64_t in[FE_MAX_RANK], out[FE_MAX_RANK], start[FE_MAX_RANK], step[FE_MAX_RANK];
} slice_ctx;

static int64_t slice_map(int64_t i, const void *p)
{
    const slice_ctx *c = p;
    int64_t off = 0, stride = 1;
    for (int d = c->rank - 1; d >= 0; d--) {
        int64_t k = i % c->out[d];
        i /= c->out[d];
        off += (c->start[d] + k * c->step[d]) * stride;
        stride *= c->in[d];
    }
    return off;
}

static int fold_shape(imp *im, const imp_val *x)
{
    int64_t start = imp_attr_int(im->node, "start", 0), end = imp_attr_int(im->node, "end", x->rank);
    if (start < 0)
        start += x->rank;
    if (end < 0)
        end += x->rank;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < start ? start : end > x->rank ? x->rank : end;
    int64_t n = end - start;
    imp_val *o = out0(im, FE_I64, 1, &n);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < n; i++)
        o->iv[i] = x->shape[start + i];
    return 1;
}

/* The value of a Constant node's attribute into a new output. */
static int fold_constant(imp *im)
{
    const Onnx__NodeProto *n = im->node;
    const Onnx__AttributeProto *a = imp_attr(n, "value");
    if (a && a->t) {
        imp_val *v = imp_out(im, 0, 0, 0, NULL);
        if (!v)
            return -1;
        v->tensor = -1;
        im->taken[v->name] &= (uint8_t)~IMP_TENSOR;
        return imp_const_from_proto(im, v, a->t, "constant") ? -1 : 1;
    }
    int one = (a = imp_attr(n, "value_float")) || (a = imp_attr(n, "value_int"));
    if (one || (a = imp_attr(n, "value_floats")) || (a = imp_attr(n, "value_ints"))) {
        int isf = !strcmp(a->name, "value_float") || !strcmp(a->name, "value_floats");
        int64_t len = one ? 1 : isf ? (int64_t)a->n_floats : (int64_t)a->n_ints;
        imp_val *o = imp_out(im, 0, 0, 0, NULL);
        if (!o)
            return -1;
        o->tensor = -1;
        im->taken[o->name] &= (uint8_t)~IMP_TENSOR;
        if (!imp_const_new(im, o, isf ? FE_F32 : FE_I64, !one, &len))
            return -1;
        for (int64_t i = 0; i < len; i++) {
            if (isf)
                o->fv[i] = one ? a->f : a->floats[i];
            else
                o->iv[i] = imp_int(im, one ? a->i : a->ints[i]);
        }
        return 1;
    }
    return imp_fail(im, "Constant without a supported value attribute (value, value_float(s), "
                    "value_int(s))") ? -1 : -1;
}

typedef struct perm_ctx {
    int rank;
    int64_t in[FE_MAX_RANK], out[FE_MAX_RANK], perm[FE_MAX_RANK];
} perm_ctx;

static int64_t perm_map(int64_t i, const void *p)
{
    const perm_ctx *c = p;
    int64_t idx[FE_MAX_RANK], off = 0;
    for (int d = c->rank - 1; d >= 0; d--) {
        idx[d] = i % c->out[d];
        i /= c->out[d];
    }
    int64_t src[FE_MAX_RANK];
    for (int d = 0; d < c->rank; d++)
        src[c->perm[d]] = idx[d];
    for (int d = 0; d < c->rank; d++)
        off = off * c->in[d] + src[d];
    return off;
}

typedef struct expand_ctx {
    int rank, xrank;
    const int64_t *out, *x;
} expand_ctx;

static int64_t expand_map(int64_t i, const void *p)
{
    const expand_ctx *c = p;
    return bidx(i, c->out, c->rank, c->x, c->xrank);
}

/* Einsum on constants (torch.outer, rotary tables): explicit equations
 * without ellipses, summing over every letter not in the output. A byte
 * that is not a letter, a space, ',' or "->" is an error (the letters
 * index a table: a byte over 0x7f would be a negative index). */
static int fold_einsum(imp *im, imp_val **in, int nin)
{
    char buf[512];
    const unsigned char *eq =
        (const unsigned char *)imp_attr_str(im->node, "equation", "", buf, sizeof buf);
    for (size_t i = 0; eq[i]; i++) {
        unsigned char c = eq[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ' ' || c == ',' ||
              c == '.' || (c == '-' && eq[i + 1] == '>') || (c == '>' && i && eq[i - 1] == '-')))
        {
            imp_fail(im, "equation has byte 0x%02x at %zu, which is not a letter (Einsum "
                     "subscripts are a-z and A-Z)", c, i);
            return -1;
        }
    }
    const unsigned char *arrow = (const unsigned char *)strstr((const char *)eq, "->");
    if (!arrow || strstr((const char *)eq, "..."))
        return 0;
    /* terms[k]: input k's letters, one per dim. */
    unsigned char (*terms)[FE_MAX_RANK] = imp_alloc(im, (size_t)nin * sizeof *terms);
    unsigned char out[FE_MAX_RANK];
    int64_t size[128] = {0};
    int nt = 0, len = 0;
    if (!terms)
        return -1;
    for (const unsigned char *p = eq;; p++) {
        if (*p == ' ')
            continue;
        if (*p == ',' || p == arrow) {
            if (nt >= nin || len != in[nt]->rank)
                return 0;
            nt++;
            len = 0;
            if (p == arrow)
                break;
            continue;
        }
        if (*p == '.' || len >= FE_MAX_RANK || nt >= nin)
            return 0;
        int64_t d = in[nt]->shape[len];
        if (d < 1 || (size[*p] && size[*p] != d))
            return 0;
        size[*p] = d;
        terms[nt][len++] = *p;
    }
    if (nt != nin)
        return 0;
    len = 0;
    for (const unsigned char *p = arrow + 2; *p; p++)
        if (*p != ' ') {
            if (*p == '.' || *p == '-' || *p == '>' || *p == ',' || len >= FE_MAX_RANK || !size[*p])
                return 0;
            out[len++] = *p;
        }
    unsigned char letters[128];
    int nl = 0;
    int64_t space = 1, shape[FE_MAX_RANK];
    for (int c = 0; c < 128; c++)
        if (size[c]) {
            letters[nl++] = (unsigned char)c;
            /* At most 2^24 steps of work, each step a product over the inputs. */
            if (size[c] < 1 || __builtin_mul_overflow(space, size[c], &space) ||
                space > (1 << 24) / nin)
                return 0;
        }
    for (int i = 0; i < len; i++)
        shape[i] = size[out[i]];
    imp_val *o = out0(im, in[0]->dtype, len, shape);
    if (!o)
        return im->err->code ? -1 : 0;
    double *acc = imp_alloc(im, (size_t)o->numel * sizeof *acc);
    if (!acc)
        return -1;
    int64_t at[128] = {0};
    for (int64_t it = 0; it < space; it++) {
        int64_t rest = it;
        for (int l = nl - 1; l >= 0; l--) {
            at[letters[l]] = rest % size[letters[l]];
            rest /= size[letters[l]];
        }
        double prod = 1;
        for (int k = 0; k < nin; k++) {
            int64_t off = 0;
            for (int d = 0; d < in[k]->rank; d++)
                off = off * in[k]->shape[d] + at[terms[k][d]];
            prod *= imp_cf(in[k], off);
        }
        int64_t off = 0;
        for (int d = 0; d < len; d++)
            off = off * shape[d] + at[out[d]];
        acc[off] += prod;
    }
    for (int64_t i = 0; i < o->numel; i++) {
        if (o->iv)
            o->iv[i] = imp_f2i(acc[i]);
        else
            o->fv[i] = acc[i];
    }
    return 1;
}

/* Trilu on a constant (causal masks): keep the upper or lower triangle. */
static int fold_trilu(imp *im, imp_val **in, int nin)
{
    imp_val *x = in[0];
    int64_t k = 0;
    if (x->rank < 2 || (nin > 1 && in[1] && (in[1]->numel != 1 || !in[1]->iv)))
        return 0;
    if (nin > 1 && in[1])
        k = in[1]->iv[0];
    int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1];
    int upper = (int)imp_attr_int(im->node, "upper", 1);
    imp_val *o = out0(im, x->dtype, x->rank, x->shape);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < o->numel; i++) {
        int64_t c = i % cols, r = (i / cols) % rows;
        int keep = upper ? c - r >= k : c - r <= k;
        if (o->iv)
            o->iv[i] = keep ? imp_ci(x, i) : 0;
        else
            o->fv[i] = keep ? imp_cf(x, i) : 0;
    }
    return 1;
}

/* Concat on constants: 1 folded, 0 not (left to the mapping's checks). */
static int fold_concat(imp *im, imp_val **in, int nin)
{
    imp_val *x = in[0];
    int64_t axis = imp_attr_int(im->node, "axis", 0), shape[FE_MAX_RANK];
    if (axis < -x->rank || axis >= x->rank)
        return 0;
    if (axis < 0)
        axis += x->rank;
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = 0;
    for (int k = 0; k < nin; k++) {
        if (in[k]->rank != x->rank)
            return 0;
        for (int d = 0; d < x->rank; d++)
            if (d != axis && in[k]->shape[d] != x->shape[d])
                return 0;
        shape[axis] += in[k]->shape[axis];   /* each at most IMP_FOLD_MAX elements */
    }
    imp_val *o = out0(im, x->dtype, x->rank, shape);
    if (!o)
        return im->err->code ? -1 : 0;
    if (!o->numel)
        return 1;   /* empty: the loops below could count up to dims of any size */
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= shape[d];
    for (int d = (int)axis + 1; d < x->rank; d++)
        inner *= shape[d];
    int64_t at = 0;
    for (int64_t a = 0; a < outer; a++)
        for (int k = 0; k < nin; k++)
            for (int64_t j = 0; j < in[k]->shape[axis] * inner; j++, at++) {
                int64_t src = a * in[k]->shape[axis] * inner + j;
                if (o->iv)
                    o->iv[at] = imp_ci(in[k], src);
                else
                    o->fv[at] = imp_cf(in[k], src);
            }
    return 1;
}

/* Range on constants: 1 folded, or an error (too long to fold; a
 * Range(0, S, 1) on a dim name is the mapping's arange). */
static int fold_range(imp *im, imp_val **in)
{
    for (int k = 0; k < 3; k++)
        if (in[k]->numel != 1) {
            imp_fail(im, "input %d has %lld elements; Range takes scalars", k,
                     (long long)in[k]->numel);
            return -1;
        }
    double s = imp_cf(in[0], 0), e = imp_cf(in[1], 0), d = imp_cf(in[2], 0);
    double cnt = d == 0 ? INFINITY : ceil((e - s) / d);
    if (!(cnt <= IMP_FOLD_MAX)) {
        imp_fail(im, "Range of %g elements (from %g to %g by %g); at most %d fold, and only "
                 "Range(0, N, 1) on a symbolic dim becomes an arange node", cnt, s, e, d,
                 IMP_FOLD_MAX);
        return -1;
    }
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    imp_val *o = out0(im, in[0]->dtype, 1, &len);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < len; i++) {
        int64_t step;
        if (!o->iv)
            o->fv[i] = s + (double)i * d;
        else if (int_op(im, E_MUL, i, imp_ci(in[2], 0), &step) ||
                 int_op(im, E_ADD, imp_ci(in[0], 0), step, &o->iv[i]))
            return -1;
    }
    return 1;
}

/* The shape-moving ops on constants; 1 folded, 0 not, -1 error. */
static int fold_shape_op(imp *im, imp_val **in, int nin)
{
    const Onnx__NodeProto *n = im->node;
    const char *op = n->op_type;
    imp_val *x = in[0];
    int64_t shape[FE_MAX_RANK], axes[FE_MAX_RANK], spec[FE_MAX_RANK];
    int r;
    if (!strcmp(op, "Reshape")) {
        r = imp_const_ints(in[1], spec, FE_MAX_RANK);
        if (r < 0 || imp_reshape_shape(im, x, spec, r, (int)imp_attr_int(n, "allowzero", 0), shape))
            return im->err->code ? -1 : 0;
        int64_t m = imp_numel(shape, r);
        if (m >= 0 && m != x->numel) {
            imp_fail(im, "cannot reshape %lld elements into %lld", (long long)x->numel,
                     (long long)m);
            return -1;
        }
        return fold_move(im, x, x->dtype, r, shape, NULL, NULL);
    }
    if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) {
        int na = imp_axes(im, 1, axes, FE_MAX_RANK);
        if (im->err->code)
            return -1;
        r = op[0] == 'U' ? imp_unsqueeze_shape(im, x, axes, na < 0 ? 0 : na, shape)
                         : imp_squeeze_shape(im, x, axes, na, shape);
        return r < 0 ? -1 : fold_move(im, x, x->dtype, r, shape, NULL, NULL);
    }
    if (!strcmp(op, "Flatten")) {
        if (imp_flatten_shape(im, x, imp_attr_int(n, "axis", 1), shape))
            return -1;
        return fold_move(im, x, x->dtype, 2, shape, NULL, NULL);
    }
    if (!strcmp(op, "Concat"))
        return fold_concat(im, in, nin);
    if (!strcmp(op, "Gather")) {
        int64_t axis = imp_attr_int(n, "axis", 0);
        if (axis < -x->rank || axis >= x->rank || !in[1]->iv ||
            x->rank + in[1]->rank - 1 > FE_MAX_RANK)
            return 0;
        if (axis < 0)
            axis += x->rank;
        gather_ctx c = {in[1], 1, x->shape[axis], 1, in[1]->numel};
        r = 0;
        for (int d = 0; d < axis; d++)
            c.outer *= x->shape[d], shape[r++] = x->shape[d];
        for (int d = 0; d < in[1]->rank; d++)
            shape[r++] = in[1]->shape[d];
        for (int d = (int)axis + 1; d < x->rank; d++)
            c.inner *= x->shape[d], shape[r++] = x->shape[d];
        for (int64_t i = 0; i < c.nidx; i++)
            if (imp_ci(in[1], i) < -c.n || imp_ci(in[1], i) >= c.n) {
                imp_fail(im, "gather index %lld is out of range for size %lld",
                         (long long)imp_ci(in[1], i), (long long)c.n);
                return -1;
            }
        return fold_move(im, x, x->dtype, r, shape, gather_map, &c);
    }
    if (!strcmp(op, "Slice")) {
        int64_t st[FE_MAX_RANK], en[FE_MAX_RANK], sp[FE_MAX_RANK];
        int k = imp_slice_args(im, x, axes, st, en, sp);
        if (k < 0 || im->err->code)
            return -1;
        slice_ctx c = {.rank = x->rank};
        for (int d = 0; d < x->rank; d++)
            c.in[d] = c.out[d] = x->shape[d], c.start[d] = 0, c.step[d] = 1;
        for (int i = 0; i < k; i++) {
            int a = (int)axes[i];
            c.start[a] = st[i];
            c.step[a] = sp[i];
            if (imp_slice_range(im, x->shape[a], &c.start[a], en[i], sp[i], &c.out[a]))
                return -1;
        }
        return fold_move(im, x, x->dtype, x->rank, c.out, slice_map, &c);
    }
    if (!strcmp(op, "Transpose")) {
        perm_ctx c = {.rank = x->rank};
        if (imp_perm(im, x->rank, c.perm))
            return -1;
        for (int d = 0; d < x->rank; d++) {
            c.in[d] = x->shape[d];
            c.out[d] = x->shape[c.perm[d]];
        }
        return fold_move(im, x, x->dtype, x->rank, c.out, perm_map, &c);
    }
    if (!strcmp(op, "Expand")) {
        r = imp_const_ints(in[1], spec, FE_MAX_RANK);
        if (r < 0 || r < x->rank)
            return 0;
        for (int d = 0; d < r; d++)
            if (FE_IS_SYM(spec[d]))
                return 0;
        if (imp_check_shape(im, spec, r, "the target shape"))
            return -1;
        for (int d = 0; d < r; d++) {
            int j = d - (r - x->rank);
            int64_t xd = j >= 0 ? x->shape[j] : 1;
            if (xd != 1 && spec[d] != 1 && spec[d] != xd)
                return 0;
            shape[d] = xd == 1 ? spec[d] : xd;
        }
        expand_ctx c = {r, x->rank, shape, x->shape};
        return fold_move(im, x, x->dtype, r, shape, expand_map, &c);
    }
    if (!strcmp(op, "ConstantOfShape")) {
        r = imp_const_ints(x, spec, FE_MAX_RANK);
        if (r < 0)
            return 0;
        for (int d = 0; d < r; d++)
            if (FE_IS_SYM(spec[d]))
                return 0;
        if (imp_check_shape(im, spec, r, "the shape input"))
            return -1;
        const Onnx__AttributeProto *a = imp_attr(n, "value");
        imp_val fill = {.is_const = 1, .dtype = FE_F32, .numel = 1};
        double zero = 0;
        if (a && a->t) {
            if (imp_const_from_proto(im, &fill, a->t, "value"))
                return -1;
        } else {
            fill.fv = &zero;
        }
        if (fill.numel != 1) {
            imp_fail(im, "attribute 'value' holds %lld elements; it must hold one",
                     (long long)fill.numel);
            return -1;
        }
        imp_val *o = out0(im, fill.dtype, r, spec);
        if (!o)
            return im->err->code ? -1 : 0;
        for (int64_t i = 0; i < o->numel; i++) {
            if (o->iv)
                o->iv[i] = imp_ci(&fill, 0);
            else
                o->fv[i] = imp_cf(&fill, 0);
        }
        return 1;
    }
    if (!strcmp(op, "Range"))
        return fold_range(im, in);
    return 0;
}

/* ScatterND on constants: torch's x[a:b, c:d] = v into a tensor made from
 * shapes (Swin's attention mask) exports as one; 1 folded, 0 not, -1 error. */
static int fold_scatternd(imp *im, imp_val **in)
{
    imp_val *x = in[0], *idx = in[1], *u = in[2];
    char buf[16];
    if (strcmp(imp_attr_str(im->node, "reduction", "none", buf, sizeof buf), "none") ||
        !idx->iv || idx->rank < 1 || sym_in(idx))
        return 0;
    int64_t k = idx->shape[idx->rank - 1], inner = 1, nidx = 1;
    if (k < 1 || k > x->rank || u->rank != idx->rank - 1 + x->rank - (int)k) {
        imp_fail(im, "indices of shape [..., %lld] and updates of rank %d do not fit data of "
                 "rank %d (not a valid ONNX model: re-export it)", (long long)k, u->rank, x->rank);
        return -1;
    }
    for (int d = 0; d < u->rank; d++) {
        int64_t want = d < idx->rank - 1 ? idx->shape[d] : x->shape[k + d - (idx->rank - 1)];
        if (u->shape[d] != want) {
            imp_fail(im, "updates dim %d is %lld, where indices and data make it %lld (not a "
                     "valid ONNX model: re-export it)", d, (long long)u->shape[d], (long long)want);
            return -1;
        }
    }
    for (int d = (int)k; d < x->rank; d++)
        inner *= x->shape[d];
    for (int d = 0; d < idx->rank - 1; d++)
        nidx *= idx->shape[d];
    imp_val *o = out0(im, x->dtype, x->rank, x->shape);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < o->numel; i++) {
        if (o->iv)
            o->iv[i] = imp_ci(x, i);
        else
            o->fv[i] = imp_cf(x, i);
    }
    for (int64_t j = 0; j < nidx; j++) {
        int64_t off = 0;
        for (int d = 0; d < k; d++) {
            int64_t v = idx->iv[j * k + d];
            if (v < -x->shape[d] || v >= x->shape[d]) {
                imp_fail(im, "index %lld is out of range for dim %d of size %lld", (long long)v,
                         d, (long long)x->shape[d]);
                return -1;
            }
            off = off * x->shape[d] + (v < 0 ? v + x->shape[d] : v);
        }
        for (int64_t t = 0; t < inner; t++) {
            if (o->iv)
                o->iv[off * inner + t] = imp_ci(u, j * inner + t);
            else
                o->fv[off * inner + t] = imp_cf(u, j * inner + t);
        }
    }
    return 1;
}

static int fold_cast(imp *im, imp_val *x)
{
    int64_t t = imp_attr_int(im->node, "to", 1);
    int to = t == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? FE_F32 : fe_onnx_dtype((int)t);
    if (to < 0 || (sym_in(x) && !imp_is_int(to)))
        return 0;
    imp_val *o = out0(im, to, x->rank, x->shape);
    if (!o)
        return im->err->code ? -1 : 0;
    for (int64_t i = 0; i < o->numel; i++) {
        if (!o->iv)
            o->fv[i] = imp_cf(x, i);
        else if (to == FE_BOOL)
            o->iv[i] = imp_cf(x, i) != 0;
        else
            o->iv[i] = imp_ci(x, i);   /* floats saturate (imp_f2i) */
    }
    return 1;
}

int imp_sym_scalar(const imp_val *v)
{
    return v && v->is_const && v->numel == 1 && v->iv && FE_IS_SYM(v->iv[0]);
}

static int const_int_is(const imp_val *v, int64_t want)
{
    return v && v->is_const && v->numel == 1 && v->iv && v->iv[0] == want;
}

/* Whether the node computes a value whose size is a dim name, which the
 * mapping keeps (onnx_map_dims.c) and folding would fix to its value:
 * Range(0, S, 1), ConstantOfShape([.., S, ..]), a Slice of a constant
 * whose bound is S. */
static int stays_symbolic(imp *im, imp_val *const *in, int nin)
{
    const char *op = im->node->op_type;
    if (!strcmp(op, "Range"))
        return nin == 3 && imp_is_int(in[0]->dtype) && const_int_is(in[0], 0) &&
               imp_sym_scalar(in[1]) && const_int_is(in[2], 1);
    if (!strcmp(op, "ConstantOfShape"))
        return sym_in(in[0]);
    if (!strcmp(op, "Slice") && nin >= 3 && in[1] && in[2])
        return sym_in(in[1]) || sym_in(in[2]);
    return 0;
}

int imp_fold(imp *im)
{
    const Onnx__NodeProto *n = im->node;
    const char *op = n->op_type;
    int nin = (int)n->n_input;   /* at most FE_MAX_IO (imp_check_node) */
    if (!strcmp(op, "Constant"))
        return fold_constant(im);
    if (!strcmp(op, "Shape"))
        return fold_shape(im, imp_in(im, 0));
    if (n->n_output != 1)
        return 0;
    /* Any number of inputs (Concat, Einsum): on the stack up to eight. */
    imp_val *small[8], fxs[8];
    imp_val **in = nin <= 8 ? small : imp_alloc(im, (size_t)nin * sizeof *in);
    imp_val *fx = nin <= 8 ? fxs : imp_alloc(im, (size_t)nin * sizeof *fx);
    if (!in || !fx)
        return -1;
    for (int k = 0; k < nin; k++) {
        in[k] = imp_opt(im, k);
        if (in[k] && (!in[k]->is_const || (!in[k]->iv && !in[k]->fv)))
            return 0;
    }
    if (!nin || !in[0])
        return 0;
    if (!strcmp(op, "Identity"))
        return imp_alias(im, n->output[0], in[0]) ? -1 : 1;
    if (stays_symbolic(im, in, nin))
        return 0;
    if (!strcmp(op, "Range") || !strcmp(op, "ConstantOfShape") || !strcmp(op, "Expand") ||
        !strcmp(op, "Einsum") || !strcmp(op, "Trilu") ||
        (!strcmp(op, "Cast") && !imp_is_int(fe_onnx_dtype((int)imp_attr_int(n, "to", 1)))))
        for (int k = 0; k < nin; k++)
            if (in[k] && !(in[k] = fixed(im, in[k], &fx[k])))
                return -1;
    const struct elem_op *e = elem_op(op);
    if (e)
        return nin == e->nin ? fold_elem(im, e, in) : 0;
    if (!strcmp(op, "Cast"))
        return fold_cast(im, in[0]);
    if (!strcmp(op, "Reshape") || !strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze") ||
        !strcmp(op, "Flatten") || !strcmp(op, "Expand") || !strcmp(op, "Concat") ||
        !strcmp(op, "Gather") || !strcmp(op, "Slice") || !strcmp(op, "Range") ||
        !strcmp(op, "ConstantOfShape") || !strcmp(op, "Transpose"))
        return fold_shape_op(im, in, nin);
    if (!strcmp(op, "Einsum"))
        return fold_einsum(im, in, nin);
    if (!strcmp(op, "Trilu"))
        return fold_trilu(im, in, nin);
    if (!strcmp(op, "ScatterND"))
        return fold_scatternd(im, in);
    return 0;
}
