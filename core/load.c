/* load.c: the fuseeng.model/1 reader.
 *
 * Note on streaming. A million-node model is a few hundred megabytes of JSON;
 * as one Jansson tree it would cost more than the graph itself. So this file
 * scans the top-level object and the "tensors" object and "nodes" array by
 * hand (whitespace, keys, commas, brackets) and hands each element to Jansson
 * on its own (json_loadb with JSON_DISABLE_EOF_CHECK, which reports how many
 * bytes it consumed). Only one tensor or node is ever a tree. The scanner
 * tracks line and column, so every message says FILE:LINE:COL, Jansson's
 * errors included, shifted to the element's place in the file.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "load.h"

#define FORMAT "fuseeng.model/1"

typedef struct scan {
    const char *file;
    const char *buf;
    size_t len, pos;
    int line;
    size_t bol;          /* offset of the current line's first byte */
    fe_error *err;
    fe_builder *b;
} scan;

static int serr_at(scan *s, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int serr_at(scan *s, int line, int col, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fe_error_set(s->err, FE_EINPUT, "%s:%d:%d: %s", s->file, line, col, msg);
}

#define serr(s, ...) serr_at((s), (s)->line, (int)((s)->pos - (s)->bol + 1), __VA_ARGS__)

/* Move forward n bytes, keeping line and column. */
static void advance(scan *s, size_t n)
{
    const char *p = s->buf + s->pos, *end = p + n;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        s->line++;
        s->bol = (size_t)(++p - s->buf);
    }
    s->pos += n;
}

static void skip_ws(scan *s)
{
    while (s->pos < s->len) {
        char c = s->buf[s->pos];
        if (c == '\n') {
            s->line++;
            s->bol = ++s->pos;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            s->pos++;
        } else {
            break;
        }
    }
}

static const char *what_is(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Parse one JSON value at the current position with Jansson. */
static json_t *value(scan *s)
{
    json_error_t je;
    skip_ws(s);
    if (s->pos >= s->len) {
        serr(s, "malformed JSON: the file ends where a value was expected");
        return NULL;
    }
    json_t *v = json_loadb(s->buf + s->pos, s->len - s->pos,
                           JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &je);
    if (!v) {
        int line = s->line + je.line - 1;
        int col = je.line <= 1 ? (int)(s->pos - s->bol) + je.column : je.column;
        serr_at(s, line, col > 0 ? col : 1, "malformed JSON: %s", je.text);
        return NULL;
    }
    advance(s, (size_t)je.position);
    return v;
}

/* A JSON string token used as a key; decoded into out (NUL-terminated). */
static int key(scan *s, char **out)
{
    skip_ws(s);
    if (s->pos >= s->len || s->buf[s->pos] != '"')
        return serr(s, "malformed JSON: expected a quoted key");
    size_t end = s->pos + 1;
    while (end < s->len && s->buf[end] != '"') {
        if (s->buf[end] == '\\')
            end++;
        if (s->buf[end] == '\n')
            break;
        end++;
    }
    if (end >= s->len || s->buf[end] != '"')
        return serr(s, "malformed JSON: unterminated key string");
    json_error_t je;
    json_t *v = json_loadb(s->buf + s->pos, end + 1 - s->pos, JSON_DECODE_ANY, &je);
    if (!v)
        return serr(s, "malformed JSON in key: %s", je.text);
    *out = strdup(json_string_value(v));
    json_decref(v);
    if (!*out)
        return fe_error_set(s->err, FE_ENOMEM, "out of memory reading %s", s->file);
    advance(s, end + 1 - s->pos);
    return FE_OK;
}

static int expect(scan *s, char c, const char *where)
{
    skip_ws(s);
    if (s->pos >= s->len)
        return serr(s, "malformed JSON: the file ends where '%c' %s was expected", c, where);
    if (s->buf[s->pos] != c)
        return serr(s, "malformed JSON: expected '%c' %s, found '%c'", c, where, s->buf[s->pos]);
    s->pos++;
    return FE_OK;
}

/* After an element: ',' (returns 1: more follow) or the closer (returns 0). */
static int next_or_close(scan *s, char close, const char *where)
{
    skip_ws(s);
    if (s->pos < s->len && s->buf[s->pos] == ',') {
        s->pos++;
        return 1;
    }
    if (s->pos < s->len && s->buf[s->pos] == close) {
        s->pos++;
        return 0;
    }
    if (s->pos >= s->len)
        serr(s, "malformed JSON: the file ends inside %s", where);
    else
        serr(s, "malformed JSON: expected ',' or '%c' in %s, found '%c'", close, where,
             s->buf[s->pos]);
    return -1;
}

/* Is the container empty? Consumes the closer if so. */
static int empty_container(scan *s, char close)
{
    skip_ws(s);
    if (s->pos < s->len && s->buf[s->pos] == close) {
        s->pos++;
        return 1;
    }
    return 0;
}

/* ---- one tensor ---- */

static int tensor(scan *s, const char *name, int line, int col, json_t *v)
{
    int64_t shape[FE_MAX_RANK];
    json_t *sh = json_object_get(v, "shape"), *dt = json_object_get(v, "dtype");
    json_t *kd = json_object_get(v, "kind");

    if (!json_is_object(v))
        return serr_at(s, line, col, "tensor '%s' is %s; expected an object with \"shape\" and "
                       "\"dtype\"", name, what_is(v));
    if (!json_is_array(sh))
        return serr_at(s, line, col, "tensor '%s': \"shape\" is %s; expected a list of sizes "
                       "and dim names", name, sh ? what_is(sh) : "missing");
    if (json_array_size(sh) > FE_MAX_RANK)
        return serr_at(s, line, col, "tensor '%s' has %zu dims; at most %d are supported", name,
                       json_array_size(sh), FE_MAX_RANK);
    for (size_t i = 0; i < json_array_size(sh); i++) {
        json_t *d = json_array_get(sh, i);
        if (json_is_integer(d)) {
            shape[i] = json_integer_value(d);
        } else if (json_is_string(d)) {
            int32_t id = fe_builder_dim_id(s->b, json_string_value(d));
            if (id < 0)
                return -1;
            shape[i] = FE_SYM(id);
        } else {
            return serr_at(s, line, col, "tensor '%s' shape item %zu is %s; expected a positive "
                           "integer or a dim name", name, i, what_is(d));
        }
    }
    if (!json_is_string(dt))
        return serr_at(s, line, col, "tensor '%s': \"dtype\" is %s; expected one of f32 f16 bf16 "
                       "i64 i32 i8 bool", name, dt ? what_is(dt) : "missing");
    int dtype = fe_dtype_parse(json_string_value(dt));
    if (dtype < 0)
        return serr_at(s, line, col, "tensor '%s' has unknown dtype '%s'; expected one of f32 f16 "
                       "bf16 i64 i32 i8 bool", name, json_string_value(dt));
    int kind = FE_ACTIVATION;
    if (kd) {
        kind = json_is_string(kd) ? fe_tkind_parse(json_string_value(kd)) : -1;
        if (kind < 0)
            return serr_at(s, line, col, "tensor '%s' has kind %s%s%s; expected \"input\", "
                           "\"weight\" or \"activation\"", name, json_is_string(kd) ? "'" : "",
                           json_is_string(kd) ? json_string_value(kd) : what_is(kd),
                           json_is_string(kd) ? "'" : "");
    }
    if (fe_builder_tensor(s->b, name, dtype, kind, (int)json_array_size(sh), shape, line) < 0)
        return -1;
    return FE_OK;
}

/* ---- one node ---- */

static int attr(scan *s, int32_t node, const char *k, json_t *a, int line, int col, const char *name)
{
    fe_builder *b = s->b;
    switch (json_typeof(a)) {
    case JSON_TRUE:
    case JSON_FALSE:
        return fe_builder_attr_bool(b, node, k, json_is_true(a));
    case JSON_INTEGER:
        return fe_builder_attr_int(b, node, k, json_integer_value(a));
    case JSON_REAL:
        return fe_builder_attr_float(b, node, k, json_real_value(a));
    case JSON_STRING:
        if (json_string_length(a) > FE_MAX_NAME)
            return serr_at(s, line, col, "node '%s' attribute '%s' is a %zu-byte string; "
                           "attribute strings are limited to %d bytes", name, k,
                           json_string_length(a), FE_MAX_NAME);
        return fe_builder_attr_str(b, node, k, json_string_value(a));
    case JSON_NULL:
        return fe_builder_attr_null(b, node, k);
    case JSON_ARRAY: {
        /* A list of ints, or for shape lists ints and dim names, is an
         * INTS attribute; anything else is kept verbatim. */
        size_t n = json_array_size(a);
        int shape_like = strcmp(k, "shape") == 0;
        int ok = n <= 64;
        int64_t v[64];
        for (size_t i = 0; ok && i < n; i++) {
            json_t *e = json_array_get(a, i);
            if (json_is_integer(e)) {
                v[i] = json_integer_value(e);
            } else if (shape_like && json_is_string(e)) {
                int32_t id = fe_builder_dim_id(b, json_string_value(e));
                if (id < 0)
                    return -1;
                v[i] = FE_SYM(id);
            } else {
                ok = 0;
            }
        }
        if (ok)
            return fe_builder_attr_ints(b, node, k, v, (int)n);
    }
        /* fall through */
    default: {
        char *text = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text)
            return fe_error_set(s->err, FE_ENOMEM, "out of memory reading %s", s->file);
        int rc = fe_builder_attr_json(b, node, k, text, strlen(text));
        free(text);
        return rc;
    }
    }
}

/* Strings of a JSON array into a freshly allocated pointer list. */
static int names(scan *s, json_t *arr, const char *field, const char *node, int line, int col,
                 const char ***out, int *n)
{
    if (!json_is_array(arr))
        return serr_at(s, line, col, "node '%s': \"%s\" is %s; expected a list of tensor names",
                       node, field, arr ? what_is(arr) : "missing");
    size_t k = json_array_size(arr);
    if (k > FE_MAX_IO)
        return serr_at(s, line, col, "node '%s' has %zu %s; at most %d are supported", node, k,
                       field, FE_MAX_IO);
    *out = malloc((k ? k : 1) * sizeof **out);
    if (!*out)
        return fe_error_set(s->err, FE_ENOMEM, "out of memory reading %s", s->file);
    for (size_t i = 0; i < k; i++) {
        json_t *e = json_array_get(arr, i);
        if (!json_is_string(e)) {
            free(*out);
            *out = NULL;
            return serr_at(s, line, col, "node '%s' %s item %zu is %s; expected a tensor name",
                           node, field, i, what_is(e));
        }
        (*out)[i] = json_string_value(e);
    }
    *n = (int)k;
    return FE_OK;
}

static int node(scan *s, json_t *v, int line, int col)
{
    if (!json_is_object(v))
        return serr_at(s, line, col, "a node is %s; expected an object with \"name\", \"op\", "
                       "\"inputs\" and \"outputs\"", what_is(v));
    json_t *nm = json_object_get(v, "name"), *op = json_object_get(v, "op");
    if (!json_is_string(nm))
        return serr_at(s, line, col, "node \"name\" is %s; expected a string",
                       nm ? what_is(nm) : "missing");
    const char *name = json_string_value(nm);
    if (!json_is_string(op))
        return serr_at(s, line, col, "node '%s': \"op\" is %s; expected an op name", name,
                       op ? what_is(op) : "missing");
    json_t *ins = json_object_get(v, "inputs"), *outs = json_object_get(v, "outputs");
    json_t *empty = json_array();
    const char **in = NULL, **out = NULL;
    int nin = 0, nout = 0, rc;

    rc = names(s, ins ? ins : empty, "inputs", name, line, col, &in, &nin);
    if (rc == FE_OK)
        rc = names(s, outs, "outputs", name, line, col, &out, &nout);
    if (rc == FE_OK && nout == 0)
        rc = serr_at(s, line, col, "node '%s' has no outputs; every node produces a tensor", name);
    int32_t id = -1;
    if (rc == FE_OK) {
        id = fe_builder_node(s->b, name, json_string_value(op), in, nin, out, nout, line);
        rc = id < 0 ? -1 : FE_OK;
    }
    json_t *attrs = json_object_get(v, "attrs");
    if (rc == FE_OK && attrs && !json_is_object(attrs))
        rc = serr_at(s, line, col, "node '%s': \"attrs\" is %s; expected an object", name,
                     what_is(attrs));
    if (rc == FE_OK && attrs) {
        const char *k;
        json_t *a;
        json_object_foreach(attrs, k, a) {
            if ((rc = attr(s, id, k, a, line, col, name)) != FE_OK)
                break;
        }
    }
    free(in);
    free(out);
    json_decref(empty);
    return rc;
}

/* ---- top level ---- */

static int section_tensors(scan *s)
{
    if (expect(s, '{', "to open \"tensors\""))
        return -1;
    if (empty_container(s, '}'))
        return FE_OK;
    for (;;) {
        char *name = NULL;
        skip_ws(s);
        int line = s->line, col = (int)(s->pos - s->bol + 1);
        if (key(s, &name) || expect(s, ':', "after a tensor name")) {
            free(name);
            return -1;
        }
        json_t *v = value(s);
        int rc = v ? tensor(s, name, line, col, v) : -1;
        json_decref(v);
        free(name);
        if (rc)
            return rc;
        int more = next_or_close(s, '}', "\"tensors\"");
        if (more <= 0)
            return more;
    }
}

static int section_nodes(scan *s, int64_t *count)
{
    if (expect(s, '[', "to open \"nodes\""))
        return -1;
    if (empty_container(s, ']'))
        return FE_OK;
    for (;;) {
        skip_ws(s);
        int line = s->line, col = (int)(s->pos - s->bol + 1);
        json_t *v = value(s);
        int rc = v ? node(s, v, line, col) : -1;
        json_decref(v);
        if (rc)
            return rc;
        ++*count;
        int more = next_or_close(s, ']', "\"nodes\"");
        if (more <= 0)
            return more;
    }
}

static int section_dims(scan *s, json_t *v, int line, int col)
{
    const char *k;
    json_t *d;
    if (!json_is_object(v))
        return serr_at(s, line, col, "\"dims\" is %s; expected an object of name: size", what_is(v));
    json_object_foreach(v, k, d) {
        if (!json_is_integer(d) || json_integer_value(d) < 1) {
            char shown[64];
            if (json_is_integer(d))
                snprintf(shown, sizeof shown, "%lld", (long long)json_integer_value(d));
            else
                snprintf(shown, sizeof shown, "%s", what_is(d));
            return serr_at(s, line, col, "dim '%s' is %s; dims must be positive integers", k,
                           shown);
        }
        if (fe_builder_dim(s->b, k, json_integer_value(d), line))
            return -1;
    }
    return FE_OK;
}

static int section_outputs(scan *s, json_t *v, int line, int col)
{
    if (!json_is_array(v))
        return serr_at(s, line, col, "\"outputs\" is %s; expected a list of tensor names",
                       what_is(v));
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e))
            return serr_at(s, line, col, "outputs item %zu is %s; expected a tensor name", i,
                           what_is(e));
        if (fe_builder_output(s->b, json_string_value(e), line))
            return -1;
    }
    return FE_OK;
}

static int text_field(scan *s, json_t *v, const char *field, int line, int col, char **out)
{
    if (!json_is_string(v))
        return serr_at(s, line, col, "\"%s\" is %s; expected a string", field, what_is(v));
    if (json_string_length(v) > FE_MAX_TEXT)
        return serr_at(s, line, col, "\"%s\" is %zu bytes; at most %d are accepted", field,
                       json_string_length(v), FE_MAX_TEXT);
    *out = strdup(json_string_value(v));
    return *out ? FE_OK : fe_error_set(s->err, FE_ENOMEM, "out of memory reading %s", s->file);
}

static const char *const sections[] = {"format", "name", "source", "dims", "tensors",
                                       "nodes", "outputs"};

static int top(scan *s)
{
    int seen[7] = {0};
    char *name = NULL, *source = NULL;
    int64_t nnodes = 0;
    int rc = FE_OK;

    if (s->len >= 3 && memcmp(s->buf, "\xEF\xBB\xBF", 3) == 0)
        s->pos = 3;
    skip_ws(s);
    if (s->pos >= s->len)
        return serr(s, "the file is empty; expected a fuseeng.model/1 JSON object");
    if (s->buf[s->pos] != '{')
        return serr(s, "expected a JSON object (a fuseeng.model/1 model), found '%c'",
                    s->buf[s->pos]);
    s->pos++;
    if (empty_container(s, '}'))
        return serr(s, "the model object is empty; expected \"format\": \"" FORMAT "\"");
    for (;;) {
        char *k = NULL;
        skip_ws(s);
        int line = s->line, col = (int)(s->pos - s->bol + 1);
        if (key(s, &k) || expect(s, ':', "after a key")) {
            free(k);
            rc = -1;
            break;
        }
        int which = -1;
        for (int i = 0; i < 7; i++)
            if (strcmp(k, sections[i]) == 0)
                which = i;
        if (which >= 0 && seen[which]++) {
            rc = serr_at(s, line, col, "key \"%s\" appears twice", k);
            free(k);
            break;
        }
        free(k);
        skip_ws(s);
        int vline = s->line, vcol = (int)(s->pos - s->bol + 1);
        if (which == 4) {
            rc = section_tensors(s);
        } else if (which == 5) {
            rc = section_nodes(s, &nnodes);
        } else {
            json_t *v = value(s);
            if (!v) {
                rc = -1;
            } else if (which == 0) {
                if (!json_is_string(v) || strcmp(json_string_value(v), FORMAT) != 0)
                    rc = serr_at(s, vline, vcol, "\"format\" is %s%s%s; expected \"" FORMAT "\"",
                                 json_is_string(v) ? "\"" : "",
                                 json_is_string(v) ? json_string_value(v) : what_is(v),
                                 json_is_string(v) ? "\"" : "");
            } else if (which == 1) {
                rc = text_field(s, v, "name", vline, vcol, &name);
            } else if (which == 2) {
                rc = text_field(s, v, "source", vline, vcol, &source);
            } else if (which == 3) {
                rc = section_dims(s, v, vline, vcol);
            } else if (which == 6) {
                rc = section_outputs(s, v, vline, vcol);
            }
            /* Unknown keys are ignored: newer writers may add fields. */
            json_decref(v);
        }
        if (rc)
            break;
        int more = next_or_close(s, '}', "the model object");
        if (more < 0) {
            rc = -1;
            break;
        }
        if (more == 0)
            break;
    }
    if (rc == FE_OK) {
        skip_ws(s);
        if (s->pos < s->len)
            rc = serr(s, "unexpected data after the model object");
    }
    if (rc == FE_OK && !seen[0])
        rc = serr_at(s, 1, 1, "missing \"format\": \"" FORMAT "\"");
    if (rc == FE_OK && !seen[5])
        rc = serr_at(s, 1, 1, "missing \"nodes\": the model has no node list");
    if (rc == FE_OK && !seen[6])
        rc = serr_at(s, 1, 1, "missing \"outputs\": name the tensors the model produces");
    if (rc == FE_OK)
        rc = fe_builder_meta(s->b, name ? name : "", source ? source : "");
    free(name);
    free(source);
    return rc;
}

fe_graph *fe_load_model_buffer(const char *buf, size_t len, const char *label,
                               const fe_dimset *dims, fe_error *err)
{
    fe_error local = {0};
    fe_builder *b = fe_builder_new(label, err ? err : &local);
    if (!b)
        return NULL;
    scan s = {.file = label ? label : "<model>", .buf = buf, .len = len, .line = 1,
              .err = err ? err : &local, .b = b};
    s.err->code = FE_OK;
    int rc = top(&s);
    if (rc == FE_OK && dims)
        for (int i = 0; i < dims->n && rc == FE_OK; i++)
            rc = fe_builder_set_dim(b, dims->names[i], dims->values[i]);
    if (rc != FE_OK && s.err->code != FE_OK) {
        /* The scanner's own message. */
        fe_builder_free(b);
        return NULL;
    }
    /* All went well, or the builder holds the error and finish reports it. */
    return fe_builder_finish(b, err);
}

char *fe_load_file_text(const char *path, size_t *len, fe_error *err)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fe_error_set(err, FE_EINPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        fe_error_set(err, FE_EINPUT, "%s: not a regular file", path);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        fe_error_set(err, FE_ENOMEM, "%s: out of memory reading %zu bytes", path, n);
        return NULL;
    }
    size_t got = fread(buf, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        free(buf);
        fe_error_set(err, FE_EINPUT, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

fe_graph *fe_load_model_file(const char *path, const fe_dimset *dims, fe_error *err)
{
    size_t len;
    char *buf = fe_load_file_text(path, &len, err);
    if (!buf)
        return NULL;
    fe_graph *g = fe_load_model_buffer(buf, len, path, dims, err);
    free(buf);
    return g;
}
