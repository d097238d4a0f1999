/* test_kern_dnn.c: the onednn kernel choice against the reference kernels:
 * conv2d (strides, padding, dilation, groups and depthwise, 1x1, with and
 * without bias, a zero pad folded into its padding) and matmul (batched, transposed, broadcast batch, linear
 * layers) under several epilogues, groups it cannot take reported and run
 * by our GEMM, batch_norm parameters changed between runs, and AUTO's
 * measured choice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "execlib.h"

#include "choice.h"
#include "compare.h"
#include "exec.h"
#include "legality.h"
#include "plan.h"

static char jbuf[1 << 15];

static fe_graph *model(const char *tensors, const char *nodes, const char *outputs)
{
    snprintf(jbuf, sizeof jbuf,
             "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{%s},\"nodes\":[%s],"
             "\"outputs\":[%s]}", tensors, nodes, outputs);
    return tl_graph(jbuf);
}


/* The outputs of got agree with ref's within the tolerance rules. */
static void expect_ok(const fe_graph *g, fe_exec_result *ref, fe_exec_result *got)
{
    fe_cmp c;
    fe_error err = {0};
    assert_true(fe_exec_compare(g, ref, got, &c, &err) == FE_OK && c.ok);
    fe_cmp_free(&c);
}

static fe_exec_result *run(fe_exec *ex, const fe_plan *p)
{
    fe_exec_result *r = NULL;
    fe_error err = {0};
    if (p ? fe_exec_plan(ex, p, &r, &err) : fe_exec_reference(ex, &r, &err))
        fail_msg("run: %s", err.message);
    return r;
}

/* The whole model as one group under kernel: equal to the reference within
 * tolerance, and its how line holding expect. */
static void check(const char *tensors, const char *nodes, const char *outputs, int kernel,
                  const char *expect)
{
    fe_graph *g = model(tensors, nodes, outputs);
    fe_plan *p = tl_one_group(g, kernel, 1);
    tl_agree(g, p, fe_node_name(g, fe_graph_node(g, 0)), expect);
    fe_plan_free(p);
    fe_graph_free(g);
}

#define T(name, shape) "\"" name "\":{\"shape\":" shape ",\"dtype\":\"f32\",\"kind\":\"weight\"}"
#define I(name, shape) "\"" name "\":{\"shape\":" shape ",\"dtype\":\"f32\",\"kind\":\"input\"}"
#define N(name, op, ins, out, attrs) \
    "{\"name\":\"" name "\",\"op\":\"" op "\",\"inputs\":" ins ",\"outputs\":[\"" out "\"]" \
    ",\"attrs\":{" attrs "}}"
#define BN_W(c) T("g", "[" c "]") "," T("b", "[" c "]") "," T("m", "[" c "]") "," T("v", "[" c "]")

static void test_conv(void **state)
{
    (void)state;
    /* 3x3, bias, batch_norm folded into the weights, relu */
    check(I("x", "[2,8,13,11]") "," T("w", "[16,8,3,3]") "," T("cb", "[16]") "," BN_W("16"),
          N("cv", "conv2d", "[\"x\",\"w\",\"cb\"]", "y", "\"padding\":1") ","
          N("bn", "batch_norm", "[\"y\",\"g\",\"b\",\"m\",\"v\"]", "n", "") ","
          N("act", "relu", "[\"n\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "onednn: conv2d 3x3 s1 +bias, 1 per-channel op folded");
    /* stride 2, dilation 2, no bias, residual add (sum) then relu */
    check(I("x", "[1,8,33,33]") "," T("w", "[12,8,3,3]") "," I("r", "[1,12,16,16]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1,\"stride\":2,\"dilation\":2") ","
          N("res", "add", "[\"y\",\"r\"]", "s", "") ","
          N("act", "relu", "[\"s\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "post-ops [sum], then a pass of its epilogue (1 ops: relu)");
    /* asymmetric stride and padding, 5x3 kernel, a per-channel scale after
     * the activation (a binary post-op), then sigmoid */
    check(I("x", "[2,6,24,9]") "," T("w", "[10,6,5,3]") "," T("s", "[10,1,1]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":[2,0],\"stride\":[2,1]") ","
          N("act", "gelu", "[\"y\"]", "a", "") ","
          N("sc", "mul", "[\"a\",\"s\"]", "b", "") ","
          N("sg", "sigmoid", "[\"b\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "[eltwise_gelu_erf, binary_mul, eltwise_logistic]");
    /* grouped, bias, silu then a scalar add and tanh */
    check(I("x", "[2,16,10,10]") "," T("w", "[24,4,3,3]") "," T("cb", "[24]"),
          N("cv", "conv2d", "[\"x\",\"w\",\"cb\"]", "y", "\"padding\":1,\"groups\":4") ","
          N("act", "silu", "[\"y\"]", "a", "") ","
          N("sh", "add", "[\"a\"]", "b", "\"scalar\":0.25") ","
          N("th", "tanh", "[\"b\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "grouped +bias with post-ops [eltwise_swish, eltwise_linear, eltwise_tanh]");
    /* depthwise, batch_norm, hardswish, hardsigmoid */
    check(I("x", "[1,16,15,15]") "," T("w", "[16,1,3,3]") "," BN_W("16"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1,\"groups\":16") ","
          N("bn", "batch_norm", "[\"y\",\"g\",\"b\",\"m\",\"v\"]", "n", "\"eps\":0.001") ","
          N("hs", "hardswish", "[\"n\"]", "h", "") ","
          N("hg", "hardsigmoid", "[\"h\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "depthwise, 1 per-channel op folded");
    /* 1x1, a per-channel add and a scalar multiply folded, then exp */
    check(I("x", "[3,32,7,7]") "," T("w", "[24,32,1,1]") "," T("s", "[1,24,1,1]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "") ","
          N("sh", "add", "[\"y\",\"s\"]", "a", "") ","
          N("sc", "mul", "[\"a\"]", "b", "\"scalar\":0.5") ","
          N("e", "exp", "[\"b\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "1x1 s1, 2 per-channel ops folded into its weights and bias with post-ops [eltwise_exp]");
    /* weights larger than the output: batch_norm, the residual and relu
     * run as one pass after the convolution instead of scaling the weights */
    check(I("x", "[1,64,4,4]") "," T("w", "[64,64,3,3]") "," BN_W("64") "," I("r", "[1,64,4,4]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1") ","
          N("bn", "batch_norm", "[\"y\",\"g\",\"b\",\"m\",\"v\"]", "n", "") ","
          N("res", "add", "[\"r\",\"n\"]", "s", "") ","
          N("act", "relu", "[\"s\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "onednn: conv2d 3x3 s1, then a pass of its epilogue (3 ops: batch_norm, add, relu)");
    /* maximum and minimum with a scalar (either side) are clips, not
     * binary ops on a one-element operand; the two fold into one */
    check(I("x", "[1,4,9,9]") "," T("w", "[8,4,3,3]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1") ","
          N("lo", "maximum", "[\"y\"]", "a", "\"scalar\":0.1") ","
          N("hi", "minimum", "[\"a\"]", "out", "\"scalar\":0.8,\"scalar_index\":0"),
          "\"out\"", FE_K_CHOICE_ONEDNN, "with post-ops [eltwise_clip_v2] (");
    /* no epilogue at all */
    check(I("x", "[1,4,9,9]") "," T("w", "[8,4,3,3]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "out", ""), "\"out\"", FE_K_CHOICE_ONEDNN,
          "onednn: conv2d 3x3 s1 (");
}

/* A zero pad of H and W before a conv2d folds into the conv's padding:
 * oneDNN reads the unpadded input (values checked against the reference
 * kernels, which pad). Any other pad stays a member oneDNN cannot take. */
static void test_conv_pad(void **state)
{
    (void)state;
    /* symmetric, onto a conv without padding, then a per-channel scale and relu */
    check(I("x", "[2,8,13,11]") "," T("w", "[16,8,3,3]") "," T("s", "[16,1,1]"),
          N("pd", "pad", "[\"x\"]", "p", "\"pads\":[1,1,1,1]") ","
          N("cv", "conv2d", "[\"p\",\"w\"]", "y", "") ","
          N("sc", "mul", "[\"y\",\"s\"]", "a", "") ","
          N("act", "relu", "[\"a\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "conv2d 3x3 s1 padding 1x1 (pad 'pd' folded in), 1 per-channel op");
    /* asymmetric (W 0 before and 1 after, H 2 before), onto a conv with
     * padding 1 and stride 2: the sides add up, the far side follows */
    check(I("x", "[1,4,15,12]") "," T("w", "[6,4,3,3]") "," T("cb", "[6]"),
          N("pd", "pad", "[\"x\"]", "p", "\"pads\":[0,1,2,0]") ","
          N("cv", "conv2d", "[\"p\",\"w\",\"cb\"]", "out", "\"padding\":1,\"stride\":2"),
          "\"out\"", FE_K_CHOICE_ONEDNN, "padding 3x1 (pad 'pd' folded in)");
    /* explicit zeros for N and C are no padding there */
    check(I("x", "[1,4,10,10]") "," T("w", "[6,4,3,3]"),
          N("pd", "pad", "[\"x\"]", "p", "\"pads\":[1,1,1,1,0,0,0,0]") ","
          N("cv", "conv2d", "[\"p\",\"w\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "(pad 'pd' folded in)");
    /* not foldable: a pad value of 1, channels padded, reflection (a padded
     * tensor read elsewhere is no legal group: legality.c) */
    const char *refused[][2] = {
        {"\"pads\":[1,1,1,1],\"value\":1.0", "\"out\""},
        {"\"pads\":[0,0,0,0,1,1]", "\"out\""},
        {"\"pads\":[1,1,1,1],\"mode\":\"reflect\"", "\"out\""},
    };
    for (int i = 0; i < 3; i++) {
        char tensors[256], nodes[512];
        snprintf(tensors, sizeof tensors, "%s", I("x", "[1,4,10,10]") "," T("w", "[6,4,3,3]") "," T("w6", "[6,6,3,3]"));
        snprintf(nodes, sizeof nodes, N("pd", "pad", "[\"x\"]", "p", "%s") "," N("cv", "conv2d", "[\"p\",\"%s\"]", "out", ""),
                 refused[i][0], i == 1 ? "w6" : "w");
        check(tensors, nodes, refused[i][1], FE_K_CHOICE_ONEDNN, "onednn cannot take it: ");
    }
}

static void test_matmul(void **state)
{
    (void)state;
    /* a linear layer: bias, tanh-GELU */
    check(I("x", "[64,96]") "," T("w", "[96,80]") "," T("b", "[80]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("ba", "add", "[\"y\",\"b\"]", "a", "") ","
          N("act", "gelu", "[\"a\"]", "out", "\"approximate\":\"tanh\""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "matmul 64x96x80 +bias with post-ops [eltwise_gelu_tanh]");
    /* batched, transpose_b, residual then relu */
    check(I("a", "[4,32,48]") "," I("b", "[4,40,48]") "," I("r", "[4,32,40]"),
          N("mm", "matmul", "[\"a\",\"b\"]", "y", "\"transpose_b\":true") ","
          N("res", "add", "[\"y\",\"r\"]", "s", "") ","
          N("act", "relu", "[\"s\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "batched with post-ops [sum], then a pass of its epilogue (1 ops: relu)");
    /* a broadcast batch: [2,3,16,24] x [3,24,20], a column-wise scale, exp */
    check(I("a", "[2,3,16,24]") "," I("b", "[3,24,20]") "," T("s", "[20]"),
          N("mm", "matmul", "[\"a\",\"b\"]", "y", "") ","
          N("sc", "mul", "[\"y\",\"s\"]", "z", "") ","
          N("e", "exp", "[\"z\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "post-ops [binary_mul, eltwise_exp]");
    /* transpose_a, then t - y (the chain value second) */
    check(I("a", "[4,24,16]") "," T("b", "[24,8]") "," T("t", "[8]"),
          N("mm", "matmul", "[\"a\",\"b\"]", "y", "\"transpose_a\":true") ","
          N("sb", "sub", "[\"t\",\"y\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "post-ops [eltwise_linear, binary_add]");
    /* a 3-D linear layer (batch folded into M): bias, silu, gate */
    check(I("x", "[2,50,64]") "," T("w", "[64,32]") "," T("b", "[32]") "," I("u", "[2,50,32]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("ba", "add", "[\"y\",\"b\"]", "a", "") ","
          N("act", "silu", "[\"a\"]", "s", "") ","
          N("gt", "mul", "[\"s\",\"u\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "matmul 100x64x32 +bias with post-ops [eltwise_swish, binary_mul]");
}

/* Where the post-ops end, the rest of the group is one fused pass over the
 * primitive's output (the epilogue pass). */
static void test_epilogue(void **state)
{
    (void)state;
    /* GPT-2's attention output: bias, residual (also an output), layer_norm */
    check(I("x", "[2,24,64]") "," T("w", "[64,48]") "," T("b", "[48]") "," I("r", "[2,24,48]") ","
          T("g", "[48]") "," T("be", "[48]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("ba", "add", "[\"y\",\"b\"]", "a", "") ","
          N("res", "add", "[\"a\",\"r\"]", "h", "") ","
          N("ln", "layer_norm", "[\"h\",\"g\",\"be\"]", "out", "\"normalized_shape\":[48]"),
          "\"out\",\"h\"", FE_K_CHOICE_ONEDNN,
          "matmul 48x64x48 +bias with post-ops [sum], then a pass of its epilogue (1 ops: layer_norm)");
    /* an intermediate read outside the group: written by oneDNN, read by the pass */
    check(I("x", "[1,8,9,9]") "," T("w", "[8,8,3,3]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1") ","
          N("act", "relu", "[\"y\"]", "out", ""),
          "\"out\",\"y\"", FE_K_CHOICE_ONEDNN, "onednn: conv2d 3x3 s1, then a pass of its epilogue (1 ops: relu)");
    /* no post-op for sin; the pass has two outputs and reads an input */
    check(I("x", "[8,16]") "," T("w", "[16,8]") "," I("u", "[8,8]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("sc", "mul", "[\"y\"]", "z", "\"scalar\":0.5") ","
          N("s", "sin", "[\"z\"]", "o1", "") ","
          N("m", "mul", "[\"o1\",\"u\"]", "o2", "") ","
          N("e", "exp", "[\"z\"]", "o3", ""),
          "\"o2\",\"o3\"", FE_K_CHOICE_ONEDNN,
          "post-ops [eltwise_linear], then a pass of its epilogue (3 ops: sin, mul, exp)");
    /* a sum then unary ops: they leave the post-ops for the pass (gemm:jit) */
    check(I("x", "[1,8,9,9]") "," T("w", "[8,8,3,3]") "," I("r", "[1,8,9,9]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1") ","
          N("res", "add", "[\"y\",\"r\"]", "s", "") ","
          N("act", "relu", "[\"s\"]", "a", "") ","
          N("th", "tanh", "[\"a\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "with post-ops [sum], then a pass of its epilogue (2 ops: relu, tanh)");
}

/* oneDNN 2.6 runs every eltwise post-op of one algorithm with the first
 * one's parameters: scalar steps fold into one linear, clips whose ranges
 * meet into one clip, hardsigmoid is one linear and a clip, and any other
 * repeat ends the post-ops there (the rest is the epilogue pass). Each case
 * gave wrong results before (matmul, + 4, neg gave x + 8). */
static void test_repeated_eltwise(void **state)
{
    (void)state;
    check(I("x", "[3,24,16]") "," T("w", "[16,32]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("sc", "mul", "[\"y\"]", "a", "\"scalar\":4") ","
          N("sh", "add", "[\"a\"]", "b", "\"scalar\":4") ","
          N("ng", "neg", "[\"b\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "with post-ops [eltwise_linear] (");
    check(I("x", "[3,24,16]") "," T("w", "[16,32]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("sh", "add", "[\"y\"]", "a", "\"scalar\":4") ","
          N("r", "relu", "[\"a\"]", "b", "") ","
          N("ng", "neg", "[\"b\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN,
          "with post-ops [eltwise_linear, eltwise_relu], then a pass of its epilogue (1 ops: neg)");
    check(I("x", "[3,24,16]") "," T("w", "[16,32]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("lo", "maximum", "[\"y\"]", "a", "\"scalar\":-1") ","
          N("hi", "minimum", "[\"a\"]", "b", "\"scalar\":2") ","
          N("hs", "hardsigmoid", "[\"b\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN,
          "with post-ops [eltwise_clip_v2], then a pass of its epilogue (1 ops: hardsigmoid)");
    check(I("x", "[1,8,9,9]") "," T("w", "[8,8,3,3]"),
          N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1") ","
          N("th", "tanh", "[\"y\"]", "a", "") ","
          N("hs", "hardsigmoid", "[\"a\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "with post-ops [eltwise_tanh, eltwise_linear, eltwise_clip_v2] (");
}

static void test_refused(void **state)
{
    (void)state;
    /* a prologue: our GEMM runs it, and says why */
    check(I("x", "[1,8,9,9]") "," T("w", "[8,8,3,3]"),
          N("pre", "relu", "[\"x\"]", "p", "") ","
          N("cv", "conv2d", "[\"p\",\"w\"]", "y", "\"padding\":1") ","
          N("act", "relu", "[\"y\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN,
          "(kernel onednn cannot take it: node 'pre' (relu) is a prologue of conv2d 'cv' (oneDNN takes none))");
    /* an epilogue that is no fused program: a sum over a middle axis */
    check(I("x", "[4,8,16]") "," T("w", "[16,8]"),
          N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
          N("s", "sin", "[\"y\"]", "z", "") ","
          N("t", "sum", "[\"z\"]", "out", "\"axes\":[1],\"keepdim\":true"),
          "\"out\"", FE_K_CHOICE_ONEDNN, "kernel onednn cannot take it: the post-ops end where "
          "oneDNN has no post-op for sin (node 's'), and the 2 ops after are no fused pass: ");
    /* f16 weights */
    check(I("x", "[8,16]") ",\"w\":{\"shape\":[16,8],\"dtype\":\"f16\",\"kind\":\"weight\"}",
          N("mm", "matmul", "[\"x\",\"w\"]", "out", ""),
          "\"out\"", FE_K_CHOICE_ONEDNN, "w is f16 (the oneDNN choice takes f32)");

    /* no anchor at all: per_op with the reason */
    check(I("x", "[8,16]"), N("s", "relu", "[\"x\"]", "out", ""), "\"out\"", FE_K_CHOICE_ONEDNN,
          "kernel onednn cannot take it: the group needs exactly one matmul or conv2d");
}

/* batch_norm's parameters change between runs (a --weights file): the
 * folded scale and shift follow them. */
static void test_weights_change(void **state)
{
    (void)state;
    fe_error err = {0};
    fe_graph *g = model(I("x", "[1,8,10,10]") "," T("w", "[16,8,3,3]") "," BN_W("16"),
                        N("cv", "conv2d", "[\"x\",\"w\"]", "y", "\"padding\":1") ","
                        N("bn", "batch_norm", "[\"y\",\"g\",\"b\",\"m\",\"v\"]", "n", "") ","
                        N("act", "relu", "[\"n\"]", "out", ""), "\"out\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_ONEDNN, 1);
    fe_exec_result *ref = run(ex, NULL), *got = run(ex, p);
    expect_ok(g, ref, got);
    const char *names[] = {"g", "b", "m", "v", "w"};
    for (int k = 0; k < 5; k++) {
        int32_t t = fe_graph_find_tensor(g, names[k]);
        fe_k_tensor *buf = &fe_exec_buffers(ex)[t];
        float *d = buf->data;
        for (int64_t i = 0; i < fe_k_numel(buf); i++)
            d[i] = d[i] * 1.5f + (k == 3 ? 0.5f : 0.125f);
    }
    fe_exec_result *ref2 = run(ex, NULL), *got2 = run(ex, p);
    expect_ok(g, ref2, got2);
    assert_true(memcmp(got->outputs[0].data, got2->outputs[0].data,
                       (size_t)fe_graph_tensor(g, g->outputs[0])->bytes) != 0);
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_exec_result_free(ref2);
    fe_exec_result_free(got2);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

/* AUTO times oneDNN against matmul_blocked and says which it kept and why;
 * the answer is cached, so a second compile says the same. With a
 * prologue, oneDNN's form runs it as a pass of its own first. */
static void auto_case(const char *tensors, const char *nodes)
{
    fe_error err = {0};
    fe_graph *g = model(tensors, nodes, "\"out\"");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_plan *p = tl_one_group(g, FE_K_CHOICE_AUTO, 1);
    fe_exec_result *ref = run(ex, NULL), *a = run(ex, p), *b = run(ex, p);
    assert_contains(a->how[0], "chosen over");
    assert_string_equal(a->how[0], b->how[0]);
    if (strncmp(a->how[0], "onednn: ", 8) && strncmp(a->how[0], "matmul_blocked: ", 16))
        fail_msg("AUTO ran %s", a->how[0]);
    expect_ok(g, ref, a);
    fe_exec_result_free(ref);
    fe_exec_result_free(a);
    fe_exec_result_free(b);
    fe_plan_free(p);
    fe_exec_free(ex);
    fe_graph_free(g);
}

static void test_auto_measures(void **state)
{
    (void)state;
    /* Our GEMM takes no pad: AUTO times oneDNN (the pad folded in) against
     * the members run one by one. */
    {
        fe_error err = {0};
        fe_graph *g = model(I("x", "[1,32,28,28]") "," T("w", "[64,32,3,3]") "," T("s", "[64,1,1]"),
                            N("pd", "pad", "[\"x\"]", "p", "\"pads\":[1,1,1,1]") ","
                            N("cv", "conv2d", "[\"p\",\"w\"]", "y", "") ","
                            N("sc", "mul", "[\"y\",\"s\"]", "a", "") ","
                            N("act", "relu", "[\"a\"]", "out", ""), "\"out\"");
        fe_exec *ex = fe_exec_new(g, NULL, &err);
        fe_plan *p = tl_one_group(g, FE_K_CHOICE_AUTO, 1);
        fe_exec_result *ref = run(ex, NULL), *a = run(ex, p);
        /* whichever is faster here; op by op wins under memcheck, which
         * runs oneDNN's JIT code slowly, and then runs as fused parts */
        if (!strncmp(a->how[0], "onednn: ", 8) || !strncmp(a->how[0], "per_op: ", 8))
            assert_contains(a->how[0], "chosen over");
        else if (!strncmp(a->how[0], "fused_rows: ", 12))
            assert_contains(a->how[0], "its ops one by one measured faster than onednn");
        else
            fail_msg("AUTO ran %s", a->how[0]);
        assert_contains(a->how[0], "(pad 'pd' folded in)");
        expect_ok(g, ref, a);
        fe_exec_result_free(ref);
        fe_exec_result_free(a);
        fe_plan_free(p);
        fe_exec_free(ex);
        fe_graph_free(g);
    }
    auto_case(I("x", "[1,32,28,28]") "," T("w", "[64,32,3,3]") "," T("cb", "[64]"),
              N("cv", "conv2d", "[\"x\",\"w\",\"cb\"]", "y", "\"padding\":1") ","
              N("act", "relu", "[\"y\"]", "out", ""));
    auto_case(I("x", "[1,32,28,28]") "," T("w", "[64,32,3,3]") "," BN_W("64") "," I("r", "[1,64,28,28]"),
              N("pre", "relu", "[\"x\"]", "p", "") ","
              N("cv", "conv2d", "[\"p\",\"w\"]", "y", "\"padding\":1") ","
              N("bn", "batch_norm", "[\"y\",\"g\",\"b\",\"m\",\"v\"]", "n", "") ","
              N("res", "add", "[\"n\",\"r\"]", "s", "") ","
              N("act", "relu", "[\"s\"]", "out", ""));
    auto_case(I("x", "[256,512]") "," T("w", "[512,256]") "," T("b", "[256]"),
              N("mm", "matmul", "[\"x\",\"w\"]", "y", "") ","
              N("ba", "add", "[\"y\",\"b\"]", "a", "") ","
              N("act", "gelu", "[\"a\"]", "out", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_conv_pad),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_epilogue), cmocka_unit_test(test_repeated_eltwise), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_weights_change),
        cmocka_unit_test(test_auto_measures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
