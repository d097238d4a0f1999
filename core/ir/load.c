/* load.c: the fuseeng.model/1 reader.
 *
 * Note on speed and memory. A million-node model is a few hundred megabytes
 * of JSON. Building a JSON tree of it would cost more memory than the graph
 * and most of the load time goes to allocating and freeing that tree. So
 * the file is mapped, read with the pull reader of jsonr.h, and fed to the
 * graph builder value by value: names are copied once, into the string
 * table; nothing else is allocated per node. Attribute values the engine
 * does not interpret (nested objects, mixed lists) are kept as their
 * original text with whitespace removed, so they round-trip exactly.
 *
 * Every message says FILE:LINE:COL (or FILE:LINE for a node or tensor).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "infile.h"
#include "jsonr.h"
#include "load.h"

#define FORMAT "fuseeng.model/1"

typedef struct loader {
    const char *file;
    fe_jr r;
    fe_error *err;
    fe_builder *b;
    char *arena;               /* NUL-terminated copies of one node's strings */
    size_t alen, acap;
    size_t *offs;              /* arena offsets of inputs [0, FE_MAX_IO) and outputs */
    const char **names;        /* the same as pointers, once the node is complete */
} loader;

static int lerr(loader *L, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int lerr(loader *L, int line, int col, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (col > 0)
        return fe_error_set(L->err, FE_EINPUT, "%s:%d:%d: %s", L->file, line, col, msg);
    return fe_error_set(L->err, FE_EINPUT, "%s:%d: %s", L->file, line, msg);
}

/* The reader failed: report its message at its place. */
static int syntax(loader *L)
{
    if (L->err->code != FE_OK)
        return L->err->code;
    return lerr(L, L->r.err_line, L->r.err_col, "malformed JSON: %s", L->r.err);
}

static const char *kind_name(fe_jr_kind k)
{
    switch (k) {
    case FE_JR_OBJ: return "an object";
    case FE_JR_ARR: return "a list";
    case FE_JR_STR: return "a string";
    case FE_JR_NUM: return "a number";
    case FE_JR_TRUE:
    case FE_JR_FALSE: return "a boolean";
    case FE_JR_NULL: return "null";
    default: return "not a JSON value";
    }
}

/* Copy the next string, NUL-terminated, into the node arena and return its
 * offset (the arena may move as it grows), or -1 on error (reported).
 * limit is the longest accepted length. */
static ptrdiff_t arena_string(loader *L, size_t limit, const char *what, int line)
{
    fe_jr_str s;
    if (fe_jr_string(&L->r, &s))
        return syntax(L), -1;
    if (s.n > limit)
        return lerr(L, line, 0, "%s is %zu bytes long; names are limited to %zu bytes", what, s.n,
                    limit), -1;
    if (memchr(s.s, '\0', s.n))
        return lerr(L, line, 0, "%s contains a NUL character", what), -1;
    if (s.n == 0)
        return lerr(L, line, 0, "%s is empty; names need at least one character", what), -1;
    if (L->alen + s.n + 1 > L->acap) {
        size_t cap = L->acap ? L->acap : 4096;
        while (cap < L->alen + s.n + 1)
            cap *= 2;
        char *p = realloc(L->arena, cap);
        if (!p)
            return fe_error_set(L->err, FE_ENOMEM, "out of memory reading %s", L->file), -1;
        L->arena = p;
        L->acap = cap;
    }
    ptrdiff_t off = (ptrdiff_t)L->alen;
    memcpy(L->arena + off, s.s, s.n);
    L->arena[off + (ptrdiff_t)s.n] = '\0';
    L->alen += s.n + 1;
    return off;
}

/* ---- unknown keys ---- */

#define NKEYS(a) ((int)(sizeof a / sizeof a[0]))
static const char *const tensor_keys[] = {"shape", "dtype", "kind"};
static const char *const node_keys[] = {"name", "op", "inputs", "outputs", "attrs"};
static const char *const sections[] = {"format", "name", "source", "dims", "tensors",
                                       "nodes", "outputs", "weights_stamp"};

/* An object key the format does not have: an error, since a misspelt
 * "attrs" or "shape" would otherwise drop what it holds without a word.
 * what/name say whose key it is (name NULL for the model itself). */
static int unknown_key(loader *L, int line, int col, const char *what, const char *name,
                       const fe_jr_str *key, const char *const *keys, int nkeys)
{
    char k[64], list[160];
    size_t n = 0;
    snprintf(k, sizeof k, "%.*s", key->n > 48 ? 48 : (int)key->n, key->s);
    for (int i = 0; i < nkeys; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", keys[i]);
    const char *near = fe_closest(k, keys, nkeys);
    return lerr(L, line, col, "%s%s%s%s has an unknown field \"%s\"%s%s%s; expected %s%s", what,
                name ? " '" : "", name ? name : "", name ? "'" : "", k, near ? " (did you mean \"" : "",
                near ? near : "", near ? "\"?)" : "", list,
                strcmp(what, "node") == 0 ? " (other attributes go inside \"attrs\")" : "");
}

/* ---- tensors ---- */

static int tensor(loader *L, const char *name, int line, int col)
{
    fe_jr *r = &L->r;
    int64_t shape[FE_MAX_RANK];
    int rank = -1, dtype = -1, kind = FE_ACTIVATION, have_dtype = 0, k;
    fe_jr_str key;

    if (fe_jr_peek(r) != FE_JR_OBJ)
        return lerr(L, line, col, "tensor '%s' is %s; expected an object with \"shape\" and "
                    "\"dtype\"", name, kind_name(fe_jr_peek(r)));
    if (fe_jr_obj_begin(r))
        return syntax(L);
    while ((k = fe_jr_obj_next(r, &key)) > 0) {
        if (key.n == 5 && memcmp(key.s, "shape", 5) == 0) {
            if (fe_jr_peek(r) != FE_JR_ARR)
                return lerr(L, line, col, "tensor '%s': \"shape\" is %s; expected a list of sizes "
                            "and dim names", name, kind_name(fe_jr_peek(r)));
            if (fe_jr_arr_begin(r))
                return syntax(L);
            rank = 0;
            int more;
            while ((more = fe_jr_arr_next(r)) > 0) {
                if (rank == FE_MAX_RANK)
                    return lerr(L, line, col, "tensor '%s' has more than %d dims; at most %d are "
                                "supported", name, FE_MAX_RANK, FE_MAX_RANK);
                fe_jr_kind vk = fe_jr_peek(r);
                if (vk == FE_JR_STR) {
                    char dim[256];
                    size_t n;
                    int rc = fe_jr_string_copy(r, dim, sizeof dim, &n);
                    if (rc < 0)
                        return syntax(L);
                    if (rc > 0)
                        return lerr(L, line, col, "tensor '%s' shape item %d is a %zu-byte dim "
                                    "name; dim names are limited to 255 bytes", name, rank, n);
                    int32_t id = fe_builder_dim_id(L->b, dim);
                    if (id < 0)
                        return -1;
                    shape[rank++] = FE_SYM(id);
                } else if (vk == FE_JR_NUM) {
                    int is_int;
                    int64_t iv;
                    double dv;
                    if (fe_jr_number(r, &is_int, &iv, &dv))
                        return syntax(L);
                    if (!is_int)
                        return lerr(L, line, col, "tensor '%s' shape item %d is %g; expected a "
                                    "positive integer or a dim name", name, rank, dv);
                    shape[rank++] = iv;
                } else {
                    return lerr(L, line, col, "tensor '%s' shape item %d is %s; expected a "
                                "positive integer or a dim name", name, rank, kind_name(vk));
                }
            }
            if (more < 0)
                return syntax(L);
        } else if ((key.n == 5 && memcmp(key.s, "dtype", 5) == 0) ||
                   (key.n == 4 && memcmp(key.s, "kind", 4) == 0)) {
            int is_dtype = key.n == 5;
            char v[32];
            size_t n;
            if (fe_jr_peek(r) != FE_JR_STR)
                return lerr(L, line, col, is_dtype
                                ? "tensor '%s': \"dtype\" is %s; expected one of f32 f16 bf16 i64 "
                                  "i32 i8 bool"
                                : "tensor '%s': \"kind\" is %s; expected \"input\", \"weight\" or "
                                  "\"activation\"",
                            name, kind_name(fe_jr_peek(r)));
            int rc = fe_jr_string_copy(r, v, sizeof v, &n);
            if (rc < 0)
                return syntax(L);
            if (is_dtype) {
                dtype = rc ? -1 : fe_dtype_parse(v);
                have_dtype = 1;
                if (dtype < 0)
                    return lerr(L, line, col, "tensor '%s' has unknown dtype '%.31s'; expected one "
                                "of f32 f16 bf16 i64 i32 i8 bool", name, rc ? "(long)" : v);
            } else {
                kind = rc ? -1 : fe_tkind_parse(v);
                if (kind < 0)
                    return lerr(L, line, col, "tensor '%s' has kind '%.31s'; expected \"input\", "
                                "\"weight\" or \"activation\"", name, rc ? "(long)" : v);
            }
        } else {
            return unknown_key(L, line, col, "tensor", name, &key, tensor_keys, NKEYS(tensor_keys));
        }
    }
    if (k < 0)
        return syntax(L);
    if (rank < 0)
        return lerr(L, line, col, "tensor '%s': \"shape\" is missing; expected a list of sizes and "
                    "dim names", name);
    if (!have_dtype)
        return lerr(L, line, col, "tensor '%s': \"dtype\" is missing; expected one of f32 f16 bf16 "
                    "i64 i32 i8 bool", name);
    return fe_builder_tensor(L->b, name, dtype, kind, rank, shape, line) < 0 ? -1 : FE_OK;
}

static int section_tensors(loader *L)
{
    fe_jr *r = &L->r;
    fe_jr_str key;
    int k, line, col;
    char *name = NULL;
    size_t cap = 0;

    if (fe_jr_peek(r) != FE_JR_OBJ)
        return fe_jr_where(r, &line, &col),
               lerr(L, line, col, "\"tensors\" is %s; expected an object of name: {shape, dtype, "
                    "kind}", kind_name(fe_jr_peek(r)));
    if (fe_jr_obj_begin(r))
        return syntax(L);
    for (;;) {
        if ((k = fe_jr_obj_next(r, &key)) <= 0)
            break;
        line = r->key_line;
        col = r->key_col;
        if (key.n > FE_MAX_NAME) {
            free(name);
            return lerr(L, line, 0, "a tensor name is %zu bytes long; names are limited to %d bytes",
                        key.n, FE_MAX_NAME);
        }
        if (key.n == 0) {
            free(name);
            return lerr(L, line, col, "a tensor name is empty; names need at least one character");
        }
        if (key.n + 1 > cap) {
            cap = key.n + 1 > 256 ? key.n + 1 : 256;
            char *p = realloc(name, cap);
            if (!p) {
                free(name);
                return fe_error_set(L->err, FE_ENOMEM, "out of memory reading %s", L->file);
            }
            name = p;
        }
        memcpy(name, key.s, key.n);
        name[key.n] = '\0';
        int rc = tensor(L, name, line, col);
        if (rc) {
            free(name);
            return rc;
        }
    }
    free(name);
    return k < 0 ? syntax(L) : FE_OK;
}

/* ---- nodes ---- */

/* Remove whitespace outside strings: the kept text of an uninterpreted
 * attribute value. */
static size_t compact(const char *s, size_t n, char *out)
{
    size_t k = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            out[k++] = c;
            if (c == '\\' && i + 1 < n)
                out[k++] = s[++i];
            else if (c == '"')
                in_str = 0;
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            out[k++] = c;
            in_str = c == '"';
        }
    }
    return k;
}

static int attr_kept(loader *L, int32_t node, const char *key, int line)
{
    size_t a, e;
    if (fe_jr_skip(&L->r, &a, &e))
        return syntax(L);
    if (e - a > FE_MAX_TEXT)
        return lerr(L, line, 0, "attribute '%s' is %zu bytes of JSON; at most %d are kept", key,
                    e - a, FE_MAX_TEXT);
    char *text = malloc(e - a + 1);
    if (!text)
        return fe_error_set(L->err, FE_ENOMEM, "out of memory reading %s", L->file);
    size_t n = compact(L->r.buf + a, e - a, text);
    int rc = fe_builder_attr_json(L->b, node, key, text, n);
    free(text);
    return rc ? -1 : FE_OK;
}

/* A list of ints (or, for "shape", ints and dim names) becomes an INTS
 * attribute; any other list is kept as text. */
static int attr_list(loader *L, int32_t node, const char *name, const char *key, int line)
{
    fe_jr *r = &L->r;
    fe_jr_mark m = fe_jr_save(r);
    int depth = r->depth, shape_like = strcmp(key, "shape") == 0, n = 0, k;
    int64_t v[64];

    if (fe_jr_arr_begin(r))
        return syntax(L);
    while ((k = fe_jr_arr_next(r)) > 0) {
        fe_jr_kind vk = fe_jr_peek(r);
        int is_int;
        double dv;
        if (n == 64 || !(vk == FE_JR_NUM || (shape_like && vk == FE_JR_STR)))
            break;
        if (vk == FE_JR_NUM) {
            if (fe_jr_number(r, &is_int, &v[n], &dv))
                return syntax(L);
            if (!is_int)
                break;
            /* that range stands for dim names (graph.h's FE_SYM) */
            if (FE_IS_SYM(v[n]))
                return lerr(L, line, 0, "node '%s' attrs.%s item %d is %lld, too negative for "
                            "a size, axis or index", name, key, n, (long long)v[n]);
            n++;
        } else {
            char dim[256];
            int rc = fe_jr_string_copy(r, dim, sizeof dim, NULL);
            if (rc < 0)
                return syntax(L);
            int32_t id = rc ? -1 : fe_builder_dim_id(L->b, dim);
            if (id < 0)
                break;
            v[n++] = FE_SYM(id);
        }
    }
    if (k < 0)
        return syntax(L);
    if (k == 0)
        return fe_builder_attr_ints(L->b, node, key, v, n) ? -1 : FE_OK;
    fe_jr_restore(r, m);
    r->depth = depth;
    return attr_kept(L, node, key, line);
}

static int attrs(loader *L, int32_t node, const char *name, int line, int col)
{
    fe_jr *r = &L->r;
    fe_jr_str key;
    char k[FE_MAX_NAME + 1];
    int more;

    if (fe_jr_peek(r) != FE_JR_OBJ)
        return lerr(L, line, col, "node '%s': \"attrs\" is %s; expected an object", name,
                    kind_name(fe_jr_peek(r)));
    if (fe_jr_obj_begin(r))
        return syntax(L);
    while ((more = fe_jr_obj_next(r, &key)) > 0) {
        if (key.n > FE_MAX_NAME || memchr(key.s, '\0', key.n))
            return lerr(L, line, 0, "node '%s' has an attribute name of %zu bytes; names are "
                        "limited to %d bytes", name, key.n, FE_MAX_NAME);
        memcpy(k, key.s, key.n);
        k[key.n] = '\0';
        int rc, is_int, b;
        int64_t iv;
        double dv;
        fe_jr_str s;
        switch (fe_jr_peek(r)) {
        case FE_JR_TRUE:
        case FE_JR_FALSE:
            rc = fe_jr_bool(r, &b) ? syntax(L) : fe_builder_attr_bool(L->b, node, k, b);
            break;
        case FE_JR_NULL:
            rc = fe_jr_null(r) ? syntax(L) : fe_builder_attr_null(L->b, node, k);
            break;
        case FE_JR_NUM:
            if (fe_jr_number(r, &is_int, &iv, &dv))
                return syntax(L);
            rc = is_int ? fe_builder_attr_int(L->b, node, k, iv)
                        : fe_builder_attr_float(L->b, node, k, dv);
            break;
        case FE_JR_STR:
            if (fe_jr_string(r, &s))
                return syntax(L);
            if (s.n > FE_MAX_NAME || memchr(s.s, '\0', s.n))
                return lerr(L, line, 0, "node '%s' attribute '%s' is a %zu-byte string; attribute "
                            "strings are limited to %d bytes", name, k, s.n, FE_MAX_NAME);
            {
                char *v = strndup(s.s, s.n);
                if (!v)
                    return fe_error_set(L->err, FE_ENOMEM, "out of memory reading %s", L->file);
                rc = fe_builder_attr_str(L->b, node, k, v);
                free(v);
            }
            break;
        case FE_JR_ARR:
            rc = attr_list(L, node, name, k, line);
            break;
        case FE_JR_OBJ:
            rc = attr_kept(L, node, k, line);
            break;
        default:
            rc = fe_jr_skip(r, &(size_t){0}, &(size_t){0}) ? syntax(L) : -1;
            break;
        }
        if (rc)
            return rc;
    }
    return more < 0 ? syntax(L) : FE_OK;
}

/* Read a list of tensor names into the arena; *n gets the count. The node's
 * name is an arena offset (-1 if not read yet): the arena may move. */
static int name_list(loader *L, const char *field, ptrdiff_t name_off, int line, int col,
                     size_t *n)
{
    fe_jr *r = &L->r;
    int more;
#define node (name_off >= 0 ? L->arena + name_off : "?")
    *n = 0;
    if (fe_jr_peek(r) != FE_JR_ARR)
        return lerr(L, line, col, "node '%s': \"%s\" is %s; expected a list of tensor names",
                    node, field, kind_name(fe_jr_peek(r)));
    if (fe_jr_arr_begin(r))
        return syntax(L);
    while ((more = fe_jr_arr_next(r)) > 0) {
        if (fe_jr_peek(r) != FE_JR_STR)
            return lerr(L, line, col, "node '%s' %s item %zu is %s; expected a tensor name",
                        node, field, *n, kind_name(fe_jr_peek(r)));
        if (*n >= FE_MAX_IO)
            return lerr(L, line, col, "node '%s' has more than %d %s", node,
                        FE_MAX_IO, field);
        ptrdiff_t off = arena_string(L, FE_MAX_NAME, "a tensor name", line);
        if (off < 0)
            return -1;
        L->offs[(*n)++ + (field[0] == 'o' ? FE_MAX_IO : 0)] = (size_t)off;
    }
    return more < 0 ? syntax(L) : FE_OK;
#undef node
}

static int node(loader *L)
{
    fe_jr *r = &L->r;
    fe_jr_str key;
    int line, col, k;
    ptrdiff_t name = -1, op = -1;
    size_t nin = 0, nout = 0;
    int have_in = 0, have_out = 0, have_attrs = 0;
    fe_jr_mark attrs_at = {0};

    fe_jr_where(r, &line, &col);
    if (fe_jr_peek(r) != FE_JR_OBJ)
        return lerr(L, line, col, "a node is %s; expected an object with \"name\", \"op\", "
                    "\"inputs\" and \"outputs\"", kind_name(fe_jr_peek(r)));
    L->alen = 0;
    if (fe_jr_obj_begin(r))
        return syntax(L);
    /* Fields come in any order and attributes need the node first: note
     * where "attrs" is and come back to it. */
    while ((k = fe_jr_obj_next(r, &key)) > 0) {
        int rc = FE_OK;
        if (key.n == 4 && memcmp(key.s, "name", 4) == 0) {
            if (fe_jr_peek(r) != FE_JR_STR)
                return lerr(L, line, col, "node \"name\" is %s; expected a string",
                            kind_name(fe_jr_peek(r)));
            if ((name = arena_string(L, FE_MAX_NAME, "a node name", line)) < 0)
                return -1;
        } else if (key.n == 2 && memcmp(key.s, "op", 2) == 0) {
            if (fe_jr_peek(r) != FE_JR_STR)
                return lerr(L, line, col, "node: \"op\" is %s; expected an op name",
                            kind_name(fe_jr_peek(r)));
            if ((op = arena_string(L, 255, "an op name", line)) < 0)
                return -1;
        } else if (key.n == 6 && memcmp(key.s, "inputs", 6) == 0) {
            rc = name_list(L, "inputs", name, line, col, &nin);
            have_in = 1;
        } else if (key.n == 7 && memcmp(key.s, "outputs", 7) == 0) {
            rc = name_list(L, "outputs", name, line, col, &nout);
            have_out = 1;
        } else if (key.n == 5 && memcmp(key.s, "attrs", 5) == 0) {
            attrs_at = fe_jr_save(r);
            have_attrs = 1;
            size_t a, e;
            rc = fe_jr_skip(r, &a, &e) ? syntax(L) : FE_OK;
        } else {
            return unknown_key(L, line, col, "node", name >= 0 ? L->arena + name : "?", &key,
                               node_keys, NKEYS(node_keys));
        }
        if (rc)
            return rc;
    }
    if (k < 0)
        return syntax(L);

    fe_jr_mark end = fe_jr_save(r);
    int depth = r->depth;
    if (name < 0)
        return lerr(L, line, col, "node \"name\" is missing; expected a string");
    const char *nm = L->arena + name;
    if (op < 0)
        return lerr(L, line, col, "node '%s': \"op\" is missing; expected an op name", nm);
    if (!have_out)
        return lerr(L, line, col, "node '%s': \"outputs\" is missing; expected a list of tensor "
                    "names", nm);
    if (nout == 0)
        return lerr(L, line, col, "node '%s' has no outputs; every node produces a tensor", nm);
    (void)have_in;   /* "inputs" may be omitted: ops like arange take none */
    for (size_t i = 0; i < nin; i++)
        L->names[i] = L->arena + L->offs[i];
    for (size_t i = 0; i < nout; i++)
        L->names[FE_MAX_IO + i] = L->arena + L->offs[FE_MAX_IO + i];
    int32_t id = fe_builder_node(L->b, nm, L->arena + op, L->names, (int)nin,
                                 L->names + FE_MAX_IO, (int)nout, line);
    if (id < 0)
        return -1;
    if (have_attrs) {
        fe_jr_restore(r, attrs_at);
        int rc = attrs(L, id, nm, line, col);
        if (rc)
            return rc;
        fe_jr_restore(r, end);
        r->depth = depth;
    }
    return FE_OK;
}

static int section_nodes(loader *L)
{
    fe_jr *r = &L->r;
    int k, line, col;
    if (fe_jr_peek(r) != FE_JR_ARR)
        return fe_jr_where(r, &line, &col),
               lerr(L, line, col, "\"nodes\" is %s; expected a list of nodes",
                    kind_name(fe_jr_peek(r)));
    if (fe_jr_arr_begin(r))
        return syntax(L);
    while ((k = fe_jr_arr_next(r)) > 0)
        if (node(L))
            return -1;
    return k < 0 ? syntax(L) : FE_OK;
}

/* ---- top level ---- */

static int section_dims(loader *L, int line, int col)
{
    fe_jr *r = &L->r;
    fe_jr_str key;
    int k;
    if (fe_jr_peek(r) != FE_JR_OBJ)
        return lerr(L, line, col, "\"dims\" is %s; expected an object of name: size",
                    kind_name(fe_jr_peek(r)));
    if (fe_jr_obj_begin(r))
        return syntax(L);
    while ((k = fe_jr_obj_next(r, &key)) > 0) {
        char name[256];
        int dline, dcol, is_int;
        int64_t iv;
        double dv;
        if (key.n >= sizeof name)
            return lerr(L, line, col, "a dim name is %zu bytes long; dim names are limited to 255 "
                        "bytes", key.n);
        memcpy(name, key.s, key.n);
        name[key.n] = '\0';
        fe_jr_where(r, &dline, &dcol);
        if (fe_jr_peek(r) != FE_JR_NUM)
            return lerr(L, dline, dcol, "dim '%s' is %s; dims must be positive integers", name,
                        kind_name(fe_jr_peek(r)));
        if (fe_jr_number(r, &is_int, &iv, &dv))
            return syntax(L);
        if (!is_int || iv < 1) {
            char shown[64];
            snprintf(shown, sizeof shown, is_int ? "%.0f" : "%g", dv);
            return lerr(L, dline, dcol, "dim '%s' is %s%s; dims must be positive integers", name,
                        shown, is_int ? "" : " written as a real number");
        }
        if (fe_builder_dim(L->b, name, iv, dline))
            return -1;
    }
    return k < 0 ? syntax(L) : FE_OK;
}

static int section_outputs(loader *L, int line, int col)
{
    fe_jr *r = &L->r;
    int k;
    size_t i = 0;
    if (fe_jr_peek(r) != FE_JR_ARR)
        return lerr(L, line, col, "\"outputs\" is %s; expected a list of tensor names",
                    kind_name(fe_jr_peek(r)));
    if (fe_jr_arr_begin(r))
        return syntax(L);
    while ((k = fe_jr_arr_next(r)) > 0) {
        int iline, icol;
        fe_jr_where(r, &iline, &icol);
        if (fe_jr_peek(r) != FE_JR_STR)
            return lerr(L, iline, icol, "outputs item %zu is %s; expected a tensor name", i,
                        kind_name(fe_jr_peek(r)));
        L->alen = 0;
        ptrdiff_t off = arena_string(L, FE_MAX_NAME, "an output name", iline);
        if (off < 0 || fe_builder_output(L->b, L->arena + off, iline))
            return -1;
        i++;
    }
    return k < 0 ? syntax(L) : FE_OK;
}

static int text_field(loader *L, const char *field, int line, int col, char **out)
{
    fe_jr_str s;
    if (fe_jr_peek(&L->r) != FE_JR_STR)
        return lerr(L, line, col, "\"%s\" is %s; expected a string", field,
                    kind_name(fe_jr_peek(&L->r)));
    if (fe_jr_string(&L->r, &s))
        return syntax(L);
    if (s.n > FE_MAX_TEXT)
        return lerr(L, line, col, "\"%s\" is %zu bytes; at most %d are accepted", field, s.n,
                    FE_MAX_TEXT);
    free(*out);
    *out = strndup(s.s, s.n);
    return *out ? FE_OK : fe_error_set(L->err, FE_ENOMEM, "out of memory reading %s", L->file);
}

static int top(loader *L)
{
    fe_jr *r = &L->r;
    fe_jr_str key;
    int seen[NKEYS(sections)] = {0}, k, line, col, rc = FE_OK;
    char *name = NULL, *source = NULL, *format = NULL, *stamp = NULL;

    fe_jr_where(r, &line, &col);
    if (fe_jr_peek(r) == FE_JR_EOF)
        return lerr(L, line, col, "the file is empty; expected a fuseeng.model/1 JSON object");
    if (fe_jr_peek(r) != FE_JR_OBJ)
        return lerr(L, line, col, "expected a JSON object (a fuseeng.model/1 model), found %s",
                    kind_name(fe_jr_peek(r)));
    if (fe_jr_obj_begin(r))
        return syntax(L);
    for (;;) {
        if ((k = fe_jr_obj_next(r, &key)) <= 0)
            break;
        int kline = r->key_line, kcol = r->key_col;
        int which = -1;
        for (int i = 0; i < NKEYS(sections); i++)
            if (strlen(sections[i]) == key.n && memcmp(key.s, sections[i], key.n) == 0)
                which = i;
        if (which >= 0 && seen[which]++) {
            rc = lerr(L, kline, kcol, "key \"%s\" appears twice", sections[which]);
            break;
        }
        fe_jr_where(r, &line, &col);
        switch (which) {
        case 0: rc = text_field(L, "format", line, col, &format); break;
        case 1: rc = text_field(L, "name", line, col, &name); break;
        case 2: rc = text_field(L, "source", line, col, &source); break;
        case 3: rc = section_dims(L, line, col); break;
        case 4: rc = section_tensors(L); break;
        case 5: rc = section_nodes(L); break;
        case 6: rc = section_outputs(L, line, col); break;
        case 7: rc = text_field(L, "weights_stamp", line, col, &stamp); break;
        default:
            rc = unknown_key(L, kline, kcol, "model", NULL, &key, sections, NKEYS(sections));
        }
        if (rc == FE_OK && which == 0 && strcmp(format, FORMAT) != 0)
            rc = lerr(L, line, col, "\"format\" is \"%.80s\"; expected \"" FORMAT "\"", format);
        if (rc)
            break;
    }
    if (rc == FE_OK && k < 0)
        rc = syntax(L);
    if (rc == FE_OK && !fe_jr_at_end(r)) {
        fe_jr_where(r, &line, &col);
        rc = lerr(L, line, col, "unexpected data after the model object");
    }
    if (rc == FE_OK && !seen[0])
        rc = lerr(L, 1, 1, "missing \"format\": \"" FORMAT "\"");
    if (rc == FE_OK && !seen[5])
        rc = lerr(L, 1, 1, "missing \"nodes\": the model has no node list");
    if (rc == FE_OK && !seen[6])
        rc = lerr(L, 1, 1, "missing \"outputs\": name the tensors the model produces");
    if (rc == FE_OK)
        rc = fe_builder_meta(L->b, name ? name : "", source ? source : "");
    if (rc == FE_OK && stamp)
        rc = fe_builder_weights_stamp(L->b, stamp);
    free(format);
    free(name);
    free(source);
    free(stamp);
    return rc;
}

fe_graph *fe_load_model_buffer(const char *buf, size_t len, const char *label,
                               const fe_dimset *dims, fe_error *err)
{
    fe_error local = {0};
    if (!err)
        err = &local;
    err->code = FE_OK;
    fe_builder *b = fe_builder_new(label, err);
    if (!b)
        return NULL;
    loader L = {.file = label ? label : "<model>", .err = err, .b = b};
    L.names = malloc(2 * FE_MAX_IO * sizeof *L.names);
    L.offs = malloc(2 * FE_MAX_IO * sizeof *L.offs);
    fe_jr_init(&L.r, buf, len);
    int rc = L.names && L.offs ? top(&L) : fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; rc == FE_OK && dims && i < dims->n; i++)
        rc = fe_builder_set_dim(b, dims->names[i], dims->values[i]);
    fe_jr_free(&L.r);
    free(L.arena);
    free(L.names);
    free(L.offs);
    if (rc != FE_OK && err->code != FE_OK) {
        fe_builder_free(b);
        return NULL;
    }
    /* All went well, or the builder holds the error and finish reports it. */
    return fe_builder_finish(b, err);
}

fe_graph *fe_load_model_file(const char *path, const fe_dimset *dims, fe_error *err)
{
    size_t n;
    int fd = fe_infile_open(path, "the model", &n, err);
    if (fd < 0)
        return NULL;
    /* Map rather than read: the pages come from the page cache and need no
     * zeroing or copying, which matters for files of hundreds of MB. */
    void *map = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (n && map == MAP_FAILED) {
        fe_error_set(err, FE_EINPUT, "%s: cannot map: %s", path, strerror(errno));
        return NULL;
    }
    if (n)
        madvise(map, n, MADV_SEQUENTIAL);
    fe_graph *g = fe_load_model_buffer(n ? map : "", n, path, dims, err);
    if (n)
        munmap(map, n);
    return g;
}
