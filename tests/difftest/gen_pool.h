/* gen_pool.h: the generator's pool of values (gen.c) as the op generators
 * (gen_ops.c) see it: random numbers, shapes, dtypes, new inputs and
 * weights, picking operands, emitting nodes. Internal to tests/difftest. */
#ifndef FE_DIFFTEST_GEN_POOL_H
#define FE_DIFFTEST_GEN_POOL_H

#include <jansson.h>
#include <stdint.h>

#include "gen.h"

#define MAXR 8
#define MAXV 160
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))
enum { F32, F16, BF16, I64, I32, I8, BOOL, NDT };   /* core/ir/graph.h's order */
extern const char *const gen_dt_name[NDT];

typedef struct gval {
    char name[16];
    int rank, dt, leaf;
    int64_t dim[MAXR];
} gval;

typedef struct gen {
    uint64_t s;
    const fe_gen_opts *o;
    int64_t cap;                /* numel cap of this graph */
    int64_t dimB;               /* value of the symbolic dim "B", 0 if none */
    json_t *tensors, *nodes;
    gval v[MAXV];
    int nv, nnodes, nleaves, readers[MAXV];
    int custom_refused;
} gen;

/* ---- random numbers (splitmix64: the same stream on every machine) ---- */

static inline uint64_t rnd(gen *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline int64_t ri(gen *g, int64_t lo, int64_t hi)   /* uniform in [lo, hi] */
{
    return lo + (int64_t)(rnd(g) % (uint64_t)(hi - lo + 1));
}

static inline int pct(gen *g, int p) { return (int)(rnd(g) % 100) < p; }

static inline double rf(gen *g, double lo, double hi)
{
    return lo + (hi - lo) * (double)(rnd(g) >> 11) / 9007199254740992.0;
}

static inline int64_t numel(const int64_t *d, int r)
{
    int64_t n = 1;
    for (int i = 0; i < r; i++)
        n *= d[i];
    return n;
}

static inline int is_float(int dt) { return dt <= BF16; }

/* ---- gen.c ---- */

/* Shrink d until it holds at most cap elements. */
void gen_fit(int64_t *d, int r, int64_t cap);
/* A random shape of rank r within the graph's cap. */
void gen_rshape(gen *g, int r, int64_t *d);
/* A random dtype (floats most often), a random float dtype. */
int gen_rdtype(gen *g);
int gen_rfloat(gen *g);
/* numpy promotion, as core/ir/infer.c's fe_dtype_promote. */
int gen_promote(int a, int b);
/* Broadcast shape of a and b into rank, d; -1 if they do not broadcast. */
int gen_bcast(const gval *a, const gval *b, int *rank, int64_t *d);
/* Declare v in the model's tensors (kind NULL: the default). */
void gen_declare(gen *g, const gval *v, const char *kind);
/* A JSON list of ints (new reference). */
json_t *gen_ints(const int64_t *v, int n);
/* A new input or weight of shape d (random shape: gen_rleaf) and dtype dt:
 * its pool index, or -1 when the pool is full. */
int gen_leaf(gen *g, int r, const int64_t *d, int dt);
int gen_rleaf(gen *g, int r, int dt);
/* A pool value ok() accepts, the newest most often; -1 if none. */
int gen_pick(gen *g, int (*ok)(const gval *));
/* Emit node op on inputs ins[0..nin) with attrs (taken) and one output of
 * shape d, dtype dt, declared when decl or by chance: its pool index, or -1. */
int gen_node(gen *g, const char *op, const int *ins, int nin, json_t *attrs, int r,
             const int64_t *d, int dt, int decl);
int gen_node1(gen *g, const char *op, int x, json_t *attrs, int r, const int64_t *d, int dt);

/* ---- gen_ops.c ---- */

/* Add one node of op (any name `fuseeng ops` lists) with operands and
 * attributes that suit it; -1 when it could not (the caller tries another). */
int gen_add_op(gen *g, const char *op);
/* A random op name, fusable ones most often. */
const char *gen_rop(gen *g);

#endif
