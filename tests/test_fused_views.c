/* test_fused_views.c: views of a fused group's inputs read as strided loads
 * (kernels/group/fused_views.c). Each model is run as one group and checked
 * against the per-op reference kernels on random data: every view kind,
 * negative and stepped slices, broadcast with transpose, expand along the
 * columns, f16 / bf16 sources, row ops over a transposed input, views that
 * leave the group, reshapes of computed values only stored (written from their input's
 * values) or adding or dropping leading 1s (read as their input), groups of views only
 * whose outputs differ in shape, views of computed values read by the next
 * of programs in turn, TLF splits bit-identical to the unsplit run, and the
 * fallbacks with the reason they give. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "choice.h"
#include "compare.h"
#include "exec.h"
#include "plan.h"
#include "plan_build.h"

static char json[1 << 15];

/* Run the model (every node in one group, split 1 and 3) against the
 * reference; the group's how line must contain `how`. */
static void check(const char *tensors, const char *nodes, const char *outputs, const char *how)
{
    fe_error err = {0};
    snprintf(json, sizeof json,
             "{\"format\":\"fuseeng.model/1\",\"name\":\"v\",\"tensors\":{%s},\"nodes\":[%s],"
             "\"outputs\":[%s]}", tensors, nodes, outputs);
    fe_graph *g = tl_graph(json);
    fe_exec_opts o = {.seed = 7};
    fe_exec *ex = fe_exec_new(g, &o, &err);
    assert_non_null(ex);
    int32_t *lab = calloc((size_t)g->nnodes + 1, sizeof(int32_t));
    fe_exec_result *ref = NULL, *got[2] = {NULL, NULL};
    /* The reference runs after the first plan run, so that an output the
     * plan fails to write cannot hold the reference's values from a
     * recycled buffer. */
    for (int k = 0; k < 2; k++) {
        if (k == 1)
            assert_int_equal(fe_exec_reference(ex, &ref, &err), FE_OK);
        fe_plan *p = fe_plan_from_labels(g, lab, &err);
        if (!p)
            fail_msg("plan: %s\n%s", err.message, json);
        p->groups[0].kernel = FE_K_CHOICE_AUTO;
        p->groups[0].split = k ? 3 : 1;
        if (fe_exec_plan(ex, p, &got[k], &err))
            fail_msg("run: %s\n%s", err.message, json);
        if (!strstr(got[k]->how[0], how))
            fail_msg("'%s' does not contain '%s'\n%s", got[k]->how[0], how, json);
        fe_plan_free(p);
    }
    for (int k = 0; k < 2; k++) {
        fe_cmp c;
        assert_int_equal(fe_exec_compare(g, ref, got[k], &c, &err), FE_OK);
        for (int i = 0; i < c.n; i++)
            if (!c.items[i].ok)
                fail_msg("output %s differs: max abs %g at [%lld] (%s)\n%s",
                         fe_tensor_name(g, fe_graph_tensor(g, c.items[i].tensor)), c.items[i].max_abs,
                         (long long)c.items[i].worst, got[k]->how[0], json);
        fe_cmp_free(&c);
    }
    for (int i = 0; i < ref->noutputs; i++)
        if (memcmp(got[0]->outputs[i].data, got[1]->outputs[i].data,
                   (size_t)fe_graph_tensor(g, ref->tensors[i])->bytes))
            fail_msg("split 3 is not bit-identical to split 1\n%s", json);
    fe_exec_result_free(ref);
    fe_exec_result_free(got[0]);
    fe_exec_result_free(got[1]);
    free(lab);
    fe_exec_free(ex);
    fe_graph_free(g);
}

typedef struct vcase {
    const char *tensors, *nodes, *outputs, *how;
} vcase;

static void run_cases(const vcase *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(c[i].tensors, c[i].nodes, c[i].outputs, c[i].how);
}

#define T(name, shape, dt) "\"" name "\":{\"shape\":" shape ",\"dtype\":\"" dt "\",\"kind\":\"input\"}"
#define N(name, op, ins, out, attrs) \
    "{\"name\":\"" name "\",\"op\":\"" op "\",\"inputs\":[" ins "],\"outputs\":[\"" out "\"],\"attrs\":{" attrs "}}"

static const vcase test_transpose_broadcast_cases[] = {
    /* permute(0, 2, 1) plus a bias along the new last axis: columns gathered */
    {T("x", "[4,6,8]", "f32") "," T("b", "[6]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "\"perm\":[0,2,1]") ","
     N("a", "add", "\"xt\",\"b\"", "y", "") "," N("e", "exp", "\"y\"", "z", ""),
     "\"z\"", "fused_rows"},
    /* a transpose that keeps the last axis: rows strided, columns read in place */
    {T("x", "[5,7,16]", "f32") "," T("w", "[7,5,16]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "\"perm\":[1,0,2]") ","
     N("m", "mul", "\"xt\",\"w\"", "y", ""),
     "\"y\"", "fused_rows"},
    /* large enough for threads and several tiles per row */
    {T("x", "[40,50,96]", "f32") "," T("b", "[96,1,50]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "\"perm\":[2,0,1]") ","
     N("a", "add", "\"xt\",\"b\"", "y", "") "," N("r", "relu", "\"y\"", "z", ""),
     "\"z\"", "fused_rows"},
    /* default perm (reversed axes), both operands transposed */
    {T("x", "[3,4,5]", "f32") "," T("u", "[5,4,3]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "") "," N("s", "sub", "\"xt\",\"u\"", "y", ""),
     "\"y\"", "fused_rows"},
};

static void test_transpose_broadcast(void **state)
{
    (void)state;
    run_cases(test_transpose_broadcast_cases, sizeof test_transpose_broadcast_cases / sizeof test_transpose_broadcast_cases[0]);
}

static const vcase test_slices_cases[] = {
    /* negative start, step 2, on the last axis; and a row-axis slice */
    {T("x", "[5,20]", "f32") "," T("z", "[5,7]", "f32"),
     N("s", "slice", "\"x\"", "xs", "\"axis\":1,\"start\":-15,\"end\":19,\"step\":2") ","
     N("m", "mul", "\"xs\",\"z\"", "y", ""),
     "\"y\"", "fused_rows"},
    {T("x", "[9,12]", "f32"),
     N("s", "slice", "\"x\"", "a", "\"axis\":0,\"start\":1,\"end\":-1,\"step\":3") ","
     N("s2", "slice", "\"a\"", "b", "\"axis\":-1,\"start\":4,\"end\":null") ","
     N("n", "neg", "\"b\"", "y", ""),
     "\"y\"", "fused_rows"},
    /* the RoPE halves: x1 = x[..., :8], x2 = x[..., 8:], y = x1 * c - x2 */
    {T("x", "[2,3,16]", "f32") "," T("c", "[3,8]", "f32"),
     N("s1", "slice", "\"x\"", "x1", "\"axis\":2,\"start\":0,\"end\":8") ","
     N("s2", "slice", "\"x\"", "x2", "\"axis\":2,\"start\":8,\"end\":16") ","
     N("m", "mul", "\"x1\",\"c\"", "p", "") "," N("d", "sub", "\"p\",\"x2\"", "y", ""),
     "\"y\"", "fused_rows"},
};

static void test_slices(void **state)
{
    (void)state;
    run_cases(test_slices_cases, sizeof test_slices_cases / sizeof test_slices_cases[0]);
}

static const vcase test_reshape_expand_cases[] = {
    /* split an axis, then transpose (the heads of attention) */
    {T("x", "[6,32]", "f32") "," T("b", "[4,6,8]", "f32"),
     N("r", "reshape", "\"x\"", "h", "\"shape\":[6,4,8]") ","
     N("t", "transpose", "\"h\"", "ht", "\"perm\":[1,0,2]") ","
     N("a", "add", "\"ht\",\"b\"", "y", ""),
     "\"y\"", "fused_rows"},
    /* a reshape that merges axes still adjacent in memory after a slice */
    {T("x", "[4,3,10]", "f32"),
     N("s", "slice", "\"x\"", "a", "\"axis\":0,\"start\":1,\"end\":3") ","
     N("r", "reshape", "\"a\"", "b", "\"shape\":[60]") "," N("e", "exp", "\"b\"", "y", ""),
     "\"y\"", "fused_rows"},
    /* expand along the rows and along the columns (every column one element) */
    {T("x", "[1,8]", "f32") "," T("c", "[5,1]", "f32") "," T("w", "[5,8]", "f32"),
     N("e1", "expand", "\"x\"", "xe", "\"shape\":[5,8]") ","
     N("e2", "expand", "\"c\"", "ce", "\"shape\":[5,8]") ","
     N("n", "neg", "\"ce\"", "cn", "") "," N("m", "mul", "\"xe\",\"w\"", "p", "") ","
     N("a", "add", "\"p\",\"cn\"", "y", ""),
     "\"y\"", "fused_rows"},
};

static void test_reshape_expand(void **state)
{
    (void)state;
    run_cases(test_reshape_expand_cases, sizeof test_reshape_expand_cases / sizeof test_reshape_expand_cases[0]);
}

static const vcase test_dtypes_rows_stores_cases[] = {
    /* f16 and bf16 sources read through a transpose and a slice */
    {T("x", "[8,6]", "f16") "," T("y", "[6,16]", "bf16"),
     N("t", "transpose", "\"x\"", "xt", "") ","
     N("s", "slice", "\"y\"", "ys", "\"axis\":1,\"start\":1,\"end\":16,\"step\":2") ","
     N("c", "cast", "\"ys\"", "yc", "\"dtype\":\"f16\"") ","
     N("m", "mul", "\"xt\",\"yc\"", "z", ""),
     "\"z\"", "fused_rows"},
    /* a softmax and an rms_norm over the columns of a transposed input */
    {T("x", "[3,16,10]", "f32") "," T("w", "[16]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "\"perm\":[0,2,1]") ","
     N("s", "softmax", "\"xt\"", "p", "") "," N("r", "rms_norm", "\"xt\",\"w\"", "q", ""),
     "\"p\",\"q\"", "whole rows"},
    /* a lone view group is one fused copy, of bytes as they are: rows of a
     * transpose, columns gathered by a full reversal or a stepped slice,
     * in each width of element */
    {T("x", "[6,64]", "f16"),
     N("r", "reshape", "\"x\"", "h", "\"shape\":[6,4,16]") ","
     N("t", "transpose", "\"h\"", "ht", "\"perm\":[1,0,2]"),
     "\"ht\"", "bytes copied as they are"},
    {T("x", "[3,5,7]", "bf16"), N("t", "transpose", "\"x\"", "xt", ""),
     "\"xt\"", "bytes copied as they are"},
    {T("x", "[4,9,10]", "i64"),
     N("s", "slice", "\"x\"", "xs", "\"axis\":2,\"start\":-9,\"end\":10,\"step\":3") ","
     N("t", "transpose", "\"xs\"", "y", "\"perm\":[1,0,2]"),
     "\"y\"", "bytes copied as they are"},
    {T("x", "[5,12]", "bool"), N("t", "transpose", "\"x\"", "xt", ""),
     "\"xt\"", "bytes copied as they are"},
    {T("x", "[2,8,6]", "f32"),
     N("s", "slice", "\"x\"", "xs", "\"axis\":1,\"start\":1,\"end\":7") ","
     N("t", "transpose", "\"xs\"", "y", "\"perm\":[0,2,1]"),
     "\"y\"", "bytes copied as they are"},
    /* a view also read in the group is stored */
    {T("x", "[6,64]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "") "," N("g", "gelu", "\"xt\"", "y", ""),
     "\"xt\",\"y\"", "fused_rows"},
};

static void test_dtypes_rows_stores(void **state)
{
    (void)state;
    run_cases(test_dtypes_rows_stores_cases, sizeof test_dtypes_rows_stores_cases / sizeof test_dtypes_rows_stores_cases[0]);
}

static const vcase test_stored_reshapes_cases[] = {
    /* attention's merge of its heads: transpose, then a reshape no strided
     * load can express; stored, it is a store of the transposed values */
    {T("a", "[2,4,6,8]", "f16"),
     N("t", "transpose", "\"a\"", "at", "\"perm\":[0,2,1,3]") ","
     N("r", "reshape", "\"at\"", "f", "\"shape\":[2,6,32]"),
     "\"f\"", "fused_rows"},
    /* as torch.export writes it: a second reshape of that, both stored */
    {T("a", "[2,4,6,8]", "f32"),
     N("t", "transpose", "\"a\"", "at", "\"perm\":[0,2,1,3]") ","
     N("r", "reshape", "\"at\"", "f", "\"shape\":[2,6,32]") ","
     N("r2", "reshape", "\"f\"", "g", "\"shape\":[12,32]"),
     "\"f\",\"g\"", "fused_rows"},
    /* a computed value reshaped on its way out, also stored as itself */
    {T("x", "[6,10]", "f32") "," T("w", "[10]", "f32"),
     N("m", "mul", "\"x\",\"w\"", "p", "") "," N("e", "exp", "\"p\"", "q", "") ","
     N("r", "reshape", "\"q\"", "f", "\"shape\":[3,2,5,2]"),
     "\"q\",\"f\"", "fused_rows"},
    /* a row reduction's keepdim result reshaped away from its size-1 axis */
    {T("x", "[5,7,12]", "f32"),
     N("s", "amax", "\"x\"", "m", "\"axes\":[-1],\"keepdim\":true") ","
     N("d", "sub", "\"x\",\"m\"", "y", "") ","
     N("r", "reshape", "\"m\"", "mf", "\"shape\":[35]"),
     "\"y\",\"mf\"", "fused_rows"},
    /* LLaMA's RoPE: cos of a computed value unsqueezed to the heads' rank
     * and read there (leading 1s only: it broadcasts as its input) */
    {T("e", "[1,8,16]", "f32") "," T("q", "[1,4,8,16]", "f32"),
     N("c", "cos", "\"e\"", "co", "") "," N("u", "reshape", "\"co\"", "cu", "\"shape\":[1,1,8,16]") ","
     N("m", "mul", "\"q\",\"cu\"", "y", ""),
     "\"y\"", "fused_rows"},
    /* leading 1s dropped, read by a node and stored as well */
    {T("x", "[1,1,6,10]", "f32") "," T("w", "[6,10]", "f32"),
     N("e", "exp", "\"x\"", "p", "") "," N("r", "reshape", "\"p\"", "f", "\"shape\":[6,10]") ","
     N("a", "add", "\"f\",\"w\"", "y", ""),
     "\"y\",\"f\"", "fused_rows"},
};

static void test_stored_reshapes(void **state)
{
    (void)state;
    run_cases(test_stored_reshapes_cases, sizeof test_stored_reshapes_cases / sizeof test_stored_reshapes_cases[0]);
}

static const vcase test_view_outputs_cases[] = {
    /* GPT-2's qkv split: outputs of three shapes, no one domain; each is a
     * program of its own from the chain it is made through */
    {T("x", "[2,5,24]", "f16"),
     N("r", "reshape", "\"x\"", "h", "\"shape\":[2,5,3,8]") ","
     N("q", "slice", "\"h\"", "q", "\"axis\":2,\"start\":0,\"end\":1") ","
     N("k", "slice", "\"h\"", "k", "\"axis\":2,\"start\":1,\"end\":2") ","
     N("v", "slice", "\"h\"", "v", "\"axis\":2,\"start\":2,\"end\":3") ","
     N("qt", "transpose", "\"q\"", "qt", "\"perm\":[0,2,1,3]") ","
     N("kt", "transpose", "\"k\"", "kt", "\"perm\":[0,2,3,1]") ","
     N("vr", "reshape", "\"v\"", "vr", "\"shape\":[10,8]"),
     "\"qt\",\"kt\",\"vr\"", "views only, each of its 3 outputs a program of its own"},
    /* a view also read outside the group is one of the outputs */
    {T("x", "[4,6]", "i64"),
     N("t", "transpose", "\"x\"", "xt", "") "," N("s", "slice", "\"xt\"", "y", "\"axis\":0,\"start\":1,\"end\":5,\"step\":2"),
     "\"xt\",\"y\"", "views only, each of its 2 outputs"},
};

static void test_view_outputs(void **state)
{
    (void)state;
    run_cases(test_view_outputs_cases, sizeof test_view_outputs_cases / sizeof test_view_outputs_cases[0]);
}

static const vcase test_fallbacks_cases[] = {
    /* merging axes a transpose swapped is no strided load */
    {T("x", "[2,4,3,5]", "f32"),
     N("t", "transpose", "\"x\"", "xt", "\"perm\":[0,2,1,3]") ","
     N("r", "reshape", "\"xt\"", "f", "\"shape\":[2,3,20]") "," N("n", "neg", "\"f\"", "y", ""),
     "\"y\"", "node 'r' (reshape): reshapes a strided view across axes that are not adjacent"},
};

static const vcase test_computed_views_cases[] = {
    /* a view of a value computed in the group: the value is written out
     * and the next program reads the view of it */
    {T("x", "[6,5]", "f32"),
     N("e", "exp", "\"x\"", "e", "") "," N("t", "transpose", "\"e\"", "t", ""),
     "\"t\"", "fused_rows: 2 programs in turn, in 2 stages cut where column reductions, concats, "
     "views or broadcasts of computed values are read"},
    /* a size-1 axis inserted in the middle of a computed value it reads
     * (it broadcasts differently from its input), beside the value */
    {T("x", "[6,10]", "f32") "," T("u", "[6,4,10]", "f32"),
     N("e", "exp", "\"x\"", "p", "") "," N("r", "reshape", "\"p\"", "f", "\"shape\":[6,1,10]") ","
     N("m", "mul", "\"f\",\"u\"", "y", "") "," N("s", "sin", "\"p\"", "q", ""),
     "\"y\",\"q\"", "2 programs in turn"},
    /* a slice of a computed row statistic, then a strided transpose of a
     * sum feeding a row op, large enough for threads and TLF parts */
    {T("x", "[48,40,32]", "f32") "," T("w", "[48,32,40]", "f32"),
     N("a", "add", "\"x\",\"x\"", "s", "") "," N("t", "transpose", "\"s\"", "st", "\"perm\":[0,2,1]") ","
     N("m", "mul", "\"st\",\"w\"", "p", "") "," N("sm", "softmax", "\"p\"", "y", "\"axis\":-1") ","
     N("sl", "slice", "\"s\"", "h", "\"axis\":2,\"start\":0,\"end\":16,\"step\":2") ","
     N("e", "exp", "\"h\"", "z", ""),
     "\"y\",\"z\"", "programs in turn"},
    /* a view of a reshape that programs read as its computed source */
    {T("x", "[6,5]", "f32"),
     N("e", "exp", "\"x\"", "e", "") "," N("r", "reshape", "\"e\"", "f", "\"shape\":[1,6,5]") ","
     N("t", "transpose", "\"f\"", "t", "\"perm\":[0,2,1]") "," N("n", "neg", "\"t\"", "y", ""),
     "\"y\"", "2 programs in turn"},
};

static void test_computed_views(void **state)
{
    (void)state;
    run_cases(test_computed_views_cases, sizeof test_computed_views_cases / sizeof test_computed_views_cases[0]);
}

static void test_fallbacks(void **state)
{
    (void)state;
    run_cases(test_fallbacks_cases, sizeof test_fallbacks_cases / sizeof test_fallbacks_cases[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_broadcast),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_reshape_expand),
        cmocka_unit_test(test_dtypes_rows_stores),
        cmocka_unit_test(test_stored_reshapes),
        cmocka_unit_test(test_view_outputs),
        cmocka_unit_test(test_computed_views),
        cmocka_unit_test(test_fallbacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
