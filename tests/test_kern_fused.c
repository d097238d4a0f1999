/* test_kern_fused.c: plan execution against the unfused reference: random
 * elementwise / broadcast / row-reduction groups through the fused tile
 * executor, matmul and conv with fused prologues and epilogues under both
 * matmul choices, TLF splits equal to unsplit runs, and groups the fast
 * paths cannot take reported as run op by op. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "testlib.h"

#include "cache.h"
#include "choice.h"
#include "compare.h"
#include "exec.h"
#include "plan.h"
#include "plan_build.h"
#include "vecprog.h"

static char jbuf[1 << 16];

static fe_graph *model(const char *tensors, const char *nodes, const char *outputs)
{
    snprintf(jbuf, sizeof jbuf,
             "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{%s},\"nodes\":[%s],"
             "\"outputs\":[%s]}", tensors, nodes, outputs);
    return tl_graph(jbuf);
}

/* A plan of one group with every node named in `group` (NULL: all nodes),
 * the others alone; kernel and split set on that group. */
static fe_plan *plan_with(const fe_graph *g, const char *const *group, int n, int kernel, int split,
                          int *gid)
{
    fe_error err = {0};
    int32_t *lab = calloc((size_t)g->nnodes + 1, sizeof(int32_t));
    for (int i = 0; i < g->nnodes; i++)
        lab[i] = i + 1;
    if (!group)
        for (int i = 0; i < g->nnodes; i++)
            lab[i] = 0;
    for (int k = 0; group && k < n; k++) {
        int32_t id = fe_graph_find_node(g, group[k]);
        if (id < 0)
            fail_msg("no node %s", group[k]);
        lab[id] = 0;
    }
    fe_plan *p = fe_plan_from_labels(g, lab, &err);
    if (!p)
        fail_msg("plan: %s", err.message);
    int32_t first = group ? fe_graph_find_node(g, group[0]) : 0;
    *gid = p->group_of[first];
    p->groups[*gid].kernel = kernel;
    p->groups[*gid].split = split;
    free(lab);
    return p;
}

static void expect_ok(const fe_graph *g, fe_exec_result *ref, fe_exec_result *got, const char *what)
{
    fe_cmp c;
    fe_error err = {0};
    assert_int_equal(fe_exec_compare(g, ref, got, &c, &err), FE_OK);
    for (int i = 0; i < c.n; i++)
        if (!c.items[i].ok)
            fail_msg("%s: output %s differs: max abs %g, max rel %g (rtol %g), %lld bad, worst "
                     "[%lld] ref %g got %g", what,
                     fe_tensor_name(g, fe_graph_tensor(g, c.items[i].tensor)), c.items[i].max_abs,
                     c.items[i].max_rel, c.items[i].rtol, (long long)c.items[i].bad,
                     (long long)c.items[i].worst, c.items[i].worst_ref, c.items[i].worst_got);
    fe_cmp_free(&c);
}

static void expect_equal(const fe_graph *g, fe_exec_result *a, fe_exec_result *b, const char *what)
{
    for (int i = 0; i < a->noutputs; i++) {
        const fe_tensor *t = fe_graph_tensor(g, a->tensors[i]);
        if (memcmp(a->outputs[i].data, b->outputs[i].data, (size_t)t->bytes))
            fail_msg("%s: output %s is not bit-identical", what, fe_tensor_name(g, t));
    }
}

static fe_exec_result *run_plan(fe_exec *ex, const fe_plan *p)
{
    fe_exec_result *r = NULL;
    fe_error err = {0};
    if (fe_exec_plan(ex, p, &r, &err))
        fail_msg("plan run: %s", err.message);
    return r;
}

static fe_exec_result *run_ref(fe_exec *ex)
{
    fe_exec_result *r = NULL;
    fe_error err = {0};
    if (fe_exec_reference(ex, &r, &err))
        fail_msg("reference run: %s", err.message);
    return r;
}

/* ---- random fused groups ---- */

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static int rnd(int n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (int)(rs % (uint64_t)n);
}

typedef struct gen {
    char t[8192], nd[16384], outs[512];
    size_t lt, ln, lo;
    int rank;
    int64_t D[4];
    int nt, nn;
} gen;

static void shape_str(const int64_t *s, int r, char *buf)
{
    size_t l = (size_t)sprintf(buf, "[");
    for (int i = 0; i < r; i++)
        l += (size_t)sprintf(buf + l, "%s%lld", i ? "," : "", (long long)s[i]);
    sprintf(buf + l, "]");
}

/* a new input broadcastable to the domain: some axes 1, maybe fewer axes */
static void new_input(gen *g, char *name, const char *dtype, int full)
{
    int64_t s[4];
    int r = full ? g->rank : 1 + rnd(g->rank);
    char sh[64];
    for (int i = 0; i < r; i++) {
        int64_t d = g->D[g->rank - r + i];
        s[i] = full || rnd(3) ? d : 1;
    }
    shape_str(s, r, sh);
    sprintf(name, "in%d", g->nt++);
    g->lt += (size_t)snprintf(g->t + g->lt, sizeof g->t - g->lt, "%s\"%s\":{\"shape\":%s,\"dtype\":\"%s\","
                              "\"kind\":\"input\"}", g->lt ? "," : "", name, sh, dtype);
}

static void node(gen *g, const char *op, const char *ins, const char *out, const char *attrs)
{
    g->ln += (size_t)snprintf(g->nd + g->ln, sizeof g->nd - g->ln,
                              "%s{\"name\":\"%s\",\"op\":\"%s\",\"inputs\":[%s],\"outputs\":[\"%s\"]%s%s}",
                              g->nn++ ? "," : "", out, op, ins, out, attrs ? ",\"attrs\":" : "",
                              attrs ? attrs : "");
}

static void output(gen *g, const char *name)
{
    g->lo += (size_t)snprintf(g->outs + g->lo, sizeof g->outs - g->lo, "%s\"%s\"", g->lo ? "," : "", name);
}

static const char *UN[] = {"relu", "gelu", "silu", "sigmoid", "tanh", "exp", "neg", "abs", "sin",
                           "cos", "erf", "sqrt", "log", "reciprocal", "rsqrt", "hardsigmoid",
                           "hardswish"};
static const char *BIN[] = {"add", "sub", "mul", "div", "maximum", "minimum"};

/* A random chain over one domain; returns the number of nodes. */
static void gen_group(gen *g)
{
    char cur[32], x[32], v[32], ins[160];
    memset(g, 0, sizeof *g);
    g->rank = 1 + rnd(4);
    for (int i = 0; i < g->rank; i++)
        g->D[i] = rnd(4) ? 1 + rnd(9) : 1;
    g->D[g->rank - 1] = 1 + rnd(70);                 /* rows of odd widths, sometimes 1 */
    if (rnd(5) == 0)                                 /* and long rows (chunked row programs) */
        g->D[g->rank - 1] = 1000 + rnd(1500);
    new_input(g, x, rnd(4) ? "f32" : rnd(2) ? "f16" : "bf16", 1);
    strcpy(cur, x);
    int len = 2 + rnd(7), reduced = 0;
    for (int k = 0; k < len; k++) {
        char o[32];
        sprintf(o, "v%d", k);
        int kind = rnd(10);
        if (kind < 3) {
            const char *op = UN[rnd((int)(sizeof UN / sizeof UN[0]))];
            node(g, op, (sprintf(ins, "\"%s\"", cur), ins), o,
                 !strcmp(op, "gelu") && rnd(2) ? "{\"approximate\":\"tanh\"}" : NULL);
        } else if (kind < 6) {
            const char *op = BIN[rnd(6)];
            if (rnd(4) == 0) {
                char a[64];
                sprintf(a, "{\"scalar\":%g,\"scalar_index\":%d}", (rnd(40) - 20) * 0.25, rnd(2));
                node(g, op, (sprintf(ins, "\"%s\"", cur), ins), o, a);
            } else {
                new_input(g, v, rnd(3) ? "f32" : "f16", 0);
                if (rnd(2))
                    sprintf(ins, "\"%s\",\"%s\"", cur, v);
                else
                    sprintf(ins, "\"%s\",\"%s\"", v, cur);
                node(g, op, ins, o, NULL);
            }
        } else if (kind == 6) {
            char c[32];
            new_input(g, c, "bool", 0);
            if (rnd(2)) {
                sprintf(ins, "\"%s\",\"%s\",\"%s\"", c, cur, x);
                node(g, "where", ins, o, NULL);
            } else {
                sprintf(ins, "\"%s\",\"%s\"", c, cur);
                node(g, "where", ins, o, "{\"scalar\":-3.4028235e38}");
            }
        } else if (kind == 7) {
            /* through f16 storage and back */
            char h[32];
            sprintf(h, "h%d", k);
            node(g, "cast", (sprintf(ins, "\"%s\"", cur), ins), h, "{\"dtype\":\"f16\"}");
            node(g, "cast", (sprintf(ins, "\"%s\"", h), ins), o, "{\"dtype\":\"f32\"}");
        } else if (!reduced) {
            /* one row reduction per group, over the last axis */
            reduced = 1;
            int which = rnd(5);
            if (which == 0) {
                node(g, "softmax", (sprintf(ins, "\"%s\"", cur), ins), o, NULL);
            } else if (which == 1) {
                node(g, "log_softmax", (sprintf(ins, "\"%s\"", cur), ins), o, "{\"axis\":-1}");
            } else if (which == 2) {
                char w[32], sh[32];
                sprintf(w, "w%d", k);
                sprintf(sh, "[%lld]", (long long)g->D[g->rank - 1]);
                g->lt += (size_t)snprintf(g->t + g->lt, sizeof g->t - g->lt,
                                          ",\"%s\":{\"shape\":%s,\"dtype\":\"f32\",\"kind\":\"weight\"}", w, sh);
                sprintf(ins, "\"%s\",\"%s\"", cur, w);
                node(g, rnd(2) ? "rms_norm" : "layer_norm", ins, o, NULL);
            } else {
                /* x - mean(x) style: a keepdim reduction broadcast back */
                static const char *red[] = {"sum", "mean", "amax", "amin"};
                char m[32];
                sprintf(m, "m%d", k);
                node(g, red[rnd(4)], (sprintf(ins, "\"%s\"", cur), ins), m,
                     "{\"axes\":[-1],\"keepdim\":true}");
                sprintf(ins, "\"%s\",\"%s\"", cur, m);
                node(g, BIN[rnd(4)], ins, o, NULL);
            }
        } else {
            node(g, "relu", (sprintf(ins, "\"%s\"", cur), ins), o, NULL);
        }
        if (rnd(6) == 0 && k + 1 < len)
            output(g, o);        /* an intermediate that also leaves the group */
        strcpy(cur, o);
    }
    output(g, cur);
}

/* The tests of the fused executor below ask for it (kernel fused_rows)
 * rather than AUTO, whose guard may run a big group op by op where that
 * measures faster on the host (test_guard covers that choice). */
static void test_random_fused_groups(void **state)
{
    (void)state;
    int fused = 0, iters = 120;
    const char *e = getenv("FE_KTEST_ITERS");   /* longer soak runs by hand */
    if (e && atoi(e) > 0)
        iters = atoi(e);
    if (getenv("FE_KTEST_SEED"))
        rs ^= (uint64_t)strtoull(getenv("FE_KTEST_SEED"), NULL, 10) * 0x9e3779b97f4a7c15ull;
    for (int it = 0; it < iters; it++) {
        gen gg;
        fe_error err = {0};
        gen_group(&gg);
        fe_graph *g = model(gg.t, gg.nd, gg.outs);
        fe_exec_opts o = {.seed = (uint64_t)it + 1};
        fe_exec *ex = fe_exec_new(g, &o, &err);
        assert_non_null(ex);
        int gid, split = 1 + rnd(3);
        fe_plan *p = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, 1, &gid);
        fe_plan *ps = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, split, &gid);
        fe_plan *pu = fe_plan_unfused(g, &err);
        fe_exec_result *ref = run_ref(ex), *got = run_plan(ex, p), *gs = run_plan(ex, ps);
        fe_exec_result *un = run_plan(ex, pu);
        if (strncmp(got->how[0], "fused_rows", 10))
            fail_msg("group %d did not fuse: %s\nmodel: %s", it, got->how[0], jbuf);
        fused++;
        static char what[sizeof jbuf + 4096];
        snprintf(what, sizeof what, "random group %d (fused: %s)\nmodel: %s", it, got->how[0], jbuf);
        expect_ok(g, ref, got, what);
        expect_ok(g, ref, un, "unfused plan");
        expect_equal(g, got, gs, "TLF split vs unsplit");
        fe_exec_result_free(ref);
        fe_exec_result_free(got);
        fe_exec_result_free(gs);
        fe_exec_result_free(un);
        fe_plan_free(p);
        fe_plan_free(ps);
        fe_plan_free(pu);
        fe_exec_free(ex);
        fe_graph_free(g);
    }
    assert_int_equal(fused, iters);
}

/* Run g's nodes as one group of kernel choice FUSED: does the group's
 * "how" line contain text? */
static int fused_how_has(const fe_graph *g, const char *text)
{
    fe_error err = {0};
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    int gid;
    fe_plan *p = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, 1, &gid);
    fe_exec_result *got = run_plan(ex, p);
    int has = strstr(got->how[gid], text) != NULL;
    fe_exec_result_free(got);
    fe_plan_free(p);
    fe_exec_free(ex);
    return has;
}

/* The cache a process can keep: the LLC, at most 12 MiB per thread unless
 * fe_k_cache_set names it; and an output past half of that share streams
 * whatever the detected LLC (a VM's reported L3 is its host chip's). */
static void test_cache_share(void **state)
{
    (void)state;
    fe_k_cache_set(0, 0);
    long share = fe_k_cache_share(), llc = fe_k_cache_llc();
    assert_true(share > 0 && share <= llc);
    assert_true(share <= (long)omp_get_max_threads() * (12L << 20));
    fe_k_cache_set(0, 1L << 30);
    assert_int_equal(fe_k_cache_share(), 1L << 30);
    fe_k_cache_set(0, 0);
    if (share / 2 > (256L << 20))
        return;   /* a share too large to fill in a unit test */
    long n = share / 2 / (long)sizeof(float) + 4096;
    char tensors[256];
    snprintf(tensors, sizeof tensors, "\"x\":{\"shape\":[%ld],\"dtype\":\"f32\",\"kind\":\"input\"}", n);
    fe_graph *g = model(tensors,
                        "{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"x\"],\"outputs\":[\"t\"]},"
                        "{\"name\":\"y\",\"op\":\"neg\",\"inputs\":[\"t\"],\"outputs\":[\"y\"]}",
                        "\"y\"");
    assert_true(fused_how_has(g, "streaming stores"));
    fe_graph_free(g);
}

/* Outputs of at least half the last-level cache are written with streaming
 * stores, some straight from the row primitive. The choice depends on the
 * cache, so both sides of it are checked under sizes set for the test: an
 * 8 MiB cache (each 18 MB output streams) and a 1 GiB one (none does). */
static void test_streaming_outputs(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model("\"x\":{\"shape\":[3,1000,1500],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"m\":{\"shape\":[1000,1500],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"r\":{\"shape\":[3,1000,1500],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"w\":{\"shape\":[1500],\"dtype\":\"f32\",\"kind\":\"weight\"}",
                        "{\"name\":\"sc\",\"op\":\"mul\",\"inputs\":[\"x\"],\"outputs\":[\"s\"],\"attrs\":{\"scalar\":0.125}},"
                        "{\"name\":\"mk\",\"op\":\"add\",\"inputs\":[\"s\",\"m\"],\"outputs\":[\"t\"]},"
                        "{\"name\":\"sm\",\"op\":\"softmax\",\"inputs\":[\"t\"],\"outputs\":[\"p\"]},"
                        "{\"name\":\"ls\",\"op\":\"log_softmax\",\"inputs\":[\"t\"],\"outputs\":[\"q\"]},"
                        "{\"name\":\"add\",\"op\":\"add\",\"inputs\":[\"x\",\"r\"],\"outputs\":[\"h\"]},"
                        "{\"name\":\"rn\",\"op\":\"rms_norm\",\"inputs\":[\"h\",\"w\"],\"outputs\":[\"y\"]},"
                        "{\"name\":\"ge\",\"op\":\"gelu\",\"inputs\":[\"r\"],\"outputs\":[\"z\"]}",
                        "\"p\",\"q\",\"h\",\"y\",\"z\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    const char *sm[] = {"sc", "mk", "sm", "ls"}, *rn[] = {"add", "rn"};
    fe_exec_result *ref = run_ref(ex);
    static const long llc[] = {8L << 20, 1L << 30};
    for (int k = 0; k < 2; k++) {
        fe_k_cache_set(0, llc[k]);
        int g1, g2;
        fe_plan *p1 = plan_with(g, sm, 4, FE_K_CHOICE_FUSED, 1, &g1);
        fe_plan *p2 = plan_with(g, rn, 2, FE_K_CHOICE_FUSED, 2, &g2);
        fe_exec_result *a = run_plan(ex, p1), *b = run_plan(ex, p2);
        if (k == 0) {
            assert_contains(a->how[g1], "streaming stores");
            assert_contains(b->how[g2], "streaming stores");
            /* mul + add became one multiply-add; both row ops stream */
            assert_contains(a->how[g1], "4 ops in 3 instrs");
        } else {
            assert_null(strstr(a->how[g1], "streaming stores"));
            assert_null(strstr(b->how[g2], "streaming stores"));
        }
        expect_ok(g, ref, a, a->how[g1]);
        expect_ok(g, ref, b, b->how[g2]);
        fe_exec_result_free(a);
        fe_exec_result_free(b);
        fe_plan_free(p1);
        fe_plan_free(p2);
    }
    fe_k_cache_set(0, 0);
    fe_exec_result_free(ref);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* ---- register runs (vecprog.h) ---- */

/* Run model text as one fused group and op by op: fused == reference, a TLF
 * split gives the same bits, and the group ran (also) in registers, its
 * description containing `how` too (if not NULL). Inputs named "x" get NaN,
 * infinities and large values in a few places first. */
static void check_run(const char *tensors, const char *nodes, const char *outputs, int width,
                      const char *how)
{
    fe_error err = {0};
    fe_graph *g = model(tensors, nodes, outputs);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    int32_t xt = fe_graph_find_tensor(g, "x");
    if (xt >= 0 && fe_graph_tensor(g, xt)->dtype == FE_F32) {
        static const float sp[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 88.9f, -90.0f, 0.0f, -0.0f};
        float *x = fe_exec_buffers(ex)[xt].data;
        int64_t n = fe_graph_tensor(g, xt)->numel;
        for (int64_t i = 0; i < n && i < (int64_t)(sizeof sp / sizeof sp[0]); i++)
            x[(i * 7919) % n] = sp[i];
    }
    int gid;
    fe_plan *p = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, 1, &gid);
    fe_plan *ps = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, 3, &gid);
    fe_exec_result *ref = run_ref(ex), *got = run_plan(ex, p), *gs = run_plan(ex, ps);
    static char what[sizeof jbuf + 4096];
    snprintf(what, sizeof what, "width %d (%s)\nmodel: %s", width, got->how[gid], jbuf);
    if (fe_k_vform_ok(FE_V_LD, 1)) {   /* builds without AVX2 keep the tile passes */
        assert_contains(got->how[gid], "register pass");
        if (how)
            assert_contains(got->how[gid], how);
    }
    expect_ok(g, ref, got, what);
    expect_equal(g, got, gs, "TLF split vs unsplit");
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_exec_result_free(gs);
    fe_plan_free(p);
    fe_plan_free(ps);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* The chain of the benchmark at widths around the vector and strip sizes
 * (masked tails), with an intermediate stored (a spill) and per-column
 * weights. */
static void test_register_chain(void **state)
{
    (void)state;
    static const int W[] = {1, 7, 8, 9, 31, 32, 33, 63, 100, 1037, 2100};
    for (size_t k = 0; k < sizeof W / sizeof W[0]; k++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "\"x\":{\"shape\":[3,%d],\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"a\":{\"shape\":[%d],\"dtype\":\"f32\",\"kind\":\"weight\"},"
                 "\"b\":{\"shape\":[%d],\"dtype\":\"f32\",\"kind\":\"weight\"},"
                 "\"c\":{\"shape\":[%d],\"dtype\":\"f32\",\"kind\":\"weight\"}", W[k], W[k], W[k], W[k]);
        check_run(t,
                  "{\"name\":\"xa\",\"op\":\"mul\",\"inputs\":[\"x\",\"a\"],\"outputs\":[\"xa\"]},"
                  "{\"name\":\"xab\",\"op\":\"add\",\"inputs\":[\"xa\",\"b\"],\"outputs\":[\"xab\"]},"
                  "{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"xab\"],\"outputs\":[\"r\"]},"
                  "{\"name\":\"rc\",\"op\":\"mul\",\"inputs\":[\"r\",\"c\"],\"outputs\":[\"rc\"]},"
                  "{\"name\":\"t\",\"op\":\"tanh\",\"inputs\":[\"rc\"],\"outputs\":[\"t\"]},"
                  "{\"name\":\"o\",\"op\":\"add\",\"inputs\":[\"t\",\"x\"],\"outputs\":[\"o\"]}",
                  "\"o\",\"xab\"", W[k], NULL);
    }
}

/* A register pass followed by rms_norm sums the row's squares as it makes
 * the row (FE_V_SSQ): every strip size, a partial last vector, NaN and
 * infinities in x, with and without a weight, the row also stored (h). */
static void test_register_sumsq(void **state)
{
    (void)state;
    static const int W[] = {2, 7, 16, 17, 100, 129, 1037, 4101};
    for (size_t k = 0; k < sizeof W / sizeof W[0]; k++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "\"x\":{\"shape\":[5,%d],\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"r\":{\"shape\":[5,%d],\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"w\":{\"shape\":[%d],\"dtype\":\"f32\",\"kind\":\"weight\"}",
                 W[k], W[k], W[k]);
        check_run(t,
                  "{\"name\":\"add\",\"op\":\"add\",\"inputs\":[\"x\",\"r\"],\"outputs\":[\"h\"]},"
                  "{\"name\":\"rn\",\"op\":\"rms_norm\",\"inputs\":[\"h\",\"w\"],\"outputs\":[\"y\"]}",
                  "\"h\",\"y\"", W[k], "1 summing squares for rms_norm");
        check_run(t,
                  "{\"name\":\"s\",\"op\":\"silu\",\"inputs\":[\"r\"],\"outputs\":[\"s\"]},"
                  "{\"name\":\"m\",\"op\":\"mul\",\"inputs\":[\"s\",\"x\"],\"outputs\":[\"h\"]},"
                  "{\"name\":\"rn\",\"op\":\"rms_norm\",\"inputs\":[\"h\"],\"outputs\":[\"y\"]}",
                  "\"y\"", W[k], "1 summing squares for rms_norm");
    }
}

/* Every operand form: the accumulator second (sub, div, maximum with a
 * scalar first), twice (x * x), in each position of where and of a
 * multiply-add; operands broadcast per row ([R, 1]), per column and
 * scalar; converting loads (f16, bool); a value used again later (spilled
 * and reloaded); several outputs. */
static void test_register_forms(void **state)
{
    (void)state;
    static const int W[] = {5, 40, 129};
    for (size_t k = 0; k < sizeof W / sizeof W[0]; k++) {
        char t[2048];
        int w = W[k];
        snprintf(t, sizeof t,
                 "\"x\":{\"shape\":[4,%d],\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"h\":{\"shape\":[4,%d],\"dtype\":\"f16\",\"kind\":\"input\"},"
                 "\"r\":{\"shape\":[4,1],\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"cond\":{\"shape\":[4,%d],\"dtype\":\"bool\",\"kind\":\"input\"},"
                 "\"col\":{\"shape\":[%d],\"dtype\":\"f32\",\"kind\":\"weight\"}", w, w, w, w);
        check_run(t,
                  "{\"name\":\"s\",\"op\":\"sigmoid\",\"inputs\":[\"x\"],\"outputs\":[\"s\"]},"
                  "{\"name\":\"d1\",\"op\":\"sub\",\"inputs\":[\"col\",\"s\"],\"outputs\":[\"d1\"]},"
                  "{\"name\":\"d2\",\"op\":\"div\",\"inputs\":[\"r\",\"d1\"],\"outputs\":[\"d2\"]},"
                  "{\"name\":\"d3\",\"op\":\"maximum\",\"inputs\":[\"d2\"],\"outputs\":[\"d3\"],"
                  "\"attrs\":{\"scalar\":-0.5,\"scalar_index\":0}},"
                  "{\"name\":\"sq\",\"op\":\"mul\",\"inputs\":[\"d3\",\"d3\"],\"outputs\":[\"sq\"]},"
                  "{\"name\":\"w1\",\"op\":\"where\",\"inputs\":[\"cond\",\"sq\",\"x\"],\"outputs\":[\"w1\"]},"
                  "{\"name\":\"w2\",\"op\":\"where\",\"inputs\":[\"cond\",\"h\",\"w1\"],\"outputs\":[\"w2\"]},"
                  "{\"name\":\"p\",\"op\":\"mul\",\"inputs\":[\"x\",\"h\"],\"outputs\":[\"p\"]},"
                  "{\"name\":\"f\",\"op\":\"add\",\"inputs\":[\"p\",\"w2\"],\"outputs\":[\"f\"]},"
                  "{\"name\":\"e\",\"op\":\"exp\",\"inputs\":[\"f\"],\"outputs\":[\"e\"]},"
                  "{\"name\":\"m\",\"op\":\"minimum\",\"inputs\":[\"s\",\"e\"],\"outputs\":[\"m\"]},"
                  "{\"name\":\"g\",\"op\":\"gelu\",\"inputs\":[\"m\"],\"outputs\":[\"g\"],"
                  "\"attrs\":{\"approximate\":\"tanh\"}},"
                  "{\"name\":\"u\",\"op\":\"silu\",\"inputs\":[\"g\"],\"outputs\":[\"u\"]},"
                  "{\"name\":\"v\",\"op\":\"sub\",\"inputs\":[\"u\",\"s\"],\"outputs\":[\"v\"]}",
                  "\"v\",\"d2\",\"w2\"", w, NULL);
    }
}

/* ---- matmul / conv groups ---- */

typedef struct mcase {
    const char *tensors, *nodes, *outputs;
    const char *group[8];
    int ngroup;
    const char *expect_blocked;   /* substring of how it ran with matmul_blocked */
    const char *expect_blas;      /* ... with matmul_blas */
} mcase;

static void run_case(const mcase *c)
{
    fe_error err = {0};
    fe_graph *g = model(c->tensors, c->nodes, c->outputs);
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_exec_result *ref = run_ref(ex);
    int gid;
    fe_plan *pb = plan_with(g, c->group, c->ngroup, FE_K_CHOICE_MATMUL_BLOCKED, 1, &gid);
    fe_plan *pl = plan_with(g, c->group, c->ngroup, FE_K_CHOICE_MATMUL_BLAS, 1, &gid);
    fe_plan *pa = plan_with(g, c->group, c->ngroup, FE_K_CHOICE_AUTO, 1, &gid);
    fe_plan *ps = plan_with(g, c->group, c->ngroup, FE_K_CHOICE_AUTO, 3, &gid);
    fe_exec_result *rb = run_plan(ex, pb), *rl = run_plan(ex, pl), *ra = run_plan(ex, pa);
    fe_exec_result *rsp = run_plan(ex, ps);
    if (c->expect_blocked)
        assert_contains(rb->how[gid], c->expect_blocked);
    if (c->expect_blas)
        assert_contains(rl->how[gid], c->expect_blas);
    expect_ok(g, ref, rb, rb->how[gid]);
    expect_ok(g, ref, rl, rl->how[gid]);
    expect_ok(g, rb, rl, "blocked vs blas");
    expect_equal(g, ra, rsp, "TLF split vs unsplit");
    fe_exec_result_free(ref);
    fe_exec_result_free(rb);
    fe_exec_result_free(rl);
    fe_exec_result_free(ra);
    fe_exec_result_free(rsp);
    fe_plan_free(pb);
    fe_plan_free(pl);
    fe_plan_free(pa);
    fe_plan_free(ps);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void test_matmul_epilogue(void **state)
{
    (void)state;
    /* sizes past every blocking boundary: M > MC, N > NC, K > KC */
    mcase c = {
        "\"x\":{\"shape\":[200,300],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[300,600],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"b\":{\"shape\":[600],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"r\":{\"shape\":[200,600],\"dtype\":\"f32\",\"kind\":\"input\"}",
        "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"]},"
        "{\"name\":\"bias\",\"op\":\"add\",\"inputs\":[\"y\",\"b\"],\"outputs\":[\"yb\"]},"
        "{\"name\":\"act\",\"op\":\"gelu\",\"inputs\":[\"yb\"],\"outputs\":[\"ya\"],\"attrs\":{\"approximate\":\"tanh\"}},"
        "{\"name\":\"scale\",\"op\":\"mul\",\"inputs\":[\"ya\"],\"outputs\":[\"ys\"],\"attrs\":{\"scalar\":0.5}},"
        "{\"name\":\"res\",\"op\":\"add\",\"inputs\":[\"ys\",\"r\"],\"outputs\":[\"out\"]},"
        "{\"name\":\"half\",\"op\":\"cast\",\"inputs\":[\"out\"],\"outputs\":[\"o16\"],\"attrs\":{\"dtype\":\"f16\"}}",
        "\"o16\",\"y\"",
        {"mm", "bias", "act", "scale", "res", "half"}, 6,
        "epilogue (5 ops: add, gelu, mul, add, cast) on each output block",
        "as a separate pass"};
    run_case(&c);
}

static void test_matmul_prologue(void **state)
{
    (void)state;
    /* SwiGLU then the down projection: silu(g) * u fused into packing A */
    mcase c = {
        "\"g\":{\"shape\":[70,130],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"u\":{\"shape\":[70,130],\"dtype\":\"f16\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[130,50],\"dtype\":\"f16\",\"kind\":\"weight\"}",
        "{\"name\":\"silu\",\"op\":\"silu\",\"inputs\":[\"g\"],\"outputs\":[\"s\"]},"
        "{\"name\":\"mul\",\"op\":\"mul\",\"inputs\":[\"s\",\"u\"],\"outputs\":[\"a\"]},"
        "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"a\",\"w\"],\"outputs\":[\"y\"]}",
        "\"y\"",
        {"silu", "mul", "mm"}, 3,
        "prologue on A (2 ops: silu, mul) fused into packing",
        "prologue on A (2 ops: silu, mul) as a separate fused pass"};
    run_case(&c);
    /* add + rms_norm -> matmul: a prologue with a row reduction, h also stored */
    mcase d = {
        "\"x\":{\"shape\":[33,300],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"r\":{\"shape\":[33,300],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"wn\":{\"shape\":[300],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"w\":{\"shape\":[300,40],\"dtype\":\"f32\",\"kind\":\"weight\"}",
        "{\"name\":\"add\",\"op\":\"add\",\"inputs\":[\"x\",\"r\"],\"outputs\":[\"h\"]},"
        "{\"name\":\"norm\",\"op\":\"rms_norm\",\"inputs\":[\"h\",\"wn\"],\"outputs\":[\"a\"]},"
        "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"a\",\"w\"],\"outputs\":[\"y\"]}",
        "\"y\",\"h\"",
        {"add", "norm", "mm"}, 3,
        "prologue on A (2 ops: add, rms_norm) fused into packing", NULL};
    run_case(&d);
}

static void test_matmul_batched_and_rows(void **state)
{
    (void)state;
    /* batched a with weights (a's batch folds into M), softmax epilogue on whole rows */
    mcase c = {
        "\"a\":{\"shape\":[2,3,17,24],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[24,530],\"dtype\":\"f32\",\"kind\":\"weight\"}",
        "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"a\",\"w\"],\"outputs\":[\"y\"]},"
        "{\"name\":\"sm\",\"op\":\"softmax\",\"inputs\":[\"y\"],\"outputs\":[\"p\"]}",
        "\"p\"",
        {"mm", "sm"}, 2,
        "(whole rows)", "separate pass"};
    run_case(&c);
    /* both operands batched, b broadcast over one batch axis, b transposed */
    mcase d = {
        "\"a\":{\"shape\":[2,3,9,16],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"b\":{\"shape\":[2,1,11,16],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"m\":{\"shape\":[9,11],\"dtype\":\"f32\",\"kind\":\"input\"}",
        "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"a\",\"b\"],\"outputs\":[\"y\"],\"attrs\":{\"transpose_b\":true}},"
        "{\"name\":\"sc\",\"op\":\"mul\",\"inputs\":[\"y\"],\"outputs\":[\"s\"],\"attrs\":{\"scalar\":0.25}},"
        "{\"name\":\"mk\",\"op\":\"add\",\"inputs\":[\"s\",\"m\"],\"outputs\":[\"o\"]}",
        "\"o\"",
        {"mm", "sc", "mk"}, 3,
        "epilogue (2 ops: mul, add)", "separate pass"};
    run_case(&d);
}

static void test_conv_epilogue(void **state)
{
    (void)state;
    mcase c = {
        "\"x\":{\"shape\":[3,16,11,10],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[20,16,3,3],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"cb\":{\"shape\":[20],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"s\":{\"shape\":[20,1,1],\"dtype\":\"f32\",\"kind\":\"weight\"}",
        "{\"name\":\"cv\",\"op\":\"conv2d\",\"inputs\":[\"x\",\"w\",\"cb\"],\"outputs\":[\"y\"],"
        "\"attrs\":{\"padding\":1,\"stride\":[1,2]}},"
        "{\"name\":\"sc\",\"op\":\"mul\",\"inputs\":[\"y\",\"s\"],\"outputs\":[\"ys\"]},"
        "{\"name\":\"act\",\"op\":\"relu\",\"inputs\":[\"ys\"],\"outputs\":[\"out\"]}",
        "\"out\"",
        {"cv", "sc", "act"}, 3,
        "epilogue (2 ops: mul, relu) on each output block",
        "matmul_blas was requested; it has no conv2d"};
    run_case(&c);
}

/* The whole graph as one group, with TLF splits 1 .. max_split (odd ones):
 * it must run as fused_rows and give the reference's bits, or, where the
 * executor contracts a multiply and an add into one rounding (fma set), be
 * within tolerance of the reference and give split 1's bits at every
 * split. Frees g. */
static void expect_fused(fe_graph *g, int max_split, int fma, const char *label)
{
    fe_error err = {0};
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_exec_result *ref = run_ref(ex), *first = NULL;
    for (int split = 1; split <= max_split; split += 2) {
        int gid;
        fe_plan *p = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, split, &gid);
        fe_exec_result *got = run_plan(ex, p);
        assert_contains(got->how[gid], "fused_rows");
        if (!fma) {
            expect_equal(g, ref, got, label);
        } else {
            expect_ok(g, ref, got, label);
            if (first)
                expect_equal(g, first, got, label);
        }
        fe_plan_free(p);
        if (fma && !first)
            first = got;
        else
            fe_exec_result_free(got);
    }
    fe_exec_result_free(first);
    fe_exec_result_free(ref);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void expect_fused_bits(fe_graph *g, int max_split, const char *label)
{
    expect_fused(g, max_split, 0, label);
}

/* Per-column weights read by every row: a program with a converting load
 * (b in f16), or one whose weights would not fit a quarter of L2 (the
 * 60000-column case), visits tiles column chunk by column chunk over
 * blocks of rows; a vector program with smaller f32 weights keeps whole
 * rows and prefetches x ahead (past the end of its part, too). Rows that
 * do not fill the last block, several chunks per row, and TLF parts that
 * start inside a block or a row all give the reference's bits (with b in
 * f32, x * a + b is one multiply-add: the reference's values within
 * tolerance, the same bits at every split). L2 is set to 1 MiB for the
 * test, so that the 60000-column weights take column chunks on every host. */
static void test_column_blocks(void **state)
{
    (void)state;
    fe_k_cache_set(1L << 20, 0);
    static const char *const xs[] = {"[19,2100]", "[3,5,1500]", "[1,4100]", "[5,60000]"};
    static const char *const ws[] = {"2100", "1500", "4100", "60000"};
    for (int k = 0; k < 8; k++) {
        char tensors[1024];
        snprintf(tensors, sizeof tensors,
                 "\"x\":{\"shape\":%s,\"dtype\":\"f32\",\"kind\":\"input\"},"
                 "\"a\":{\"shape\":[%s],\"dtype\":\"f32\",\"kind\":\"weight\"},"
                 "\"b\":{\"shape\":[%s],\"dtype\":\"%s\",\"kind\":\"weight\"},"
                 "\"c\":{\"shape\":[%s],\"dtype\":\"f32\",\"kind\":\"weight\"}",
                 xs[k % 4], ws[k % 4], ws[k % 4], k < 4 ? "f16" : "f32", ws[k % 4]);
        fe_graph *g = model(tensors,
                            "{\"name\":\"xa\",\"op\":\"mul\",\"inputs\":[\"x\",\"a\"],\"outputs\":[\"xa\"]},"
                            "{\"name\":\"xb\",\"op\":\"add\",\"inputs\":[\"xa\",\"b\"],\"outputs\":[\"xb\"]},"
                            "{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"xb\"],\"outputs\":[\"r\"]},"
                            "{\"name\":\"rc\",\"op\":\"mul\",\"inputs\":[\"r\",\"c\"],\"outputs\":[\"rc\"]},"
                            "{\"name\":\"t\",\"op\":\"tanh\",\"inputs\":[\"rc\"],\"outputs\":[\"t\"]},"
                            "{\"name\":\"out\",\"op\":\"add\",\"inputs\":[\"t\",\"x\"],\"outputs\":[\"out\"]}",
                            "\"out\"");
        expect_fused(g, 3, k >= 4, xs[k % 4]);
    }
    fe_k_cache_set(0, 0);
}

/* Rows narrower than half a tile go several to a tile, end to end: rows
 * read in place (x), per-column weights (w, converted from f16, or read in
 * place and copied for each row of the tile), rows of a view read in place
 * (the heads of a transpose, copied end to end), a last tile of fewer rows
 * and TLF parts all give the reference's bits. */
static void test_row_packs(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"\"x\":{\"shape\":[301,64],\"dtype\":\"f32\",\"kind\":\"input\"},"
         "\"w\":{\"shape\":[64],\"dtype\":\"f16\",\"kind\":\"weight\"}",
         "{\"name\":\"xw\",\"op\":\"mul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"xw\"]},"
         "{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"xw\"],\"outputs\":[\"r\"]},"
         "{\"name\":\"out\",\"op\":\"sub\",\"inputs\":[\"r\",\"x\"],\"outputs\":[\"out\"]}",
         "rows"},
        {"\"x\":{\"shape\":[3,64,8,48],\"dtype\":\"f32\",\"kind\":\"input\"}",
         "{\"name\":\"v\",\"op\":\"transpose\",\"inputs\":[\"x\"],\"outputs\":[\"v\"],\"attrs\":{\"perm\":[0,2,1,3]}},"
         "{\"name\":\"s\",\"op\":\"sigmoid\",\"inputs\":[\"v\"],\"outputs\":[\"s\"]},"
         "{\"name\":\"out\",\"op\":\"mul\",\"inputs\":[\"s\",\"v\"],\"outputs\":[\"out\"]}",
         "heads"},
        {"\"x\":{\"shape\":[9,5,7],\"dtype\":\"f32\",\"kind\":\"input\"},"
         "\"w\":{\"shape\":[7],\"dtype\":\"f32\",\"kind\":\"weight\"}",
         "{\"name\":\"e\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"e\"]},"
         "{\"name\":\"ew\",\"op\":\"div\",\"inputs\":[\"e\",\"w\"],\"outputs\":[\"ew\"]},"
         "{\"name\":\"out\",\"op\":\"sub\",\"inputs\":[\"ew\",\"x\"],\"outputs\":[\"out\"]}",
         "seven"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        fe_graph *g = model(cases[k][0], cases[k][1], "\"out\"");
        assert_true(fused_how_has(g, "(whole rows end to end)"));
        expect_fused_bits(g, 3, cases[k][2]);
    }
}

/* Wide rows go several to a tile only when no input would be staged for
 * it: with a per-column weight read in place, rows of 2048 run a row per
 * tile (staging the weight per tile cost more than the tile's setup it
 * saves; test_row_packs has the same kind of program on narrow rows,
 * packed), and give the reference's bits. */
static void test_wide_rows(void **state)
{
    (void)state;
    static const char *const cases[][4] = {
        {"\"x\":{\"shape\":[9,2048],\"dtype\":\"f32\",\"kind\":\"input\"},"
         "\"w\":{\"shape\":[2048],\"dtype\":\"f32\",\"kind\":\"weight\"}",
         "{\"name\":\"xw\",\"op\":\"mul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"xw\"]},"
         "{\"name\":\"out\",\"op\":\"tanh\",\"inputs\":[\"xw\"],\"outputs\":[\"out\"]}",
         "weighted", "0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        fe_graph *g = model(cases[k][0], cases[k][1], "\"out\"");
        assert_int_equal(fused_how_has(g, "(whole rows end to end)"), cases[k][3][0] == '1');
        expect_fused_bits(g, 3, cases[k][2]);
    }
}

/* A conv2d prologue runs one image ahead of the convolution; padding stays
 * zero (conv(sigmoid(x)) pads sigmoid(x), not x), and the depthwise
 * (direct) path takes it too. */
static void test_conv_prologue(void **state)
{
    (void)state;
    mcase c = {
        "\"x\":{\"shape\":[3,16,11,10],\"dtype\":\"f16\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[20,16,3,3],\"dtype\":\"f32\",\"kind\":\"weight\"}",
        "{\"name\":\"pre\",\"op\":\"sigmoid\",\"inputs\":[\"x\"],\"outputs\":[\"xs\"]},"
        "{\"name\":\"cv\",\"op\":\"conv2d\",\"inputs\":[\"xs\",\"w\"],\"outputs\":[\"y\"],"
        "\"attrs\":{\"padding\":1,\"stride\":[2,1]}},"
        "{\"name\":\"act\",\"op\":\"relu\",\"inputs\":[\"y\"],\"outputs\":[\"out\"]}",
        "\"out\"",
        {"pre", "cv", "act"}, 3,
        "prologue on the input (1 ops: sigmoid), one image ahead",
        "matmul_blas was requested; it has no conv2d"};
    run_case(&c);
    mcase d = {
        "\"x\":{\"shape\":[2,12,9,9],\"dtype\":\"f32\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[12,1,3,3],\"dtype\":\"f32\",\"kind\":\"weight\"}",
        "{\"name\":\"pre\",\"op\":\"add\",\"inputs\":[\"x\"],\"outputs\":[\"xs\"],\"attrs\":{\"scalar\":1.5}},"
        "{\"name\":\"cv\",\"op\":\"conv2d\",\"inputs\":[\"xs\",\"w\"],\"outputs\":[\"out\"],"
        "\"attrs\":{\"padding\":1,\"groups\":12}}",
        "\"out\"",
        {"pre", "cv"}, 2,
        "prologue on the input (1 ops: add)", NULL};
    run_case(&d);
}

/* Inference batch_norm fuses: as a conv epilogue (the per-channel factor on
 * the GEMM's rows) and in a pointwise group, where NCHW channels are rows
 * and a 2-D input's channels are columns; both give the reference's bits. */
static void test_batch_norm(void **state)
{
    (void)state;
    static const char params[] =
        "\"bw\":{\"shape\":[20],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"bb\":{\"shape\":[20],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"bm\":{\"shape\":[20],\"dtype\":\"f32\",\"kind\":\"weight\"},"
        "\"bv\":{\"shape\":[20],\"dtype\":\"f32\",\"kind\":\"weight\"}";
    char tensors[1024];
    snprintf(tensors, sizeof tensors,
             "\"x\":{\"shape\":[2,16,9,10],\"dtype\":\"f32\",\"kind\":\"input\"},"
             "\"w\":{\"shape\":[20,16,3,3],\"dtype\":\"f32\",\"kind\":\"weight\"},%s", params);
    mcase c = {
        tensors,
        "{\"name\":\"cv\",\"op\":\"conv2d\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"],"
        "\"attrs\":{\"padding\":1}},"
        "{\"name\":\"bn\",\"op\":\"batch_norm\",\"inputs\":[\"y\",\"bw\",\"bb\",\"bm\",\"bv\"],"
        "\"outputs\":[\"z\"],\"attrs\":{\"eps\":1e-3}},"
        "{\"name\":\"act\",\"op\":\"relu\",\"inputs\":[\"z\"],\"outputs\":[\"out\"]}",
        "\"out\"",
        {"cv", "bn", "act"}, 3,
        "epilogue (2 ops: batch_norm, relu) on each output block",
        "matmul_blas was requested; it has no conv2d"};
    run_case(&c);

    static const char *const xs[] = {"[3,20,7,5]", "[33,20]", "[2,20,1,1]"};
    for (int k = 0; k < 3; k++) {
        snprintf(tensors, sizeof tensors,
                 "\"x\":{\"shape\":%s,\"dtype\":\"f32\",\"kind\":\"input\"},%s", xs[k], params);
        fe_graph *g = model(tensors,
                            "{\"name\":\"bn\",\"op\":\"batch_norm\",\"inputs\":[\"x\",\"bw\",\"bb\","
                            "\"bm\",\"bv\"],\"outputs\":[\"z\"]},"
                            "{\"name\":\"act\",\"op\":\"silu\",\"inputs\":[\"z\"],\"outputs\":[\"out\"]}",
                            "\"out\"");
        expect_fused_bits(g, 1, xs[k]);
    }
}

/* ---- honest fallbacks ---- */

static void test_fallback_reported(void **state)
{
    (void)state;
    fe_error err = {0};
    /* a softmax over the leading axis: members run one by one, and the reason says why */
    fe_graph *g = model("\"x\":{\"shape\":[6,5],\"dtype\":\"f32\",\"kind\":\"input\"}",
                        "{\"name\":\"e\",\"op\":\"exp\",\"inputs\":[\"x\"],\"outputs\":[\"e\"]},"
                        "{\"name\":\"t\",\"op\":\"softmax\",\"inputs\":[\"e\"],\"outputs\":[\"t\"],"
                        "\"attrs\":{\"axis\":0}},"
                        "{\"name\":\"n\",\"op\":\"neg\",\"inputs\":[\"t\"],\"outputs\":[\"n\"]}",
                        "\"n\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    int gid;
    fe_plan *p = plan_with(g, NULL, 0, FE_K_CHOICE_AUTO, 2, &gid);
    fe_exec_result *ref = run_ref(ex), *got = run_plan(ex, p);
    assert_contains(got->how[0], "per_op: 3 ops run one by one");
    assert_contains(got->how[0], "node 't' (softmax): only a softmax over the last axis fuses");
    assert_contains(got->how[0], "TLF split not applied");
    assert_int_equal(got->nfused, 0);
    expect_ok(g, ref, got, "per-op group");
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);

    /* a side branch that is neither prologue nor epilogue of the matmul */
    g = model("\"a\":{\"shape\":[8,8],\"dtype\":\"f32\",\"kind\":\"input\"},"
              "\"b\":{\"shape\":[8,8],\"dtype\":\"f32\",\"kind\":\"input\"}",
              "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"a\",\"b\"],\"outputs\":[\"y\"]},"
              "{\"name\":\"side\",\"op\":\"exp\",\"inputs\":[\"a\"],\"outputs\":[\"s\"]}",
              "\"y\",\"s\"");
    ex = fe_exec_new(g, NULL, &err);
    p = plan_with(g, NULL, 0, FE_K_CHOICE_MATMUL_BLOCKED, 1, &gid);
    ref = run_ref(ex);
    got = run_plan(ex, p);
    assert_contains(got->how[0], "per_op");
    assert_contains(got->how[0], "neither a prologue nor an epilogue");
    expect_ok(g, ref, got, "side branch");
    fe_exec_result_free(got);
    fe_plan_free(p);
    /* fused_rows asked for a matmul group: refused and said so */
    p = plan_with(g, NULL, 0, FE_K_CHOICE_FUSED, 1, &gid);
    got = run_plan(ex, p);
    assert_contains(got->how[0], "kernel fused_rows cannot take it");
    expect_ok(g, ref, got, "fused_rows on a matmul");
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* matmul_blocked == matmul then the epilogue, op by op, on bigger data */
static void test_blocked_equals_matmul_then_epilogue(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model("\"x\":{\"shape\":[130,257],\"dtype\":\"f32\",\"kind\":\"input\"},"
                        "\"w\":{\"shape\":[257,70],\"dtype\":\"f32\",\"kind\":\"weight\"},"
                        "\"b\":{\"shape\":[70],\"dtype\":\"f32\",\"kind\":\"weight\"}",
                        "{\"name\":\"mm\",\"op\":\"matmul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"]},"
                        "{\"name\":\"bias\",\"op\":\"add\",\"inputs\":[\"y\",\"b\"],\"outputs\":[\"yb\"]},"
                        "{\"name\":\"act\",\"op\":\"silu\",\"inputs\":[\"yb\"],\"outputs\":[\"o\"]}",
                        "\"o\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    int gid;
    fe_plan *pf = plan_with(g, NULL, 0, FE_K_CHOICE_MATMUL_BLOCKED, 1, &gid);
    fe_plan *pu = fe_plan_unfused(g, &err);
    pu->groups[0].kernel = FE_K_CHOICE_MATMUL_BLOCKED;
    fe_exec_result *f = run_plan(ex, pf), *u = run_plan(ex, pu);
    /* the same GEMM and the same elementwise code: identical bits */
    expect_equal(g, f, u, "epilogue-fused vs matmul then epilogue");
    fe_exec_result_free(f);
    fe_exec_result_free(u);
    fe_plan_free(pf);
    fe_plan_free(pu);
    fe_exec_free(ex);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_fused_groups),
        cmocka_unit_test(test_row_packs),
        cmocka_unit_test(test_wide_rows),
        cmocka_unit_test(test_cache_share),
        cmocka_unit_test(test_streaming_outputs),
        cmocka_unit_test(test_register_chain),
        cmocka_unit_test(test_register_forms),
        cmocka_unit_test(test_register_sumsq),
        cmocka_unit_test(test_matmul_epilogue),
        cmocka_unit_test(test_matmul_prologue),
        cmocka_unit_test(test_matmul_batched_and_rows),
        cmocka_unit_test(test_conv_epilogue),
        cmocka_unit_test(test_batch_norm),
        cmocka_unit_test(test_conv_prologue),
        cmocka_unit_test(test_column_blocks),
        cmocka_unit_test(test_fallback_reported),
        cmocka_unit_test(test_blocked_equals_matmul_then_epilogue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
