/* test_model_io.c: every example and shared model loads, validates and
 * round-trips: load -> save -> load gives an identical graph, and saving
 * again gives the same bytes. */
#include "testlib.h"
#include "save.h"

static char *save_to_string(const fe_graph *g, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    fe_error err = {0};
    assert_non_null(f);
    assert_int_equal(fe_save_model(g, f, 1, &err), FE_OK);
    fclose(f);
    return buf;
}

static void attr_text(const fe_graph *g, const fe_attr *a, char *buf, size_t n)
{
    switch (a->type) {
    case FE_ATTR_NULL: snprintf(buf, n, "null"); break;
    case FE_ATTR_BOOL:
    case FE_ATTR_INT: snprintf(buf, n, "%d:%lld", a->type, (long long)a->v.i); break;
    case FE_ATTR_FLOAT: snprintf(buf, n, "f:%.17g", a->v.f); break;
    case FE_ATTR_STR: snprintf(buf, n, "s:%s", fe_graph_str(g, a->v.s)); break;
    case FE_ATTR_JSON: snprintf(buf, n, "j:%s", g->blob + a->v.off); break;
    case FE_ATTR_INTS: {
        size_t len = (size_t)snprintf(buf, n, "l:");
        for (int i = 0; i < a->n && len < n; i++) {
            int64_t v = g->ints[a->v.off + i];
            if (FE_IS_SYM(v))
                len += (size_t)snprintf(buf + len, n - len, "%s,",
                                        fe_graph_str(g, g->dims[v - FE_SYM_BASE].name));
            else
                len += (size_t)snprintf(buf + len, n - len, "%lld,", (long long)v);
        }
        break;
    }
    }
}

static void same_tensor(const fe_graph *a, const fe_tensor *ta, const fe_graph *b, int32_t tb_id)
{
    assert_true(tb_id >= 0);
    const fe_tensor *tb = fe_graph_tensor(b, tb_id);
    assert_string_equal(fe_tensor_name(a, ta), fe_tensor_name(b, tb));
    assert_int_equal(ta->rank, tb->rank);
    assert_int_equal(ta->dtype, tb->dtype);
    assert_int_equal(ta->kind, tb->kind);
    assert_int_equal(ta->flags, tb->flags);
    assert_int_equal(ta->numel, tb->numel);
    assert_memory_equal(fe_tensor_shape(a, ta), fe_tensor_shape(b, tb), sizeof(int64_t) * ta->rank);
    for (int i = 0; i < ta->rank; i++) {
        int32_t sa = a->shape_sym[ta->shape_off + i], sb = b->shape_sym[tb->shape_off + i];
        assert_int_equal(sa < 0, sb < 0);
        if (sa >= 0)
            assert_string_equal(fe_graph_str(a, a->dims[sa].name), fe_graph_str(b, b->dims[sb].name));
    }
}

static void same_graph(const fe_graph *a, const fe_graph *b)
{
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->source, b->source);
    assert_int_equal(a->ndims, b->ndims);
    for (int32_t d = 0; d < a->ndims; d++) {
        assert_string_equal(fe_graph_str(a, a->dims[d].name), fe_graph_str(b, b->dims[d].name));
        assert_int_equal(a->dims[d].value, b->dims[d].value);
    }
    assert_int_equal(a->ntensors, b->ntensors);
    for (int32_t t = 0; t < a->ntensors; t++) {
        const fe_tensor *ta = fe_graph_tensor(a, t);
        same_tensor(a, ta, b, fe_graph_find_tensor(b, fe_tensor_name(a, ta)));
    }
    assert_int_equal(a->nnodes, b->nnodes);
    for (int32_t v = 0; v < a->nnodes; v++) {
        const fe_node *na = fe_graph_node(a, v), *nb = fe_graph_node(b, v);
        assert_string_equal(fe_node_name(a, na), fe_node_name(b, nb));
        assert_int_equal(na->op, nb->op);
        assert_int_equal(na->pattern, nb->pattern);
        assert_int_equal(na->nin, nb->nin);
        assert_int_equal(na->nout, nb->nout);
        assert_int_equal(na->flops, nb->flops);
        assert_int_equal(na->bytes_read, nb->bytes_read);
        assert_int_equal(na->bytes_written, nb->bytes_written);
        for (int k = 0; k < na->nin + na->nout; k++)
            assert_string_equal(fe_tensor_name(a, fe_graph_tensor(a, a->io[na->io_off + k])),
                                fe_tensor_name(b, fe_graph_tensor(b, b->io[nb->io_off + k])));
        assert_int_equal(na->nattr, nb->nattr);
        for (int i = 0; i < na->nattr; i++) {
            char ta[2048], tb[2048];
            const fe_attr *aa = &a->attrs[na->attr_off + i], *ab = &b->attrs[nb->attr_off + i];
            assert_string_equal(fe_graph_str(a, aa->key), fe_graph_str(b, ab->key));
            attr_text(a, aa, ta, sizeof ta);
            attr_text(b, ab, tb, sizeof tb);
            assert_string_equal(ta, tb);
        }
    }
    assert_int_equal(a->noutputs, b->noutputs);
    for (int32_t i = 0; i < a->noutputs; i++)
        assert_string_equal(fe_tensor_name(a, fe_graph_tensor(a, a->outputs[i])),
                            fe_tensor_name(b, fe_graph_tensor(b, b->outputs[i])));
}

static void round_trip(void **state)
{
    const char *path = *state;
    fe_error err = {0};
    fe_graph *g = fe_load_model_file(path, NULL, &err);
    if (!g)
        fail_msg("%s", err.message);
    size_t len1, len2;
    char *text1 = save_to_string(g, &len1);
    fe_graph *g2 = fe_load_model_buffer(text1, len1, path, NULL, &err);
    if (!g2)
        fail_msg("reloading the saved model failed: %s", err.message);
    same_graph(g, g2);
    char *text2 = save_to_string(g2, &len2);
    assert_int_equal(len1, len2);
    assert_memory_equal(text1, text2, len1);
    free(text1);
    free(text2);
    fe_graph_free(g);
    fe_graph_free(g2);
}

/* A file whose nodes are listed consumer-first loads into the same
 * topological order as the sorted one. */
static void any_node_order(void **state)
{
    (void)state;
    const char *sorted =
        "{\"format\": \"fuseeng.model/1\", \"tensors\": {\"x\": {\"shape\": [2], \"dtype\": \"f32\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"a\"]},"
        "            {\"name\": \"b\", \"op\": \"neg\", \"inputs\": [\"a\"], \"outputs\": [\"b\"]},"
        "            {\"name\": \"c\", \"op\": \"add\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"c\"]}],"
        " \"outputs\": [\"c\"]}";
    const char *reversed =
        "{\"format\": \"fuseeng.model/1\", \"outputs\": [\"c\"],"
        " \"nodes\": [{\"name\": \"c\", \"op\": \"add\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"c\"]},"
        "            {\"name\": \"b\", \"op\": \"neg\", \"inputs\": [\"a\"], \"outputs\": [\"b\"]},"
        "            {\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"a\"]}],"
        " \"tensors\": {\"x\": {\"shape\": [2], \"dtype\": \"f32\", \"kind\": \"input\"}}}";
    fe_graph *a = tl_graph(sorted), *b = tl_graph(reversed);
    for (int32_t v = 0; v < 3; v++)
        assert_string_equal(fe_node_name(a, fe_graph_node(a, v)), fe_node_name(b, fe_graph_node(b, v)));
    /* Producers come first; consumers are indexed. */
    const fe_tensor *ta = fe_graph_tensor(b, fe_graph_find_tensor(b, "a"));
    assert_int_equal(ta->producer, 0);
    assert_int_equal(ta->ncons, 2);
    assert_int_equal(fe_tensor_consumer(b, ta, 0), 1);
    assert_int_equal(fe_tensor_consumer(b, ta, 1), 2);
    fe_graph_free(a);
    fe_graph_free(b);
}

/* --dim overrides re-resolve every shape that uses the dim. */
static void dim_override(void **state)
{
    (void)state;
    const char *m =
        "{\"format\": \"fuseeng.model/1\", \"dims\": {\"S\": 8},"
        " \"tensors\": {\"x\": {\"shape\": [\"S\", 4], \"dtype\": \"f16\", \"kind\": \"input\"}},"
        " \"nodes\": [{\"name\": \"r\", \"op\": \"reshape\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
        "             \"attrs\": {\"shape\": [2, \"S\", 2]}}], \"outputs\": [\"y\"]}";
    const char *names[] = {"S"};
    int64_t values[] = {100};
    fe_dimset ds = {1, names, values};
    fe_error err = {0};
    fe_graph *g = fe_load_model_buffer(m, strlen(m), "t.json", &ds, &err);
    assert_non_null(g);
    const fe_tensor *y = fe_graph_tensor(g, fe_graph_find_tensor(g, "y"));
    assert_int_equal(y->numel, 400);
    assert_int_equal(fe_tensor_shape(g, y)[1], 100);
    assert_int_equal(y->bytes, 800);
    fe_graph_free(g);
}

int main(void)
{
    glob_t gl;
    char pat[4096];
    size_t n = 0;
    memset(&gl, 0, sizeof gl);
    n = tl_glob("examples/models/*.json", &gl, 0);
    n = tl_glob("examples/bench/*.json", &gl, n > 0);
    snprintf(pat, sizeof pat, "%s/models/*.json", tl_shared());
    n = tl_glob(pat, &gl, n > 0);

    struct CMUnitTest *t = calloc(n + 3, sizeof *t);
    size_t k = 0;
    t[k++] = (struct CMUnitTest)cmocka_unit_test(any_node_order);
    t[k++] = (struct CMUnitTest)cmocka_unit_test(dim_override);
    for (size_t i = 0; i < n; i++) {
        char *name = malloc(strlen(gl.gl_pathv[i]) + 16);
        sprintf(name, "round trip %s", gl.gl_pathv[i]);
        t[k++] = (struct CMUnitTest){name, round_trip, NULL, NULL, gl.gl_pathv[i]};
    }
    int rc = _cmocka_run_group_tests("model_io", t, k, NULL, NULL);
    for (size_t i = 2; i < k; i++)
        free((char *)t[i].name);
    free(t);
    globfree(&gl);
    return rc;
}
