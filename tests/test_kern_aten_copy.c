/* test_kern_aten_copy.c: the exported clone, contiguous and gather customs
 * (kernels/ops/aten_copy.c) against values worked out by hand from PyTorch's
 * semantics (torch.gather's documentation example among them), their
 * refusals and run-time index errors, and the index bound that random
 * inputs are drawn under (aten_bounds.h). */
#include "atenlib.h"
#include "aten_bounds.h"

static void fill_iota(fe_k_tensor *t)
{
    for (int64_t i = 0; i < fe_k_numel(t); i++) {
        int64_t v = i;
        fe_k_store_i64(t->data, t->dtype, i, &v, 1);
    }
}

static void test_copy(void **state)
{
    (void)state;
    static const char *const names[] = {"clone.default", "contiguous.default", "aten::clone",
                                        "aten.contiguous"};
    K k;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char attrs[160];
        snprintf(attrs, sizeof attrs, "\"aten\":\"%s\",\"args\":{\"memory_format\":"
                 "\"torch.contiguous_format\"}", names[i]);
        kload(&k, IN("x", "[2,3]", "f16") OUT("[2,3]", "f16"), "\"x\"", attrs);
        SET(&k, 0, 1.5, -2, 0.333251953125, 65504, -0.0, 3);
        EXPECT(&k, 1.5, -2, 0.333251953125, 65504, -0.0, 3);
        kfree(&k);
    }
    kload(&k, IN("x", "[4]", "i64") OUT("[4]", "i64"), "\"x\"", "\"aten\":\"clone\"");
    SET(&k, 0, -7, 0, 1LL << 40, 9);
    EXPECT(&k, -7, 0, 1LL << 40, 9);
    kfree(&k);
    kload(&k, IN("x", "[]", "bool") OUT("[]", "bool"), "\"x\"", "\"aten\":\"contiguous\"");
    SET(&k, 0, 1);
    EXPECT(&k, 1);
    kfree(&k);

    refused_node(IN("x", "[2,3]", "f32") OUT("[3,2]", "f32"), "\"x\"", "\"aten\":\"clone.default\"",
                 "the op produces shape [2,3] but the graph's output is [3,2]");
    refused_node(IN("x", "[2,3]", "f32") OUT("[2,3]", "f16"), "\"x\"",
                 "\"aten\":\"contiguous.default\"",
                 "the graph's output is f16 but the op gives f32");
    refused_node(IN("x", "[2]", "f32") IN("z", "[2]", "f32") OUT("[2]", "f32"), "\"x\",\"z\"",
                 "\"aten\":\"clone.default\"", "takes one tensor input, not 2");
    refused_node(IN("x", "[2]", "f32") OUT("[2]", "f32"), "\"x\"",
                 "\"aten\":\"clone.default\",\"args\":{\"alpha\":1}",
                 "unsupported argument args.alpha (this kernel reads: none)");
}

static void test_gather(void **state)
{
    (void)state;
    K k;
    /* torch.gather's documentation: gather([[1, 2], [3, 4]], 1, [[0, 0], [1, 0]]) */
    kload(&k, IN("x", "[2,2]", "f32") IN("i", "[2,2]", "i64") OUT("[2,2]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"gather.default\",\"args\":{\"dim\":1,\"sparse_grad\":false}");
    SET(&k, 0, 1, 2, 3, 4);
    SET(&k, 1, 0, 0, 1, 0);
    EXPECT(&k, 1, 1, 4, 3);
    kfree(&k);

    /* dim 0, an index of one row: out[0][j] = x[i[0][j]][j] */
    kload(&k, IN("x", "[3,3]", "i64") IN("i", "[1,3]", "i64") OUT("[1,3]", "i64"), "\"x\",\"i\"",
          "\"aten\":\"gather\",\"args\":{\"dim\":0}");
    SET(&k, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    SET(&k, 1, 2, 1, 0);
    EXPECT(&k, 7, 5, 3);
    kfree(&k);

    /* dim -1, an index with fewer rows than the input (rows 0 and 1) */
    kload(&k, IN("x", "[3,4]", "f32") IN("i", "[2,2]", "i64") OUT("[2,2]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"aten::gather.default\",\"args\":{\"dim\":-1}");
    fill_iota(&k.in[0]);
    SET(&k, 1, 3, 0, 1, 1);
    EXPECT(&k, 3, 0, 5, 5);
    kfree(&k);

    /* rank 3 along the middle dim, i32 index narrower in the last dim:
     * out[a][b][0] = x[a][i[a][b][0]][0], x[a][j][c] = 6a + 2j + c */
    kload(&k, IN("x", "[2,3,2]", "bf16") IN("i", "[2,2,1]", "i32") OUT("[2,2,1]", "bf16"),
          "\"x\",\"i\"", "\"aten\":\"gather.default\",\"args\":{\"dim\":1}");
    fill_iota(&k.in[0]);
    SET(&k, 1, 2, 0, 1, 1);
    EXPECT(&k, 4, 0, 8, 8);
    kfree(&k);

    /* a 0-d gather takes index 0 only */
    kload(&k, IN("x", "[]", "f32") IN("i", "[]", "i64") OUT("[]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"gather.default\",\"args\":{\"dim\":0}");
    SET(&k, 0, 2.5);
    SET(&k, 1, 0);
    EXPECT(&k, 2.5);
    SET(&k, 1, 1);
    run_fails(&k, "index 1 (element 0 of the index) is out of range for dim 0 of size 1");
    kfree(&k);

    /* values outside [0, size): torch.gather takes no negative indices */
    kload(&k, IN("x", "[2,2]", "f32") IN("i", "[2,2]", "i64") OUT("[2,2]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"gather.default\",\"args\":{\"dim\":1}");
    SET(&k, 1, 0, 1, 1, 2);
    run_fails(&k, "index 2 (element 3 of the index) is out of range for dim 1 of size 2: "
              "torch.gather takes indices in [0, 2)");
    SET(&k, 1, -1, 0, 0, 0);
    run_fails(&k, "index -1 (element 0 of the index) is out of range for dim 1 of size 2");
    kfree(&k);
}

static void test_gather_refused(void **state)
{
    (void)state;
    static const struct {
        const char *tensors, *args, *what;
    } cases[] = {
        {IN("x", "[2,3]", "f32") IN("i", "[2,3]", "i64") OUT("[2,3]", "f32"), "{}",
         "args.dim is required"},
        {IN("x", "[2,3]", "f32") IN("i", "[2,3]", "i64") OUT("[2,3]", "f32"), "{\"dim\":2}",
         "dim 2 is out of range for rank 2"},
        {IN("x", "[2,3]", "f32") IN("i", "[2,3]", "i64") OUT("[2,3]", "f32"), "{\"dim\":\"1\"}",
         "args.dim must be an integer"},
        {IN("x", "[2,3]", "f32") IN("i", "[6]", "i64") OUT("[6]", "f32"), "{\"dim\":0}",
         "the index [6] must have the input [2,3]'s rank"},
        {IN("x", "[2,3]", "f32") IN("i", "[3,1]", "i64") OUT("[3,1]", "f32"), "{\"dim\":1}",
         "the index [3,1] is larger than the input [2,3] along dim 0 (only dim 1 may differ"},
        {IN("x", "[2,3]", "f32") IN("i", "[2,3]", "f32") OUT("[2,3]", "f32"), "{\"dim\":1}",
         "the index is f32; it must be i64 or i32"},
        {IN("x", "[2,3]", "f32") IN("i", "[2,5]", "i64") OUT("[2,3]", "f32"), "{\"dim\":1}",
         "the op produces shape [2,5] but the graph's output is [2,3]"},
        {IN("x", "[2,3]", "f32") IN("i", "[2,3]", "i64") OUT("[2,3]", "f16"), "{\"dim\":1}",
         "the graph's output is f16 but the op gives f32"},
        {IN("x", "[2,3]", "f32") IN("i", "[2,3]", "i64") OUT("[2,3]", "f32"),
         "{\"dim\":1,\"index\":0}", "unsupported argument args.index (this kernel reads: dim "
         "sparse_grad)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char attrs[256];
        snprintf(attrs, sizeof attrs, "\"aten\":\"gather.default\",\"args\":%s", cases[c].args);
        refused_node(cases[c].tensors, "\"x\",\"i\"", attrs, cases[c].what);
    }
    refused_node(IN("x", "[2,3]", "f32") OUT("[2,3]", "f32"), "\"x\"",
                 "\"aten\":\"gather.default\",\"args\":{\"dim\":0}",
                 "takes two tensor inputs (input, index), not 1");
}

/* Random indices for bench, profile and --execute are drawn below this. */
static void test_gather_bound(void **state)
{
    (void)state;
    K k;
    kload(&k, IN("x", "[5,7,3]", "f32") IN("i", "[5,2,3]", "i64") OUT("[5,2,3]", "f32"),
          "\"x\",\"i\"", "\"aten\":\"gather.default\",\"args\":{\"dim\":-2}");
    assert_int_equal(fe_k_aten_index_bound(k.g, k.n, 1), 7);
    assert_int_equal(fe_k_aten_index_bound(k.g, k.n, 0), -1);
    kfree(&k);
    kload(&k, IN("x", "[5,7]", "f32") IN("i", "[5,2]", "i64") OUT("[5,2]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"aten::gather\",\"args\":{\"dim\":0}");
    assert_int_equal(fe_k_aten_index_bound(k.g, k.n, 1), 5);
    kfree(&k);
    /* no usable dim: no bound (the kernel refuses the node anyway) */
    kload(&k, IN("x", "[5,7]", "f32") IN("i", "[5,2]", "i64") OUT("[5,2]", "f32"), "\"x\",\"i\"",
          "\"aten\":\"gather.default\",\"args\":{\"dim\":9}");
    assert_int_equal(fe_k_aten_index_bound(k.g, k.n, 1), -1);
    kfree(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_gather_refused),
        cmocka_unit_test(test_gather_bound),
    };
    return cmocka_run_group_tests_name("tests", tests, NULL, NULL);
}
