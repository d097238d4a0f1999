/* test_infer.c: shape and dtype inference for every op family, including the
 * corner cases real exports rely on. Each case builds a one-node model and
 * reads the output's shape and dtype (or the error). */
#include "testlib.h"
#include "ops.h"

/* Output of a one-node model as "[d0,d1] dtype", or "error: message". */
static const char *out_of(const char *tensors, const char *op, const char *inputs, const char *attrs)
{
    static char res[1200];
    char json[4096];
    snprintf(json, sizeof json,
             "{\"format\": \"fuseeng.model/1\", \"dims\": {\"S\": 16},"
             " \"tensors\": {%s},"
             " \"nodes\": [{\"name\": \"n\", \"op\": \"%s\", \"inputs\": [%s], \"outputs\": [\"y\"],"
             " \"attrs\": {%s}}], \"outputs\": [\"y\"]}",
             tensors, op, inputs, attrs ? attrs : "");
    fe_error err = {0};
    fe_graph *g = fe_load_model_buffer(json, strlen(json), "t.json", NULL, &err);
    if (!g) {
        snprintf(res, sizeof res, "error: %s", err.message);
        return res;
    }
    const fe_tensor *y = fe_graph_tensor(g, fe_graph_find_tensor(g, "y"));
    char s[160];
    snprintf(res, sizeof res, "%s %s", fe_shape_str(fe_tensor_shape(g, y), y->rank, s, sizeof s),
             fe_dtype_name(y->dtype));
    fe_graph_free(g);
    return res;
}

#define T(name, shape, dt) "\"" name "\": {\"shape\": " shape ", \"dtype\": \"" dt "\", \"kind\": \"input\"}"

static void elemwise(void **s)
{
    (void)s;
    assert_string_equal(out_of(T("x", "[2,3]", "f16"), "gelu", "\"x\"", "\"approximate\": \"tanh\""), "[2,3] f16");
    assert_string_equal(out_of(T("x", "[2,3]", "f32"), "cast", "\"x\"", "\"dtype\": \"bf16\""), "[2,3] bf16");
    assert_contains(out_of(T("x", "[2,3]", "f32"), "cast", "\"x\"", "\"dtype\": \"f64\""),
                    "attrs.dtype is \"f64\"; expected one of");
    assert_string_equal(out_of(T("x", "[]", "f32"), "relu", "\"x\"", NULL), "[] f32");
}

static void broadcast(void **s)
{
    (void)s;
    assert_string_equal(out_of(T("a", "[4,1,3]", "f32") "," T("b", "[5,1]", "f32"), "add", "\"a\",\"b\"", NULL),
                        "[4,5,3] f32");
    assert_string_equal(out_of(T("a", "[1]", "f32") "," T("b", "[2,3]", "f32"), "mul", "\"a\",\"b\"", NULL),
                        "[2,3] f32");
    /* Scalars: int tensor with a real scalar promotes, with an int it does not. */
    assert_string_equal(out_of(T("a", "[3]", "i64"), "mul", "\"a\"", "\"scalar\": 0.5"), "[3] f32");
    assert_string_equal(out_of(T("a", "[3]", "i64"), "sub", "\"a\"", "\"scalar\": 1"), "[3] i64");
    assert_string_equal(out_of(T("a", "[3]", "i64"), "sub", "\"a\"", "\"scalar\": 1.0"), "[3] f32");
    assert_string_equal(out_of(T("a", "[3]", "f16"), "sub", "\"a\"", "\"scalar\": 1, \"scalar_index\": 0"), "[3] f16");
    assert_contains(out_of(T("a", "[3]", "f16"), "sub", "\"a\"", "\"scalar\": 1, \"scalar_index\": 2"),
                    "attrs.scalar_index is 2; expected 0 or 1");
    assert_contains(out_of(T("a", "[3]", "f16"), "sub", "\"a\"", NULL), "takes 2 tensor inputs, or 1 and attrs.scalar");
    /* Promotion. */
    assert_string_equal(out_of(T("a", "[3]", "f16") "," T("b", "[3]", "bf16"), "add", "\"a\",\"b\"", NULL), "[3] f32");
    assert_string_equal(out_of(T("a", "[3]", "i32") "," T("b", "[3]", "f16"), "add", "\"a\",\"b\"", NULL), "[3] f16");
    assert_string_equal(out_of(T("a", "[3]", "bool") "," T("b", "[3]", "i8"), "maximum", "\"a\",\"b\"", NULL), "[3] i8");
    /* where: the condition shapes the result but not its dtype. */
    assert_string_equal(out_of(T("c", "[1,1,4,4]", "bool") "," T("a", "[]", "f16"), "where", "\"c\",\"a\"",
                               "\"scalar\": -65504.0"), "[1,1,4,4] f16");
    assert_string_equal(out_of(T("c", "[4,1]", "bool") "," T("a", "[3]", "f32") "," T("b", "[4,3]", "f32"),
                               "where", "\"c\",\"a\",\"b\"", NULL), "[4,3] f32");
}

#define XR T("x", "[2,3,4]", "f32")
static void reductions(void **s)
{
    (void)s;
    assert_string_equal(out_of(XR, "sum", "\"x\"", "\"axes\": [1]"), "[2,4] f32");
    assert_string_equal(out_of(XR, "mean", "\"x\"", "\"axes\": [-1], \"keepdim\": true"), "[2,3,1] f32");
    assert_string_equal(out_of(XR, "amax", "\"x\"", NULL), "[] f32");
    assert_string_equal(out_of(XR, "amin", "\"x\"", "\"axes\": [], \"keepdim\": true"), "[1,1,1] f32");
    assert_string_equal(out_of(XR, "sum", "\"x\"", "\"axes\": 2"), "[2,3] f32");
    assert_contains(out_of(XR, "sum", "\"x\"", "\"axes\": [3]"), "attrs.axes has axis 3, out of range for rank 3");
    assert_contains(out_of(XR, "sum", "\"x\"", "\"axes\": [0, -3]"), "names axis 0 twice");
    assert_string_equal(out_of(XR, "softmax", "\"x\"", "\"axis\": 1"), "[2,3,4] f32");
    assert_contains(out_of(XR, "log_softmax", "\"x\"", "\"axis\": 5"), "attrs.axis is 5, out of range");
    assert_string_equal(out_of(XR "," T("w", "[4]", "f32"), "rms_norm", "\"x\",\"w\"", "\"eps\": 1e-6"), "[2,3,4] f32");
    assert_string_equal(out_of(XR "," T("w", "[3,4]", "f32") "," T("b", "[4]", "f32"), "layer_norm",
                               "\"x\",\"w\",\"b\"", "\"normalized_shape\": [3,4]"), "[2,3,4] f32");
    assert_contains(out_of(XR "," T("w", "[3]", "f32"), "rms_norm", "\"x\",\"w\"", NULL),
                    "weight [3] does not cover the normalized dims");
}

#define XI T("x", "[2,3,4]", "f16")
static void injective(void **s)
{
    (void)s;
    assert_string_equal(out_of(XI, "reshape", "\"x\"", "\"shape\": [6, -1]"), "[6,4] f16");
    assert_contains(out_of(XI, "reshape", "\"x\"", "\"shape\": [\"S\", -1, 1]"), "cannot reshape [2,3,4] (24 elements) with a -1 next to 16 elements");
    assert_contains(out_of(XI, "reshape", "\"x\"", "\"shape\": [5, -1]"), "cannot reshape [2,3,4] (24 elements) with a -1 next to 5 elements");
    assert_contains(out_of(XI, "reshape", "\"x\"", "\"shape\": [-1, -1]"), "at most one -1");
    assert_string_equal(out_of(XI, "transpose", "\"x\"", "\"perm\": [0, 2, 1]"), "[2,4,3] f16");
    assert_string_equal(out_of(XI, "transpose", "\"x\"", NULL), "[4,3,2] f16");
    assert_contains(out_of(XI, "transpose", "\"x\"", "\"perm\": [0, 0, 1]"), "not a permutation");
    /* Python slicing. */
    assert_string_equal(out_of(XI, "slice", "\"x\"", "\"axis\": 2, \"start\": 1, \"end\": 9223372036854775807"), "[2,3,3] f16");
    assert_string_equal(out_of(XI, "slice", "\"x\"", "\"axis\": -1, \"start\": -3, \"end\": -1"), "[2,3,2] f16");
    assert_string_equal(out_of(XI, "slice", "\"x\"", "\"axis\": 2, \"step\": 3"), "[2,3,2] f16");
    assert_contains(out_of(XI, "slice", "\"x\"", "\"axis\": 2, \"start\": 3, \"end\": 2"), "selects no elements");
    assert_string_equal(out_of(XI "," T("z", "[2,5,4]", "f16"), "concat", "\"x\",\"z\",\"x\"", "\"axis\": 1"), "[2,11,4] f16");
    assert_contains(out_of(XI "," T("z", "[2,5,3]", "f16"), "concat", "\"x\",\"z\"", "\"axis\": 1"), "may differ only on axis 1");
    assert_string_equal(out_of(XI, "pad", "\"x\"", "\"pads\": [1, 2, 0, 3]"), "[2,6,7] f16");
    assert_contains(out_of(XI, "pad", "\"x\"", "\"pads\": [4, 0], \"mode\": \"reflect\""), "reflect padding of axis 2 must be smaller");
    assert_string_equal(out_of(T("v", "[3,1]", "f32"), "expand", "\"v\"", "\"shape\": [2, -1, 5]"), "[2,3,5] f32");
    assert_contains(out_of(T("v", "[3,2]", "f32"), "expand", "\"v\"", "\"shape\": [3, 5]"), "dim 1 is 2, not 1 or 5");
    assert_string_equal(out_of(T("w", "[100,8]", "f16") "," T("i", "[2,5]", "i64"), "gather", "\"w\",\"i\"", "\"axis\": 0"), "[2,5,8] f16");
    assert_string_equal(out_of(T("w", "[4,100,8]", "f16") "," T("i", "[7]", "i32"), "gather", "\"w\",\"i\"", "\"axis\": 1"), "[4,7,8] f16");
    assert_contains(out_of(T("w", "[100,8]", "f16") "," T("i", "[7]", "f32"), "gather", "\"w\",\"i\"", NULL), "indices have dtype f32");
    assert_string_equal(out_of(T("w", "[100,8]", "f16") "," T("i", "[1,512]", "i64"), "embedding", "\"w\",\"i\"", NULL), "[1,512,8] f16");
}

static void matmul(void **s)
{
    (void)s;
    assert_string_equal(out_of(T("a", "[2,3]", "f32") "," T("b", "[3,4]", "f32"), "matmul", "\"a\",\"b\"", NULL), "[2,4] f32");
    /* nn.Linear layout: weight [out, in] with transpose_b. */
    assert_string_equal(out_of(T("a", "[1,512,4096]", "f16") "," T("w", "[11008,4096]", "f16"), "matmul", "\"a\",\"w\"",
                               "\"transpose_b\": true"), "[1,512,11008] f16");
    assert_string_equal(out_of(T("a", "[5,3,2]", "f32") "," T("b", "[5,3,4]", "f32"), "matmul", "\"a\",\"b\"",
                               "\"transpose_a\": true"), "[5,2,4] f32");
    /* Batch broadcasting and 1-D operands. */
    assert_string_equal(out_of(T("a", "[2,1,3,4]", "f32") "," T("b", "[7,4,5]", "f32"), "matmul", "\"a\",\"b\"", NULL), "[2,7,3,5] f32");
    assert_string_equal(out_of(T("a", "[4]", "f32") "," T("b", "[3,4,5]", "f32"), "matmul", "\"a\",\"b\"", NULL), "[3,5] f32");
    assert_string_equal(out_of(T("a", "[3,4]", "f32") "," T("b", "[4]", "f32"), "matmul", "\"a\",\"b\"", NULL), "[3] f32");
    assert_string_equal(out_of(T("a", "[4]", "f32") "," T("b", "[4]", "f32"), "matmul", "\"a\",\"b\"", NULL), "[] f32");
    assert_contains(out_of(T("a", "[2,1,3,4]", "f32") "," T("b", "[7,5,4,5]", "f32"), "matmul", "\"a\",\"b\"", NULL),
                    "batch dims of a [2,1,3,4] and b [7,5,4,5] do not broadcast");
}

#define XC T("x", "[1,3,224,224]", "f32")
static void conv_pool(void **s)
{
    (void)s;
    assert_string_equal(out_of(XC "," T("w", "[64,3,7,7]", "f32"), "conv2d", "\"x\",\"w\"",
                               "\"stride\": [2,2], \"padding\": [3,3]"), "[1,64,112,112] f32");
    assert_string_equal(out_of(T("x", "[2,8,10,10]", "f32") "," T("w", "[16,2,3,3]", "f32") "," T("b", "[16]", "f32"),
                               "conv2d", "\"x\",\"w\",\"b\"", "\"groups\": 4, \"dilation\": 2"), "[2,16,6,6] f32");
    assert_contains(out_of(T("x", "[2,8,10,10]", "f32") "," T("w", "[16,3,3,3]", "f32"), "conv2d", "\"x\",\"w\"", NULL),
                    "weight [16,3,3,3] expects 3 input channels (x groups 1) but input [2,8,10,10] has 8");
    assert_string_equal(out_of(T("x", "[1,64,112,112]", "f32"), "max_pool2d", "\"x\"",
                               "\"kernel\": [3,3], \"stride\": [2,2], \"padding\": [1,1]"), "[1,64,56,56] f32");
    /* ceil_mode: 5 -> (5-2)/2 = 1.5 -> 2 windows, + 1. */
    assert_string_equal(out_of(T("x", "[1,1,6,6]", "f32"), "max_pool2d", "\"x\"",
                               "\"kernel\": 2, \"stride\": 2, \"ceil_mode\": true"), "[1,1,3,3] f32");
    assert_string_equal(out_of(T("x", "[1,1,5,5]", "f32"), "avg_pool2d", "\"x\"",
                               "\"kernel\": 2, \"stride\": 2, \"ceil_mode\": true"), "[1,1,3,3] f32");
    assert_string_equal(out_of(T("x", "[1,1,5,5]", "f32"), "avg_pool2d", "\"x\"", "\"kernel\": 2"), "[1,1,2,2] f32");
    assert_string_equal(out_of(T("x", "[1,2048,7,7]", "f32"), "avg_pool2d", "\"x\"", "\"kernel\": [7,7]"), "[1,2048,1,1] f32");
    assert_contains(out_of(T("x", "[1,1,5,5]", "f32"), "max_pool2d", "\"x\"", "\"kernel\": 2, \"padding\": 2"),
                    "must be at most half the kernel");
    assert_string_equal(out_of(T("x", "[2,4,3,3]", "f32") "," T("a", "[4]", "f32") "," T("b", "[4]", "f32") ","
                               T("c", "[4]", "f32") "," T("d", "[4]", "f32"), "batch_norm", "\"x\",\"a\",\"b\",\"c\",\"d\"", NULL),
                        "[2,4,3,3] f32");
}

static void attention_and_collectives(void **s)
{
    (void)s;
    assert_string_equal(out_of(T("q", "[1,32,512,128]", "f16") "," T("k", "[1,32,512,128]", "f16") ","
                               T("v", "[1,32,512,64]", "f16") "," T("m", "[1,1,512,512]", "bool"),
                               "sdpa", "\"q\",\"k\",\"v\",\"m\"", "\"causal\": false"), "[1,32,512,64] f16");
    assert_contains(out_of(T("q", "[1,32,512,128]", "f16") "," T("k", "[1,32,500,128]", "f16") ","
                           T("v", "[1,32,512,128]", "f16"), "sdpa", "\"q\",\"k\",\"v\"", NULL),
                    "differ in sequence length");
    assert_string_equal(out_of(T("x", "[8,4]", "f16"), "all_reduce", "\"x\"", "\"world_size\": 8"), "[8,4] f16");
    assert_contains(out_of(T("x", "[8,4]", "f16"), "all_reduce", "\"x\"", NULL), "attrs.world_size must be an integer >= 1");
}

static void costs(void **s)
{
    (void)s;
    fe_graph *g = tl_graph(
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {"
        T("a", "[64,32]", "f16") "," T("w", "[16,32]", "f16") "," T("t", "[1000,8]", "f32") "," T("i", "[4]", "i64") "},"
        " \"nodes\": [{\"name\": \"mm\", \"op\": \"matmul\", \"inputs\": [\"a\", \"w\"], \"outputs\": [\"y\"], \"attrs\": {\"transpose_b\": true}},"
        "            {\"name\": \"s\", \"op\": \"silu\", \"inputs\": [\"y\"], \"outputs\": [\"z\"]},"
        "            {\"name\": \"e\", \"op\": \"embedding\", \"inputs\": [\"t\", \"i\"], \"outputs\": [\"r\"]},"
        "            {\"name\": \"sm\", \"op\": \"softmax\", \"inputs\": [\"z\"], \"outputs\": [\"p\"]}],"
        " \"outputs\": [\"p\", \"r\"]}");
    const fe_node *mm = fe_graph_node(g, fe_graph_find_node(g, "mm"));
    assert_int_equal(mm->flops, 2 * 64 * 16 * 32);
    assert_int_equal(mm->bytes_read, (64 * 32 + 16 * 32) * 2);
    assert_int_equal(mm->bytes_written, 64 * 16 * 2);
    assert_int_equal(mm->pattern, FE_OUT_FUSABLE);
    const fe_node *si = fe_graph_node(g, fe_graph_find_node(g, "s"));
    assert_int_equal(si->flops, 5 * 64 * 16);
    /* A gather reads the rows it selects and the indices, not the table. */
    const fe_node *e = fe_graph_node(g, fe_graph_find_node(g, "e"));
    assert_int_equal(e->bytes_read, 4 * 8 * 4 + 4 * 8);
    const fe_node *sm = fe_graph_node(g, fe_graph_find_node(g, "sm"));
    assert_int_equal(sm->flops, 5 * 64 * 16);
    assert_int_equal(sm->pattern, FE_REDUCTION);
    fe_graph_free(g);
}

static void custom_ops(void **s)
{
    (void)s;
    fe_graph *g = tl_graph(
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"c\": {\"shape\": [512], \"dtype\": \"i64\"}},"
        " \"nodes\": [{\"name\": \"ar\", \"op\": \"custom\", \"inputs\": [], \"outputs\": [\"c\"],"
        "              \"attrs\": {\"aten\": \"arange.default\", \"pattern\": \"elemwise\", \"flops\": 0, \"bytes\": 4096,"
        "                          \"args\": {\"end\": 512, \"dtype\": null}}},"
        "            {\"name\": \"n\", \"op\": \"neg\", \"inputs\": [\"c\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}");
    const fe_node *ar = fe_graph_node(g, fe_graph_find_node(g, "ar"));
    assert_int_equal(ar->pattern, FE_ELEMWISE);
    assert_int_equal(ar->bytes_read, 0);
    assert_int_equal(ar->bytes_written, 4096);
    const fe_attr *args = fe_node_attr(g, ar, "args");
    assert_non_null(args);
    assert_int_equal(args->type, FE_ATTR_JSON);
    assert_string_equal(g->blob + args->v.off, "{\"end\":512,\"dtype\":null}");
    fe_graph_free(g);
    assert_contains(tl_graph_error(
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"c\": {\"shape\": [4], \"dtype\": \"i64\"}},"
        " \"nodes\": [{\"name\": \"ar\", \"op\": \"custom\", \"outputs\": [\"c\"], \"attrs\": {\"pattern\": \"fancy\"}}],"
        " \"outputs\": [\"c\"]}"), "attrs.pattern 'fancy'; expected elemwise, broadcast");
}

static void scalar_infinity(void **s)
{
    (void)s;
    fe_graph *g = tl_graph("{\"format\": \"fuseeng.model/1\", \"tensors\": {" T("x", "[3]", "f32") "},"
                           " \"nodes\": [{\"name\": \"m\", \"op\": \"maximum\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
                           " \"attrs\": {\"scalar\": -3.4028234663852886e38}}], \"outputs\": [\"y\"]}");
    double v = 0;
    assert_true(fe_node_scalar(g, fe_graph_node(g, 0), &v));
    assert_true(v < 0 && __builtin_isinf(v));
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elemwise), cmocka_unit_test(broadcast), cmocka_unit_test(reductions),
        cmocka_unit_test(injective), cmocka_unit_test(matmul), cmocka_unit_test(conv_pool),
        cmocka_unit_test(attention_and_collectives), cmocka_unit_test(costs), cmocka_unit_test(custom_ops),
        cmocka_unit_test(scalar_infinity),
    };
    return cmocka_run_group_tests_name("infer", tests, NULL, NULL);
}
