/* safetensors.c: the safetensors reader (map, parse, validate) and writer.
 *
 * Reading happens in three passes over what the file claims, each trusting
 * only what the one before checked: the frame (length prefix against the
 * file size), the header (JSON syntax, the three fields of every entry,
 * dtype names, shapes whose byte size fits in 64 bits), then the layout
 * (every tensor's bytes inside the buffer, of the size its shape needs,
 * and no two tensors' bytes overlapping, found by sorting on the start).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph.h"
#include "infile.h"
#include "jsonr.h"
#include "jsonw.h"
#include "outfile.h"
#include "safetensors.h"
#include "strtab.h"

/* The header of a real file is kilobytes to a few MB; the reference
 * implementation refuses more than 100 MB. */
#define ST_MAX_HEADER ((uint64_t)100 << 20)

/* Every dtype of the format and the fuseeng dtype it is (-1: none; a file
 * may hold it, the executor refuses it by name), with the element size of
 * those fuseeng has no type for (graph.h's fe_dtype_size has the others). */
static const struct st_dtype {
    const char *name;
    int dtype;
    int size;
} st_dtypes[] = {
    {"F64", -1, 8}, {"F32", FE_F32, 0}, {"F16", FE_F16, 0}, {"BF16", FE_BF16, 0},
    {"I64", FE_I64, 0}, {"I32", FE_I32, 0}, {"I16", -1, 2}, {"I8", FE_I8, 0},
    {"U64", -1, 8}, {"U32", -1, 4}, {"U16", -1, 2}, {"U8", -1, 1},
    {"BOOL", FE_BOOL, 0}, {"F8_E4M3", -1, 1}, {"F8_E5M2", -1, 1},
};

static int st_dtype_size(const struct st_dtype *d)
{
    return d->dtype >= 0 ? fe_dtype_size(d->dtype) : d->size;
}
#define ST_NDTYPES ((int)(sizeof st_dtypes / sizeof st_dtypes[0]))

const char *fe_st_dtype_name(int dtype)
{
    for (int i = 0; i < ST_NDTYPES; i++)
        if (st_dtypes[i].dtype == dtype && dtype >= 0)
            return st_dtypes[i].name;
    return NULL;
}

static const struct st_dtype *st_dtype_find(const char *s, size_t n)
{
    for (int i = 0; i < ST_NDTYPES; i++)
        if (strlen(st_dtypes[i].name) == n && memcmp(st_dtypes[i].name, s, n) == 0)
            return &st_dtypes[i];
    return NULL;
}

/* Elements * size of a shape, or -1 if that does not fit in int64. */
static int64_t shape_bytes(int rank, const int64_t *shape, int size)
{
    int64_t b = size;
    for (int k = 0; k < rank; k++)
        if (shape[k] < 0 || __builtin_mul_overflow(b, shape[k], &b))
            return -1;
    return b;
}

/* ---------------------------------------------------------------- reader */

struct fe_st_file {
    char *path;
    void *map;
    size_t size;
    int n, cap;
    fe_st_tensor *t;
    int64_t *begin, *end;     /* data_offsets while validating */
    fe_strtab *names;         /* tensor i has id i */
    int nmeta;
    char **meta;              /* key, value, key, value, ... */
};

const char *fe_st_path(const fe_st_file *f) { return f->path; }
int fe_st_count(const fe_st_file *f) { return f->n; }
const fe_st_tensor *fe_st_at(const fe_st_file *f, int i) { return i >= 0 && i < f->n ? &f->t[i] : NULL; }

const fe_st_tensor *fe_st_find(const fe_st_file *f, const char *name)
{
    int32_t id = fe_strtab_find(f->names, name, strlen(name));
    return id >= 0 ? &f->t[id] : NULL;
}

const char *fe_st_meta(const fe_st_file *f, const char *key)
{
    for (int i = 0; i < f->nmeta; i++)
        if (strcmp(f->meta[2 * i], key) == 0)
            return f->meta[2 * i + 1];
    return NULL;
}

void fe_st_close(fe_st_file *f)
{
    if (!f)
        return;
    if (f->map)
        munmap(f->map, f->size);
    for (int i = 0; i < 2 * f->nmeta; i++)
        free(f->meta[i]);
    free(f->meta);
    fe_strtab_free(f->names);
    free(f->t);
    free(f->begin);
    free(f->end);
    free(f->path);
    free(f);
}

/* A JSON error of the header, with its place in the header text. */
static int json_fail(fe_st_file *f, fe_jr *r, fe_error *err)
{
    return fe_error_set(err, FE_EINPUT, "%s: safetensors header line %d column %d: %s", f->path,
                        r->err_line, r->err_col, r->err);
}

static int tensor_fail(fe_st_file *f, const char *name, fe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int tensor_fail(fe_st_file *f, const char *name, fe_error *err, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': %s", f->path, name, what);
}

/* A JSON array of at most max non-negative integers into v; count in *n. */
static int read_ints(fe_st_file *f, fe_jr *r, const char *name, const char *field, int64_t *v,
                     int max, int *n, fe_error *err)
{
    if (fe_jr_peek(r) != FE_JR_ARR)
        return tensor_fail(f, name, err, "\"%s\" must be an array of integers", field);
    if (fe_jr_arr_begin(r))
        return json_fail(f, r, err);
    int k, c = 0;
    while ((k = fe_jr_arr_next(r)) > 0) {
        int is_int;
        int64_t i;
        double d;
        if (fe_jr_peek(r) != FE_JR_NUM)
            return tensor_fail(f, name, err, "\"%s\" must be an array of integers", field);
        if (fe_jr_number(r, &is_int, &i, &d))
            return tensor_fail(f, name, err, "\"%s\": %s", field, r->err);
        if (!is_int || i < 0)
            return tensor_fail(f, name, err, "\"%s\" item %d is %g; it must be an integer >= 0",
                               field, c, d);
        if (c == max)
            return tensor_fail(f, name, err, "\"%s\" has more than %d items", field, max);
        v[c++] = i;
    }
    if (k < 0)
        return json_fail(f, r, err);
    *n = c;
    return FE_OK;
}

/* One header entry {"dtype", "shape", "data_offsets"} into tensor i. */
static int read_entry(fe_st_file *f, fe_jr *r, int i, const char *name, fe_error *err)
{
    fe_st_tensor *t = &f->t[i];
    const struct st_dtype *dt = NULL;
    int have_shape = 0, have_off = 0, k;
    if (fe_jr_peek(r) != FE_JR_OBJ)
        return tensor_fail(f, name, err, "its entry must be an object with dtype, shape and "
                           "data_offsets");
    if (fe_jr_obj_begin(r))
        return json_fail(f, r, err);
    fe_jr_str key;
    while ((k = fe_jr_obj_next(r, &key)) > 0) {
        if (key.n == 5 && memcmp(key.s, "dtype", 5) == 0) {
            fe_jr_str s;
            if (fe_jr_peek(r) != FE_JR_STR)
                return tensor_fail(f, name, err, "\"dtype\" must be a string such as \"F32\"");
            if (fe_jr_string(r, &s))
                return json_fail(f, r, err);
            if (!(dt = st_dtype_find(s.s, s.n)))
                return tensor_fail(f, name, err, "unknown dtype \"%.*s\" (the format's are F64 F32 "
                                   "F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2)",
                                   (int)(s.n > 32 ? 32 : s.n), s.s);
        } else if (key.n == 5 && memcmp(key.s, "shape", 5) == 0) {
            if (read_ints(f, r, name, "shape", t->shape, 8, &t->rank, err))
                return err->code;
            have_shape = 1;
        } else if (key.n == 12 && memcmp(key.s, "data_offsets", 12) == 0) {
            int64_t o[2];
            int no = 0;
            if (read_ints(f, r, name, "data_offsets", o, 2, &no, err))
                return err->code;
            if (no != 2 || o[0] > o[1])
                return tensor_fail(f, name, err, "\"data_offsets\" must be [begin, end] with "
                                   "begin <= end");
            f->begin[i] = o[0];
            f->end[i] = o[1];
            have_off = 1;
        } else {  /* fields of later versions */
            size_t b, e;
            if (fe_jr_skip(r, &b, &e))
                return json_fail(f, r, err);
        }
    }
    if (k < 0)
        return json_fail(f, r, err);
    if (!dt || !have_shape || !have_off)
        return tensor_fail(f, name, err, "its entry lacks \"%s\"",
                           !dt ? "dtype" : !have_shape ? "shape" : "data_offsets");
    t->dtype = dt->dtype;
    t->st_dtype = dt->name;
    t->nbytes = shape_bytes(t->rank, t->shape, st_dtype_size(dt));
    if (t->nbytes < 0)
        return tensor_fail(f, name, err, "shape of %d dims is too large: its byte size does not "
                           "fit in 64 bits", t->rank);
    return FE_OK;
}

/* "__metadata__": an object of strings. */
static int read_meta(fe_st_file *f, fe_jr *r, fe_error *err)
{
    int k;
    fe_jr_str key, val;
    if (fe_jr_peek(r) != FE_JR_OBJ)
        return fe_error_set(err, FE_EINPUT, "%s: \"__metadata__\" must be an object of strings",
                            f->path);
    if (fe_jr_obj_begin(r))
        return json_fail(f, r, err);
    while ((k = fe_jr_obj_next(r, &key)) > 0) {
        char *ks = strndup(key.s, key.n);
        if (!ks)
            return fe_error_set(err, FE_ENOMEM, "%s: out of memory", f->path);
        if (fe_jr_peek(r) != FE_JR_STR) {
            fe_error_set(err, FE_EINPUT, "%s: \"__metadata__\" entry '%s' must be a string",
                         f->path, ks);
            free(ks);
            return FE_EINPUT;
        }
        char **m = realloc(f->meta, (size_t)(f->nmeta + 1) * 2 * sizeof *m);
        char *vs = NULL;
        if (m)
            f->meta = m;
        if (!m || fe_jr_string(r, &val) || !(vs = strndup(val.s, val.n))) {
            free(ks);
            return r->err[0] ? json_fail(f, r, err)
                             : fe_error_set(err, FE_ENOMEM, "%s: out of memory", f->path);
        }
        f->meta[2 * f->nmeta] = ks;
        f->meta[2 * f->nmeta + 1] = vs;
        f->nmeta++;
    }
    return k < 0 ? json_fail(f, r, err) : FE_OK;
}

static int grow(fe_st_file *f, fe_error *err)
{
    if (f->n < f->cap)
        return FE_OK;
    int cap = f->cap ? 2 * f->cap : 16;
    fe_st_tensor *t = realloc(f->t, (size_t)cap * sizeof *t);
    if (t)
        f->t = t;
    int64_t *b = realloc(f->begin, (size_t)cap * sizeof *b);
    if (b)
        f->begin = b;
    int64_t *e = realloc(f->end, (size_t)cap * sizeof *e);
    if (e)
        f->end = e;
    if (!t || !b || !e)
        return fe_error_set(err, FE_ENOMEM, "%s: out of memory reading the header", f->path);
    f->cap = cap;
    return FE_OK;
}

static int read_header(fe_st_file *f, const char *hdr, size_t len, fe_error *err)
{
    fe_jr r;
    fe_jr_str key;
    int k, rc = FE_OK;
    fe_jr_init(&r, hdr, len);
    if (fe_jr_peek(&r) != FE_JR_OBJ) {
        fe_jr_free(&r);
        return fe_error_set(err, FE_EINPUT, "%s: the safetensors header is not a JSON object "
                            "(is this a safetensors file?)", f->path);
    }
    if (fe_jr_obj_begin(&r)) {
        rc = json_fail(f, &r, err);
        goto out;
    }
    while ((k = fe_jr_obj_next(&r, &key)) > 0) {
        if (key.n == 12 && memcmp(key.s, "__metadata__", 12) == 0) {
            if ((rc = read_meta(f, &r, err)))
                goto out;
            continue;
        }
        if (memchr(key.s, '\0', key.n)) {
            rc = fe_error_set(err, FE_EINPUT, "%s: a tensor name holds a NUL character", f->path);
            goto out;
        }
        if (fe_strtab_find(f->names, key.s, key.n) >= 0) {
            rc = tensor_fail(f, fe_strtab_str(f->names, fe_strtab_find(f->names, key.s, key.n)),
                             err, "the name appears twice in the header");
            goto out;
        }
        if ((rc = grow(f, err)))
            goto out;
        if (fe_strtab_intern(f->names, key.s, key.n) != f->n) {
            rc = fe_error_set(err, FE_ENOMEM, "%s: out of memory reading the header", f->path);
            goto out;
        }
        memset(&f->t[f->n], 0, sizeof f->t[f->n]);
        f->n++;
        if ((rc = read_entry(f, &r, f->n - 1, fe_strtab_str(f->names, f->n - 1), err)))
            goto out;
    }
    if (k < 0)
        rc = json_fail(f, &r, err);
    else if (!fe_jr_at_end(&r))
        rc = fe_error_set(err, FE_EINPUT, "%s: text after the safetensors header's JSON object",
                          f->path);
out:
    fe_jr_free(&r);
    return rc;
}

static const int64_t *sort_begin;
static int by_begin(const void *a, const void *b)
{
    int64_t x = sort_begin[*(const int *)a], y = sort_begin[*(const int *)b];
    return x < y ? -1 : x > y;
}

/* Every tensor's bytes inside the buffer, of its size, none shared. */
static int check_layout(fe_st_file *f, const char *buf, int64_t buflen, fe_error *err)
{
    for (int i = 0; i < f->n; i++) {
        fe_st_tensor *t = &f->t[i];
        if (f->end[i] > buflen)
            return tensor_fail(f, t->name, err, "data_offsets [%lld, %lld] end beyond the data, "
                               "which is %lld bytes (is the file truncated?)",
                               (long long)f->begin[i], (long long)f->end[i], (long long)buflen);
        if (f->end[i] - f->begin[i] != t->nbytes)
            return tensor_fail(f, t->name, err, "data_offsets [%lld, %lld] hold %lld bytes, but "
                               "%s of %d dims needs %lld", (long long)f->begin[i],
                               (long long)f->end[i], (long long)(f->end[i] - f->begin[i]),
                               t->st_dtype, t->rank, (long long)t->nbytes);
        t->data = buf + f->begin[i];
    }
    int *ord = calloc((size_t)f->n + 1, sizeof *ord);
    if (!ord)
        return fe_error_set(err, FE_ENOMEM, "%s: out of memory", f->path);
    for (int i = 0; i < f->n; i++)
        ord[i] = i;
    sort_begin = f->begin;
    qsort(ord, (size_t)f->n, sizeof *ord, by_begin);
    int prev = -1, rc = FE_OK;
    for (int j = 0; j < f->n && !rc; j++) {
        int i = ord[j];
        if (f->t[i].nbytes == 0)
            continue;
        if (prev >= 0 && f->begin[i] < f->end[prev])
            rc = tensor_fail(f, f->t[i].name, err, "data_offsets [%lld, %lld] overlap those of "
                             "tensor '%s' [%lld, %lld]", (long long)f->begin[i],
                             (long long)f->end[i], f->t[prev].name, (long long)f->begin[prev],
                             (long long)f->end[prev]);
        prev = i;
    }
    free(ord);
    return rc;
}

fe_st_file *fe_st_open(const char *path, fe_error *err)
{
    size_t size;
    fe_st_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path)) || !(f->names = fe_strtab_new())) {
        fe_error_set(err, FE_ENOMEM, "%s: out of memory", path);
        fe_st_close(f);
        return NULL;
    }
    int fd = fe_infile_open(path, "the safetensors file", &size, err);
    if (fd < 0) {
        fe_st_close(f);
        return NULL;
    }
    if (size < 8) {
        close(fd);
        fe_error_set(err, FE_EINPUT, "%s: a safetensors file starts with an 8-byte header "
                     "length, and this file has %zu bytes", path, size);
        fe_st_close(f);
        return NULL;
    }
    f->map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (f->map == MAP_FAILED) {
        f->map = NULL;
        fe_error_set(err, FE_EINPUT, "%s: cannot map the safetensors file: %s", path, strerror(e));
        fe_st_close(f);
        return NULL;
    }
    f->size = size;
    const unsigned char *p = f->map;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | p[i];
    if (hlen > size - 8 || hlen > ST_MAX_HEADER) {
        fe_error_set(err, FE_EINPUT, "%s: the header length is %llu bytes, but %s (is this a "
                     "safetensors file, and complete?)", path, (unsigned long long)hlen,
                     hlen > size - 8 ? "the file has fewer after the length"
                                     : "at most 100 MB are accepted");
        fe_st_close(f);
        return NULL;
    }
    const char *hdr = (const char *)p + 8;
    if (read_header(f, hdr, (size_t)hlen, err)) {
        fe_st_close(f);
        return NULL;
    }
    /* Names once all are in: the string table may move its text as it grows. */
    for (int i = 0; i < f->n; i++)
        f->t[i].name = fe_strtab_str(f->names, i);
    if (check_layout(f, hdr + hlen, (int64_t)(size - 8 - hlen), err)) {
        fe_st_close(f);
        return NULL;
    }
    return f;
}

/* ---------------------------------------------------------------- writer */

typedef struct st_entry {
    char *name;
    int dtype, rank;
    int64_t shape[8];
    const void *data;
    int64_t nbytes;
} st_entry;

struct fe_st_writer {
    char *path;
    st_entry *e;
    int n, cap;
    fe_strtab *names;
    int nmeta;
    char **meta;
};

void fe_st_writer_abort(fe_st_writer *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n; i++)
        free(w->e[i].name);
    for (int i = 0; i < 2 * w->nmeta; i++)
        free(w->meta[i]);
    free(w->meta);
    free(w->e);
    fe_strtab_free(w->names);
    free(w->path);
    free(w);
}

fe_st_writer *fe_st_writer_new(const char *path, fe_error *err)
{
    fe_st_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path ? path : "")) || !(w->names = fe_strtab_new())) {
        fe_error_set(err, FE_ENOMEM, "%s: out of memory", path ? path : "safetensors");
        fe_st_writer_abort(w);
        return NULL;
    }
    return w;
}

int fe_st_writer_add(fe_st_writer *w, const char *name, int dtype, int rank,
                     const int64_t *shape, const void *data, int64_t nbytes, fe_error *err)
{
    const char *stn = fe_st_dtype_name(dtype);
    if (!name || !*name || strcmp(name, "__metadata__") == 0)
        return fe_error_set(err, FE_EINPUT, "%s: tensor name '%s' cannot be written", w->path,
                            name ? name : "");
    if (fe_strtab_find(w->names, name, strlen(name)) >= 0)
        return fe_error_set(err, FE_EINPUT, "%s: tensor '%s' is added twice", w->path, name);
    if (!stn)
        return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': dtype %d has no safetensors name",
                            w->path, name, dtype);
    if (rank < 0 || rank > 8)
        return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': rank %d (at most 8)", w->path, name,
                            rank);
    int64_t need = shape_bytes(rank, shape, fe_dtype_size(dtype));
    if (need < 0 || need != nbytes || (nbytes && !data))
        return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': %lld bytes given, but its %s shape "
                            "of %d dims needs %lld", w->path, name, (long long)nbytes, stn, rank,
                            (long long)need);
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        st_entry *e = realloc(w->e, (size_t)cap * sizeof *e);
        if (!e)
            return fe_error_set(err, FE_ENOMEM, "%s: out of memory", w->path);
        w->e = e;
        w->cap = cap;
    }
    st_entry *e = &w->e[w->n];
    if (!(e->name = strdup(name)) || fe_strtab_intern(w->names, name, strlen(name)) < 0) {
        free(e->name);
        return fe_error_set(err, FE_ENOMEM, "%s: out of memory", w->path);
    }
    e->dtype = dtype;
    e->rank = rank;
    for (int k = 0; k < rank; k++)
        e->shape[k] = shape[k];
    e->data = data;
    e->nbytes = nbytes;
    w->n++;
    return FE_OK;
}

int fe_st_writer_meta(fe_st_writer *w, const char *key, const char *value, fe_error *err)
{
    char **m = realloc(w->meta, (size_t)(w->nmeta + 1) * 2 * sizeof *m);
    if (!m)
        return fe_error_set(err, FE_ENOMEM, "%s: out of memory", w->path);
    w->meta = m;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return fe_error_set(err, FE_ENOMEM, "%s: out of memory", w->path);
    }
    m[2 * w->nmeta] = k;
    m[2 * w->nmeta + 1] = v;
    w->nmeta++;
    return FE_OK;
}

/* The order of the data: largest elements first (stable), so that with
 * the data starting 8-byte aligned every tensor is aligned to its element
 * size, as the reference writer does. ord gets w->n indices. */
static void data_order(const fe_st_writer *w, int *ord)
{
    int k = 0;
    for (int size = 8; size >= 1; size /= 2)
        for (int i = 0; i < w->n; i++)
            if (fe_dtype_size(w->e[i].dtype) == size)
                ord[k++] = i;
}

/* The header text (entries in the order added, offsets in data order),
 * padded with spaces to a multiple of 8 bytes (caller frees). */
static char *header_text(const fe_st_writer *w, const int *ord, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    int64_t *off = calloc((size_t)w->n + 1, sizeof *off);
    FILE *m = off ? open_memstream(&buf, &n) : NULL;
    if (!m) {
        free(off);
        return NULL;
    }
    for (int j = 1; j < w->n; j++)
        off[ord[j]] = off[ord[j - 1]] + w->e[ord[j - 1]].nbytes;
    fe_jw jw;
    fe_jw_init(&jw, m, 0);
    fe_jw_obj(&jw);
    if (w->nmeta) {
        fe_jw_key(&jw, "__metadata__");
        fe_jw_obj(&jw);
        for (int i = 0; i < w->nmeta; i++) {
            fe_jw_key(&jw, w->meta[2 * i]);
            fe_jw_str(&jw, w->meta[2 * i + 1]);
        }
        fe_jw_end(&jw);
    }
    for (int i = 0; i < w->n; i++) {
        const st_entry *e = &w->e[i];
        fe_jw_key(&jw, e->name);
        fe_jw_obj(&jw);
        fe_jw_key(&jw, "dtype");
        fe_jw_str(&jw, fe_st_dtype_name(e->dtype));
        fe_jw_key(&jw, "shape");
        fe_jw_arr(&jw);
        for (int k = 0; k < e->rank; k++)
            fe_jw_int(&jw, e->shape[k]);
        fe_jw_end(&jw);
        fe_jw_key(&jw, "data_offsets");
        fe_jw_arr(&jw);
        fe_jw_int(&jw, off[i]);
        fe_jw_int(&jw, off[i] + e->nbytes);
        fe_jw_end(&jw);
        fe_jw_end(&jw);
    }
    fe_jw_end(&jw);
    free(off);
    while (ftell(m) % 8)
        fputc(' ', m);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int fe_st_writer_write(fe_st_writer *w, fe_outfile *o, fe_error *err)
{
    size_t hlen = 0;
    int *ord = calloc((size_t)w->n + 1, sizeof *ord);
    char *hdr = NULL;
    if (ord) {
        data_order(w, ord);
        hdr = header_text(w, ord, &hlen);
    }
    if (!hdr) {
        free(ord);
        fe_error_set(err, FE_ENOMEM, "%s: out of memory writing the header", w->path);
        fe_st_writer_abort(w);
        return FE_ENOMEM;
    }
    int rc = fe_outfile_open(o, w->path, "the safetensors file", err);
    if (rc == FE_OK) {
        unsigned char len8[8];
        for (int i = 0; i < 8; i++)
            len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
        int ok = fwrite(len8, 1, 8, o->f) == 8 && fwrite(hdr, 1, hlen, o->f) == hlen;
        for (int j = 0; ok && j < w->n; j++) {
            const st_entry *e = &w->e[ord[j]];
            /* an empty tensor may have no data pointer, which fwrite must not see */
            ok = !e->nbytes || fwrite(e->data, 1, (size_t)e->nbytes, o->f) == (size_t)e->nbytes;
        }
        if (!ok)
            rc = fe_outfile_fail(o, err);
    }
    free(hdr);
    free(ord);
    fe_st_writer_abort(w);
    return rc;
}

int fe_st_writer_finish(fe_st_writer *w, fe_error *err)
{
    fe_outfile o;
    int rc = fe_st_writer_write(w, &o, err);
    return rc == FE_OK ? fe_outfile_commit(&o, err) : rc;
}
