/* test_sim.c: the GCU simulator against numbers worked out by hand from the
 * formulas in sim.c's note, on a machine with seed 004's figures (16 MiB L2
 * at 1 TB/s, 100 GB/s L3, 10 us launch) and the rest as in gcu.lua; plus
 * machine files (shipped ones and every kind of bad one), determinism, the
 * report and trace writers, and the LLaMA-2-7B layer at S=2048 and 8192. */
#include <jansson.h>
#include <math.h>
#include <unistd.h>

#include "testlib.h"
#include "machine.h"
#include "machine_file.h"
#include "ops.h"
#include "plan.h"
#include "plan_build.h"
#include "plan_json.h"
#include "sandbox.h"
#include "sim.h"
#include "trace.h"

#define MiB (INT64_C(1) << 20)

#define assert_near(a, b)                                                                   \
    do {                                                                                    \
        double a_ = (a), b_ = (b);                                                          \
        if (!(fabs(a_ - b_) <= 1e-9 * fabs(b_) + 1e-15))                                    \
            fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);                             \
    } while (0)

#define US 1e-6

/* Seed 004's machine, filled in C so the expectations below do not move
 * when gcu.lua is retuned. */
static fe_machine seed_machine(void)
{
    fe_machine m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "seed004");
    m.l2_bytes = 16 * MiB;
    m.memory_bytes = INT64_C(32) << 30;
    m.l2_bandwidth = 1e12;
    m.l3_bandwidth = 100e9;
    m.local_bandwidth = 200e9;
    m.launch_us = 10;
    m.tile_us = 1;
    m.matrix_flops[FE_F32] = 32e12;
    m.matrix_flops[FE_F16] = 128e12;
    m.vector_flops[FE_F32] = 8e12;
    m.vector_flops[FE_F16] = 16e12;
    m.registers = 255;
    m.reserved_registers = 24;
    m.elements_per_thread = 8;
    m.link_bandwidth = 50e9;
    m.link_latency_us = 5;
    m.overlap = 0;
    fe_error err = {0};
    if (fe_machine_check(&m, "seed004", &err) != FE_OK)
        fail_msg("%s", err.message);
    return m;
}

static fe_sim_group_result sim(const fe_graph *g, const fe_machine *m, const char *names,
                               int split)
{
    int32_t ids[128];
    int n = 0;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        ids[n++] = tl_node(g, t);
    fe_sim_group_result r;
    fe_error err = {0};
    if (fe_sim_group(g, m, ids, n, split, &r, &err) != FE_OK)
        fail_msg("%s", err.message);
    return r;
}

/* A plan from groups written "a,b;c,d" (nodes not named run alone); the
 * groups' splits are reset to 0 so the simulator picks them. */
static fe_plan *plan_of(const fe_graph *g, const char *groups)
{
    int32_t *labels = malloc((size_t)g->nnodes * sizeof *labels);
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = v;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", groups);
    for (char *s1, *grp = strtok_r(buf, ";", &s1); grp; grp = strtok_r(NULL, ";", &s1)) {
        int32_t first = -1;
        for (char *s2, *t = strtok_r(grp, ",", &s2); t; t = strtok_r(NULL, ",", &s2)) {
            int32_t v = tl_node(g, t);
            if (first < 0)
                first = v;
            labels[v] = first;
        }
    }
    fe_error err = {0};
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    free(labels);
    if (!p)
        fail_msg("plan: %s", err.message);
    for (int32_t i = 0; i < p->ngroups; i++)
        p->groups[i].split = 0;
    return p;
}

/* ---- silu + mul at [2048, 11008] f16 ---- */

static const char *swiglu_json =
    "{\"format\": \"fuseeng.model/1\", \"dims\": {\"T\": 2048},"
    " \"tensors\": {\"g\": {\"shape\": [\"T\", 11008], \"dtype\": \"f16\", \"kind\": \"input\"},"
    "               \"u\": {\"shape\": [\"T\", 11008], \"dtype\": \"f16\", \"kind\": \"input\"}},"
    " \"nodes\": [{\"name\": \"silu\", \"op\": \"silu\", \"inputs\": [\"g\"], \"outputs\": [\"s\"]},"
    "           {\"name\": \"mul\", \"op\": \"mul\", \"inputs\": [\"s\", \"u\"], \"outputs\": [\"y\"]}],"
    " \"outputs\": [\"y\"]}";

static void silu_mul(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(swiglu_json);
    /* Each tensor: 2048 * 11008 = 22,544,384 elements, B = 45,088,768 bytes. */
    const int64_t E = 22544384, B = 45088768;

    /* silu alone: reads g, writes s (read by mul outside): L3 = 2B.
     * flops 5/element = 112,721,920 -> /16e12 = 7.04512 us;
     * L3 90,177,536 B / 100e9 = 901.77536 us; L2 (read + write) 2B / 1e12
     * = 90.177536 us; time = 10 + 7.04512 + 901.77536 + 90.177536
     * = 1008.998016 us. No intermediates: split 1. */
    fe_sim_group_result s = sim(g, &m, "silu", 0);
    assert_int_equal(s.flops, 5 * E);
    assert_int_equal(s.l3_read, B);
    assert_int_equal(s.l3_write, B);
    assert_int_equal(s.split, 1);
    assert_int_equal(s.regs, 24 + 8 * 2);
    assert_near(s.compute_s, 7.04512 * US);
    assert_near(s.l3_s, 901.77536 * US);
    assert_near(s.time_s, 1008.998016 * US);

    /* mul alone: reads s and u, writes y: L3 = 3B = 135,266,304.
     * 22,544,384 flops / 16e12 = 1.409024 us; L3 1352.66304 us; L2
     * 135.266304 us; time = 10 + 1.409024 + 1352.66304 + 135.266304
     * = 1499.338368 us. */
    fe_sim_group_result u = sim(g, &m, "mul", 0);
    assert_int_equal(u.l3_bytes, 3 * B);
    assert_near(u.time_s, 1499.338368 * US);

    /* Unfused = 1008.998016 + 1499.338368 = 2508.336384 us, 5B of L3. */
    int32_t both[2] = {tl_node(g, "silu"), tl_node(g, "mul")};
    fe_sim_group_result un;
    assert_int_equal(fe_sim_unfused(g, &m, both, 2, &un, NULL), FE_OK);
    assert_int_equal(un.l3_bytes, 5 * B);
    assert_near(un.time_s, 2508.336384 * US);

    /* Fused. Walk: silu holds g + s = 2B, then g dies; mul holds s + u + y
     * = 3B. working_set = 3B = 135,266,304 > 16 MiB = 16,777,216, s is an
     * intermediate, everything is tiled: split = ceil(3B / 16 MiB) =
     * ceil(8.0625) = 9; per tile ceil(3B / 9) = 15,029,590 <= 16 MiB, so s
     * stays on chip. L3 = g + u + y = 3B (1352.66304 us); L2 = silu's 2B +
     * mul's 3B = 225,443,840 (225.44384 us); compute 7.04512 + 1.409024 =
     * 8.454144 us; 9 tiles at 1 us. time = 10 + 9 + 8.454144 + 1352.66304 +
     * 225.44384 = 1605.561024 us: 1.56x faster than unfused. */
    fe_sim_group_result f = sim(g, &m, "silu,mul", 0);
    assert_int_equal(f.working_set, 3 * B);
    assert_int_equal(f.split, 9);
    assert_int_equal(f.split_default, 9);
    assert_int_equal(f.l2_peak, 15029590);
    assert_true(f.fits);
    assert_int_equal(f.intermediate_bytes, B);
    assert_int_equal(f.overflow_bytes, 0);
    assert_int_equal(f.reread_bytes, 0);
    assert_int_equal(f.l3_bytes, 3 * B);
    assert_int_equal(f.l2_traffic, 5 * B);
    assert_int_equal(f.regs, 24 + 8 * (2 + 2));
    assert_near(f.tile_s, 9 * US);
    assert_near(f.time_s, 1605.561024 * US);
    assert_true(un.time_s / f.time_s > 1.56 && un.time_s / f.time_s < 1.57);

    /* A policy's split: 4 tiles of ceil(3B / 4) = 33,816,576 > 16 MiB do not
     * fit, so s goes through L3: overflow = 2B, L3 = 5B (2254.4384 us), L2
     * 5B (225.44384 us), time = 10 + 4 + 8.454144 + 2254.4384 + 225.44384
     * = 2502.336384 us. */
    fe_sim_group_result f4 = sim(g, &m, "silu,mul", 4);
    assert_int_equal(f4.split, 4);
    assert_int_equal(f4.split_default, 9);
    assert_false(f4.fits);
    assert_int_equal(f4.overflow_bytes, 2 * B);
    assert_int_equal(f4.l3_bytes, 5 * B);
    assert_near(f4.time_s, 2502.336384 * US);

    /* The nodes may come in any order. */
    int32_t rev[2] = {both[1], both[0]};
    fe_sim_group_result fr;
    assert_int_equal(fe_sim_group(g, &m, rev, 2, 0, &fr, NULL), FE_OK);
    assert_memory_equal(&fr, &f, sizeof f);
    fe_graph_free(g);
}

/* split = ceil(working_set / L2) at several sizes (all operands tiled). */
static void tlf_split(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    static const int64_t rows[] = {64, 256, 381, 382, 1024, 2048, 4096, 8192};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *dn[1] = {"T"};
        int64_t dv[1] = {rows[i]};
        fe_dimset ds = {1, dn, dv};
        fe_error err = {0};
        fe_graph *g = fe_load_model_buffer(swiglu_json, strlen(swiglu_json), "t.json", &ds, &err);
        assert_non_null(g);
        fe_sim_group_result f = sim(g, &m, "silu,mul", 0);
        int64_t ws = 3 * rows[i] * 11008 * 2;
        int64_t k = ws <= m.l2_bytes ? 1 : (ws + m.l2_bytes - 1) / m.l2_bytes;
        assert_int_equal(f.working_set, ws);
        assert_int_equal(f.split, k);
        assert_true(f.fits);
        assert_true(f.l2_peak <= m.l2_bytes);
        fe_graph_free(g);
    }
}

/* A weight broadcast over rows is read again by every tile. */
static void broadcast_reread(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(
        "{\"format\": \"fuseeng.model/1\","
        " \"tensors\": {\"x\": {\"shape\": [4096, 1024], \"dtype\": \"f32\", \"kind\": \"input\"},"
        "               \"w\": {\"shape\": [1024], \"dtype\": \"f32\", \"kind\": \"weight\"}},"
        " \"nodes\": [{\"name\": \"scale\", \"op\": \"mul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"a\"]},"
        "           {\"name\": \"act\", \"op\": \"relu\", \"inputs\": [\"a\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}");
    /* x, a, y: 16 MiB each; w 4 KiB, untiled. Steps: scale holds x + a
     * tiled (32 MiB) and w untiled (4096); act holds a + y (32 MiB).
     * split = max(ceil(32 MiB / (16 MiB - 4096)), ceil(32 MiB / 16 MiB))
     * = max(3, 2) = 3; tile = ceil(32 MiB / 3) + 4096 = 11,184,811 + 4096.
     * w is read by all 3 tiles: reread = 2 * 4096. */
    fe_sim_group_result f = sim(g, &m, "scale,act", 0);
    assert_int_equal(f.working_set, 32 * MiB + 4096);
    assert_int_equal(f.split, 3);
    assert_int_equal(f.l2_peak, 11184811 + 4096);
    assert_int_equal(f.reread_bytes, 2 * 4096);
    assert_int_equal(f.l3_read, 16 * MiB + 4096 + 2 * 4096);
    assert_int_equal(f.l3_write, 16 * MiB);
    fe_graph_free(g);
}

/* A slice reads only what it selects. */
static void partial_reads(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(
        "{\"format\": \"fuseeng.model/1\","
        " \"tensors\": {\"x\": {\"shape\": [1024, 128], \"dtype\": \"f16\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"lo\", \"op\": \"slice\", \"inputs\": [\"x\"], \"outputs\": [\"a\"],"
        "             \"attrs\": {\"axis\": 1, \"start\": 0, \"end\": 64}},"
        "           {\"name\": \"hi\", \"op\": \"slice\", \"inputs\": [\"x\"], \"outputs\": [\"b\"],"
        "             \"attrs\": {\"axis\": 1, \"start\": 64, \"end\": 128}},"
        "           {\"name\": \"sum\", \"op\": \"add\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}");
    /* x is 256 KiB; each slice touches half of it. A slice alone is a
     * view: it launches nothing and moves nothing (launch.h). */
    assert_int_equal(sim(g, &m, "lo", 0).l3_read, 0);
    assert_true(sim(g, &m, "lo", 0).time_s == 0);
    assert_int_equal(sim(g, &m, "lo", 0).launch, FE_LAUNCH_NONE);
    assert_int_equal(sim(g, &m, "lo,sum", 0).l3_read, 128 * 1024 + 128 * 1024);
    /* Both slices in one group: the halves add up to all of x, once. */
    assert_int_equal(sim(g, &m, "lo,hi,sum", 0).l3_read, 256 * 1024);
    assert_int_equal(sim(g, &m, "lo,hi,sum", 0).l3_write, 128 * 1024);
    fe_graph_free(g);
}

/* ---- diamond: working set and device-memory peak ---- */

static const char *diamond_json =
    "{\"format\": \"fuseeng.model/1\","
    " \"tensors\": {\"x\": {\"shape\": [1024, 1024], \"dtype\": \"f32\", \"kind\": \"input\"},"
    "               \"w\": {\"shape\": [1024], \"dtype\": \"f32\", \"kind\": \"weight\"}},"
    " \"nodes\": [{\"name\": \"a\", \"op\": \"mul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"ta\"]},"
    "           {\"name\": \"b\", \"op\": \"cast\", \"inputs\": [\"x\"], \"outputs\": [\"tb\"],"
    "            \"attrs\": {\"dtype\": \"f16\"}},"
    "           {\"name\": \"c\", \"op\": \"add\", \"inputs\": [\"ta\", \"tb\"], \"outputs\": [\"tc\"]}],"
    " \"outputs\": [\"tc\"]}";

static void diamond(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(diamond_json);
    const int64_t W = 4096, X = 4 * MiB, A = 4 * MiB, Bt = 2 * MiB, C = 4 * MiB;
    fe_error err = {0};

    /* Fused walk: a holds x + w + ta = 8 MiB + 4 KiB (w dies, x lives on
     * for b); b holds x + ta + tb = 10 MiB (x dies); c holds ta + tb + tc
     * = 10 MiB. working_set = 10 MiB <= 16 MiB: split 1, fits. */
    fe_sim_group_result f = sim(g, &m, "a,b,c", 0);
    assert_int_equal(f.working_set, X + A + Bt);
    assert_int_equal(f.split, 1);
    assert_true(f.fits);
    assert_int_equal(f.intermediate_bytes, A + Bt);

    /* Unfused schedule a, b, c. Live while each runs:
     *   a: w + x + ta            = 8 MiB + 4 KiB
     *   b: w + x + ta + tb       = 10 MiB + 4 KiB  (x's last reader is b)
     *   c: w + ta + tb + tc      = 10 MiB + 4 KiB */
    fe_plan *u = fe_plan_unfused(g, &err);
    fe_sim_report ru;
    assert_int_equal(fe_sim_plan(u, &m, &ru, &err), FE_OK);
    assert_int_equal(ru.total.kernels, 3);
    assert_int_equal(ru.total.weight_bytes, W);
    assert_int_equal(ru.mem_bytes[u->group_of[tl_node(g, "a")]], W + X + A);
    assert_int_equal(ru.mem_bytes[u->group_of[tl_node(g, "b")]], W + X + A + Bt);
    assert_int_equal(ru.mem_bytes[u->group_of[tl_node(g, "c")]], W + A + Bt + C);
    assert_int_equal(ru.total.mem_peak, W + X + A + Bt);

    /* One group: ta and tb never reach device memory: w + x + tc. */
    fe_plan *p = plan_of(g, "a,b,c");
    fe_sim_report rp;
    assert_int_equal(fe_sim_plan(p, &m, &rp, &err), FE_OK);
    assert_int_equal(rp.total.kernels, 1);
    assert_int_equal(rp.total.mem_peak, W + X + C);
    assert_true(rp.total.time_s < ru.total.time_s);

    /* With a 8 MiB L2 and the group forced untiled, the 10 MiB working set
     * overflows: ta and tb go through L3 (written and read back) and sit in
     * device memory while the group runs. */
    fe_machine small = m;
    small.l2_bytes = 8 * MiB;
    p->groups[0].split = 1;
    fe_sim_report ro;
    assert_int_equal(fe_sim_plan(p, &small, &ro, &err), FE_OK);
    assert_false(ro.groups[0].fits);
    assert_int_equal(ro.groups[0].overflow_bytes, 2 * (A + Bt));
    assert_int_equal(ro.total.mem_peak, W + X + C + A + Bt);
    /* Left to itself it tiles instead: ceil(10 MiB / (8 MiB - ...)) = 2. */
    p->groups[0].split = 0;
    fe_sim_report rt;
    assert_int_equal(fe_sim_plan(p, &small, &rt, &err), FE_OK);
    assert_int_equal(rt.groups[0].split, 2);
    assert_true(rt.groups[0].fits);

    fe_sim_report_free(&ru);
    fe_sim_report_free(&rp);
    fe_sim_report_free(&ro);
    fe_sim_report_free(&rt);
    fe_plan_free(u);
    fe_plan_free(p);
    fe_graph_free(g);
}

/* ---- registers ---- */

/* x [1024, 1024] f32 through `adds` adds of a scalar (live 2 each), then
 * optionally a relu (live 1). */
static fe_graph *chain(int adds, int relu)
{
    char json[8192];
    size_t at = 0;
    at += (size_t)snprintf(json + at, sizeof json - at,
                           "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"t0\": {\"shape\": "
                           "[1024, 1024], \"dtype\": \"f32\", \"kind\": \"input\"}}, \"nodes\": [");
    int i;
    for (i = 0; i < adds; i++)
        at += (size_t)snprintf(json + at, sizeof json - at,
                               "%s{\"name\": \"n%d\", \"op\": \"add\", \"inputs\": [\"t%d\"], "
                               "\"outputs\": [\"t%d\"], \"attrs\": {\"scalar\": 1}}",
                               i ? ", " : "", i, i, i + 1);
    if (relu) {
        at += (size_t)snprintf(json + at, sizeof json - at,
                               ", {\"name\": \"n%d\", \"op\": \"relu\", \"inputs\": [\"t%d\"], "
                               "\"outputs\": [\"t%d\"]}", i, i, i + 1);
        i++;
    }
    snprintf(json + at, sizeof json - at, "], \"outputs\": [\"t%d\"]}", i);
    return tl_graph(json);
}

static fe_sim_group_result sim_all(const fe_graph *g, const fe_machine *m)
{
    int32_t ids[64];
    for (int32_t v = 0; v < g->nnodes; v++)
        ids[v] = v;
    fe_sim_group_result r;
    assert_int_equal(fe_sim_group(g, m, ids, g->nnodes, 0, &r, NULL), FE_OK);
    return r;
}

static void register_spill(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    /* regs = 24 reserved + 8 elements/thread * live values.
     * 14 adds: 24 + 8 * 28 = 248 <= 255: no spill. */
    fe_graph *g = chain(14, 0);
    fe_sim_group_result r = sim_all(g, &m);
    assert_int_equal(r.regs, 248);
    assert_int_equal(r.spill_regs, 0);
    assert_int_equal(r.spill_bytes, 0);
    fe_graph_free(g);

    /* 14 adds and a relu: 24 + 8 * 29 = 256, one register above the limit.
     * threads = 1,048,576 elements / 8 = 131,072; spill = 1 register * 4
     * bytes * (store + reload) * 131,072 = 1,048,576 bytes, at 200 GB/s =
     * 5.24288 us of extra memory time. */
    g = chain(14, 1);
    r = sim_all(g, &m);
    assert_int_equal(r.regs, 256);
    assert_int_equal(r.spill_regs, 1);
    assert_int_equal(r.spill_bytes, 1048576);
    assert_near(r.spill_s, 5.24288 * US);
    /* With a limit of exactly 256 the same group does not spill. */
    fe_machine roomy = m;
    roomy.registers = 256;
    assert_int_equal(sim_all(g, &roomy).spill_bytes, 0);
    fe_graph_free(g);

    /* 15 adds: 24 + 8 * 30 = 264: 9 registers spill, 9 MiB of traffic. */
    g = chain(15, 0);
    r = sim_all(g, &m);
    assert_int_equal(r.spill_regs, 9);
    assert_int_equal(r.spill_bytes, 9 * MiB);
    /* Unfused, no node spills. */
    fe_sim_group_result un;
    int32_t ids[15];
    for (int i = 0; i < 15; i++)
        ids[i] = i;
    assert_int_equal(fe_sim_unfused(g, &m, ids, 15, &un, NULL), FE_OK);
    assert_int_equal(un.spill_bytes, 0);
    assert_int_equal(un.regs, 40);
    fe_graph_free(g);
}

/* ---- all_reduce, seed 001's collective with an epilogue ---- */

static void collective(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(
        "{\"format\": \"fuseeng.model/1\","
        " \"tensors\": {\"x\": {\"shape\": [4096, 4096], \"dtype\": \"f16\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"ar\", \"op\": \"all_reduce\", \"inputs\": [\"x\"], \"outputs\": [\"r\"],"
        "             \"attrs\": {\"world_size\": 8}},"
        "           {\"name\": \"act\", \"op\": \"relu\", \"inputs\": [\"r\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}");
    /* x is 32 MiB = 33,554,432 bytes. Ring over p = 8: each rank sends
     * 2 * 7/8 * 32 MiB = 58,720,256 bytes; at 50 GB/s 1174.40512 us, plus
     * 2 * 7 steps * 5 us = 70 us: 1244.40512 us. */
    fe_sim_group_result a = sim(g, &m, "ar", 0);
    assert_true(a.collective);
    assert_int_equal(a.collective_bytes, 58720256);
    assert_near(a.collective_s, 1244.40512 * US);
    /* The kernel also reads x and writes r (64 MiB: 671.08864 us of L3,
     * 67.108864 us of L2) and adds 16,777,216 elements (1.048576 us):
     * 10 + 1244.40512 + 1.048576 + 671.08864 + 67.108864 = 1993.6512 us. */
    assert_near(a.time_s, 1993.6512 * US);
    /* relu alone: 10 + 1.048576 + 671.08864 + 67.108864 = 749.24608 us. */
    assert_near(sim(g, &m, "act", 0).time_s, 749.24608 * US);

    /* The epilogue absorbed: one launch; r stays on chip. Walk: x + r =
     * 64 MiB, r + y = 64 MiB; split ceil(64 / 16) = 4, each tile exactly
     * 16 MiB. L3 = x + y = 64 MiB (671.08864 us); L2 = 128 MiB
     * (134.217728 us); compute 2 * 1.048576 us; 4 tiles = 4 us.
     * time = 10 + 4 + 1244.40512 + 2.097152 + 671.08864 + 134.217728
     * = 2065.80864 us, against 1993.6512 + 749.24608 = 2742.89728 unfused. */
    fe_sim_group_result f = sim(g, &m, "ar,act", 0);
    assert_int_equal(f.split, 4);
    assert_true(f.fits);
    assert_int_equal(f.l3_bytes, 64 * MiB);
    assert_near(f.time_s, 2065.80864 * US);
    fe_sim_group_result un;
    int32_t ids[2] = {0, 1};
    assert_int_equal(fe_sim_unfused(g, &m, ids, 2, &un, NULL), FE_OK);
    assert_near(un.time_s, 2742.89728 * US);
    fe_graph_free(g);
}

/* ---- whole plans ---- */

static char *report_text(const fe_sim_report *r, int what)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fe_jw w;
    fe_jw_init(&w, f, 1);
    if (what == 0)
        fe_sim_report_json(r, &w, 1);
    else {
        const fe_sim_report *rs[1] = {r};
        fe_trace_write(f, rs, NULL, 1, NULL);
    }
    fclose(f);
    return buf;
}

static fe_graph *llama(int64_t S)
{
    const char *dn[1] = {"S"};
    int64_t dv[1] = {S};
    fe_dimset ds = {1, dn, dv};
    fe_error err = {0};
    fe_graph *g = fe_load_model_file("examples/models/llama2_7b_layer.json", &ds, &err);
    if (!g)
        fail_msg("%s", err.message);
    return g;
}

static const char *llama_groups =
    "gate_silu,swiglu;"
    "scores_scaled,scores_masked,probs;"
    "q_cos,q_x1,q_x2,q_neg_x2,q_rot,q_rot_sin,q_rope;"
    "k_cos,k_x1,k_x2,k_neg_x2,k_rot,k_rot_sin,k_rope;"
    "attn_residual,post_attention_layernorm";

static void unfused_matches_groups(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = llama(2048);
    fe_error err = {0};
    fe_plan *u = fe_plan_unfused(g, &err);
    fe_sim_report r;
    assert_int_equal(fe_sim_plan(u, &m, &r, &err), FE_OK);
    assert_int_equal(r.total.kernels + r.total.extern_calls + r.total.views, g->nnodes);
    double sum = 0;
    int64_t l3 = 0;
    for (int32_t v = 0; v < g->nnodes; v++) {
        fe_sim_group_result one;
        assert_int_equal(fe_sim_group(g, &m, &v, 1, 0, &one, NULL), FE_OK);
        assert_memory_equal(&one, &r.groups[v], sizeof one);
        assert_near(r.start_s[v], sum);
        sum += one.time_s;
        l3 += one.l3_bytes;
    }
    assert_near(r.total.time_s, sum);
    assert_int_equal(r.total.l3_bytes, l3);
    int32_t *all = malloc((size_t)g->nnodes * sizeof *all);
    for (int32_t v = 0; v < g->nnodes; v++)
        all[v] = v;
    fe_sim_group_result un;
    assert_int_equal(fe_sim_unfused(g, &m, all, g->nnodes, &un, NULL), FE_OK);
    assert_near(un.time_s, sum);
    free(all);
    fe_sim_report_free(&r);
    fe_plan_free(u);
    fe_graph_free(g);
}

static void determinism(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    char *text[2][2];
    for (int run = 0; run < 2; run++) {
        fe_graph *g = llama(2048);
        fe_plan *p = plan_of(g, llama_groups);
        fe_sim_report r;
        assert_int_equal(fe_sim_plan(p, &m, &r, NULL), FE_OK);
        text[run][0] = report_text(&r, 0);
        text[run][1] = report_text(&r, 1);
        fe_sim_report_free(&r);
        fe_plan_free(p);
        fe_graph_free(g);
    }
    assert_string_equal(text[0][0], text[1][0]);
    assert_string_equal(text[0][1], text[1][1]);
    assert_true(strlen(text[0][0]) > 1000);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            free(text[i][j]);
}

/* ---- the trace: the trace-event format's schema ---- */

/* Member key of event e, of the given Jansson type; fails the test naming
 * the event otherwise. */
static json_t *field(json_t *e, size_t i, const char *key, json_type type)
{
    json_t *v = json_object_get(e, key);
    if (!v)
        fail_msg("event %zu has no \"%s\"", i, key);
    int ok = json_typeof(v) == type ||
             (type == JSON_REAL && json_typeof(v) == JSON_INTEGER);   /* a number */
    if (!ok)
        fail_msg("event %zu: \"%s\" has JSON type %d, expected %d", i, key, (int)json_typeof(v),
                 (int)type);
    return v;
}

/* Write reports[0..n) as a trace, parse it with Jansson and check every
 * event: the fields the trace-event format requires (name, ph, ts, pid,
 * tid; dur for complete events) with their types; per process the three
 * metadata events, a kernel track holding one slice per group, back to
 * back in nanoseconds, named by the group's label, and the two counter
 * tracks with the simulator's own figures at every group start and at
 * the end. */
static void trace_schema(const fe_sim_report *const *reports, int n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(fe_trace_write(f, reports, NULL, n, NULL), FE_OK);
    fclose(f);
    json_error_t je;
    json_t *j = json_loads(buf, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("trace JSON: %s at %d:%d", je.text, je.line, je.column);
    assert_string_equal(json_string_value(json_object_get(j, "displayTimeUnit")), "ms");
    json_t *ev = json_object_get(j, "traceEvents");
    assert_true(json_is_array(ev));

    /* Per process (pid 1..n): events seen of each kind. */
    size_t nmeta[8] = {0}, nx[8] = {0}, nl2[8] = {0}, nmem[8] = {0};
    long long next_ns[8] = {0};
    json_int_t kernel_tid[8] = {0};
    double last_ts[8] = {0};
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        assert_true(json_is_object(e));
        const char *name = json_string_value(field(e, i, "name", JSON_STRING));
        const char *ph = json_string_value(field(e, i, "ph", JSON_STRING));
        double ts = json_number_value(field(e, i, "ts", JSON_REAL));
        json_int_t pid = json_integer_value(field(e, i, "pid", JSON_INTEGER));
        json_int_t tid = json_integer_value(field(e, i, "tid", JSON_INTEGER));
        assert_true(name[0] != '\0');
        assert_true(ts >= 0);
        assert_true(pid >= 1 && pid <= n);
        const fe_sim_report *r = reports[pid - 1];
        /* Events come in time order within a process. */
        assert_true(ts >= last_ts[pid]);
        last_ts[pid] = ts;
        json_t *args = field(e, i, "args", JSON_OBJECT);
        if (strcmp(ph, "M") == 0) {
            assert_true(ts == 0);
            if (strcmp(name, "process_name") == 0) {
                assert_non_null(json_string_value(json_object_get(args, "name")));
            } else if (strcmp(name, "process_sort_index") == 0) {
                assert_int_equal(json_integer_value(json_object_get(args, "sort_index")), pid);
            } else if (strcmp(name, "thread_name") == 0) {
                assert_string_equal(json_string_value(json_object_get(args, "name")), "kernels");
                kernel_tid[pid] = tid;
            } else {
                fail_msg("unexpected metadata event '%s'", name);
            }
            nmeta[pid]++;
        } else if (strcmp(ph, "X") == 0) {
            /* The kernel track: the thread named "kernels", slices in plan
             * order, each starting in Perfetto's nanoseconds exactly where
             * the one before ended. */
            double dur = json_number_value(field(e, i, "dur", JSON_REAL));
            size_t k = nx[pid]++;
            assert_true(k < (size_t)r->ngroups);
            assert_int_equal(tid, kernel_tid[pid]);
            assert_true(dur > 0 || r->groups[k].launch == FE_LAUNCH_NONE);
            assert_int_equal(llround(ts * 1e3), next_ns[pid]);
            next_ns[pid] = llround(ts * 1e3) + llround(dur * 1e3);
            assert_near(ts, (double)llround(r->start_s[k] * 1e9) / 1e3);
            char label[160];
            const fe_group *gr = &r->plan->groups[k];
            fe_sim_group_label(r->g, fe_group_nodes(r->plan, gr), gr->n, label, sizeof label);
            assert_string_equal(name, label);
            assert_int_equal(json_integer_value(json_object_get(args, "group")), (json_int_t)k);
            assert_int_equal(json_integer_value(json_object_get(args, "split")), r->groups[k].split);
            assert_int_equal(json_integer_value(json_object_get(args, "l3_bytes")),
                             r->groups[k].l3_bytes);
        } else if (strcmp(ph, "C") == 0) {
            /* The counter tracks: a value per group start, then the end. */
            json_int_t bytes = json_integer_value(field(args, i, "bytes", JSON_INTEGER));
            int l2 = strcmp(name, "L2 occupancy") == 0;
            if (!l2 && strcmp(name, "device memory") != 0)
                fail_msg("unexpected counter '%s'", name);
            size_t k = l2 ? nl2[pid]++ : nmem[pid]++;
            assert_true(k <= (size_t)r->ngroups);
            if (k == (size_t)r->ngroups) {
                assert_near(ts, (double)llround(r->total.time_s * 1e9) / 1e3);
                assert_int_equal(bytes, l2 ? 0 : r->total.weight_bytes);
            } else {
                assert_near(ts, (double)llround(r->start_s[k] * 1e9) / 1e3);
                assert_int_equal(bytes, l2 ? r->groups[k].l2_occupancy : r->mem_bytes[k]);
                if (l2)
                    assert_true(bytes <= r->machine.l2_bytes);
            }
        } else {
            fail_msg("event %zu has phase '%s'", i, ph);
        }
    }
    for (int pid = 1; pid <= n; pid++) {
        const fe_sim_report *r = reports[pid - 1];
        assert_int_equal(nmeta[pid], 3);
        assert_true(kernel_tid[pid] > 0);
        assert_int_equal(nx[pid], (size_t)r->ngroups);
        assert_int_equal(nl2[pid], (size_t)r->ngroups + 1);
        assert_int_equal(nmem[pid], (size_t)r->ngroups + 1);
        assert_true(fabs((double)next_ns[pid] - r->total.time_s * 1e9) <= 1);
    }
    json_decref(j);
    free(buf);
}

/* The report and the trace parse, and say what the totals say. */
static void writers(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = llama(2048);
    fe_plan *p = plan_of(g, llama_groups);
    fe_plan *u = fe_plan_unfused(g, NULL);
    fe_sim_report rp, ru;
    assert_int_equal(fe_sim_plan(p, &m, &rp, NULL), FE_OK);
    assert_int_equal(fe_sim_plan(u, &m, &ru, NULL), FE_OK);

    json_error_t je;
    char *rep = report_text(&rp, 0);
    json_t *j = json_loads(rep, 0, &je);
    if (!j)
        fail_msg("report JSON: %s at %d:%d", je.text, je.line, je.column);
    assert_int_equal(json_integer_value(json_object_get(j, "kernels")), rp.total.kernels);
    assert_int_equal(json_array_size(json_object_get(j, "groups")), (size_t)rp.ngroups);
    json_t *g0 = json_array_get(json_object_get(j, "groups"), 0);
    assert_non_null(json_object_get(g0, "members"));
    assert_non_null(json_object_get(g0, "split"));
    json_decref(j);
    free(rep);

    /* The trace: its schema is checked event by event (trace_schema). */
    const fe_sim_report *rs[2] = {&rp, &ru};
    trace_schema(rs, 2);
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    /* Tables name the figures. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    fe_sim_report_compare_table(&rp, &ru, f);
    fe_sim_report_groups_table(&rp, f);
    fclose(f);
    assert_contains(buf, "speedup");
    assert_contains(buf, "device memory peak");
    assert_contains(buf, "silu+mul");
    assert_contains(buf, "tiled x9");
    free(buf);

    fe_sim_report_free(&rp);
    fe_sim_report_free(&ru);
    fe_plan_free(p);
    fe_plan_free(u);
    fe_graph_free(g);
}

/* ---- LLaMA-2-7B layer: S = 2048 against S = 8192 ---- */

static int32_t group_with(const fe_plan *p, const fe_graph *g, const char *name)
{
    return p->group_of[tl_node(g, name)];
}

static void llama_tlf(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_sim_report r[2];
    fe_plan *p[2];
    fe_graph *g[2];
    static const int64_t S[2] = {2048, 8192};
    for (int i = 0; i < 2; i++) {
        g[i] = llama(S[i]);
        p[i] = plan_of(g[i], llama_groups);
        assert_int_equal(fe_sim_plan(p[i], &m, &r[i], NULL), FE_OK);
        fe_plan *u = fe_plan_unfused(g[i], NULL);
        fe_sim_report ru;
        assert_int_equal(fe_sim_plan(u, &m, &ru, NULL), FE_OK);
        assert_true(r[i].total.time_s < ru.total.time_s);
        assert_true(r[i].total.l3_bytes < ru.total.l3_bytes);
        assert_true(r[i].total.kernels < ru.total.kernels);
        assert_true(r[i].total.mem_peak <= ru.total.mem_peak);
        fe_sim_report_free(&ru);
        fe_plan_free(u);
    }
    /* The SwiGLU pair: working set 3 * S * 11008 * 2 bytes, 129 MiB at
     * 2048 and 516 MiB at 8192, far above 16 MiB: the group is tiled
     * ceil(ws / 16 MiB) ways, 9 and 33, and each tile fits. */
    fe_sim_group_result *a = &r[0].groups[group_with(p[0], g[0], "swiglu")];
    fe_sim_group_result *b = &r[1].groups[group_with(p[1], g[1], "swiglu")];
    assert_int_equal(a->working_set, 3 * 2048 * 11008 * 2);
    assert_int_equal(b->working_set, 4 * a->working_set);
    assert_int_equal(a->split, 9);
    assert_int_equal(b->split, 33);
    assert_true(a->fits && b->fits);
    /* Rotary embedding of q: at 2048 a 48.5 MiB working set, split 4; at
     * 8192 four times that, split 13. cos and sin [1,1,S,128] are tiled
     * along S, so nothing is read twice. */
    a = &r[0].groups[group_with(p[0], g[0], "q_rope")];
    b = &r[1].groups[group_with(p[1], g[1], "q_rope")];
    assert_int_equal(a->split, (a->working_set + 16 * MiB - 1) / (16 * MiB));
    assert_int_equal(b->split, (b->working_set + 16 * MiB - 1) / (16 * MiB));
    assert_int_equal(a->split, 4);
    assert_int_equal(b->split, 13);
    assert_int_equal(a->reread_bytes, 0);
    /* Softmax block: scores are [1,32,S,S]; the mask [1,1,S,S] is tiled
     * along rows, so the split follows S^2: 33 at 2048, 520 at 8192. */
    a = &r[0].groups[group_with(p[0], g[0], "probs")];
    b = &r[1].groups[group_with(p[1], g[1], "probs")];
    assert_int_equal(a->split, 33);
    assert_int_equal(b->split, 520);
    assert_int_equal(b->reread_bytes, 0);
    assert_true(a->fits && b->fits);
    /* More tiles at 8192 everywhere, and more of them tiled at all. */
    assert_true(r[1].total.tiled >= r[0].total.tiled);
    assert_true(r[0].total.tiled >= 4);
    for (int i = 0; i < 2; i++) {
        fe_sim_report_free(&r[i]);
        fe_plan_free(p[i]);
        fe_graph_free(g[i]);
    }
}

/* At S = 512 the rotary group fits whole (AFE); at 2048 it is tiled (TLF). */
static void afe_then_tlf(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = llama(512);
    fe_sim_group_result r = sim(g, &m, "q_cos,q_x1,q_x2,q_neg_x2,q_rot,q_rot_sin,q_rope", 0);
    assert_true(r.working_set <= 16 * MiB);
    assert_int_equal(r.split, 1);
    fe_graph_free(g);
    g = llama(2048);
    r = sim(g, &m, "q_cos,q_x1,q_x2,q_neg_x2,q_rot,q_rot_sin,q_rope", 0);
    assert_true(r.working_set > 16 * MiB);
    assert_true(r.split > 1);
    fe_graph_free(g);
}

static void bad_groups(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(swiglu_json);
    fe_sim_group_result r;
    fe_error err = {0};
    int32_t dup[2] = {1, 1}, out[1] = {7};
    assert_int_equal(fe_sim_group(g, &m, dup, 2, 0, &r, &err), FE_EINPUT);
    assert_contains(err.message, "appears twice");
    assert_int_equal(fe_sim_group(g, &m, out, 1, 0, &r, &err), FE_EINPUT);
    assert_contains(err.message, "out of range");
    assert_int_equal(fe_sim_group(g, &m, out, 0, 0, &r, &err), FE_EINPUT);
    assert_contains(err.message, "at least one node");
    assert_int_equal(fe_sim_group(g, &m, dup, 1, -2, &r, &err), FE_EINPUT);
    assert_contains(err.message, "split");
    fe_graph_free(g);
}

/* What the kernel holds in the L2 is at most the L2: a lone matmul whose
 * operands stream needs more per tile (l2_peak) than the L2 holds, and
 * occupies all of it; the plan's l2_peak (the summary's "L2 peak") is the
 * largest occupancy, the value the trace's counter plots. */
static void l2_occupancy(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = llama(2048);
    fe_sim_group_result mm = sim(g, &m, "q_proj", 0);
    assert_true(mm.l2_peak > m.l2_bytes);
    assert_int_equal(mm.l2_occupancy, m.l2_bytes);
    fe_sim_group_result sw = sim(g, &m, "gate_silu,swiglu", 0);
    assert_true(sw.fits);
    assert_int_equal(sw.l2_occupancy, sw.l2_peak);
    fe_plan *plans[2] = {fe_plan_unfused(g, NULL), plan_of(g, "gate_silu,swiglu")};
    for (int i = 0; i < 2; i++) {
        fe_sim_report r;
        assert_int_equal(fe_sim_plan(plans[i], &m, &r, NULL), FE_OK);
        int64_t most = 0;
        for (int32_t k = 0; k < r.ngroups; k++) {
            assert_true(r.groups[k].l2_occupancy <= m.l2_bytes);
            assert_int_equal(r.groups[k].l2_occupancy, r.groups[k].l2_peak < m.l2_bytes
                                                           ? r.groups[k].l2_peak : m.l2_bytes);
            if (r.groups[k].l2_occupancy > most)
                most = r.groups[k].l2_occupancy;
        }
        assert_int_equal(r.total.l2_peak, most);
        assert_int_equal(r.total.l2_peak, m.l2_bytes);   /* the matmuls fill it */
        fe_sim_report_free(&r);
        fe_plan_free(plans[i]);
    }
    fe_graph_free(g);
}

/* The simulator refuses what it cannot price honestly: a split above the
 * shared limit, byte counts beyond 64 bits, times that are not finite. */
static void limits(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = tl_graph(swiglu_json);
    fe_sim_group_result r;
    fe_error err = {0};
    int32_t both[2] = {0, 1};
    assert_int_equal(fe_sim_group(g, &m, both, 2, FE_PLAN_MAX_SPLIT, &r, &err), FE_OK);
    assert_int_equal(fe_sim_group(g, &m, both, 2, FE_PLAN_MAX_SPLIT + 1, &r, &err), FE_EINPUT);
    assert_contains(err.message, "split must be 0 (the default) or an integer from 1 to 16777216");
    fe_plan *p = plan_of(g, "silu,mul");
    p->groups[0].split = FE_PLAN_MAX_SPLIT + 1;
    fe_sim_report rep;
    assert_int_equal(fe_sim_plan(p, &m, &rep, &err), FE_EINPUT);
    assert_contains(err.message, "group 0: split must be");

    /* A machine filled in C without fe_machine_check: 1e-300 B/s overflows
     * every time to infinity, which no report may print. */
    fe_machine slow = m;
    slow.l3_bandwidth = 1e-300;
    slow.l2_bandwidth = 1e-300;
    assert_int_equal(fe_machine_check(&slow, "slow", &err), FE_EINPUT);
    assert_contains(err.message, "outside the range");
    assert_int_equal(fe_sim_group(g, &slow, both, 2, 0, &r, &err), FE_EINPUT);
    assert_contains(err.message, "machine 'seed004': the simulated time is not finite");
    assert_int_equal(fe_sim_unfused(g, &slow, both, 2, &r, &err), FE_EINPUT);
    assert_contains(err.message, "not finite");
    p->groups[0].split = 0;
    assert_int_equal(fe_sim_plan(p, &slow, &rep, &err), FE_EINPUT);
    assert_contains(err.message, "not finite");
    fe_plan_free(p);
    fe_graph_free(g);

    /* A 1 TiB weight read again by each of 2^24 tiles: 2^64 bytes. */
    g = tl_graph(
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
        "  \"x\": {\"shape\": [1, 1048576], \"dtype\": \"f32\", \"kind\": \"input\"},"
        "  \"w\": {\"shape\": [1048576, 262144], \"dtype\": \"f32\", \"kind\": \"weight\"}},"
        " \"nodes\": ["
        "  {\"name\": \"mm\", \"op\": \"matmul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"h\"]},"
        "  {\"name\": \"act\", \"op\": \"relu\", \"inputs\": [\"h\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}");
    assert_int_equal(fe_sim_group(g, &m, both, 2, 0, &r, &err), FE_OK);
    assert_int_equal(fe_sim_group(g, &m, both, 2, FE_PLAN_MAX_SPLIT, &r, &err), FE_EINPUT);
    assert_contains(err.message, "at split 16777216 overflows 64-bit byte counts");
    fe_graph_free(g);
}

/* Labels fit their buffer: whole op names and a count, or a cut name
 * ending in "..."; the --verbose table keeps its columns however long. */
static void labels(void **state)
{
    (void)state;
    fe_graph *g = llama(2048);
    int32_t one = tl_node(g, "input_layernorm");
    char buf[64];
    fe_sim_group_label(g, &one, 1, buf, sizeof buf);
    assert_string_equal(buf, "rms_norm");
    fe_sim_group_label(g, &one, 1, buf, 7);
    assert_string_equal(buf, "rms...");
    int32_t rope[18];
    int n = 0;
    static const char *const names[] = {
        "q_view", "q_heads", "k_view", "k_heads", "q_cos", "q_x1", "q_x2", "q_neg_x2", "q_rot",
        "q_rot_sin", "q_rope", "k_cos", "k_x1", "k_x2", "k_neg_x2", "k_rot", "k_rot_sin", "k_rope"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        rope[n++] = tl_node(g, names[i]);
    fe_sim_group_label(g, rope, n, buf, 33);
    assert_true(strlen(buf) <= 32);
    assert_contains(buf, "+...(18 ops)");

    fe_machine m = seed_machine();
    fe_plan *p = plan_of(g, "q_view,q_heads,k_view,k_heads,q_cos,q_x1,q_x2,q_neg_x2,q_rot,"
                            "q_rot_sin,q_rope,k_cos,k_x1,k_x2,k_neg_x2,k_rot,k_rot_sin,k_rope");
    fe_sim_report r;
    assert_int_equal(fe_sim_plan(p, &m, &r, NULL), FE_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fe_sim_report_groups_table(&r, f);
    fclose(f);
    /* Every row has its "nodes" column right-aligned at the header's. */
    const char *hdr = strstr(text, "group  ops");
    assert_non_null(hdr);
    const char *col = strstr(hdr, "nodes");
    size_t end = (size_t)(col - hdr) + strlen("nodes");
    int rows = 0;
    for (const char *line = strchr(hdr, '\n') + 1; *line && strncmp(line, "total:", 6) != 0;
         line = strchr(line, '\n') + 1, rows++) {
        assert_true(line[end - 1] >= '0' && line[end - 1] <= '9');
        assert_true(line[end] == ' ');
    }
    assert_int_equal(rows, r.ngroups);
    assert_contains(text, "+...(18 ops)");
    free(text);
    fe_sim_report_free(&r);
    fe_plan_free(p);
    fe_graph_free(g);
}

/* ---- plan files ---- */

static json_int_t jint(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("\"%s\" is missing or not an integer", key);
    return json_integer_value(v);
}

static double jnum(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        fail_msg("\"%s\" is missing or not a number", key);
    return json_number_value(v);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* DESIGN.md's plan file: a simulated plan's "summary" holds kernels,
 * sim_us, l3_bytes, l2_peak, mem_peak and spill_bytes; with sim_groups
 * each group carries its figures under "sim" (the writer `sim --json
 * --verbose` uses); the file reads back; its header says what it was
 * made for, and a bad header or a missing file is one clear message. */
/* The simulator's figures for a plan file, through fe_plan_extra. */
static void sim_group(fe_jw *w, int32_t gi, void *r)
{
    fe_sim_report_group_json(r, gi, w);
}

static void sim_summary(fe_jw *w, void *r)
{
    fe_sim_report_plan_summary(r, w);
}

static void plan_files(void **state)
{
    (void)state;
    fe_machine m = seed_machine();
    fe_graph *g = llama(8192);
    fe_plan *p = plan_of(g, llama_groups);
    assert_int_equal(fe_sim_resolve_splits(p, &m, NULL), FE_OK);
    p->machine = fe_plan_str(p, m.name);
    fe_sim_report r;
    assert_int_equal(fe_sim_plan(p, &m, &r, NULL), FE_OK);

    char dir[] = "/tmp/fe_test_plan.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/plan.json", dir);
    FILE *f = fopen(path, "w");
    fe_plan_extra extra = {sim_group, sim_summary, &r};
    assert_int_equal(fe_plan_write(p, f, 1, &extra, NULL), FE_OK);
    fclose(f);

    json_error_t je;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("plan JSON: %s at %d:%d", je.text, je.line, je.column);
    json_t *sum = json_object_get(j, "summary");
    assert_int_equal(jint(sum, "kernels"), r.total.kernels);
    assert_near(jnum(sum, "sim_us"), r.total.time_s * 1e6);
    assert_int_equal(jint(sum, "l3_bytes"), r.total.l3_bytes);
    assert_int_equal(jint(sum, "l2_peak"), r.total.l2_peak);
    assert_int_equal(jint(sum, "mem_peak"), r.total.mem_peak);
    assert_int_equal(jint(sum, "spill_bytes"), r.total.spill_bytes);
    assert_int_equal(jint(json_object_get(j, "dims"), "S"), 8192);
    assert_string_equal(json_string_value(json_object_get(j, "machine")), "seed004");
    json_t *groups = json_object_get(j, "groups");
    assert_int_equal(json_array_size(groups), (size_t)r.ngroups);
    for (int32_t i = 0; i < r.ngroups; i++) {
        json_t *gs = json_object_get(json_array_get(groups, (size_t)i), "sim");
        const fe_sim_group_result *gr = &r.groups[i];
        assert_near(jnum(gs, "time_us"), gr->time_s * 1e6);
        assert_near(jnum(gs, "start_us"), r.start_s[i] * 1e6);
        assert_int_equal(jint(gs, "l3_bytes"), gr->l3_bytes);
        assert_int_equal(jint(gs, "l2_peak"), gr->l2_peak);
        assert_int_equal(jint(gs, "working_set"), gr->working_set);
        assert_int_equal(jint(gs, "split"), gr->split);
        assert_int_equal(jint(gs, "regs"), gr->regs);
        assert_int_equal(jint(gs, "spill_bytes"), gr->spill_bytes);
        assert_int_equal(jint(gs, "reread_bytes"), gr->reread_bytes);
        assert_int_equal(jint(gs, "overflow_bytes"), gr->overflow_bytes);
        assert_int_equal(jint(gs, "mem_bytes"), r.mem_bytes[i]);
    }
    json_decref(j);

    /* Without a simulation the summary has no simulated figures. */
    char *text = NULL;
    size_t len = 0;
    f = open_memstream(&text, &len);
    assert_int_equal(fe_plan_write(p, f, 1, NULL, NULL), FE_OK);
    fclose(f);
    assert_null(strstr(text, "sim_us"));
    assert_null(strstr(text, "\"sim\""));
    free(text);

    /* It reads back: the header, and the same groups and splits. */
    fe_plan_file pf;
    fe_error err = {0};
    assert_int_equal(fe_plan_file_open(path, &pf, &err), FE_OK);
    assert_string_equal(pf.model, g->name);
    assert_string_equal(pf.machine, "seed004");
    assert_int_equal(pf.ndims, 2);
    assert_string_equal(pf.dim_names[1], "S");
    assert_int_equal(pf.dim_values[1], 8192);
    fe_plan *back = fe_plan_file_plan(&pf, g, &err);
    if (!back)
        fail_msg("%s", err.message);
    fe_plan_file_close(&pf);
    assert_int_equal(back->ngroups, p->ngroups);
    for (int32_t i = 0; i < p->ngroups; i++)
        assert_int_equal(back->groups[i].split, p->groups[i].split);
    fe_plan_free(back);

    /* Bad files: one message naming the file and the place. */
    char missing[80];
    snprintf(missing, sizeof missing, "%s/nonexist.json", dir);
    assert_int_equal(fe_plan_file_open(missing, &pf, &err), FE_EINPUT);
    fe_plan_file_close(&pf);
    char want[160];
    snprintf(want, sizeof want, "%s: cannot open the plan: No such file or directory", missing);
    assert_string_equal(err.message, want);
#define PLAN1 "{\"format\": \"fuseeng.plan/1\", "
    static const struct { const char *text, *message; } bad[] = {
        {PLAN1 "\"groups\": [", "bad.json:1:"},
        {"{\"format\": \"fuseeng.plan/2\", \"groups\": []}", "\"format\" must be \"fuseeng.plan/1\""},
        {PLAN1 "\"model\": 3}", "\"model\" must be the model's name"},
        {PLAN1 "\"machine\": \"\"}", "\"machine\" must be a machine's name"},
        {PLAN1 "\"dims\": [2048]}", "\"dims\" must be an object"},
        {PLAN1 "\"dims\": {\"S\": 0}}", "\"dims\": \"S\" must be a positive integer"},
        {PLAN1 "\"dims\": {\"S\": 2.5}}", "\"dims\": \"S\" must be a positive integer"},
    };
#undef PLAN1
    char badpath[80];
    snprintf(badpath, sizeof badpath, "%s/bad.json", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(badpath, bad[i].text);
        assert_int_equal(fe_plan_file_open(badpath, &pf, &err), FE_EINPUT);
        fe_plan_file_close(&pf);
        assert_contains(err.message, badpath);
        assert_contains(err.message, bad[i].message);
    }
    /* A split above the limit names the limit. */
    write_text(badpath, "{\"format\": \"fuseeng.plan/1\", \"groups\": "
                        "[{\"nodes\": [\"input_layernorm\"], \"split\": 16777217}]}");
    assert_null(fe_plan_read(g, badpath, &err));
    assert_contains(err.message, "group 0: \"split\" must be an integer from 1 to 16777216");

    unlink(badpath);
    unlink(path);
    rmdir(dir);
    fe_sim_report_free(&r);
    fe_plan_free(p);
    fe_graph_free(g);
}

/* ---- machine files ---- */

static fe_sandbox *sandbox(void)
{
    fe_error err = {0};
    fe_sandbox_opts o = {.instructions = 2000000, .memory = 32 * MiB};
    fe_sandbox *sb = fe_sandbox_new(&o, &err);
    if (!sb)
        fail_msg("%s", err.message);
    return sb;
}

static void shipped_machines(void **state)
{
    (void)state;
    fe_sandbox *sb = sandbox();
    fe_error err = {0};
    fe_machine gcu, big, host;
    if (fe_machine_load(sb, "gcu", &gcu, &err) != FE_OK)
        fail_msg("%s", err.message);
    /* Seed 004's numbers. */
    assert_string_equal(gcu.name, "gcu");
    assert_int_equal(gcu.l2_bytes, 16 * MiB);
    assert_near(gcu.l2_bandwidth, 1e12);
    assert_near(gcu.l3_bandwidth, 100e9);
    assert_near(gcu.launch_us, 10);
    assert_int_equal(gcu.registers, 255);
    assert_contains(gcu.file, "lua/machines/gcu.lua");
    if (fe_machine_load(sb, "gcu_big", &big, &err) != FE_OK)
        fail_msg("%s", err.message);
    assert_int_equal(big.l2_bytes, 50 * MiB);
    assert_near(big.l3_bandwidth, 3e12);
    if (fe_machine_load(sb, "host", &host, &err) != FE_OK)
        fail_msg("%s", err.message);
    /* A path works as well as a name. */
    fe_machine again;
    assert_int_equal(fe_machine_load(sb, gcu.file, &again, &err), FE_OK);
    assert_memory_equal(&again, &gcu, sizeof gcu);

    /* A/B: the same group is priced differently on the two machines. */
    fe_graph *g = tl_graph(swiglu_json);
    fe_sim_group_result a = sim(g, &gcu, "silu,mul", 0), b = sim(g, &big, "silu,mul", 0);
    assert_int_equal(a.split, 9);
    assert_int_equal(b.split, 3);
    assert_true(b.time_s < a.time_s / 5);
    fe_graph_free(g);

    /* The JSON form holds every field. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fe_jw w;
    fe_jw_init(&w, f, 0);
    fe_machine_json(&gcu, &w);
    fclose(f);
    assert_contains(buf, "\"l2_bytes\":16777216");
    assert_contains(buf, "\"overlap\":false");
    free(buf);
    fe_sandbox_free(sb);
}

static char tmpdir[64];

/* A machine file: gcu's fields except `drop`, plus `extra` lines. */
static const char *machine_file(const char *file, const char *drop, const char *extra)
{
    static const char *const lines[] = {
        "name = 'm'", "l2_bytes = 16 * 1024 * 1024", "memory_bytes = 32 * 1024 * 1024 * 1024",
        "l2_bandwidth = 1e12", "l3_bandwidth = 100e9", "local_bandwidth = 200e9",
        "launch_us = 10", "tile_us = 1", "matrix_flops = {f32 = 32e12, f16 = 128e12}",
        "vector_flops = {f32 = 8e12}", "registers = 255", "reserved_registers = 24",
        "elements_per_thread = 8", "link_bandwidth = 50e9", "link_latency_us = 5",
        "overlap = false",
    };
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    FILE *f = fopen(path, "w");
    fprintf(f, "-- test machine\nreturn {\n");
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!drop || strncmp(lines[i], drop, strlen(drop)) != 0 || lines[i][strlen(drop)] != ' ')
            fprintf(f, "  %s,\n", lines[i]);
    if (extra)
        fprintf(f, "  %s,\n", extra);
    fprintf(f, "}\n");
    fclose(f);
    return path;
}

static const char *raw_file(const char *file, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* Load path; expect failure with a message holding both fragments. */
static void expect_bad(fe_sandbox *sb, const char *path, const char *a, const char *b)
{
    fe_error err = {0};
    fe_machine m;
    if (fe_machine_load(sb, path, &m, &err) == FE_OK)
        fail_msg("%s loaded but should not have", path);
    assert_int_equal(err.code, FE_EINPUT);
    assert_contains(err.message, a);
    if (b)
        assert_contains(err.message, b);
}

static void machine_errors(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fe_test_sim.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    fe_sandbox *sb = sandbox();
    fe_error err = {0};
    fe_machine m;

    /* The template itself is fine. */
    char ok[128];
    snprintf(ok, sizeof ok, "%s", machine_file("ok.lua", NULL, NULL));
    if (fe_machine_load(sb, ok, &m, &err) != FE_OK)
        fail_msg("%s", err.message);
    assert_near(m.vector_flops[FE_F32], 8e12);
    assert_near(fe_machine_flops(&m, FE_OP_ADD, FE_F16), 8e12);     /* falls back to f32 */
    assert_near(fe_machine_flops(&m, FE_OP_MATMUL, FE_F16), 128e12);

    expect_bad(sb, machine_file("missing.lua", "l3_bandwidth", NULL), "missing.lua",
               "missing field 'l3_bandwidth'");
    expect_bad(sb, machine_file("neg.lua", "l2_bandwidth", "l2_bandwidth = -1"), "neg.lua",
               "field 'l2_bandwidth' must be positive, got -1");
    expect_bad(sb, machine_file("neglaunch.lua", "launch_us", "launch_us = -5"),
               "field 'launch_us' must not be negative", NULL);
    expect_bad(sb, machine_file("type.lua", "registers", "registers = '255'"),
               "field 'registers' must be a number, got string", NULL);
    expect_bad(sb, machine_file("frac.lua", "registers", "registers = 25.5"),
               "field 'registers' must be an integer", NULL);
    expect_bad(sb, machine_file("bool.lua", "overlap", "overlap = 1"),
               "field 'overlap' must be true or false, got number", NULL);
    expect_bad(sb, machine_file("typo.lua", "l2_bytes", "l2_byte = 16 * 1024 * 1024"),
               "unknown field 'l2_byte' (did you mean 'l2_bytes'?)", NULL);
    expect_bad(sb, machine_file("extra.lua", NULL, "turbo = true"), "unknown field 'turbo'",
               "known fields: name");
    expect_bad(sb, machine_file("dtype.lua", "matrix_flops", "matrix_flops = {f32 = 1e12, fp16 = 2e12}"),
               "field 'matrix_flops' has unknown dtype 'fp16'", "f16");
    expect_bad(sb, machine_file("nof32.lua", "vector_flops", "vector_flops = {f16 = 1e12}"),
               "field 'vector_flops' must give f32", NULL);
    expect_bad(sb, machine_file("flopneg.lua", "vector_flops", "vector_flops = {f32 = 1e12, f16 = -1}"),
               "field 'vector_flops.f16' must be positive", NULL);
    expect_bad(sb, machine_file("big.lua", "l2_bytes", "l2_bytes = 64 * 1024 * 1024 * 1024"),
               "l2_bytes (68719476736) is larger than memory_bytes", NULL);
    expect_bad(sb, machine_file("slow.lua", "l2_bandwidth", "l2_bandwidth = 1e9"),
               "is below l3_bandwidth", NULL);
    expect_bad(sb, machine_file("regs.lua", "reserved_registers", "reserved_registers = 255"),
               "reserved_registers (255) must be below registers (255)", NULL);
    expect_bad(sb, machine_file("pos.lua", NULL, "'oops'"), "an entry without a field name",
               NULL);
    /* Sensible ranges: finite values that would overflow a time. */
    expect_bad(sb, machine_file("tile.lua", "tile_us", "tile_us = 1e308"),
               "field 'tile_us' is 1e+308, outside the range 0 to 1e6 us", NULL);
    expect_bad(sb, machine_file("crawl.lua", "l3_bandwidth", "l3_bandwidth = 1e-300"),
               "field 'l3_bandwidth' is 1e-300, outside the range 1e3 to 1e16 bytes/s", NULL);
    expect_bad(sb, machine_file("launch.lua", "launch_us", "launch_us = 2e6"),
               "field 'launch_us' is 2e+06, outside the range 0 to 1e6 us", NULL);
    expect_bad(sb, machine_file("flops.lua", "vector_flops", "vector_flops = {f32 = 1e19}"),
               "field 'vector_flops.f32' is 1e+19, outside the range 1e3 to 1e18 FLOP/s", NULL);
    expect_bad(sb, machine_file("huge.lua", "l2_bytes", "l2_bytes = 2 * 1024^4"),
               "field 'l2_bytes' is 2.19902e+12, outside the range 1 byte to 1 TiB", NULL);
    /* Text printed in reports: no control characters, valid UTF-8. */
    expect_bad(sb, machine_file("nl.lua", "name", "name = 'g\\nu'"),
               "field 'name' holds a control character (byte 2 is 0x0a)", NULL);
    expect_bad(sb, machine_file("nul.lua", NULL, "description = 'a\\0b'"),
               "field 'description' holds a control character (byte 2 is 0x00)", NULL);
    expect_bad(sb, machine_file("esc.lua", NULL, "description = '\\27[31mred'"),
               "field 'description' holds a control character (byte 1 is 0x1b)", NULL);
    expect_bad(sb, machine_file("utf.lua", "name", "name = 'g\\xffu'"),
               "field 'name' is not valid UTF-8 (byte 2)", NULL);
    fe_machine named;
    if (fe_machine_load(sb, machine_file("uni.lua", "name", "name = 'gc\\u{fc}'"), &named, &err))
        fail_msg("%s", err.message);
    assert_string_equal(named.name, "gc\xc3\xbc");
    expect_bad(sb, raw_file("syntax.lua", "return {\n  name = 'x',\n  l2_bytes = ,\n}\n"),
               "syntax.lua:3:", "unexpected symbol");
    expect_bad(sb, raw_file("num.lua", "return 42\n"), "must return a table of fields, got number",
               NULL);
    expect_bad(sb, raw_file("io.lua", "local f = io.open('/etc/passwd')\nreturn {}\n"),
               "io.lua:1:", "undefined global 'io'");
    expect_bad(sb, raw_file("loop.lua", "while true do end\nreturn {}\n"),
               "instruction budget", NULL);
    expect_bad(sb, raw_file("hog.lua", "local s = 'x'\nwhile true do s = s .. s end\n"),
               "memory cap", NULL);
    /* A metatable on the returned table is never consulted. */
    const char *meta = raw_file("meta.lua",
                                "return setmetatable({}, {__index = function() error('ran') end,"
                                " __pairs = function() error('ran') end})\n");
    expect_bad(sb, meta, "missing field 'name'", NULL);
    /* After all that the sandbox still loads a good machine. */
    if (fe_machine_load(sb, ok, &m, &err) != FE_OK)
        fail_msg("%s", err.message);

    /* Names that resolve nowhere list the shipped machines. */
    expect_bad(sb, "nosuch", "machine 'nosuch' not found", "known machines: gcu, gcu_big, h200, host");

    /* fe_machine_check applies the same rules to machines built in C. */
    fe_machine c = seed_machine();
    c.l3_bandwidth = -3;
    assert_int_equal(fe_machine_check(&c, "c", &err), FE_EINPUT);
    assert_contains(err.message, "c: field 'l3_bandwidth' must be positive");
    c = seed_machine();
    strcpy(c.name, "tab\there");
    assert_int_equal(fe_machine_check(&c, "c", &err), FE_EINPUT);
    assert_contains(err.message, "field 'name' holds a control character");

    /* By name alone: only lua/machines, never a path. */
    assert_int_equal(fe_machine_load_shipped(sb, "gcu_big", &m, &err), FE_OK);
    assert_string_equal(m.name, "gcu_big");
    assert_int_equal(fe_machine_load_shipped(sb, ok, &m, &err), FE_EINPUT);
    assert_contains(err.message, "is not a machine name");
    assert_int_equal(fe_machine_load_shipped(sb, "mygcu", &m, &err), FE_EINPUT);
    assert_contains(err.message, "no machine named 'mygcu' in ");
    assert_contains(err.message, "(known machines: gcu, gcu_big, h200, host)");

    fe_sandbox_free(sb);
}

/* Runs even when an assertion failed part way. */
static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[128];
    if (!tmpdir[0])
        return 0;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(silu_mul),
        cmocka_unit_test(tlf_split),
        cmocka_unit_test(broadcast_reread),
        cmocka_unit_test(partial_reads),
        cmocka_unit_test(diamond),
        cmocka_unit_test(register_spill),
        cmocka_unit_test(collective),
        cmocka_unit_test(unfused_matches_groups),
        cmocka_unit_test(determinism),
        cmocka_unit_test(writers),
        cmocka_unit_test(llama_tlf),
        cmocka_unit_test(afe_then_tlf),
        cmocka_unit_test(bad_groups),
        cmocka_unit_test(l2_occupancy),
        cmocka_unit_test(limits),
        cmocka_unit_test(labels),
        cmocka_unit_test(plan_files),
        cmocka_unit_test(shipped_machines),
        cmocka_unit_test_teardown(machine_errors, remove_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
