/* test_positions.c: the registry ops that compute with positions and sizes
 * (compare, arange, trilu: kernels/ops/positions.c, aten.c's fe_k_compare)
 * through fe_k_node_run, against values worked out by hand from PyTorch's
 * torch.gt / torch.arange / torch.triu / torch.tril; and an arange whose
 * end is a dim name, loaded at another --dim. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "atenlib.h"
#include "node.h"
#include "save.h"

/* Run one-node model json (node "n", output "y"); inputs x0, x1 from xs. */
static void run_node(const char *json, const double *const *xs, const double *want, int64_t nwant)
{
    fe_graph *g = tl_graph(json);
    const fe_node *n = fe_graph_node(g, fe_graph_find_node(g, "n"));
    fe_k_tensor in[2], out = kbuf(g, fe_node_output(g, n, 0));
    for (int i = 0; i < n->nin; i++) {
        in[i] = kbuf(g, fe_node_input(g, n, i));
        store(&in[i], xs[i], fe_k_numel(&in[i]));
    }
    fe_error err = {0};
    if (fe_k_node_run(g, n, in, &out, &err))
        fail_msg("run: %s", err.message);
    assert_int_equal(fe_k_numel(&out), nwant);
    for (int64_t i = 0; i < nwant; i++)
        if (at(&out, i) != want[i])
            fail_msg("y[%lld] = %g, want %g", (long long)i, at(&out, i), want[i]);
    for (int i = 0; i < n->nin; i++)
        free(in[i].data);
    free(out.data);
    fe_graph_free(g);
}

#define MODEL(tensors, node) \
    "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"tensors\":{" tensors "},\"nodes\":[" node \
    "],\"outputs\":[\"y\"]}"
#define T_IN(nm, shape, dt) "\"" nm "\":{\"shape\":" shape ",\"dtype\":\"" dt "\",\"kind\":\"input\"}"

static void test_compare(void **state)
{
    (void)state;
    const double a[] = {1, 2, 3, 4, 5, 6}, b[] = {3, 2, 1};
    const double *ab[] = {a, b};
    /* [2,3] > [3], broadcast */
    run_node(MODEL(T_IN("x0", "[2,3]", "i64") "," T_IN("x1", "[3]", "f32"),
                   "{\"name\":\"n\",\"op\":\"compare\",\"inputs\":[\"x0\",\"x1\"],"
                   "\"outputs\":[\"y\"],\"attrs\":{\"cmp\":\"gt\"}}"),
             ab, (const double[]){0, 0, 1, 1, 1, 1}, 6);
    /* every cmp against the scalar 3, then 3 op x (scalar_index 0 mirrors) */
    static const char *const cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    static const double x_op_3[6][6] = {{0, 0, 1, 0, 0, 0}, {1, 1, 0, 1, 1, 1},
                                        {1, 1, 0, 0, 0, 0}, {1, 1, 1, 0, 0, 0},
                                        {0, 0, 0, 1, 1, 1}, {0, 0, 1, 1, 1, 1}};
    for (int c = 0; c < 6; c++)
        for (int first = 0; first < 2; first++) {
            char json[1024];
            snprintf(json, sizeof json,
                     MODEL(T_IN("x0", "[6]", "i32"),
                           "{\"name\":\"n\",\"op\":\"compare\",\"inputs\":[\"x0\"],"
                           "\"outputs\":[\"y\"],\"attrs\":{\"cmp\":\"%s\",\"scalar\":3%s}}"),
                     cmps[c], first ? ",\"scalar_index\":0" : "");
            /* 3 op x is x mirror(op) 3: lt <-> gt, le <-> ge */
            static const int mirror[] = {0, 1, 4, 5, 2, 3};
            run_node(json, (const double *const[]){a}, x_op_3[first ? mirror[c] : c], 6);
        }
    /* a real scalar compares as a float: 2.5 < x on integers */
    run_node(MODEL(T_IN("x0", "[3]", "i64"),
                   "{\"name\":\"n\",\"op\":\"compare\",\"inputs\":[\"x0\"],\"outputs\":[\"y\"],"
                   "\"attrs\":{\"cmp\":\"gt\",\"scalar\":2.5}}"),
             (const double *const[]){b}, (const double[]){1, 0, 0}, 3);
}

static void test_arange_trilu(void **state)
{
    (void)state;
    run_node(MODEL("", "{\"name\":\"n\",\"op\":\"arange\",\"inputs\":[],\"outputs\":[\"y\"],"
                       "\"attrs\":{\"start\":10,\"end\":0,\"step\":-3}}"),
             NULL, (const double[]){10, 7, 4, 1}, 4);
    run_node(MODEL("", "{\"name\":\"n\",\"op\":\"arange\",\"inputs\":[],\"outputs\":[\"y\"],"
                       "\"attrs\":{\"end\":3,\"dtype\":\"f16\"}}"),
             NULL, (const double[]){0, 1, 2}, 3);
    const double m[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    /* torch.triu(m, 1) and torch.tril(m, -1) of a [3,4]; diagonal 5 keeps nothing of triu */
    run_node(MODEL(T_IN("x0", "[3,4]", "f32"), "{\"name\":\"n\",\"op\":\"trilu\",\"inputs\":[\"x0\"],"
                   "\"outputs\":[\"y\"],\"attrs\":{\"diagonal\":1}}"),
             (const double *const[]){m}, (const double[]){0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, 12);
    run_node(MODEL(T_IN("x0", "[3,4]", "i64"), "{\"name\":\"n\",\"op\":\"trilu\",\"inputs\":[\"x0\"],"
                   "\"outputs\":[\"y\"],\"attrs\":{\"upper\":false,\"diagonal\":-1}}"),
             (const double *const[]){m}, (const double[]){0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}, 12);
    run_node(MODEL(T_IN("x0", "[2,2]", "f32"), "{\"name\":\"n\",\"op\":\"trilu\",\"inputs\":[\"x0\"],"
                   "\"outputs\":[\"y\"],\"attrs\":{\"diagonal\":5}}"),
             (const double *const[]){m}, (const double[]){0, 0, 0, 0}, 4);
    /* a batch of two [2,2] matrices, tril with diagonal 0 */
    run_node(MODEL(T_IN("x0", "[2,2,2]", "f32"), "{\"name\":\"n\",\"op\":\"trilu\",\"inputs\":[\"x0\"],"
                   "\"outputs\":[\"y\"],\"attrs\":{\"upper\":false}}"),
             (const double *const[]){m}, (const double[]){1, 0, 3, 4, 5, 0, 7, 8}, 8);
}

/* arange's end and slice's end written as a dim name move with --dim, and
 * a saved model writes them back as the name. */
static void test_dim_attrs(void **state)
{
    (void)state;
    static const char json[] =
        "{\"format\":\"fuseeng.model/1\",\"name\":\"t\",\"dims\":{\"S\":4},"
        "\"tensors\":{\"w\":{\"shape\":[16],\"dtype\":\"f32\",\"kind\":\"weight\"}},"
        "\"nodes\":[{\"name\":\"n\",\"op\":\"arange\",\"inputs\":[],\"outputs\":[\"p\"],"
        "\"attrs\":{\"end\":\"S\"}},{\"name\":\"s\",\"op\":\"slice\",\"inputs\":[\"w\"],"
        "\"outputs\":[\"y\"],\"attrs\":{\"end\":\"S\"}}],\"outputs\":[\"p\",\"y\"]}";
    fe_error err = {0};
    const char *names[] = {"S"};
    int64_t vals[] = {9};
    fe_dimset d = {1, names, vals};
    fe_graph *g = fe_load_model_buffer(json, strlen(json), "t.json", &d, &err);
    if (!g)
        fail_msg("load: %s", err.message);
    assert_int_equal(fe_graph_tensor(g, fe_graph_find_tensor(g, "p"))->numel, 9);
    assert_int_equal(fe_graph_tensor(g, fe_graph_find_tensor(g, "y"))->numel, 9);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(fe_save_model(g, f, 0, &err), FE_OK);
    fclose(f);
    assert_contains(text, "\"attrs\":{\"end\":\"S\"}");
    fe_graph_free(g);
    /* read back at S=2: the names, not the values, were saved */
    vals[0] = 2;
    g = fe_load_model_buffer(text, len, "saved.json", &d, &err);
    if (!g)
        fail_msg("reload: %s", err.message);
    assert_int_equal(fe_graph_tensor(g, fe_graph_find_tensor(g, "p"))->numel, 2);
    assert_int_equal(fe_graph_tensor(g, fe_graph_find_tensor(g, "y"))->numel, 2);
    fe_graph_free(g);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_arange_trilu),
        cmocka_unit_test(test_dim_attrs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
