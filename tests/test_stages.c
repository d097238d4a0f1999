/* test_stages.c: column reductions and concats in fused groups.
 *
 * The fused executor folds a column reduction (sum, mean, amax, amin over
 * the leading axes) into per-thread column accumulators (fused_run.c); a
 * group whose later members read one, or read a concat, runs as programs
 * in turn, cut there (kernels/cpu/group_stages.c): a concat's operands are
 * written into their parts of it by one program, its readers run in the
 * next. A group whose outputs differ in shape is a program per shape.
 * Every case runs as one group and must agree with the unfused reference
 * kernels, and its "how" line must say how it ran: one program, programs
 * in turn, or op by op with the reason. */
#include <math.h>

#include "testlib.h"
#include "execlib.h"

#include "choice.h"
#include "exec.h"
#include "group.h"
#include "legality.h"
#include "plan.h"

/* Run json's nodes as one group (TLF split `split`) against the reference. */
static void one_group(const char *json, int split, const char *how)
{
    fe_graph *g = tl_graph_q(json);
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_AUTO, split);
    tl_agree(g, p, fe_node_name(g, fe_graph_node(g, 0)), how);
    fe_plan_free(p);
    fe_graph_free(g);
}

/* A column mean stored beside full-size results: one program, whose mean
 * is complete only when both threads' rows and every TLF part are in. */
static void stored_only(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [300, 70], 'dtype': '%s', 'kind': 'input'}},"
        " 'nodes': [{'name': 'e', 'op': 'exp', 'inputs': ['x'], 'outputs': ['t0']},"
        "  {'name': 'm', 'op': '%s', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0], 'keepdim': %s}},"
        "  {'name': 'r', 'op': 'sum', 'inputs': ['t0'], 'outputs': ['t2'], 'attrs': {'axes': [1], 'keepdim': true}},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['t0', 't2'], 'outputs': ['t3']}],"
        " 'outputs': ['t1', 't3']}";
    const char *ops[] = {"mean", "sum", "amax", "amin"};
    char buf[2048];
    for (int k = 0; k < 4; k++)
        for (int split = 1; split <= 3; split += 2) {
            snprintf(buf, sizeof buf, json, "f32", ops[k], k % 2 ? "false" : "true");
            one_group(buf, split, "fused_rows: 4 ops in");
        }
    snprintf(buf, sizeof buf, json, "f16", "mean", "true");   /* rounded to f16 once, at the end */
    one_group(buf, 1, "fused_rows: 4 ops in");
}

/* Batch statistics: c = x - mean_0(x); v = mean_0(c * c); y = c * rsqrt(v +
 * eps), over the two leading axes of a rank-3 tensor, the means without
 * keepdim (read back broadcast on the trailing axis). Three stages: the
 * second and third compute c again. */
static void staged(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [6, 100, 33], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'mu', 'op': 'mean', 'inputs': ['x'], 'outputs': ['t0'], 'attrs': {'axes': [0, 1]}},"
        "  {'name': 'c', 'op': 'sub', 'inputs': ['x', 't0'], 'outputs': ['t1']},"
        "  {'name': 'sq', 'op': 'mul', 'inputs': ['t1', 't1'], 'outputs': ['t2']},"
        "  {'name': 'v', 'op': 'mean', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axes': [0, 1]}},"
        "  {'name': 've', 'op': 'add', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'scalar': 1e-05}},"
        "  {'name': 'rs', 'op': 'rsqrt', 'inputs': ['t4'], 'outputs': ['t5']},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['t1', 't5'], 'outputs': ['t6']}],"
        " 'outputs': ['t6']}";
    /* rsqrt(v + eps) is one row broadcast to every row: written by a
     * program of its own rather than computed again at every point */
    one_group(json, 1, "fused_rows: 4 programs in turn, in 4 stages");
    one_group(json, 2, "fused_rows: 4 programs in turn, in 4 stages");
}

/* A softmax down the columns written out (max, subtract, exp, sum,
 * divide), and the sum of two column statistics beside it: the last stage
 * has outputs of two shapes, so it is two programs. */
static void column_softmax(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [257, 40], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'mx', 'op': 'amax', 'inputs': ['x'], 'outputs': ['t0'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'sh', 'op': 'sub', 'inputs': ['x', 't0'], 'outputs': ['t1']},"
        "  {'name': 'ex', 'op': 'exp', 'inputs': ['t1'], 'outputs': ['t2']},"
        "  {'name': 'su', 'op': 'sum', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'sm', 'op': 'div', 'inputs': ['t2', 't3'], 'outputs': ['t4']},"
        "  {'name': 'both', 'op': 'add', 'inputs': ['t0', 't3'], 'outputs': ['t5']}],"
        " 'outputs': ['t4', 't5']}";
    one_group(json, 1, "fused_rows: 4 programs in turn, in 3 stages");
}

/* Outputs of two shapes and no column reduction: a per-column weight
 * scaled (stored, [1, N]) and applied to x (stored, [M, N]). */
static void shapes(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [128, 64], 'dtype': 'f32', 'kind': 'input'},"
        "  'w': {'shape': [1, 64], 'dtype': 'f32', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'w2', 'op': 'mul', 'inputs': ['w'], 'outputs': ['t0'], 'attrs': {'scalar': 2.0}},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['x', 'w'], 'outputs': ['t1']},"
        "  {'name': 'cm', 'op': 'sum', 'inputs': ['t0'], 'outputs': ['t2'], 'attrs': {'axes': [0]}}],"
        " 'outputs': ['t0', 't1', 't2']}";
    one_group(json, 1, "fused_rows: 2 programs, for outputs of different shapes");
}

/* What stays op by op: axes neither leading nor trailing, and a column
 * reduction inside a matmul's epilogue. */
static void refused(void **state)
{
    (void)state;
    one_group("{'format': 'fuseeng.model/1', 'tensors': {"
              "  'x': {'shape': [4, 5, 6], 'dtype': 'f32', 'kind': 'input'}},"
              " 'nodes': [{'name': 'e', 'op': 'exp', 'inputs': ['x'], 'outputs': ['t0']},"
              "  {'name': 'm', 'op': 'sum', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0, 2]}}],"
              " 'outputs': ['t1']}",
              1, "reduces axes that are neither the leading nor the trailing ones");
    one_group("{'format': 'fuseeng.model/1', 'tensors': {"
              "  'a': {'shape': [32, 16], 'dtype': 'f32', 'kind': 'input'},"
              "  'b': {'shape': [16, 24], 'dtype': 'f32', 'kind': 'weight'}},"
              " 'nodes': [{'name': 'mm', 'op': 'matmul', 'inputs': ['a', 'b'], 'outputs': ['t0']},"
              "  {'name': 'm', 'op': 'mean', 'inputs': ['t0'], 'outputs': ['t1'], 'attrs': {'axes': [0]}}],"
              " 'outputs': ['t1']}",
              1, NULL);
}

/* LLaMA's rotary embedding: rotate_half(x) = concat(-x2, x1) along the
 * last axis, then x * cos + rotate_half(x) * sin. The operands' program
 * writes the two halves of the concat, the next reads it. In f16 (each
 * value rounded where the reference rounds it) and f32. */
static void rope(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [3, 40, 64], 'dtype': '%s', 'kind': 'input'},"
        "  'cos': {'shape': [40, 64], 'dtype': '%s', 'kind': 'weight'},"
        "  'sin': {'shape': [40, 64], 'dtype': '%s', 'kind': 'weight'}},"
        " 'nodes': [{'name': 'xc', 'op': 'mul', 'inputs': ['x', 'cos'], 'outputs': ['t0']},"
        "  {'name': 'x1', 'op': 'slice', 'inputs': ['x'], 'outputs': ['t1'], 'attrs': {'axis': -1, 'start': 0, 'end': 32}},"
        "  {'name': 'x2', 'op': 'slice', 'inputs': ['x'], 'outputs': ['t2'], 'attrs': {'axis': -1, 'start': 32, 'end': 64}},"
        "  {'name': 'nx2', 'op': 'neg', 'inputs': ['t2'], 'outputs': ['t3']},"
        "  {'name': 'rot', 'op': 'concat', 'inputs': ['t3', 't1'], 'outputs': ['t4'], 'attrs': {'axis': -1}},"
        "  {'name': 'rs', 'op': 'mul', 'inputs': ['t4', 'sin'], 'outputs': ['t5']},"
        "  {'name': 'y', 'op': 'add', 'inputs': ['t0', 't5'], 'outputs': ['t6']}],"
        " 'outputs': ['t6']}";
    char buf[2048];
    snprintf(buf, sizeof buf, json, "f16", "f16", "f16");
    one_group(buf, 1, "fused_rows: 2 programs in turn, in 2 stages");
    snprintf(buf, sizeof buf, json, "f32", "f32", "f32");
    one_group(buf, 3, "fused_rows: 2 programs in turn, in 2 stages");
}

/* Concats along a row axis, along a middle axis (its parts are runs of
 * rows: two row axes), along the last, of mixed dtypes (an f16 operand written into the
 * f32 concat), with the concat also an output; and one whose operand is a
 * group input, which has no program to write it and runs op by op. */
static void concats(void **state)
{
    (void)state;
    const char *json =
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'a': {'shape': %s, 'dtype': 'f16', 'kind': 'input'},"
        "  'b': {'shape': %s, 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'ea', 'op': 'exp', 'inputs': ['a'], 'outputs': ['t0']},"
        "  {'name': 'rb', 'op': 'relu', 'inputs': ['b'], 'outputs': ['t1']},"
        "  {'name': 'cat', 'op': 'concat', 'inputs': ['t0', 't1', 't0'], 'outputs': ['t2'], 'attrs': {'axis': %d}},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'scalar': 3.0}}],"
        " 'outputs': ['t3'%s]}";
    const struct {
        const char *a, *b;
        int axis;
        const char *also;
    } cases[] = {
        {"[30, 70]", "[50, 70]", 0, ""},
        {"[4, 30, 70]", "[4, 5, 70]", 1, ", 't2'"},
        {"[4, 3, 70]", "[4, 3, 20]", -1, ""},
    };
    char buf[2048];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(buf, sizeof buf, json, cases[i].a, cases[i].b, cases[i].axis, cases[i].also);
        one_group(buf, 1, "fused_rows: 3 programs in turn, in 2 stages");   /* a and b differ */
    }
    /* a softmax keeps the columns to the last axis: rows over two axes
     * whose strides in the concat do not merge */
    one_group("{'format': 'fuseeng.model/1', 'tensors': {"
              "  'a': {'shape': [4, 30, 70], 'dtype': 'f32', 'kind': 'input'},"
              "  'b': {'shape': [4, 5, 70], 'dtype': 'f32', 'kind': 'input'}},"
              " 'nodes': [{'name': 'sa', 'op': 'softmax', 'inputs': ['a'], 'outputs': ['t0'], 'attrs': {'axis': -1}},"
              "  {'name': 'rb', 'op': 'relu', 'inputs': ['b'], 'outputs': ['t1']},"
              "  {'name': 'cat', 'op': 'concat', 'inputs': ['t1', 't0'], 'outputs': ['t2'], 'attrs': {'axis': 1}},"
              "  {'name': 'y', 'op': 'mul', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'scalar': 3.0}}],"
              " 'outputs': ['t3']}",
              1, "fused_rows: 3 programs in turn, in 2 stages");
    one_group("{'format': 'fuseeng.model/1', 'tensors': {"
              "  'a': {'shape': [8, 16], 'dtype': 'f32', 'kind': 'input'}},"
              " 'nodes': [{'name': 'ea', 'op': 'exp', 'inputs': ['a'], 'outputs': ['t0']},"
              "  {'name': 'cat', 'op': 'concat', 'inputs': ['t0', 'a'], 'outputs': ['t1'], 'attrs': {'axis': 0}},"
              "  {'name': 'y', 'op': 'neg', 'inputs': ['t1'], 'outputs': ['t2']}],"
              " 'outputs': ['t2']}",
              1, "per_op");
}

/* AUTO times programs in turn against op by op and keeps the faster: a
 * chain of eight sines feeding four stages is computed four times in
 * turn, once op by op. Which wins is the host's to say (op by op by about
 * 3x on a 2-core AVX2 EPYC; fused by 2x on an AVX-512 Xeon, whose sines
 * are cheap next to op by op's fifteen tensors): the group's line must
 * say both times, and its choice must follow them (op by op only when
 * faster by more than the guard's 5% of noise). */
static void measured(void **state)
{
    (void)state;
    char json[4096];
    int len = snprintf(json, sizeof json,
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [512, 1024], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 's0', 'op': 'sin', 'inputs': ['x'], 'outputs': ['h0']}");
    for (int k = 1; k < 8; k++)
        len += snprintf(json + len, sizeof json - (size_t)len,
                        ", {'name': 's%d', 'op': 'sin', 'inputs': ['h%d'], 'outputs': ['h%d']}", k, k - 1, k);
    snprintf(json + len, sizeof json - (size_t)len,
        ", {'name': 'm1', 'op': 'mean', 'inputs': ['h7'], 'outputs': ['t1'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'a', 'op': 'sub', 'inputs': ['h7', 't1'], 'outputs': ['t2']},"
        "  {'name': 'sq', 'op': 'mul', 'inputs': ['t2', 't2'], 'outputs': ['t3']},"
        "  {'name': 'm2', 'op': 'mean', 'inputs': ['t3'], 'outputs': ['t4'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'b', 'op': 'div', 'inputs': ['t2', 't4'], 'outputs': ['t5']},"
        "  {'name': 'm3', 'op': 'amax', 'inputs': ['t5'], 'outputs': ['t6'], 'attrs': {'axes': [0], 'keepdim': true}},"
        "  {'name': 'y', 'op': 'sub', 'inputs': ['t5', 't6'], 'outputs': ['t7']}],"
        " 'outputs': ['t7']}");
    fe_graph *g = tl_graph_q(json);
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_AUTO, 1);
    char how[4096];
    tl_agree_how(g, p, "s0", how, sizeof how);
    double fused, perop;
    const char *slower = strstr(how, "measured slower fused than its ops one by one: ");
    const char *kept = strstr(how, "; kept over per_op: ");
    if (slower) {
        assert_int_equal(sscanf(slower, "measured slower fused than its ops one by one: %lf vs %lf ms",
                                &fused, &perop), 2);
        assert_contains(slower, "(fused, it ran fused_rows: 4 programs in turn");
        assert_true(perop < 0.95 * fused);
    } else {
        if (!kept)
            fail_msg("no measurement in '%s'", how);
        assert_int_equal(sscanf(kept, "; kept over per_op: %lf vs %lf ms", &fused, &perop), 2);
        assert_true(strncmp(how, "fused_rows: 4 programs in turn", 30) == 0);
        assert_false(perop < 0.95 * fused);
    }
    fe_plan_free(p);
    fe_graph_free(g);
}

/* The cut values' buffers: scratch taken for the run and given back, or
 * the caller's when it gave one, which stays its own (the run overwrote a
 * given buffer and cleared it, and the caller's memory leaked). The batch
 * statistics of `staged`, run as one kernels/cpu group on a session's
 * buffers, against the reference. */
static void cut_buffers(void **state)
{
    (void)state;
    fe_graph *g = tl_graph_q(
        "{'format': 'fuseeng.model/1', 'tensors': {"
        "  'x': {'shape': [6, 100, 33], 'dtype': 'f32', 'kind': 'input'}},"
        " 'nodes': [{'name': 'mu', 'op': 'mean', 'inputs': ['x'], 'outputs': ['t0'], 'attrs': {'axes': [0, 1]}},"
        "  {'name': 'c', 'op': 'sub', 'inputs': ['x', 't0'], 'outputs': ['t1']},"
        "  {'name': 'sq', 'op': 'mul', 'inputs': ['t1', 't1'], 'outputs': ['t2']},"
        "  {'name': 'v', 'op': 'mean', 'inputs': ['t2'], 'outputs': ['t3'], 'attrs': {'axes': [0, 1]}},"
        "  {'name': 'y', 'op': 'mul', 'inputs': ['t1', 't3'], 'outputs': ['t6']}],"
        " 'outputs': ['t6']}");
    fe_error err = {0};
    int32_t nodes[5] = {0, 1, 2, 3, 4};
    fe_k_group *gr = fe_k_group_new(g, nodes, 5, 1, FE_K_CHOICE_FUSED, &err);
    assert_non_null(gr);
    assert_contains(fe_k_group_how(gr), "programs in turn");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_exec_result *ref = NULL;
    assert_int_equal(fe_exec_reference(ex, &ref, &err), FE_OK);
    fe_k_tensor *bufs = fe_exec_buffers(ex);
    int32_t t0 = fe_graph_find_tensor(g, "t0"), t6 = fe_graph_find_tensor(g, "t6");
    for (int given = 0; given < 2; given++) {
        assert_int_equal(fe_exec_alloc(ex, t6, &err), FE_OK);
        if (given)
            assert_int_equal(fe_exec_alloc(ex, t0, &err), FE_OK);
        void *mine = bufs[t0].data;
        assert_int_equal(fe_k_group_run(gr, bufs, &err), FE_OK);
        assert_ptr_equal(bufs[t0].data, mine);   /* NULL again, or still the caller's */
        const float *got = bufs[t6].data, *want = ref->outputs[0].data;
        for (int64_t i = 0; i < fe_graph_tensor(g, t6)->numel; i++)
            assert_true(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])));
        fe_exec_release(ex, t0);
        fe_exec_release(ex, t6);
    }
    fe_exec_result_free(ref);
    fe_exec_free(ex);
    fe_k_group_free(gr);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(stored_only), cmocka_unit_test(staged),
                                       cmocka_unit_test(column_softmax), cmocka_unit_test(shapes),
                                       cmocka_unit_test(refused), cmocka_unit_test(rope),
                                       cmocka_unit_test(concats), cmocka_unit_test(measured),
                                       cmocka_unit_test(cut_buffers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
