/* gen_ops.c: one generator per op of the registry for the differential
 * tester's models (gen.h): each picks operands from the pool, makes the
 * inputs and weights the op needs, draws its attributes (absent, default,
 * negative and extreme forms) and computes its output shape and dtype by
 * core/ir/infer.c's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_pool.h"

static int any_v(const gval *v) { (void)v; return 1; }
static int ranked(const gval *v) { return v->rank >= 1; }
static int float_ranked(const gval *v) { return v->rank >= 1 && is_float(v->dt); }
static int rank2(const gval *v) { return v->rank == 2; }
static int rank4(const gval *v) { return v->rank == 4; }
static int rank_ge2(const gval *v) { return v->rank >= 2; }

/* hardsigmoid and hardswish are not in all_ops below, whose length decides
 * the graphs of the seeds in seeds.txt; --op OP draws them. */
static const char *const unary_ops[] = {"relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log",
                                        "neg", "abs", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
                                        "erf", "hardsigmoid", "hardswish"};
static const char *const binary_ops[] = {"add", "sub", "mul", "div", "maximum", "minimum", "pow"};
static const char *const reduce_ops[] = {"sum", "mean", "amax", "amin"};

static int g_unary(gen *g, const char *op)
{
    int x = gen_pick(g, any_v);
    gval *v = &g->v[x];
    json_t *a = json_object();
    if (!strcmp(op, "gelu") && pct(g, 60))
        json_object_set_new(a, "approximate", json_string(pct(g, 50) ? "tanh" : "none"));
    return gen_node1(g, op, x, a, v->rank, v->dim, v->dt);
}

static int g_cast(gen *g)
{
    int x = gen_pick(g, any_v), dt = (int)ri(g, 0, NDT - 1);
    json_t *a = json_object();
    json_object_set_new(a, "dtype", json_string(gen_dt_name[dt]));
    return gen_node1(g, "cast", x, a, g->v[x].rank, g->v[x].dim, dt);
}

/* A shape that broadcasts with v: drop some leading dims, set some to 1,
 * or grow v's 1-dims (both operands then broadcast). */
static void bshape(gen *g, const gval *v, int *r, int64_t *d)
{
    int drop = pct(g, 30) && v->rank ? (int)ri(g, 0, v->rank) : 0;
    int extra = pct(g, 15) && v->rank < MAXR ? 1 : 0;
    *r = v->rank - drop + extra;
    for (int i = 0; i < *r; i++) {
        int vi = i - extra + drop;
        int64_t dv = vi >= drop && vi < v->rank ? v->dim[vi] : 1;
        if (i < extra)
            d[i] = ri(g, 1, 3);
        else if (dv == 1 && pct(g, 30))
            d[i] = ri(g, 2, 5);
        else if (pct(g, 25))
            d[i] = 1;
        else
            d[i] = dv;
    }
    gen_fit(d, *r, g->cap);
    /* fit may have shrunk a dim that must match v's: restore those */
    for (int i = 0; i < *r; i++) {
        int vi = i - extra + drop;
        if (vi >= drop && vi < v->rank && d[i] != v->dim[vi] && d[i] != 1 && v->dim[vi] != 1)
            d[i] = 1;
    }
}

static int other_operand(gen *g, const gval *a, int dt_hint)
{
    if (pct(g, 45)) {   /* a pool value that broadcasts with a */
        int cand[MAXV], n = 0, r;
        int64_t d[MAXR];
        for (int i = 0; i < g->nv; i++)
            if (gen_bcast(a, &g->v[i], &r, d) == 0 && numel(d, r) <= 4 * g->cap)
                cand[n++] = i;
        if (n)
            return cand[ri(g, 0, n - 1)];
    }
    int r;
    int64_t d[MAXR];
    bshape(g, a, &r, d);
    return gen_leaf(g, r, d, pct(g, 70) ? dt_hint : gen_rdtype(g));
}

static void scalar_attr(gen *g, json_t *a, int arity)
{
    int p = (int)ri(g, 0, 99);
    if (p < 40)
        json_object_set_new(a, "scalar", json_real(rf(g, -3, 3)));
    else if (p < 80)
        json_object_set_new(a, "scalar", json_integer(ri(g, -4, 4)));
    else if (p < 90)
        json_object_set_new(a, "scalar", json_real((double)ri(g, -2, 2)));   /* 2.0: a float */
    else
        json_object_set_new(a, "scalar", json_boolean(pct(g, 50)));
    if (pct(g, 50))
        json_object_set_new(a, "scalar_index", json_integer(arity == 3 ? ri(g, 1, 2) : ri(g, 0, 1)));
}

/* Result dtype of a scalar operand with tensor dtype dt (infer.c's rule:
 * a real scalar makes integer tensors f32). */
static int with_scalar(int dt, const json_t *a)
{
    const json_t *s = json_object_get(a, "scalar");
    return s && json_is_real(s) && !is_float(dt) ? F32 : dt;
}

static int g_binary(gen *g, const char *op)
{
    int x = gen_pick(g, any_v);
    gval *a = &g->v[x];
    json_t *at = json_object();
    if (pct(g, 25)) {
        scalar_attr(g, at, 2);
        return gen_node1(g, op, x, at, a->rank, a->dim, with_scalar(a->dt, at));
    }
    int y = other_operand(g, a, a->dt), r, ins[2];
    int64_t d[MAXR];
    if (y < 0 || gen_bcast(a, &g->v[y], &r, d)) {
        json_decref(at);
        return -1;
    }
    ins[0] = x, ins[1] = y;
    if (pct(g, 40))
        ins[0] = y, ins[1] = x;
    return gen_node(g, op, ins, 2, at, r, d, gen_promote(a->dt, g->v[y].dt), 0);
}

static int g_where(gen *g)
{
    int c = gen_pick(g, any_v), r, r2;
    gval *cv = &g->v[c];
    int64_t d[MAXR], d2[MAXR];
    json_t *at = json_object();
    int x = other_operand(g, cv, gen_rfloat(g));
    if (x < 0 || gen_bcast(cv, &g->v[x], &r, d)) {
        json_decref(at);
        return -1;
    }
    gval tmp = {0};
    tmp.rank = r;
    memcpy(tmp.dim, d, sizeof d);
    if (pct(g, 30)) {
        scalar_attr(g, at, 3);
        int ins[2] = {c, x};
        return gen_node(g, "where", ins, 2, at, r, d, with_scalar(g->v[x].dt, at), 0);
    }
    int y = other_operand(g, &tmp, g->v[x].dt);
    if (y < 0 || gen_bcast(&tmp, &g->v[y], &r2, d2)) {
        json_decref(at);
        return -1;
    }
    int ins[3] = {c, x, y};
    return gen_node(g, "where", ins, 3, at, r2, d2, gen_promote(g->v[x].dt, g->v[y].dt), 0);
}

static int g_reduce(gen *g, const char *op)
{
    int x = gen_pick(g, any_v);
    gval *v = &g->v[x];
    int mask = 0, keep = pct(g, 40), r = 0;
    int64_t ax[MAXR], d[MAXR];
    int na = 0;
    json_t *a = json_object();
    int p = (int)ri(g, 0, 99);
    if (p < 20 || v->rank == 0) {
        mask = (1 << v->rank) - 1;
        if (p < 10)
            json_object_set_new(a, "axes", json_array());
    } else {
        for (int i = 0; i < v->rank; i++)
            if (pct(g, 45)) {
                mask |= 1 << i;
                ax[na++] = pct(g, 30) ? i - v->rank : i;
            }
        if (!na) {
            int i = (int)ri(g, 0, v->rank - 1);
            mask = 1 << i;
            ax[na++] = i;
        }
        json_object_set_new(a, "axes", gen_ints(ax, na));
    }
    if (keep || pct(g, 30))
        json_object_set_new(a, "keepdim", json_boolean(keep));
    for (int i = 0; i < v->rank; i++)
        if (!(mask >> i & 1))
            d[r++] = v->dim[i];
        else if (keep)
            d[r++] = 1;
    return gen_node1(g, op, x, a, r, d, v->dt);
}

static int float_input(gen *g)
{
    int x = gen_pick(g, float_ranked);
    if (x < 0 || pct(g, 15))
        x = gen_rleaf(g, 1 + (int)ri(g, 0, 3), gen_rfloat(g));
    return x;
}

static int g_softmax(gen *g, const char *op)
{
    int x = float_input(g);
    if (x < 0)
        return -1;
    gval *v = &g->v[x];
    json_t *a = json_object();
    if (pct(g, 70))
        json_object_set_new(a, "axis", json_integer(ri(g, -v->rank, v->rank - 1)));
    return gen_node1(g, op, x, a, v->rank, v->dim, v->dt);
}

static int g_norm(gen *g, const char *op)
{
    int x = float_input(g), ins[3], nin = 1;
    if (x < 0)
        return -1;
    gval *v = &g->v[x];
    int k = 1;
    json_t *a = json_object();
    if (pct(g, 50)) {
        k = (int)ri(g, 1, v->rank);
        json_object_set_new(a, "normalized_shape", gen_ints(v->dim + v->rank - k, k));
    }
    if (pct(g, 50))
        json_object_set_new(a, "eps", json_real(pct(g, 50) ? 1e-5 : rf(g, 0, 0.5)));
    ins[0] = x;
    int maxin = strcmp(op, "layer_norm") ? 2 : 3;
    while (nin < maxin && pct(g, 65)) {
        int wr = (int)ri(g, 0, k);
        int64_t wd[MAXR];
        for (int i = 0; i < wr; i++)
            wd[i] = pct(g, 15) ? 1 : v->dim[v->rank - wr + i];
        int w = gen_leaf(g, wr, wd, pct(g, 70) ? v->dt : gen_rfloat(g));
        if (w < 0)
            break;
        ins[nin++] = w;
    }
    return gen_node(g, op, ins, nin, a, v->rank, v->dim, v->dt, 0);
}

static int g_reshape(gen *g)
{
    int x = gen_pick(g, any_v);
    gval *v = &g->v[x];
    int64_t n = numel(v->dim, v->rank), d[MAXR] = {0}, out[MAXR];
    int r = n == 1 && pct(g, 30) ? 0 : (int)ri(g, 1, 5);
    for (int i = 0; i < r; i++)
        d[i] = 1;
    /* deal n's prime factors out to random slots */
    int64_t m = n;
    for (int64_t p = 2; m > 1 && r; p++) {
        if (p * p > m)
            p = m;
        while (m % p == 0) {
            d[ri(g, 0, r - 1)] *= p;
            m /= p;
        }
    }
    memcpy(out, d, sizeof d);
    if (r && pct(g, 30))
        d[ri(g, 0, r - 1)] = -1;
    json_t *a = json_object();
    json_object_set_new(a, "shape", gen_ints(d, r));
    return gen_node1(g, "reshape", x, a, r, out, v->dt);
}

static int g_transpose(gen *g)
{
    int x = gen_pick(g, any_v);
    gval *v = &g->v[x];
    int64_t perm[MAXR], d[MAXR];
    json_t *a = json_object();
    if (pct(g, 15)) {
        for (int i = 0; i < v->rank; i++)
            d[i] = v->dim[v->rank - 1 - i];
    } else {
        for (int i = 0; i < v->rank; i++)
            perm[i] = i;
        for (int i = v->rank - 1; i > 0; i--) {
            int j = (int)ri(g, 0, i);
            int64_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (int i = 0; i < v->rank; i++)
            d[i] = v->dim[perm[i]];
        for (int i = 0; i < v->rank; i++)
            if (pct(g, 20))
                perm[i] -= v->rank;
        json_object_set_new(a, "perm", gen_ints(perm, v->rank));
    }
    return gen_node1(g, "transpose", x, a, v->rank, d, v->dt);
}

static int g_slice(gen *g)
{
    int x = gen_pick(g, ranked);
    if (x < 0)
        return -1;
    gval *v = &g->v[x];
    int ax = (int)ri(g, 0, v->rank - 1);
    int64_t s = v->dim[ax], s0 = ri(g, 0, s - 1), e0 = ri(g, s0 + 1, s), step = 1, d[MAXR];
    json_t *a = json_object();
    if (ax || pct(g, 50))
        json_object_set_new(a, "axis", json_integer(pct(g, 30) ? ax - v->rank : ax));
    int p = (int)ri(g, 0, 99);
    if (s0 || p < 50)
        json_object_set_new(a, "start", json_integer(p < 20 && s0 ? s0 - s
                                                     : p < 25 && !s0 ? INT64_MIN + ri(g, 0, 5)
                                                     : p < 30 && !s0 ? -s - ri(g, 0, 9) : s0));
    p = (int)ri(g, 0, 99);
    if (e0 < s && p < 30)
        json_object_set_new(a, "end", json_integer(e0 - s));
    else if (e0 == s && p < 20)
        json_object_set_new(a, "end", json_integer(INT64_MAX - ri(g, 0, 3)));
    else if (e0 == s && p < 35)
        json_object_set_new(a, "end", json_integer(s + ri(g, 0, 1000)));
    else if (e0 < s || p < 70)
        json_object_set_new(a, "end", json_integer(e0));
    p = (int)ri(g, 0, 99);
    if (p < 40)
        step = ri(g, 1, 4);
    else if (p < 45)
        step = INT64_MAX - ri(g, 0, 2);
    else if (p < 50)
        step = (int64_t)1 << ri(g, 31, 62);
    else if (p < 55)
        step = s;
    if (step != 1 || pct(g, 30))
        json_object_set_new(a, "step", json_integer(step));
    memcpy(d, v->dim, sizeof d);
    d[ax] = 1 + (e0 - s0 - 1) / step;
    return gen_node1(g, "slice", x, a, v->rank, d, v->dt);
}

static int same_but(const gval *a, const gval *b, int ax)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (i != ax && a->dim[i] != b->dim[i])
            return 0;
    return 1;
}

static int g_concat(gen *g)
{
    int x = gen_pick(g, ranked);
    if (x < 0)
        return -1;
    int ins[4], nin = (int)ri(g, 1, 4), dt;
    gval *v = &g->v[x];
    int ax = (int)ri(g, 0, v->rank - 1);
    int64_t d[MAXR];
    memcpy(d, v->dim, sizeof d);
    ins[0] = x;
    dt = v->dt;
    for (int k = 1; k < nin; k++) {
        int y = -1;
        if (pct(g, 40)) {
            for (int i = 0; i < g->nv && y < 0; i++)
                if (same_but(&g->v[i], v, ax) && pct(g, 50))
                    y = i;
        }
        if (y < 0) {
            int64_t e[MAXR];
            memcpy(e, v->dim, sizeof e);
            e[ax] = ri(g, 1, 9);
            y = gen_leaf(g, v->rank, e, pct(g, 70) ? v->dt : gen_rdtype(g));
            v = &g->v[x];
        }
        if (y < 0)
            return -1;
        ins[k] = y;
        d[ax] += g->v[y].dim[ax];
        dt = gen_promote(dt, g->v[y].dt);
    }
    json_t *a = json_object();
    if (ax || pct(g, 50))
        json_object_set_new(a, "axis", json_integer(pct(g, 30) ? ax - v->rank : ax));
    return gen_node(g, "concat", ins, nin, a, v->rank, d, dt, 0);
}

static int g_pad(gen *g)
{
    int x = gen_pick(g, ranked);
    if (x < 0)
        return -1;
    gval *v = &g->v[x];
    static const char *const modes[] = {"constant", "reflect", "replicate"};
    int mode = (int)ri(g, 0, 2), np = (int)ri(g, 1, v->rank);
    int64_t pads[2 * MAXR], d[MAXR];
    memcpy(d, v->dim, sizeof d);
    for (int i = 0; i < np; i++) {
        int ax = v->rank - 1 - i;
        int64_t n = v->dim[ax];
        for (int k = 0; k < 2; k++) {
            int64_t p;
            if (mode == 1)
                p = ri(g, 0, n - 1 < 3 ? n - 1 : 3);
            else if (mode == 0 && pct(g, 25))
                p = -ri(g, 0, (n - 1) / 2);
            else
                p = ri(g, 0, 3);
            pads[2 * i + k] = p;
            d[ax] += p;
        }
    }
    json_t *a = json_object();
    json_object_set_new(a, "pads", gen_ints(pads, 2 * np));
    if (mode || pct(g, 30))
        json_object_set_new(a, "mode", json_string(modes[mode]));
    if (pct(g, 40))
        json_object_set_new(a, "value", pct(g, 50) ? json_real(rf(g, -2, 2)) : json_integer(ri(g, -3, 3)));
    return gen_node1(g, "pad", x, a, v->rank, d, v->dt);
}

static int g_expand(gen *g)
{
    int x = gen_pick(g, any_v);
    gval *v = &g->v[x];
    int extra = v->rank < MAXR ? (int)ri(g, 0, MAXR - v->rank < 2 ? MAXR - v->rank : 2) : 0;
    int r = v->rank + extra;
    int64_t want[MAXR], d[MAXR];
    int64_t budget = 8 * g->cap / (numel(v->dim, v->rank) ? numel(v->dim, v->rank) : 1);
    for (int i = 0; i < r; i++) {
        int vi = i - extra;
        int64_t dv = vi >= 0 ? v->dim[vi] : 1;
        int64_t grow = dv == 1 && budget >= 2 && pct(g, 60) ? ri(g, 2, budget < 6 ? budget : 6) : 1;
        d[i] = dv == 1 ? grow : dv;
        budget /= grow;
        want[i] = vi >= 0 && pct(g, 30) && d[i] == dv ? -1 : d[i];
    }
    json_t *a = json_object();
    json_object_set_new(a, "shape", gen_ints(want, r));
    return gen_node1(g, "expand", x, a, r, d, v->dt);
}

static int index_leaf(gen *g, int rank_max, int64_t axis_size)
{
    int r = (int)ri(g, 0, rank_max), dt = pct(g, 50) ? I64 : pct(g, 70) ? I32 : I8;
    int64_t d[MAXR];
    for (int i = 0; i < r; i++)
        d[i] = ri(g, 1, 6);
    if (dt == I8 && axis_size > 127)
        dt = I32;
    int t = gen_leaf(g, r, d, dt);
    if (t >= 0)
        g->readers[t] = 1000;   /* never picked again: see the note at the top */
    return t;
}

static int not_index(gen *g, int i) { return g->readers[i] < 1000; }

static int g_gather(gen *g)
{
    int x = gen_pick(g, ranked);
    if (x < 0 || !not_index(g, x))
        return -1;
    int ax = (int)ri(g, 0, g->v[x].rank - 1);
    int maxr = MAXR - (g->v[x].rank - 1);
    int idx = index_leaf(g, maxr < 2 ? maxr : 2, g->v[x].dim[ax]);
    if (idx < 0)
        return -1;
    gval *v = &g->v[x], *iv = &g->v[idx];
    int64_t d[MAXR];
    int r = 0;
    for (int i = 0; i < ax; i++)
        d[r++] = v->dim[i];
    for (int i = 0; i < iv->rank; i++)
        d[r++] = iv->dim[i];
    for (int i = ax + 1; i < v->rank; i++)
        d[r++] = v->dim[i];
    json_t *a = json_object();
    if (ax || pct(g, 50))
        json_object_set_new(a, "axis", json_integer(pct(g, 30) ? ax - v->rank : ax));
    int ins[2] = {x, idx};
    return gen_node(g, "gather", ins, 2, a, r, d, v->dt, 0);
}

static int g_embedding(gen *g)
{
    int w = gen_pick(g, rank2);
    if (w < 0 || !not_index(g, w) || pct(g, 40)) {
        int64_t d[2] = {ri(g, 1, 50), ri(g, 1, 33)};
        w = gen_leaf(g, 2, d, gen_rdtype(g));
    }
    int idx = w < 0 ? -1 : index_leaf(g, 2, g->v[w].dim[0]);
    if (idx < 0)
        return -1;
    gval *v = &g->v[w], *iv = &g->v[idx];
    int64_t d[MAXR];
    int r = 0;
    for (int i = 0; i < iv->rank; i++)
        d[r++] = iv->dim[i];
    d[r++] = v->dim[1];
    int ins[2] = {w, idx};
    return gen_node(g, "embedding", ins, 2, json_object(), r, d, v->dt, 0);
}

static int g_matmul(gen *g)
{
    int x = gen_pick(g, ranked);
    if (x < 0 || pct(g, 30) || numel(g->v[x].dim, g->v[x].rank) > 2048) {
        int r = (int)ri(g, 1, 4);
        int64_t d[MAXR];
        for (int i = 0; i < r; i++)
            d[i] = i >= r - 2 ? ri(g, 1, 40) : ri(g, 1, 3);
        x = gen_leaf(g, r, d, pct(g, 75) ? gen_rfloat(g) : gen_rdtype(g));
        if (x < 0)
            return -1;
    }
    gval *a = &g->v[x];
    int ta = a->rank >= 2 && pct(g, 30), tb = pct(g, 30);
    int64_t K = a->rank == 1 ? a->dim[0] : ta ? a->dim[a->rank - 2] : a->dim[a->rank - 1];
    int64_t M = a->rank == 1 ? 1 : ta ? a->dim[a->rank - 1] : a->dim[a->rank - 2];
    int br = (int)ri(g, 1, 4), r = 0;
    int64_t bd[MAXR], N = ri(g, 1, 40), d[MAXR];
    if (br == 1) {
        bd[0] = K;
        tb = 0;
    } else {
        for (int i = 0; i < br - 2; i++)
            bd[i] = ri(g, 1, 3);
        /* batch dims of b broadcast against a's: copy a's where they line up */
        int abr = a->rank - 2;
        for (int i = 0; i < br - 2; i++) {
            int ai = abr - (br - 2) + i;
            if (ai >= 0 && a->dim[ai] != 1)
                bd[i] = pct(g, 70) ? a->dim[ai] : 1;
        }
        bd[br - 2] = tb ? N : K;
        bd[br - 1] = tb ? K : N;
    }
    int y = gen_leaf(g, br, bd, pct(g, 80) ? a->dt : gen_rdtype(g));
    if (y < 0)
        return -1;
    a = &g->v[x];
    gval *b = &g->v[y];
    /* batch: broadcast of a's and b's leading dims */
    gval ba = {0}, bb = {0};
    ba.rank = a->rank > 2 ? a->rank - 2 : 0;
    bb.rank = b->rank > 2 ? b->rank - 2 : 0;
    memcpy(ba.dim, a->dim, sizeof ba.dim);
    memcpy(bb.dim, b->dim, sizeof bb.dim);
    if (gen_bcast(&ba, &bb, &r, d))
        return -1;
    if (a->rank != 1)
        d[r++] = M;
    if (b->rank != 1)
        d[r++] = N;
    json_t *at = json_object();
    if (ta || pct(g, 20))
        json_object_set_new(at, "transpose_a", json_boolean(ta));
    if (tb || pct(g, 20))
        json_object_set_new(at, "transpose_b", json_boolean(tb));
    int ins[2] = {x, y};
    return gen_node(g, "matmul", ins, 2, at, r, d, gen_promote(a->dt, b->dt), 0);
}

static int64_t window(int64_t size, int64_t k, int64_t st, int64_t pad, int64_t dil, int ceil)
{
    int64_t span = dil * (k - 1) + 1, room = size + 2 * pad - span;
    if (room < 0)
        return -1;
    int64_t out = (ceil ? (room + st - 1) / st : room / st) + 1;
    if (ceil && (out - 1) * st >= size + pad)
        out--;
    return out;
}

static int image(gen *g, int dt)
{
    int x = gen_pick(g, rank4);
    if (x < 0 || pct(g, 40) || numel(g->v[x].dim, 4) > 4096) {
        int64_t d[4] = {ri(g, 1, 2), ri(g, 1, 6), ri(g, 1, 12), ri(g, 1, 12)};
        x = gen_leaf(g, 4, d, dt);
    }
    return x;
}

static json_t *pair_json(gen *g, const int64_t *v)
{
    if (v[0] == v[1] && pct(g, 50))
        return json_integer(v[0]);
    return gen_ints(v, 2);
}

static int g_conv(gen *g)
{
    int x = image(g, pct(g, 80) ? gen_rfloat(g) : gen_rdtype(g));
    if (x < 0)
        return -1;
    gval *v = &g->v[x];
    int64_t C = v->dim[1], grp = 1, st[2], pd[2], dl[2], k[2], d[4];
    for (int64_t t = C; t >= 1; t--)
        if (C % t == 0 && pct(g, 30)) {
            grp = t;
            break;
        }
    int64_t O = grp * ri(g, 1, 3);
    for (int i = 0; i < 2; i++) {
        st[i] = ri(g, 1, 3);
        pd[i] = ri(g, 0, 2);
        dl[i] = ri(g, 1, 2);
        k[i] = ri(g, 1, 3);
        while (k[i] > 1 && window(v->dim[2 + i], k[i], st[i], pd[i], dl[i], 0) < 1)
            k[i]--;
        while (window(v->dim[2 + i], k[i], st[i], pd[i], dl[i], 0) < 1)
            dl[i] = 1, pd[i]++;
        d[2 + i] = window(v->dim[2 + i], k[i], st[i], pd[i], dl[i], 0);
    }
    int64_t wd[4] = {O, C / grp, k[0], k[1]};
    int w = gen_leaf(g, 4, wd, pct(g, 85) ? g->v[x].dt : gen_rdtype(g)), ins[3] = {x, w, -1}, nin = 2;
    if (w < 0)
        return -1;
    if (pct(g, 50)) {
        int64_t bd[1] = {O};
        if ((ins[2] = gen_leaf(g, 1, bd, g->v[x].dt)) < 0)
            return -1;
        nin = 3;
    }
    v = &g->v[x];
    d[0] = v->dim[0];
    d[1] = O;
    json_t *a = json_object();
    if (st[0] != 1 || st[1] != 1 || pct(g, 30))
        json_object_set_new(a, "stride", pair_json(g, st));
    if (pd[0] || pd[1] || pct(g, 30))
        json_object_set_new(a, "padding", pair_json(g, pd));
    if (dl[0] != 1 || dl[1] != 1 || pct(g, 30))
        json_object_set_new(a, "dilation", pair_json(g, dl));
    if (grp != 1 || pct(g, 30))
        json_object_set_new(a, "groups", json_integer(grp));
    return gen_node(g, "conv2d", ins, nin, a, 4, d, gen_promote(v->dt, g->v[w].dt), 0);
}

static int g_pool(gen *g, const char *op)
{
    int maxp = !strcmp(op, "max_pool2d");
    int x = image(g, pct(g, 85) ? gen_rfloat(g) : gen_rdtype(g));
    if (x < 0)
        return -1;
    gval *v = &g->v[x];
    int64_t k[2], st[2], pd[2], dl[2] = {1, 1}, d[4];
    int ceil = pct(g, 30), explicit_st = pct(g, 60);
    for (int i = 0; i < 2; i++) {
        int64_t n = v->dim[2 + i];
        k[i] = ri(g, 1, n < 4 ? n : 4);
        st[i] = explicit_st ? ri(g, 1, 3) : k[i];
        pd[i] = ri(g, 0, k[i] / 2);
        if (maxp && pct(g, 30))
            dl[i] = 2;
        while (window(n, k[i], st[i], pd[i], dl[i], ceil) < 1)
            dl[i] = 1, k[i] = 1, pd[i] = 0, st[i] = explicit_st ? st[i] : 1;
        d[2 + i] = window(n, k[i], st[i], pd[i], dl[i], ceil);
    }
    d[0] = v->dim[0];
    d[1] = v->dim[1];
    json_t *a = json_object();
    json_object_set_new(a, "kernel", pair_json(g, k));
    if (explicit_st)
        json_object_set_new(a, "stride", pair_json(g, st));
    if (pd[0] || pd[1] || pct(g, 20))
        json_object_set_new(a, "padding", pair_json(g, pd));
    if (maxp && (dl[0] != 1 || dl[1] != 1))
        json_object_set_new(a, "dilation", pair_json(g, dl));
    if (ceil || pct(g, 20))
        json_object_set_new(a, "ceil_mode", json_boolean(ceil));
    if (!maxp && pct(g, 40))
        json_object_set_new(a, "count_include_pad", json_boolean(pct(g, 50)));
    return gen_node1(g, op, x, a, 4, d, v->dt);
}

static int g_sdpa(gen *g)
{
    int nb = (int)ri(g, 0, 2), dt = gen_rfloat(g);
    int64_t L = ri(g, 1, 17), S = ri(g, 1, 17), E = ri(g, 1, 16), Ev = ri(g, 1, 16), b[2];
    for (int i = 0; i < nb; i++)
        b[i] = ri(g, 1, 3);
    int64_t qd[MAXR], kd[MAXR], vd[MAXR], d[MAXR];
    for (int i = 0; i < nb; i++)
        qd[i] = b[i], kd[i] = pct(g, 20) ? 1 : b[i], vd[i] = pct(g, 20) ? 1 : b[i];
    qd[nb] = L, qd[nb + 1] = E;
    kd[nb] = S, kd[nb + 1] = E;
    vd[nb] = S, vd[nb + 1] = Ev;
    int q = gen_leaf(g, nb + 2, qd, dt), k = gen_leaf(g, nb + 2, kd, pct(g, 80) ? dt : gen_rfloat(g));
    int vv = gen_leaf(g, nb + 2, vd, pct(g, 80) ? dt : gen_rfloat(g));
    if (q < 0 || k < 0 || vv < 0)
        return -1;
    int ins[4] = {q, k, vv, -1}, nin = 3;
    if (pct(g, 35)) {
        int mr = (int)ri(g, 1, nb + 2);
        int64_t md[MAXR], sc[MAXR];
        for (int i = 0; i < nb; i++)
            sc[i] = b[i];
        sc[nb] = L, sc[nb + 1] = S;
        for (int i = 0; i < mr; i++)
            md[i] = pct(g, 25) ? 1 : sc[nb + 2 - mr + i];
        if ((ins[3] = gen_leaf(g, mr, md, pct(g, 50) ? BOOL : dt)) < 0)
            return -1;
        nin = 4;
    }
    for (int i = 0; i < nb; i++)
        d[i] = b[i];
    d[nb] = L, d[nb + 1] = Ev;
    json_t *a = json_object();
    if (pct(g, 50))
        json_object_set_new(a, "causal", json_boolean(pct(g, 60)));
    if (pct(g, 30))
        json_object_set_new(a, "scale", json_real(rf(g, 0.05, 1.0)));
    return gen_node(g, "sdpa", ins, nin, a, nb + 2, d, dt, 0);
}

static int g_batch_norm(gen *g)
{
    int x = gen_pick(g, rank_ge2);
    if (x < 0 || !is_float(g->v[x].dt) || pct(g, 30)) {
        int64_t d[4] = {ri(g, 1, 3), ri(g, 1, 8), ri(g, 1, 9), ri(g, 1, 9)};
        x = gen_leaf(g, (int)ri(g, 2, 4), d, gen_rfloat(g));
        if (x < 0)
            return -1;
    }
    int ins[5] = {x};
    for (int k = 1; k < 5; k++) {
        int64_t c[1] = {g->v[x].dim[1]};
        if ((ins[k] = gen_leaf(g, 1, c, pct(g, 80) ? F32 : gen_rfloat(g))) < 0)
            return -1;
    }
    json_t *a = json_object();
    if (pct(g, 50))
        json_object_set_new(a, "eps", json_real(1e-5));
    return gen_node(g, "batch_norm", ins, 5, a, g->v[x].rank, g->v[x].dim, g->v[x].dt, 0);
}

static int g_all_reduce(gen *g)
{
    static const char *const red[] = {"sum", "avg", "mean", "max", "min"};
    int x = gen_pick(g, any_v);
    json_t *a = json_object();
    json_object_set_new(a, "world_size", json_integer(ri(g, 1, 8)));
    if (pct(g, 70))
        json_object_set_new(a, "reduce", json_string(red[ri(g, 0, 4)]));
    return gen_node1(g, "all_reduce", x, a, g->v[x].rank, g->v[x].dim, g->v[x].dt);
}

/* custom: aten ops the CPU kernels know (their outputs declared, as custom
 * requires), or an op they do not, which execution refuses by name. */
static int g_custom(gen *g)
{
    static const char *const cmp[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    json_t *a = json_object(), *args = json_object();
    int p = (int)ri(g, 0, 99), out;
    json_object_set_new(a, "flops", json_integer(ri(g, 0, 1000)));
    if (p < 40) {
        int x = gen_pick(g, any_v), y = other_operand(g, &g->v[x], g->v[x].dt), r;
        int64_t d[MAXR];
        if (y < 0 || gen_bcast(&g->v[x], &g->v[y], &r, d)) {
            json_decref(a);
            json_decref(args);
            return -1;
        }
        json_object_set_new(a, "aten", json_string(cmp[ri(g, 0, 5)]));
        int ins[2] = {x, y};
        json_decref(args);
        return gen_node(g, "custom", ins, 2, a, r, d, BOOL, 1);
    }
    if (p < 60) {
        int64_t n = ri(g, 1, 64), d[1] = {n};
        json_object_set_new(a, "aten", json_string("arange"));
        json_object_set_new(args, "end", json_integer(n));
        json_object_set_new(a, "args", args);
        out = gen_node(g, "custom", NULL, 0, a, 1, d, I64, 1);
        return out;
    }
    if (p < 80) {
        int x = gen_pick(g, any_v);
        json_object_set_new(a, "aten", json_string(pct(g, 50) ? "ones_like" : "zeros_like"));
        json_decref(args);
        return gen_node(g, "custom", &x, 1, a, g->v[x].rank, g->v[x].dim, g->v[x].dt, 1);
    }
    /* no kernel */
    int x = gen_pick(g, any_v);
    int64_t d[MAXR];
    int r = (int)ri(g, 0, 3);
    gen_rshape(g, r, d);
    json_object_set_new(a, "aten", json_string("difftest_unknown_op"));
    json_object_set_new(a, "pattern", json_string(pct(g, 50) ? "opaque" : "elemwise"));
    json_decref(args);
    g->custom_refused = 1;
    out = gen_node(g, "custom", &x, 1, a, r, d, gen_rdtype(g), 1);
    if (out >= 0 && g->nv < MAXV && pct(g, 40)) {
        /* a second output (custom ops may have several), read on like any value */
        gval *v = &g->v[g->nv];
        json_t *n = json_array_get(g->nodes, json_array_size(g->nodes) - 1);
        memset(v, 0, sizeof *v);
        snprintf(v->name, sizeof v->name, "t%d", g->nnodes++);
        v->rank = (int)ri(g, 0, 2);
        v->dt = gen_rdtype(g);
        gen_rshape(g, v->rank, v->dim);
        json_array_append_new(json_object_get(n, "outputs"), json_string(v->name));
        gen_declare(g, v, NULL);
        g->nv++;
    }
    return out;
}

static const char *const all_ops[] = {
    "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "neg", "abs", "sqrt", "rsqrt",
    "reciprocal", "sin", "cos", "erf", "cast", "add", "sub", "mul", "div", "maximum",
    "minimum", "pow", "where", "sum", "mean", "amax", "amin", "softmax", "log_softmax",
    "rms_norm", "layer_norm", "reshape", "transpose", "slice", "concat", "pad", "expand",
    "gather", "embedding", "matmul", "conv2d", "sdpa", "max_pool2d", "avg_pool2d",
    "batch_norm", "all_reduce", "custom"};

static int is_in(const char *op, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(op, list[i]))
            return 1;
    return 0;
}

int gen_add_op(gen *g, const char *op)
{
    if (is_in(op, unary_ops, NELEM(unary_ops)))
        return g_unary(g, op);
    if (is_in(op, binary_ops, NELEM(binary_ops)))
        return g_binary(g, op);
    if (is_in(op, reduce_ops, NELEM(reduce_ops)))
        return g_reduce(g, op);
    if (!strcmp(op, "cast")) return g_cast(g);
    if (!strcmp(op, "where")) return g_where(g);
    if (!strcmp(op, "softmax") || !strcmp(op, "log_softmax")) return g_softmax(g, op);
    if (!strcmp(op, "rms_norm") || !strcmp(op, "layer_norm")) return g_norm(g, op);
    if (!strcmp(op, "reshape")) return g_reshape(g);
    if (!strcmp(op, "transpose")) return g_transpose(g);
    if (!strcmp(op, "slice")) return g_slice(g);
    if (!strcmp(op, "concat")) return g_concat(g);
    if (!strcmp(op, "pad")) return g_pad(g);
    if (!strcmp(op, "expand")) return g_expand(g);
    if (!strcmp(op, "gather")) return g_gather(g);
    if (!strcmp(op, "embedding")) return g_embedding(g);
    if (!strcmp(op, "matmul")) return g_matmul(g);
    if (!strcmp(op, "conv2d")) return g_conv(g);
    if (!strcmp(op, "sdpa")) return g_sdpa(g);
    if (!strcmp(op, "max_pool2d") || !strcmp(op, "avg_pool2d")) return g_pool(g, op);
    if (!strcmp(op, "batch_norm")) return g_batch_norm(g);
    if (!strcmp(op, "all_reduce")) return g_all_reduce(g);
    return g_custom(g);
}

/* Fusable ops (elementwise, broadcast, reductions) come more often than
 * the rest, so that policies find chains to fuse. */
const char *gen_rop(gen *g)
{
    if (g->o && g->o->only_op && pct(g, 60))
        return g->o->only_op;
    if (pct(g, 45)) {
        static const char *const fusable[] = {"relu", "gelu", "silu", "exp", "neg", "add", "mul",
                                              "sub", "div", "maximum", "where", "sum", "mean",
                                              "amax", "softmax", "rms_norm", "layer_norm", "cast",
                                              "sigmoid", "tanh", "matmul", "batch_norm"};
        return fusable[ri(g, 0, NELEM(fusable) - 1)];
    }
    return all_ops[ri(g, 0, NELEM(all_ops) - 1)];
}

