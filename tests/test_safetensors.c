/* test_safetensors.c: the safetensors reader and writer (core/ir/safetensors.c):
 * every dtype survives a round trip; every class of malformed file is
 * refused with a message naming the file and, where there is one, the
 * tensor; the writer refuses bad tensors and leaves nothing behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "safetensors.h"

static char dir[64];

static int make_dir(void **s)
{
    (void)s;
    snprintf(dir, sizeof dir, "/tmp/fe_st_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **s)
{
    (void)s;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *file(const char *name)
{
    static char p[2][128];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* A file of an 8-byte length hlen, header text and data bytes. */
static void write_raw(const char *path, uint64_t hlen, const char *hdr, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char l[8];
    for (int i = 0; i < 8; i++)
        l[i] = (unsigned char)(hlen >> (8 * i));
    fwrite(l, 1, 8, f);
    fwrite(hdr, 1, strlen(hdr), f);
    if (n)
        fwrite(data, 1, n, f);
    fclose(f);
}

static void write_hdr(const char *path, const char *hdr, size_t ndata)
{
    static unsigned char zeros[4096];
    assert_true(ndata <= sizeof zeros);
    write_raw(path, strlen(hdr), hdr, zeros, ndata);
}

static void round_trip(void **s)
{
    (void)s;
    const char *path = file("all.safetensors");
    static const int dts[] = {FE_F32, FE_F16, FE_BF16, FE_I64, FE_I32, FE_I8, FE_BOOL};
    unsigned char data[7][24];
    int64_t shape[] = {2, 3};
    fe_error err = {0};
    fe_st_writer *w = fe_st_writer_new(path, &err);
    assert_non_null(w);
    for (int d = 0; d < 7; d++) {
        char name[32];
        for (int i = 0; i < 24; i++)
            data[d][i] = (unsigned char)(d * 31 + i);
        snprintf(name, sizeof name, "t.%s", fe_dtype_name(dts[d]));
        int64_t nb = 6 * fe_dtype_size(dts[d]);
        assert_int_equal(fe_st_writer_add(w, name, dts[d], 2, shape, data[d], nb, &err), FE_OK);
    }
    float scalar = 2.5f;
    assert_int_equal(fe_st_writer_add(w, "scalar", FE_F32, 0, NULL, &scalar, 4, &err), FE_OK);
    int64_t empty[] = {0, 4};
    assert_int_equal(fe_st_writer_add(w, "empty", FE_F32, 2, empty, NULL, 0, &err), FE_OK);
    assert_int_equal(fe_st_writer_add(w, "quote\"d \\name", FE_I8, 1, shape, data[0], 2, &err),
                     FE_OK);
    assert_int_equal(fe_st_writer_meta(w, "format", "pt", &err), FE_OK);
    assert_int_equal(fe_st_writer_finish(w, &err), FE_OK);

    fe_st_file *f = fe_st_open(path, &err);
    if (!f)
        fail_msg("%s", err.message);
    assert_string_equal(fe_st_path(f), path);
    assert_int_equal(fe_st_count(f), 10);
    assert_string_equal(fe_st_meta(f, "format"), "pt");
    assert_null(fe_st_meta(f, "other"));
    for (int d = 0; d < 7; d++) {
        const fe_st_tensor *t = fe_st_at(f, d);
        assert_int_equal(t->dtype, dts[d]);
        assert_string_equal(t->st_dtype, fe_st_dtype_name(dts[d]));
        assert_int_equal(t->rank, 2);
        assert_int_equal(t->shape[0], 2);
        assert_int_equal(t->shape[1], 3);
        assert_int_equal(t->nbytes, 6 * fe_dtype_size(dts[d]));
        assert_memory_equal(t->data, data[d], (size_t)t->nbytes);
        assert_int_equal((uintptr_t)t->data % (uintptr_t)fe_dtype_size(dts[d]), 0);
        assert_ptr_equal(fe_st_find(f, t->name), t);
    }
    const fe_st_tensor *t = fe_st_find(f, "scalar");
    assert_non_null(t);
    assert_int_equal(t->rank, 0);
    float back;
    memcpy(&back, t->data, 4);
    assert_true(back == 2.5f);
    assert_int_equal(fe_st_find(f, "empty")->nbytes, 0);
    assert_non_null(fe_st_find(f, "quote\"d \\name"));
    assert_null(fe_st_find(f, "absent"));
    assert_null(fe_st_at(f, 10));
    fe_st_close(f);

    /* The data starts 8-byte aligned, as the reference writer makes it. */
    FILE *raw = fopen(path, "rb");
    unsigned char l[8];
    assert_int_equal(fread(l, 1, 8, raw), 8);
    fclose(raw);
    assert_int_equal(l[0] % 8, 0);
}

static void foreign_dtypes(void **s)
{
    (void)s;
    const char *path = file("foreign.safetensors");
    write_hdr(path, "{\"d\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]},"
                    "\"u\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[16,19],\"x\":[1]}}", 19);
    fe_error err = {0};
    fe_st_file *f = fe_st_open(path, &err);
    if (!f)
        fail_msg("%s", err.message);
    assert_int_equal(fe_st_find(f, "d")->dtype, -1);
    assert_string_equal(fe_st_find(f, "d")->st_dtype, "F64");
    assert_int_equal(fe_st_find(f, "u")->nbytes, 3);
    fe_st_close(f);
}

/* Open must fail with FE_EINPUT and a message holding path and every
 * string of want (NULL-terminated). */
static void refused(const char *path, ...)
{
    fe_error err = {0};
    fe_st_file *f = fe_st_open(path, &err);
    if (f) {
        fe_st_close(f);
        fail_msg("%s opened but should not have", path);
    }
    assert_int_equal(err.code, FE_EINPUT);
    if (!strstr(err.message, path))
        fail_msg("message does not name the file: %s", err.message);
    va_list ap;
    va_start(ap, path);
    for (const char *w; (w = va_arg(ap, const char *));)
        if (!strstr(err.message, w))
            fail_msg("message lacks '%s': %s", w, err.message);
    va_end(ap);
}

static void malformed(void **s)
{
    (void)s;
    const char *p = file("bad.safetensors");
    FILE *f = fopen(p, "wb");
    fwrite("abc", 1, 3, f);
    fclose(f);
    refused(p, "8-byte header length", "3 bytes", NULL);

    write_raw(p, 1000, "{}", NULL, 0);
    refused(p, "header length is 1000", NULL);
    write_raw(p, (uint64_t)1 << 62, "{}", NULL, 0);
    refused(p, "header length", NULL);

    write_hdr(p, "{\"a\": {\"dtype\": \"F32\",", 0);
    refused(p, "header line 1 column", NULL);
    write_hdr(p, "[1, 2]", 0);
    refused(p, "not a JSON object", NULL);
    write_hdr(p, "{} x", 0);
    refused(p, "text after", NULL);

    /* Headers whose entries are wrong: header, data bytes, what the
     * message must say. */
    static const struct { const char *hdr; size_t ndata; const char *want[3]; } bad[] = {
        {"{'w':{'dtype':'F128','shape':[1],'data_offsets':[0,4]}}", 4,
         {"tensor 'w'", "unknown dtype \"F128\""}},
        {"{'w':{'dtype':'F32','shape':[2],'data_offsets':[0,8]}}", 4,
         {"tensor 'w'", "end beyond the data"}},
        {"{'w':{'dtype':'F32','shape':[2],'data_offsets':[4,2]}}", 8, {"tensor 'w'", "begin <= end"}},
        {"{'w':{'dtype':'F32','shape':[2],'data_offsets':[0,12]}}", 12,
         {"tensor 'w'", "hold 12 bytes", "needs 8"}},
        {"{'a':{'dtype':'F32','shape':[2],'data_offsets':[0,8]},"
         "'b':{'dtype':'F32','shape':[2],'data_offsets':[4,12]}}", 12,
         {"tensor 'b'", "overlap", "tensor 'a'"}},
        {"{'a':{'dtype':'F32','shape':[1],'data_offsets':[0,4]},"
         "'a':{'dtype':'F32','shape':[1],'data_offsets':[4,8]}}", 8, {"tensor 'a'", "appears twice"}},
        {"{'w':{'dtype':'F32','shape':[4294967296,4294967296],'data_offsets':[0,4]}}", 4,
         {"tensor 'w'", "too large"}},
        {"{'w':{'dtype':'F32','shape':[-1],'data_offsets':[0,4]}}", 4, {"tensor 'w'", "integer >= 0"}},
        {"{'w':{'dtype':'F32','shape':[1,1,1,1,1,1,1,1,1],'data_offsets':[0,4]}}", 4,
         {"tensor 'w'", "more than 8"}},
        {"{'w':{'dtype':'F32','data_offsets':[0,4]}}", 4, {"tensor 'w'", "lacks \"shape\""}},
        {"{'w':[1]}", 0, {"tensor 'w'", "must be an object"}},
        {"{'__metadata__':{'k':1}}", 0, {"__metadata__", "'k'"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char hdr[256];
        snprintf(hdr, sizeof hdr, "%s", bad[i].hdr);
        for (char *c = hdr; *c; c++)   /* ' for " keeps the table readable */
            if (*c == '\'')
                *c = '"';
        write_hdr(p, hdr, bad[i].ndata);
        refused(p, bad[i].want[0], bad[i].want[1], bad[i].want[2], NULL);
    }

    refused(file("missing.safetensors"), "cannot open", NULL);
    refused(dir, "regular file", NULL);
}

static void writer_refuses(void **s)
{
    (void)s;
    const char *path = file("w.safetensors");
    fe_error err = {0};
    float v[4] = {0};
    int64_t shape[] = {4}, neg[] = {-1};
    fe_st_writer *w = fe_st_writer_new(path, &err);
    assert_int_equal(fe_st_writer_add(w, "a", FE_F32, 1, shape, v, 16, &err), FE_OK);
    assert_int_equal(fe_st_writer_add(w, "a", FE_F32, 1, shape, v, 16, &err), FE_EINPUT);
    assert_non_null(strstr(err.message, "'a' is added twice"));
    assert_int_equal(fe_st_writer_add(w, "b", FE_F32, 1, shape, v, 12, &err), FE_EINPUT);
    assert_non_null(strstr(err.message, "tensor 'b'"));
    assert_int_equal(fe_st_writer_add(w, "c", FE_F32, 1, neg, v, 0, &err), FE_EINPUT);
    assert_int_equal(fe_st_writer_add(w, "d", 99, 1, shape, v, 16, &err), FE_EINPUT);
    assert_int_equal(fe_st_writer_add(w, "e", FE_F32, 9, shape, v, 16, &err), FE_EINPUT);
    assert_int_equal(fe_st_writer_add(w, "", FE_F32, 1, shape, v, 16, &err), FE_EINPUT);
    fe_st_writer_abort(w);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);

    /* A directory that does not exist: an error, and no file anywhere. */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/no/such/dir.safetensors", dir);
    w = fe_st_writer_new(bad, &err);
    assert_int_equal(fe_st_writer_add(w, "a", FE_F32, 1, shape, v, 16, &err), FE_OK);
    assert_int_equal(fe_st_writer_finish(w, &err), FE_EINPUT);
    assert_non_null(strstr(err.message, bad));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(foreign_dtypes),
        cmocka_unit_test(malformed),
        cmocka_unit_test(writer_refuses),
    };
    return cmocka_run_group_tests_name("safetensors", tests, make_dir, remove_dir);
}
