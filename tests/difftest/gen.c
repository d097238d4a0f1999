/* gen.c: random valid models for the differential tester (see gen.h).
 *
 * The generator keeps a pool of values (graph inputs, weights and node
 * outputs) with their shapes and dtypes, computed here by the same rules
 * as core/ir/infer.c (numpy broadcasting, Python slicing, torch.matmul...),
 * and grows the graph one node at a time: it picks an op, picks operands
 * from the pool (the newest value most often, so chains form; an older one
 * otherwise, so values get several readers), and makes new inputs or
 * weights with the shapes the op needs. Every node's output is declared
 * with the shape computed here more often than not, so a disagreement with
 * the engine's inference shows up as a refused model.
 *
 * Index inputs of gather and embedding are fresh int inputs read by that
 * node only: the executor fills them in range for the axis they index,
 * which a value computed by arithmetic could not promise.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_pool.h"

const char *const gen_dt_name[NDT] = {"f32", "f16", "bf16", "i64", "i32", "i8", "bool"};

/* ---- shapes ---- */

static int64_t rdim(gen *g)
{
    static const int64_t small[] = {1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64, 127};
    if (pct(g, 4))
        return ri(g, 100, 700);
    return small[ri(g, 0, (int64_t)(sizeof small / sizeof small[0]) - 1)];
}

/* Shrink d until it holds at most cap elements (halving the largest dim). */
void gen_fit(int64_t *d, int r, int64_t cap)
{
    while (numel(d, r) > cap) {
        int k = 0;
        for (int i = 1; i < r; i++)
            if (d[i] > d[k])
                k = i;
        d[k] = (d[k] + 1) / 2 > 1 ? (d[k] + 1) / 2 : 1;
        if (d[k] == 1 && numel(d, r) > cap)
            d[k] = 1;
    }
}

static int rrank(gen *g)
{
    static const int w[] = {4, 16, 28, 26, 16, 4, 3, 2, 1};   /* rank 0..8, percent */
    int p = (int)ri(g, 0, 99), acc = 0;
    for (int r = 0; r <= MAXR; r++)
        if (p < (acc += w[r]))
            return r;
    return 2;
}

void gen_rshape(gen *g, int r, int64_t *d)
{
    for (int i = 0; i < r; i++)
        d[i] = rdim(g);
    gen_fit(d, r, r > 4 ? g->cap / 4 : g->cap);
}

int gen_rdtype(gen *g)
{
    int p = (int)ri(g, 0, 99);
    return p < 45 ? F32 : p < 58 ? F16 : p < 70 ? BF16 : p < 78 ? I64 : p < 86 ? I32 : p < 93 ? I8 : BOOL;
}

int gen_rfloat(gen *g)
{
    int p = (int)ri(g, 0, 99);
    return p < 60 ? F32 : p < 80 ? F16 : BF16;
}

/* numpy dtype promotion as core/ir/infer.c's fe_dtype_promote. */
int gen_promote(int a, int b)
{
    static const int rank[NDT] = {5, 4, 4, 3, 2, 1, 0};
    if (a == b)
        return a;
    if (rank[a] == 4 && rank[b] == 4)
        return F32;
    return rank[a] >= rank[b] ? a : b;
}

int gen_bcast(const gval *a, const gval *b, int *rank, int64_t *d)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        d[i] = da == 1 ? db : da;
    }
    *rank = r;
    return 0;
}

/* ---- JSON ---- */

static json_t *shape_json(gen *g, int r, const int64_t *d)
{
    json_t *a = json_array();
    for (int i = 0; i < r; i++)
        json_array_append_new(a, g->dimB && d[i] == g->dimB && pct(g, 60) ? json_string("B")
                                                                         : json_integer(d[i]));
    return a;
}

json_t *gen_ints(const int64_t *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

void gen_declare(gen *g, const gval *v, const char *kind)
{
    json_t *t = json_object();
    json_object_set_new(t, "shape", shape_json(g, v->rank, v->dim));
    json_object_set_new(t, "dtype", json_string(gen_dt_name[v->dt]));
    if (kind)
        json_object_set_new(t, "kind", json_string(kind));
    json_object_set_new(g->tensors, v->name, t);
}

/* A new input (or weight) of shape d and dtype dt; its pool index. */
int gen_leaf(gen *g, int r, const int64_t *d, int dt)
{
    if (g->nv == MAXV)
        return -1;
    gval *v = &g->v[g->nv];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "x%d", g->nleaves++);
    v->rank = r;
    v->dt = dt;
    v->leaf = 1;
    memcpy(v->dim, d, sizeof(int64_t) * (size_t)r);
    gen_declare(g, v, pct(g, 50) ? "input" : "weight");
    return g->nv++;
}

int gen_rleaf(gen *g, int r, int dt)
{
    int64_t d[MAXR];
    gen_rshape(g, r, d);
    return gen_leaf(g, r, d, dt);
}

/* Pick a pool value that ok() accepts: the newest most often; -1 if none. */
int gen_pick(gen *g, int (*ok)(const gval *))
{
    int cand[MAXV], n = 0;
    for (int i = 0; i < g->nv; i++)
        if (!ok || ok(&g->v[i]))
            cand[n++] = i;
    if (!n)
        return -1;
    if (pct(g, 55))
        return cand[n - 1];
    return cand[ri(g, 0, n - 1)];
}

/* Emit a node: op, inputs ins[0..nin), attrs (taken), one output of shape
 * d and dtype dt (declared when decl or by chance). Returns the output's
 * pool index or -1. */
int gen_node(gen *g, const char *op, const int *ins, int nin, json_t *attrs, int r,
                const int64_t *d, int dt, int decl)
{
    if (g->nv == MAXV || numel(d, r) > 8 * g->cap) {
        json_decref(attrs);
        return -1;
    }
    json_t *n = json_object(), *in = json_array(), *out = json_array();
    char name[32];
    snprintf(name, sizeof name, "n%d_%s", g->nnodes, op);
    gval *v = &g->v[g->nv];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "t%d", g->nnodes++);
    v->rank = r;
    v->dt = dt;
    memcpy(v->dim, d, sizeof(int64_t) * (size_t)r);
    for (int k = 0; k < nin; k++) {
        json_array_append_new(in, json_string(g->v[ins[k]].name));
        g->readers[ins[k]]++;
    }
    json_array_append_new(out, json_string(v->name));
    json_object_set_new(n, "name", json_string(name));
    json_object_set_new(n, "op", json_string(op));
    json_object_set_new(n, "inputs", in);
    json_object_set_new(n, "outputs", out);
    if (attrs && json_object_size(attrs))
        json_object_set_new(n, "attrs", attrs);
    else
        json_decref(attrs);
    json_array_append_new(g->nodes, n);
    if (decl || pct(g, 65) || getenv("DIFFTEST_DECLARE_ALL"))
        gen_declare(g, v, pct(g, 20) ? "activation" : NULL);
    return g->nv++;
}

int gen_node1(gen *g, const char *op, int x, json_t *attrs, int r, const int64_t *d, int dt)
{
    return gen_node(g, op, &x, 1, attrs, r, d, dt, 0);
}

char *fe_gen_model(uint64_t seed, const fe_gen_opts *o, int *custom_refused)
{
    gen *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->s = seed * 0x2545f4914f6cdd1dull + 1;
    g->o = o;
    int max_nodes = o && o->max_nodes > 0 ? o->max_nodes : 12;
    g->cap = o && o->max_numel > 0 ? o->max_numel : 4096;
    if (pct(g, 5))
        g->cap *= 16;                 /* tensors past the kernels' parallel and tile sizes */
    g->tensors = json_object();
    g->nodes = json_array();
    json_t *dims = json_object();
    int nin = (int)ri(g, 1, 3);
    for (int i = 0; i < nin; i++) {
        int x = gen_rleaf(g, rrank(g), gen_rdtype(g));
        if (i == 0 && g->v[x].rank && pct(g, 30)) {
            g->dimB = g->v[x].dim[0];
            json_object_set_new(dims, "B", json_integer(g->dimB));
            gen_declare(g, &g->v[x], "input");   /* again, now with "B" in it */
        }
    }
    int want = (int)ri(g, 1, max_nodes), tries = 0;
    while (g->nnodes < want && tries++ < 4 * want)
        gen_add_op(g, gen_rop(g));
    if (!g->nnodes)
        gen_add_op(g, "neg");

    json_t *outs = json_array();
    for (int i = 0; i < g->nv; i++)
        if (!g->v[i].leaf && (g->readers[i] == 0 || pct(g, 12)))
            json_array_append_new(outs, json_string(g->v[i].name));
    json_t *m = json_object();
    char name[48];
    snprintf(name, sizeof name, "difftest-%llu", (unsigned long long)seed);
    json_object_set_new(m, "format", json_string("fuseeng.model/1"));
    json_object_set_new(m, "name", json_string(name));
    json_object_set_new(m, "source", json_string("tests/difftest (fuseeng difftest --seed N)"));
    if (json_object_size(dims))
        json_object_set_new(m, "dims", dims);
    else
        json_decref(dims);
    json_object_set_new(m, "tensors", g->tensors);
    json_object_set_new(m, "nodes", g->nodes);
    json_object_set_new(m, "outputs", outs);
    char *text = json_dumps(m, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(m);
    if (custom_refused)
        *custom_refused = g->custom_refused;
    free(g);
    return text;
}
