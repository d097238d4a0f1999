/* test_kern_aten.c: the aten custom-op kernels (kernels/ops/aten.h) against
 * values worked out by hand from PyTorch's semantics: one-node graphs run
 * through fe_k_aten_run for each op (broadcast corners, dtype promotion,
 * negative dims and indices, the error messages), then the causal-mask and
 * position-id subgraph of the llama / gpt2 exports at S = 8, run through the
 * reference executor, plain and with packed sequences. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "atenlib.h"
#include "exec.h"

/* ---- arange ---- */

static void test_arange(void **state)
{
    (void)state;
    K k;
    kload(&k, OUT("[5]", "i64"), "",
          "\"aten\":\"arange.default\",\"args\":{\"end\":5,\"dtype\":null,\"layout\":null,"
          "\"device\":{\"device\":\"cuda:0\"},\"pin_memory\":false}");
    EXPECT(&k, 0, 1, 2, 3, 4);
    kfree(&k);

    kload(&k, OUT("[4]", "i64"), "",
          "\"aten\":\"arange.start_step\",\"args\":{\"start\":10,\"end\":0,\"step\":-3}");
    EXPECT(&k, 10, 7, 4, 1);
    kfree(&k);

    kload(&k, OUT("[3]", "f32"), "",
          "\"aten\":\"arange.start_step\",\"args\":{\"start\":1,\"end\":2.5,\"step\":0.5}");
    EXPECT(&k, 1, 1.5, 2);
    kfree(&k);

    kload(&k, OUT("[4]", "f16"), "",
          "\"aten\":\"arange\",\"args\":{\"start\":0,\"end\":1,\"step\":0.25,\"dtype\":\"f16\"}");
    EXPECT(&k, 0, 0.25, 0.5, 0.75);
    kfree(&k);

    kload(&k, OUT("[3]", "i32"), "", "\"aten\":\"arange.start\",\"args\":{\"start\":-1,\"end\":2}");
    EXPECT(&k, -1, 0, 1);
    kfree(&k);

    /* integer output from float args: torch sizes in double (ceil(3.5 / 1.5)
     * = 3) but truncates start and step to int64 first */
    kload(&k, OUT("[3]", "i64"), "",
          "\"aten\":\"arange.start_step\",\"args\":{\"start\":0.5,\"end\":4,\"step\":1.5}");
    EXPECT(&k, 0, 1, 2);
    kfree(&k);

    kload(&k, OUT("[4]", "i64"), "", "\"aten\":\"arange.default\",\"args\":{\"end\":5}");
    refused(&k, "the range has 5 elements but the graph's output is [4]");
    kfree(&k);
    kload(&k, OUT("[4]", "i64"), "",
          "\"aten\":\"arange\",\"args\":{\"start\":0,\"end\":4,\"step\":0}");
    refused(&k, "step must be nonzero");
    kfree(&k);
    kload(&k, OUT("[4]", "i64"), "",
          "\"aten\":\"arange\",\"args\":{\"start\":0,\"end\":4,\"step\":-1}");
    refused(&k, "wrong side of start");
    kfree(&k);
    kload(&k, OUT("[4]", "i64"), "", "\"aten\":\"arange.default\",\"args\":{\"end\":4,\"foo\":1}");
    refused(&k, "unsupported argument args.foo");
    kfree(&k);
    kload(&k, OUT("[4]", "i64"), "", "\"aten\":\"arange.default\",\"args\":{\"end\":4,\"step\":1}");
    refused(&k, "unsupported argument args.step");   /* arange.default has no step */
    kfree(&k);
    kload(&k, OUT("[2]", "bool"), "", "\"aten\":\"arange.default\",\"args\":{\"end\":2}");
    refused(&k, "bool");
    kfree(&k);
    kload(&k, OUT("[2]", "i64"), "",
          "\"aten\":\"arange.default\",\"args\":{\"end\":2,\"dtype\":\"f32\"}");
    refused(&k, "args.dtype is 'f32' but the graph's output is i64");
    kfree(&k);
    kload(&k, OUT("[2]", "i64"), "", "\"aten\":\"arange.default\",\"args\":{\"end\":\"two\"}");
    refused(&k, "args.end must be a number");
    kfree(&k);
}

/* ---- diff ---- */

static void test_diff(void **state)
{
    (void)state;
    K k;
    /* the export's form: prepend = x[:, :1] - 1 as the second input */
    kload(&k, IN("x", "[1,5]", "i64") IN("p", "[1,1]", "i64") OUT("[1,5]", "i64"), "\"x\",\"p\"",
          "\"aten\":\"diff.default\",\"args\":{\"n\":1,\"dim\":-1,\"append\":null}");
    SET(&k, 0, 0, 1, 2, 3, 4);
    SET(&k, 1, -1);
    EXPECT(&k, 1, 1, 1, 1, 1);
    kfree(&k);

    kload(&k, IN("x", "[2,3]", "i64") IN("a", "[2,1]", "i64") OUT("[2,3]", "i64"), "\"x\",\"a\"",
          "\"aten\":\"diff\",\"args\":{\"dim\":1,\"prepend\":null}");
    SET(&k, 0, 1, 4, 9, 2, 2, 5);
    SET(&k, 1, 16, 0);
    EXPECT(&k, 3, 5, 7, 0, 3, -5);
    kfree(&k);

    /* second order along dim 0, floats */
    kload(&k, IN("x", "[4,2]", "f32") OUT("[2,2]", "f32"), "\"x\"",
          "\"aten\":\"diff.default\",\"args\":{\"n\":2,\"dim\":0,\"prepend\":null,\"append\":null}");
    SET(&k, 0, 1, 10, 4, 20, 9, 40, 16, 80);
    EXPECT(&k, 2, 10, 2, 20);
    kfree(&k);

    /* both given: cat [5 | 1 2 3 | 10 0] */
    kload(&k, IN("x", "[3]", "i32") IN("p", "[1]", "i32") IN("a", "[2]", "i32") OUT("[5]", "i32"),
          "\"x\",\"p\",\"a\"", "\"aten\":\"diff.default\",\"args\":{\"n\":1,\"dim\":0}");
    SET(&k, 0, 1, 2, 3);
    SET(&k, 1, 5);
    SET(&k, 2, 10, 0);
    EXPECT(&k, -4, 1, 1, 7, -10);
    kfree(&k);

    /* bool diffs are xor */
    kload(&k, IN("x", "[4]", "bool") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"diff.default\",\"args\":{\"prepend\":null,\"append\":null}");
    SET(&k, 0, 1, 1, 0, 1);
    EXPECT(&k, 0, 1, 1);
    kfree(&k);

    /* third order of squares is 0 */
    kload(&k, IN("x", "[4]", "i64") OUT("[1]", "i64"), "\"x\"",
          "\"aten\":\"diff.default\",\"args\":{\"n\":3}");
    SET(&k, 0, 1, 4, 9, 16);
    EXPECT(&k, 0);
    kfree(&k);

    kload(&k, IN("x", "[1,5]", "i64") IN("p", "[1,1]", "i64") OUT("[1,5]", "i64"), "\"x\",\"p\"",
          "\"aten\":\"diff.default\",\"args\":{\"n\":1,\"dim\":-1}");
    refused(&k, "cannot tell whether the second input is prepend or append");
    kfree(&k);
    kload(&k, IN("x", "[2,3]", "i64") IN("p", "[1,1]", "i64") OUT("[2,3]", "i64"), "\"x\",\"p\"",
          "\"aten\":\"diff.default\",\"args\":{\"append\":null}");
    refused(&k, "prepend has shape [1,1], which does not join input [2,3] along dim 1");
    kfree(&k);
    kload(&k, IN("x", "[2,3]", "i64") OUT("[2,3]", "i64"), "\"x\"",
          "\"aten\":\"diff.default\",\"args\":{\"dim\":1}");
    refused(&k, "the op produces shape [2,2] but the graph's output is [2,3]");
    kfree(&k);
    kload(&k, IN("x", "[2,3]", "i64") OUT("[2,3]", "i64"), "\"x\"",
          "\"aten\":\"diff.default\",\"args\":{\"dim\":-3}");
    refused(&k, "dim -3 is out of range for rank 2");
    kfree(&k);
    kload(&k, IN("x", "[2,3]", "i64") OUT("[2,3]", "i64"), "\"x\"",
          "\"aten\":\"diff.default\",\"args\":{\"n\":-1}");
    refused(&k, "n must be >= 0");
    kfree(&k);
}

/* ---- cumsum ---- */

static void test_cumsum(void **state)
{
    (void)state;
    K k;
    kload(&k, IN("x", "[1,6]", "bool") OUT("[1,6]", "i64"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":-1,\"dtype\":null}");
    SET(&k, 0, 0, 0, 1, 0, 1, 1);
    EXPECT(&k, 0, 0, 1, 1, 2, 3);
    kfree(&k);

    kload(&k, IN("x", "[2,3]", "i64") OUT("[2,3]", "i64"), "\"x\"",
          "\"aten\":\"cumsum\",\"args\":{\"dim\":0}");
    SET(&k, 0, 1, 2, 3, 4, 5, 6);
    EXPECT(&k, 1, 2, 3, 5, 7, 9);
    kfree(&k);

    /* the middle axis of three; int32 sums promote to int64 */
    kload(&k, IN("x", "[2,2,2]", "i32") OUT("[2,2,2]", "i64"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":-2}");
    SET(&k, 0, 1, 2, 3, 4, 5, 6, 7, 8);
    EXPECT(&k, 1, 2, 4, 6, 5, 6, 12, 14);
    kfree(&k);

    /* f16 accumulates in float: 1 + 2048 = 2049 is stored as 2048 but the
     * running sum keeps it, so the next element is 2050 (an f16 running sum
     * would stay at 2048) */
    kload(&k, IN("x", "[3]", "f16") OUT("[3]", "f16"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":0}");
    SET(&k, 0, 1, 2048, 1);
    EXPECT(&k, 1, 2048, 2050);
    kfree(&k);

    /* f32 accumulates in double, the same way one level up */
    kload(&k, IN("x", "[3]", "f32") OUT("[3]", "f32"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":-1}");
    SET(&k, 0, 16777216, 1, 1);
    EXPECT(&k, 16777216, 16777216, 16777218);
    kfree(&k);

    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "f32"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":0,\"dtype\":\"f32\"}");
    SET(&k, 0, 1, 2, 3);
    EXPECT(&k, 1, 3, 6);
    kfree(&k);

    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "i64"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dtype\":null}");
    refused(&k, "args.dim is required");
    kfree(&k);
    kload(&k, IN("x", "[2,3]", "i64") OUT("[2,3]", "i64"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":2}");
    refused(&k, "dim 2 is out of range for rank 2");
    kfree(&k);
    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "i64"), "\"x\"",
          "\"aten\":\"cumsum.default\",\"args\":{\"dim\":0,\"reverse\":true}");
    refused(&k, "unsupported argument args.reverse (this kernel reads: dim dtype)");
    kfree(&k);
}

/* ---- comparisons ---- */

static void test_compare(void **state)
{
    (void)state;
    K k;
    kload(&k, IN("x", "[1,4]", "i64") OUT("[1,4]", "bool"), "\"x\"",
          "\"aten\":\"ne.Scalar\",\"args\":{\"other\":1}");
    SET(&k, 0, 1, 1, 2, 1);
    EXPECT(&k, 0, 0, 1, 0);
    kfree(&k);

    kload(&k, IN("a", "[3,1]", "i64") IN("b", "[1,4]", "i64") OUT("[3,4]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    SET(&k, 0, 0, 1, 2);
    SET(&k, 1, 0, 1, 1, 3);
    EXPECT(&k, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0);
    kfree(&k);

    /* the export's causal test: le(kv [1,1,1,S], q [1,1,S,1]) */
    kload(&k, IN("kv", "[1,1,1,3]", "i64") IN("q", "[1,1,3,1]", "i64") OUT("[1,1,3,3]", "bool"),
          "\"kv\",\"q\"", "\"aten\":\"le.Tensor\"");
    SET(&k, 0, 0, 1, 2);
    SET(&k, 1, 0, 1, 2);
    EXPECT(&k, 1, 0, 0, 1, 1, 0, 1, 1, 1);
    kfree(&k);

    /* a float scalar makes an int64 tensor compare in float32, where
     * 16777217 rounds to 16777216; an int scalar compares exactly */
    kload(&k, IN("x", "[2]", "i64") OUT("[2]", "bool"), "\"x\"",
          "\"aten\":\"eq.Scalar\",\"args\":{\"other\":16777216.0}");
    SET(&k, 0, 16777217, 3);
    EXPECT(&k, 1, 0);
    kfree(&k);
    kload(&k, IN("x", "[2]", "i64") OUT("[2]", "bool"), "\"x\"",
          "\"aten\":\"eq.Scalar\",\"args\":{\"other\":16777216}");
    SET(&k, 0, 16777217, 3);
    EXPECT(&k, 0, 0);
    kfree(&k);

    /* f16 with an int64 tensor: the common dtype is f16, so 2049 -> 2048 */
    kload(&k, IN("a", "[1]", "f16") IN("b", "[1]", "i64") OUT("[1]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    SET(&k, 0, 2048);
    SET(&k, 1, 2049);
    EXPECT(&k, 1);
    kfree(&k);

    /* the scalar is cast to the tensor's f16: f16(0.1) >= 0.1 holds */
    kload(&k, IN("x", "[2]", "f16") OUT("[2]", "bool"), "\"x\"",
          "\"aten\":\"ge.Scalar\",\"args\":{\"other\":0.1}");
    SET(&k, 0, 0.1, 0.2);
    EXPECT(&k, 1, 1);
    kfree(&k);
    kload(&k, IN("x", "[2]", "f16") OUT("[2]", "bool"), "\"x\"",
          "\"aten\":\"gt.Scalar\",\"args\":{\"other\":0.1}");
    SET(&k, 0, 0.1, 0.2);
    EXPECT(&k, 0, 1);
    kfree(&k);

    /* a 0-d tensor cannot widen a dimensioned one of its category: f16 vs
     * f32 [] compares in f16, int32 vs int64 [] in int32 (2^32 + 5 -> 5);
     * two dimensioned tensors meet at f32 */
    kload(&k, IN("a", "[2]", "f16") IN("b", "[]", "f32") OUT("[2]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    SET(&k, 0, 0.1, 0.2);
    SET(&k, 1, 0.1);
    EXPECT(&k, 1, 0);
    kfree(&k);
    kload(&k, IN("a", "[1]", "f16") IN("b", "[1]", "f32") OUT("[1]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    SET(&k, 0, 0.1);
    SET(&k, 1, 0.1);
    EXPECT(&k, 0);
    kfree(&k);
    kload(&k, IN("a", "[2]", "i32") IN("b", "[]", "i64") OUT("[2]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    SET(&k, 0, 5, 6);
    SET(&k, 1, 4294967301.0);
    EXPECT(&k, 1, 0);
    kfree(&k);

    kload(&k, IN("x", "[3]", "f32") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"ne.Scalar\",\"args\":{\"other\":1}");
    SET(&k, 0, NAN, 1, 2);
    EXPECT(&k, 1, 0, 1);
    kfree(&k);
    kload(&k, IN("a", "[3]", "f32") IN("b", "[]", "f32") OUT("[3]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"lt.Tensor\"");
    SET(&k, 0, NAN, 1, 2);
    SET(&k, 1, 1.5);
    EXPECT(&k, 0, 1, 0);
    kfree(&k);

    /* bool tensor against int scalars compares as integers */
    kload(&k, IN("x", "[2]", "bool") OUT("[2]", "bool"), "\"x\"",
          "\"aten\":\"lt.Scalar\",\"args\":{\"other\":1}");
    SET(&k, 0, 0, 1);
    EXPECT(&k, 1, 0);
    kfree(&k);
    kload(&k, IN("x", "[2]", "bool") OUT("[2]", "bool"), "\"x\"",
          "\"aten\":\"gt\",\"args\":{\"other\":true}");
    SET(&k, 0, 0, 1);
    EXPECT(&k, 0, 0);
    kfree(&k);
    kload(&k, IN("x", "[3]", "i32") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"le.Scalar\",\"args\":{\"other\":\"-inf\"}");
    SET(&k, 0, -5, 0, 5);
    EXPECT(&k, 0, 0, 0);
    kfree(&k);

    kload(&k, IN("a", "[3]", "i64") IN("b", "[4]", "i64") OUT("[4]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    refused(&k, "input shapes [3] and [4] do not broadcast");
    kfree(&k);
    kload(&k, IN("a", "[3]", "i64") IN("b", "[3]", "i64") OUT("[2,3]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"eq.Tensor\"");
    refused(&k, "the op produces shape [3] but the graph's output is [2,3]");
    kfree(&k);
    kload(&k, IN("a", "[3]", "i64") OUT("[3]", "bool"), "\"a\"", "\"aten\":\"ne.Scalar\"");
    refused(&k, "takes two tensor inputs, or one and args.other");
    kfree(&k);
    kload(&k, IN("a", "[3]", "i64") OUT("[3]", "bool"), "\"a\"",
          "\"aten\":\"ne.Scalar\",\"args\":{\"other\":\"one\"}");
    refused(&k, "args.other must be a number or a bool");
    kfree(&k);
}

/* ---- bitwise and logical ---- */

static void test_bitwise_logical(void **state)
{
    (void)state;
    K k;
    /* the export's and_1: a 0-d True & le */
    kload(&k, IN("a", "[]", "bool") IN("b", "[2,2]", "bool") OUT("[2,2]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"__and__.Tensor\"");
    SET(&k, 0, 1);
    SET(&k, 1, 1, 0, 1, 1);
    EXPECT(&k, 1, 0, 1, 1);
    SET(&k, 0, 0);
    EXPECT(&k, 0, 0, 0, 0);
    kfree(&k);

    static const char *const ops[] = {"__and__.Tensor", "__or__.Tensor", "__xor__.Tensor"};
    static const double want[3][2] = {{2, 5}, {7, -1}, {5, -6}};
    for (int i = 0; i < 3; i++) {
        char attrs[64];
        snprintf(attrs, sizeof attrs, "\"aten\":\"%s\"", ops[i]);
        kload(&k, IN("a", "[2]", "i64") IN("b", "[2]", "i64") OUT("[2]", "i64"), "\"a\",\"b\"",
              attrs);
        SET(&k, 0, 6, -1);
        SET(&k, 1, 3, 5);
        run_ok(&k);
        expect(&k, want[i], 2, __LINE__);
        kfree(&k);
    }

    kload(&k, IN("a", "[2]", "i32") OUT("[2]", "i32"), "\"a\"",
          "\"aten\":\"bitwise_and.Scalar\",\"args\":{\"other\":10}");
    SET(&k, 0, 12, 7);
    EXPECT(&k, 8, 2);
    kfree(&k);

    /* bool | int64 promotes to int64 */
    kload(&k, IN("a", "[2]", "bool") IN("b", "[2]", "i64") OUT("[2]", "i64"), "\"a\",\"b\"",
          "\"aten\":\"__or__.Tensor\"");
    SET(&k, 0, 1, 0);
    SET(&k, 1, 2, 2);
    EXPECT(&k, 3, 2);
    kfree(&k);

    /* logical ops take floats; NaN is true */
    kload(&k, IN("a", "[3]", "f32") IN("b", "[3]", "f32") OUT("[3]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"logical_and.default\"");
    SET(&k, 0, 0, 0.5, NAN);
    SET(&k, 1, 1, 1, 1);
    EXPECT(&k, 0, 1, 1);
    kfree(&k);
    kload(&k, IN("a", "[2]", "i64") IN("b", "[2]", "i64") OUT("[2]", "bool"), "\"a\",\"b\"",
          "\"aten\":\"logical_xor\"");
    SET(&k, 0, 0, 3);
    SET(&k, 1, 0, 0);
    EXPECT(&k, 0, 1);
    kfree(&k);

    kload(&k, IN("a", "[2]", "f32") IN("b", "[2]", "bool") OUT("[2]", "f32"), "\"a\",\"b\"",
          "\"aten\":\"__and__.Tensor\"");
    refused(&k, "bitwise ops take bool or integer operands, not f32");
    kfree(&k);
}

/* ---- fills ---- */

static void test_fill(void **state)
{
    (void)state;
    K k;
    kload(&k, OUT("[]", "bool"), "",
          "\"aten\":\"new_ones.default\",\"args\":{\"size\":[],\"dtype\":\"bool\",\"layout\":null,"
          "\"device\":null,\"pin_memory\":false}");
    EXPECT(&k, 1);
    kfree(&k);

    kload(&k, OUT("[2,2]", "f32"), "", "\"aten\":\"new_zeros\",\"args\":{\"size\":[2,2]}");
    memset(k.out.data, 0xff, 16);
    EXPECT(&k, 0, 0, 0, 0);
    kfree(&k);

    kload(&k, OUT("[3]", "f16"), "",
          "\"aten\":\"full.default\",\"args\":{\"size\":[3],\"fill_value\":2.5}");
    EXPECT(&k, 2.5, 2.5, 2.5);
    kfree(&k);

    /* float fill values truncate into integer dtypes */
    kload(&k, OUT("[2]", "i64"), "", "\"aten\":\"full\",\"args\":{\"size\":[2],\"fill_value\":-2.7}");
    EXPECT(&k, -2, -2);
    kfree(&k);

    kload(&k, OUT("[2]", "bool"), "",
          "\"aten\":\"new_full.default\",\"args\":{\"size\":[2],\"fill_value\":true}");
    EXPECT(&k, 1, 1);
    kfree(&k);
    kload(&k, OUT("[2]", "f32"), "",
          "\"aten\":\"new_full.default\",\"args\":{\"size\":[2],\"fill_value\":\"-inf\"}");
    EXPECT(&k, -INFINITY, -INFINITY);
    kfree(&k);

    kload(&k, IN("x", "[2,3]", "i32") OUT("[2,3]", "i32"), "\"x\"", "\"aten\":\"ones_like.default\"");
    EXPECT(&k, 1, 1, 1, 1, 1, 1);
    kfree(&k);

    kload(&k, OUT("[]", "f32"), "", "\"aten\":\"scalar_tensor.default\",\"args\":{\"s\":3}");
    EXPECT(&k, 3);
    kfree(&k);

    kload(&k, OUT("[3,2]", "f32"), "", "\"aten\":\"ones.default\",\"args\":{\"size\":[2,3]}");
    refused(&k, "the op produces shape [2,3] but the graph's output is [3,2]");
    kfree(&k);
    kload(&k, OUT("[3]", "f32"), "", "\"aten\":\"full.default\",\"args\":{\"size\":[3]}");
    refused(&k, "args.fill_value is required");
    kfree(&k);
}

/* ---- index.Tensor ---- */

static void test_index(void **state)
{
    (void)state;
    K k;
    /* the export's form: cumsum[zeros [1,1,1,1], q [1,1,S,1]] */
    kload(&k, IN("x", "[1,5]", "i64") IN("i", "[1,1,1,1]", "i64") IN("j", "[1,1,5,1]", "i64")
              OUT("[1,1,5,1]", "i64"),
          "\"x\",\"i\",\"j\"", "\"aten\":\"index.Tensor\"");
    SET(&k, 0, 10, 11, 12, 13, 14);
    SET(&k, 1, 0);
    SET(&k, 2, 4, 0, 1, -1, -5);
    EXPECT(&k, 14, 10, 11, 14, 10);
    kfree(&k);

    /* one index: whole rows follow */
    kload(&k, IN("x", "[4,3]", "f32") IN("i", "[2]", "i64") OUT("[2,3]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"index.Tensor\"");
    SET(&k, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    SET(&k, 1, 3, -4);
    EXPECT(&k, 9, 10, 11, 0, 1, 2);
    kfree(&k);

    /* x[:, i] with a None entry */
    kload(&k, IN("x", "[2,3,4]", "i64") IN("i", "[2]", "i32") OUT("[2,2,4]", "i64"), "\"x\",\"i\"",
          "\"aten\":\"index.Tensor\",\"args\":{\"indices\":[null,\"i\"]}");
    for (int v = 0; v < 24; v++) {
        int64_t iv = v;
        fe_k_store_i64(k.in[0].data, FE_I64, v, &iv, 1);
    }
    SET(&k, 1, 2, 0);
    EXPECT(&k, 8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15);
    kfree(&k);

    /* x[i, :, j]: separated indices put their shape first */
    kload(&k, IN("x", "[2,3,4]", "i64") IN("i", "[2]", "i64") IN("j", "[2]", "i64")
              OUT("[2,3]", "i64"),
          "\"x\",\"i\",\"j\"", "\"aten\":\"index.Tensor\",\"args\":{\"indices\":[0,null,1]}");
    for (int v = 0; v < 24; v++) {
        int64_t iv = v;
        fe_k_store_i64(k.in[0].data, FE_I64, v, &iv, 1);
    }
    SET(&k, 1, 1, 0);
    SET(&k, 2, 3, -1);
    EXPECT(&k, 15, 19, 23, 3, 7, 11);
    kfree(&k);

    /* indices broadcast together: [2,1] with [1,2] */
    kload(&k, IN("x", "[3,3]", "i64") IN("i", "[2,1]", "i64") IN("j", "[1,2]", "i64")
              OUT("[2,2]", "i64"),
          "\"x\",\"i\",\"j\"", "\"aten\":\"index\"");
    SET(&k, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8);
    SET(&k, 1, 0, 2);
    SET(&k, 2, 1, 2);
    EXPECT(&k, 1, 2, 7, 8);
    kfree(&k);

    kload(&k, IN("x", "[4,3]", "f32") IN("i", "[2]", "i64") OUT("[2,3]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"index.Tensor\"");
    SET(&k, 1, 1, 4);
    run_fails(&k, "index 4 is out of range for dim 0 of size 4 (index tensor 1)");
    SET(&k, 1, -5, 0);
    run_fails(&k, "index -5 is out of range for dim 0 of size 4");
    kfree(&k);

    kload(&k, IN("x", "[4]", "f32") IN("m", "[4]", "bool") OUT("[2]", "f32"), "\"x\",\"m\"",
          "\"aten\":\"index.Tensor\"");
    refused(&k, "boolean mask");
    kfree(&k);
    kload(&k, IN("x", "[4,3]", "f32") IN("i", "[2]", "i64") OUT("[3,3]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"index.Tensor\"");
    refused(&k, "the op produces shape [2,3] but the graph's output is [3,3]");
    kfree(&k);
    kload(&k, IN("x", "[4,3]", "f32") IN("i", "[2]", "i64") OUT("[2,3]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"index.Tensor\",\"args\":{\"indices\":[0,1]}");
    refused(&k, "args.indices names 2 tensors but the node has 1 index inputs");
    kfree(&k);
    kload(&k, IN("x", "[4]", "f32") IN("i", "[2]", "i64") IN("j", "[2]", "i64") OUT("[2]", "f32"),
          "\"x\",\"i\",\"j\"", "\"aten\":\"index.Tensor\"");
    refused(&k, "2 indices for an input of rank 1");
    kfree(&k);
}

/* ---- dispatch ---- */

static void test_unknown_and_bad_attrs(void **state)
{
    (void)state;
    K k;
    fe_error err = {0};
    kload(&k, IN("x", "[3]", "f32") OUT("[3]", "f32"), "\"x\"", "\"aten\":\"aten::frobnicate\"");
    assert_int_equal(fe_k_aten_supported(k.g, k.n), 0);
    assert_int_equal(fe_k_aten_check(k.g, k.n, &err), FE_EINPUT);
    assert_contains(err.message, "node 'n' is a custom op (aten 'aten::frobnicate')");
    assert_contains(err.message, "no kernel");
    assert_contains(err.message, "cumsum");   /* lists what there is */
    kfree(&k);

    kload(&k, IN("x", "[3]", "f32") OUT("[3]", "f32"), "\"x\"", "\"pattern\":\"opaque\"");
    assert_int_equal(fe_k_aten_supported(k.g, k.n), 0);
    assert_int_equal(fe_k_aten_check(k.g, k.n, &err), FE_EINPUT);
    assert_contains(err.message, "aten 'unknown'");
    kfree(&k);

    /* "aten::" prefixes are accepted */
    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"aten::ne.Scalar\",\"args\":{\"other\":0}");
    SET(&k, 0, 0, 1, 2);
    EXPECT(&k, 0, 1, 1);
    kfree(&k);

    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"ne.Scalar\",\"args\":5");
    refused(&k, "attrs.args must be a JSON object");
    kfree(&k);
    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"ne.Scalar\",\"args\":[1]");
    refused(&k, "attrs.args must be a JSON object");
    kfree(&k);
    kload(&k, IN("x", "[3]", "i64") OUT("[3]", "bool"), "\"x\"",
          "\"aten\":\"ne.Scalar\",\"args\":{\"other\":1,\"dtype\":7}");
    refused(&k, "unsupported argument args.dtype");
    kfree(&k);
}

/* ---- the exports' mask subgraph, through the reference executor ---- */

typedef struct R {
    fe_graph *g;
    fe_exec *ex;
    fe_exec_result *res;
} R;

#define S 8
#define SS "8"
#define T(nm, shape, dt) "\"" nm "\":{\"shape\":" shape ",\"dtype\":\"" dt "\"},"
#define NODE(nm, op, ins, attrs) \
    "{\"name\":\"" nm "\",\"op\":\"" op "\",\"inputs\":[" ins "],\"outputs\":[\"" nm "\"]," \
    "\"attrs\":{" attrs "}},"

/* Position ids (given as tensor "pos", or made by arange as the exports do)
 * to the bool mask and_2 [1,1,S,S]: the nodes, names, args and shapes of
 * llama2-7b-2l-sdpa.json and gpt2-small-2l-eager.json at S = 8. */
#define MASK_TENSORS                                                                            \
    T("slice_1", "[1,1]", "i64") T("sub", "[1,1]", "i64") T("diff", "[1," SS "]", "i64")        \
    T("ne", "[1," SS "]", "bool") T("cumsum", "[1," SS "]", "i64") T("arange_1", "[1]", "i64")  \
    T("arange_3", "[" SS "]", "i64") T("add_1", "[" SS "]", "i64")                              \
    T("arange_4", "[" SS "]", "i64") T("add_2", "[" SS "]", "i64")                              \
    T("unsqueeze_1", "[1,1]", "i64") T("unsqueeze_2", "[1,1,1]", "i64")                         \
    T("unsqueeze_3", "[1,1,1,1]", "i64") T("unsqueeze_7", "[1," SS "]", "i64")                  \
    T("unsqueeze_8", "[1,1," SS "]", "i64") T("unsqueeze_9", "[1,1," SS ",1]", "i64")           \
    T("unsqueeze_10", "[1," SS "]", "i64") T("unsqueeze_11", "[1,1," SS "]", "i64")             \
    T("unsqueeze_12", "[1,1,1," SS "]", "i64") T("new_ones", "[]", "bool")                      \
    T("le", "[1,1," SS "," SS "]", "bool") T("and_1", "[1,1," SS "," SS "]", "bool")            \
    T("index", "[1,1," SS ",1]", "i64") T("index_1", "[1,1,1," SS "]", "i64")                   \
    T("eq", "[1,1," SS "," SS "]", "bool")                                                      \
    "\"and_2\":{\"shape\":[1,1," SS "," SS "],\"dtype\":\"bool\"}"

#define ARANGE(end) "\"aten\":\"arange.default\",\"pattern\":\"elemwise\",\"args\":{\"end\":" end \
    ",\"dtype\":null,\"layout\":null,\"device\":{\"device\":\"cuda:0\"},\"pin_memory\":false}"

#define MASK_NODES(pos)                                                                         \
    NODE("slice_1", "slice", "\"" pos "\"", "\"axis\":1,\"start\":0,\"end\":1,\"step\":1")       \
    NODE("sub", "sub", "\"slice_1\"", "\"scalar\":1")                                          \
    NODE("diff", "custom", "\"" pos "\",\"sub\"", "\"aten\":\"diff.default\",\"pattern\":"      \
         "\"opaque\",\"args\":{\"n\":1,\"dim\":-1,\"append\":null}")                             \
    NODE("ne", "custom", "\"diff\"", "\"aten\":\"ne.Scalar\",\"pattern\":\"broadcast\","        \
         "\"args\":{\"other\":1}")                                                              \
    NODE("cumsum", "custom", "\"ne\"", "\"aten\":\"cumsum.default\",\"pattern\":\"reduction\"," \
         "\"args\":{\"dim\":-1,\"dtype\":null}")                                                \
    NODE("arange_1", "custom", "", ARANGE("1"))                                                 \
    NODE("arange_3", "custom", "", ARANGE(SS))                                                  \
    NODE("add_1", "add", "\"arange_3\"", "\"scalar\":0")                                       \
    NODE("arange_4", "custom", "", ARANGE(SS))                                                  \
    NODE("add_2", "add", "\"arange_4\"", "\"scalar\":0")                                       \
    NODE("unsqueeze_1", "reshape", "\"arange_1\"", "\"shape\":[1,1]")                          \
    NODE("unsqueeze_2", "reshape", "\"unsqueeze_1\"", "\"shape\":[1,1,1]")                     \
    NODE("unsqueeze_3", "reshape", "\"unsqueeze_2\"", "\"shape\":[1,1,1,1]")                   \
    NODE("unsqueeze_7", "reshape", "\"add_1\"", "\"shape\":[1," SS "]")                        \
    NODE("unsqueeze_8", "reshape", "\"unsqueeze_7\"", "\"shape\":[1,1," SS "]")                \
    NODE("unsqueeze_9", "reshape", "\"unsqueeze_8\"", "\"shape\":[1,1," SS ",1]")              \
    NODE("unsqueeze_10", "reshape", "\"add_2\"", "\"shape\":[1," SS "]")                       \
    NODE("unsqueeze_11", "reshape", "\"unsqueeze_10\"", "\"shape\":[1,1," SS "]")              \
    NODE("unsqueeze_12", "reshape", "\"unsqueeze_11\"", "\"shape\":[1,1,1," SS "]")            \
    NODE("new_ones", "custom", "", "\"aten\":\"new_ones.default\",\"pattern\":\"elemwise\","   \
         "\"args\":{\"size\":[],\"dtype\":\"bool\",\"layout\":null,\"device\":null,"            \
         "\"pin_memory\":false}")                                                               \
    NODE("le", "custom", "\"unsqueeze_12\",\"unsqueeze_9\"",                                    \
         "\"aten\":\"le.Tensor\",\"pattern\":\"broadcast\"")                                    \
    NODE("and_1", "custom", "\"new_ones\",\"le\"",                                              \
         "\"aten\":\"__and__.Tensor\",\"pattern\":\"broadcast\"")                               \
    NODE("index", "custom", "\"cumsum\",\"unsqueeze_3\",\"unsqueeze_9\"",                       \
         "\"aten\":\"index.Tensor\",\"pattern\":\"injective\"")                                 \
    NODE("index_1", "custom", "\"cumsum\",\"unsqueeze_3\",\"unsqueeze_12\"",                    \
         "\"aten\":\"index.Tensor\",\"pattern\":\"injective\"")                                 \
    NODE("eq", "custom", "\"index\",\"index_1\"", "\"aten\":\"eq.Tensor\",\"pattern\":\"broadcast\"") \
    "{\"name\":\"and_2\",\"op\":\"custom\",\"inputs\":[\"and_1\",\"eq\"],\"outputs\":[\"and_2\"]," \
    "\"attrs\":{\"aten\":\"__and__.Tensor\",\"pattern\":\"broadcast\"}}"

static const char llama_mask[] =
    "{\"format\":\"fuseeng.model/1\",\"name\":\"mask\",\"tensors\":{"
    T("arange", "[" SS "]", "i64") T("add", "[" SS "]", "i64") T("unsqueeze", "[1," SS "]", "i64")
    MASK_TENSORS "},\"nodes\":["
    NODE("arange", "custom", "", ARANGE(SS))
    NODE("add", "add", "\"arange\"", "\"scalar\":0")
    NODE("unsqueeze", "reshape", "\"add\"", "\"shape\":[1," SS "]")
    MASK_NODES("unsqueeze")
    "],\"outputs\":[\"and_2\",\"cumsum\",\"unsqueeze\",\"index\"]}";

static const char packed_mask[] =
    "{\"format\":\"fuseeng.model/1\",\"name\":\"packed\",\"tensors\":{"
    "\"pos\":{\"shape\":[1," SS "],\"dtype\":\"i64\",\"kind\":\"input\"},"
    MASK_TENSORS "},\"nodes\":["
    MASK_NODES("pos")
    "],\"outputs\":[\"and_2\",\"cumsum\",\"index_1\"]}";

static void rload(R *r, const char *json)
{
    fe_error err = {0};
    memset(r, 0, sizeof *r);
    r->g = tl_graph(json);
    for (int32_t i = 0; i < r->g->nnodes; i++) {
        const fe_node *n = fe_graph_node(r->g, i);
        if (n->op == FE_OP_CUSTOM && !fe_k_aten_supported(r->g, n)) {
            fe_k_aten_check(r->g, n, &err);
            fail_msg("%s", err.message);
        }
    }
    r->ex = fe_exec_new(r->g, NULL, &err);
    if (!r->ex)
        fail_msg("session: %s", err.message);
}

static void rrun(R *r)
{
    fe_error err = {0};
    if (fe_exec_reference(r->ex, &r->res, &err))
        fail_msg("reference run: %s", err.message);
}

static const fe_k_tensor *rout(R *r, const char *name)
{
    int32_t t = fe_graph_find_tensor(r->g, name);
    for (int k = 0; k < r->res->noutputs; k++)
        if (r->res->tensors[k] == t)
            return &r->res->outputs[k];
    fail_msg("%s is not an output", name);
    return NULL;
}

static void rfree(R *r)
{
    fe_exec_result_free(r->res);
    fe_exec_free(r->ex);
    fe_graph_free(r->g);
}

/* mask[q][kv] = kv <= q and q, kv in the same packed sequence */
static void check_mask(R *r, const int64_t *seq)
{
    const fe_k_tensor *m = rout(r, "and_2");
    assert_int_equal(m->dtype, FE_BOOL);
    assert_int_equal(fe_k_numel(m), S * S);
    for (int q = 0; q < S; q++)
        for (int kv = 0; kv < S; kv++) {
            double want = kv <= q && seq[q] == seq[kv], got = at(m, q * S + kv);
            if (got != want)
                fail_msg("mask[%d][%d] = %g, want %g", q, kv, got, want);
        }
}

static void test_llama_mask(void **state)
{
    (void)state;
    static const int64_t one_seq[S] = {0};
    R r;
    rload(&r, llama_mask);
    rrun(&r);
    /* cache positions 0..S-1 are one sequence: diff is all 1, ne all false,
     * cumsum all 0, and the mask is plain causal */
    check_mask(&r, one_seq);
    for (int i = 0; i < S; i++) {
        assert_int_equal(at(rout(&r, "unsqueeze"), i), i);
        assert_int_equal(at(rout(&r, "cumsum"), i), 0);
        assert_int_equal(at(rout(&r, "index"), i), 0);
    }
    rfree(&r);
}

static void test_packed_mask(void **state)
{
    (void)state;
    /* three packed sequences: position ids restart at 0 */
    static const int64_t pos[S] = {0, 1, 2, 0, 1, 0, 1, 2};
    static const int64_t seq[S] = {0, 0, 0, 1, 1, 2, 2, 2};
    R r;
    rload(&r, packed_mask);
    fe_k_tensor *b = &fe_exec_buffers(r.ex)[fe_graph_find_tensor(r.g, "pos")];
    fe_k_store_i64(b->data, b->dtype, 0, pos, S);
    rrun(&r);
    for (int i = 0; i < S; i++) {
        assert_int_equal(at(rout(&r, "cumsum"), i), seq[i]);
        assert_int_equal(at(rout(&r, "index_1"), i), seq[i]);
    }
    check_mask(&r, seq);
    rfree(&r);
}

/* node.c: a custom op without a kernel keeps its clear error; one whose
 * kernel refuses the args says why. */
static void test_node_run_errors(void **state)
{
    (void)state;
    R r;
    fe_error err = {0};
    rload(&r, "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{"
              "\"x\":{\"shape\":[4],\"dtype\":\"i64\",\"kind\":\"input\"},"
              "\"y\":{\"shape\":[4],\"dtype\":\"bool\"}},\"nodes\":["
              "{\"name\":\"c\",\"op\":\"custom\",\"inputs\":[\"x\"],\"outputs\":[\"y\"],"
              "\"attrs\":{\"aten\":\"ne.Scalar\",\"args\":{\"other\":2}}}],\"outputs\":[\"y\"]}");
    fe_k_tensor *b = &fe_exec_buffers(r.ex)[fe_graph_find_tensor(r.g, "x")];
    const int64_t xv[4] = {2, 0, 2, 5};
    fe_k_store_i64(b->data, b->dtype, 0, xv, 4);
    rrun(&r);
    for (int i = 0; i < 4; i++)
        assert_int_equal(at(rout(&r, "y"), i), xv[i] != 2);
    rfree(&r);

    fe_graph *g = tl_graph("{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{"
                           "\"x\":{\"shape\":[4],\"dtype\":\"i64\",\"kind\":\"input\"},"
                           "\"y\":{\"shape\":[4],\"dtype\":\"bool\"}},\"nodes\":["
                           "{\"name\":\"c\",\"op\":\"custom\",\"inputs\":[\"x\"],\"outputs\":[\"y\"],"
                           "\"attrs\":{\"aten\":\"ne.Scalar\",\"args\":{\"alpha\":2}}}],"
                           "\"outputs\":[\"y\"]}");
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    fe_exec_result *res = NULL;
    assert_non_null(ex);
    assert_int_equal(fe_exec_reference(ex, &res, &err), FE_EINPUT);
    assert_contains(err.message, "node 'c' (aten 'ne.Scalar'): unsupported argument args.alpha");
    fe_exec_free(ex);
    fe_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arange),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_cumsum),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_bitwise_logical),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_unknown_and_bad_attrs),
        cmocka_unit_test(test_llama_mask),
        cmocka_unit_test(test_packed_mask),
        cmocka_unit_test(test_node_run_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
