/* onnx_read.c: an ONNX file into protobuf-c messages, with the model checks.
 *
 * protobuf-c copies every bytes field when it unpacks, so unpacking the
 * whole ModelProto from a mapping holds the weights twice. Instead the two
 * outer messages are split by hand (the wire format is simple: a key
 * varint, then a varint, a fixed 4 or 8 bytes or a length-prefixed run):
 * the model and graph minus their big fields are unpacked as usual, each
 * initializer on its own, and the mapped pages of each are dropped once
 * its copy exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph.h"
#include "jsonr.h"
#include "onnx_read.h"

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5 };

/* A varint at *p (< end) into *v; advances *p. 0 if it runs past end. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* One field of a message at *p: its number, and [*body, *next) the whole
 * field's bytes from *p when copied, the payload when length-delimited.
 * 0 on a malformed or truncated field. */
static int field(const uint8_t **p, const uint8_t *end, uint32_t *num, const uint8_t **payload,
                 uint64_t *plen)
{
    uint64_t key, n = 0;
    if (!varint(p, end, &key))
        return 0;
    *num = (uint32_t)(key >> 3);
    switch (key & 7) {
    case 0:
        if (!varint(p, end, &n))
            return 0;
        *payload = NULL;
        *plen = 0;
        return 1;
    case 1:
        n = 8;
        break;
    case 5:
        n = 4;
        break;
    case 2:
        if (!varint(p, end, &n))
            return 0;
        break;
    default:   /* groups (3, 4) are not in onnx.proto; 6, 7 do not exist */
        return 0;
    }
    if (n > (uint64_t)(end - *p))
        return 0;
    *payload = *p;
    *plen = n;
    *p += n;
    return 1;
}

typedef struct span {
    const uint8_t *p;
    uint64_t n;
} span;

/* Split msg: the payloads of field `pick` into *picked (grown), the other
 * fields copied into *rest (malloc'd). -1 on a malformed message, -2 out of
 * memory. */
static int split(const uint8_t *msg, uint64_t len, uint32_t pick, span **picked, size_t *npicked,
                 uint8_t **rest, size_t *nrest)
{
    const uint8_t *p = msg, *end = msg + len;
    size_t cap = 0;
    *rest = malloc(len ? len : 1);
    *nrest = 0;
    *picked = NULL;
    *npicked = 0;
    if (!*rest)
        return -2;
    while (p < end) {
        const uint8_t *start = p, *pl;
        uint32_t num;
        uint64_t n;
        if (!field(&p, end, &num, &pl, &n))
            return -1;
        if (num == pick && pl) {
            if (*npicked == cap) {
                cap = cap ? 2 * cap : 64;
                span *s = realloc(*picked, cap * sizeof *s);
                if (!s)
                    return -2;
                *picked = s;
            }
            (*picked)[(*npicked)++] = (span){pl, n};
        } else {
            memcpy(*rest + *nrest, start, (size_t)(p - start));
            *nrest += (size_t)(p - start);
        }
    }
    return 0;
}

int fe_onnx_dtype(int t)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return FE_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return FE_F16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return FE_BF16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return FE_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return FE_I32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return FE_I8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return FE_BOOL;
    default: return -1;
    }
}

const char *fe_onnx_dtype_name(int t)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
        "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "an unknown type";
}

void fe_onnx_free(fe_onnx *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->ninits; i++)
        if (o->inits[i])
            onnx__tensor_proto__free_unpacked(o->inits[i], NULL);
    free(o->inits);
    if (o->graph)
        onnx__graph_proto__free_unpacked(o->graph, NULL);
    if (o->model)
        onnx__model_proto__free_unpacked(o->model, NULL);
    free(o->path);
    free(o);
}

/* Give the pages wholly inside [p, p + n) of a file mapping back. */
static void drop_pages(const uint8_t *p, uint64_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + n) & ~(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

static int bad(fe_error *err, const char *path, const char *what)
{
    return fe_error_set(err, FE_EINPUT, "%s: not a readable ONNX model: %s", path, what);
}

const char *fe_onnx_bad_name(const char *s, const char *what, char *buf, size_t cap)
{
    size_t len = strlen(s);
    const unsigned char *u = (const unsigned char *)s;
    if (len > FE_ONNX_NAME_MAX) {
        snprintf(buf, cap, "%s is %zu bytes long; names are limited to %d bytes (rename it)", what,
                 len, FE_ONNX_NAME_MAX);
        return buf;
    }
    for (size_t i = 0; i < len;) {
        size_t k = u[i] < 0x80 ? 1 : fe_jr_utf8_len(u + i, len - i);
        if (!k) {
            snprintf(buf, cap, "%s is not valid UTF-8 (byte 0x%02x at %zu); rename it", what, u[i], i);
            return buf;
        }
        if (u[i] < 0x20 || u[i] == 0x7f || (u[i] == 0xc2 && u[i + 1] < 0xa0)) {
            snprintf(buf, cap, "%s '%s' has control character 0x%02x at byte %zu; names may not "
                     "hold control characters (rename it)", what, s, u[i] == 0xc2 ? u[i + 1] : u[i],
                     i);
            return buf;
        }
        i += k;
    }
    return NULL;
}

/* "node 'NAME' (OP, #I)", the node as every message names it: an unnamed
 * one by the name the import gives it (OP_I). */
static void node_label(const Onnx__NodeProto *n, size_t i, char *buf, size_t cap)
{
    if (n->name && n->name[0])
        snprintf(buf, cap, "node '%s' (%s, #%zu)", n->name, n->op_type, i);
    else
        snprintf(buf, cap, "node '%s_%zu' (%s, #%zu)", n->op_type, i, n->op_type, i);
}

/* A value's declared type: its name (name_what) and its dim names. */
static int check_value_info(const fe_onnx *o, const Onnx__ValueInfoProto *vi, const char *kind,
                            size_t i, fe_error *err)
{
    char what[96], why[FE_ONNX_NAME_MAX + 256];
    if (!vi->name || !vi->name[0])
        return fe_error_set(err, FE_EINPUT, "%s: %s %zu has no name; not a valid ONNX model "
                            "(re-export it)", o->path, kind, i);
    snprintf(what, sizeof what, "%s %zu name", kind, i);
    if (fe_onnx_bad_name(vi->name, what, why, sizeof why))
        return fe_error_set(err, FE_EINPUT, "%s: %s", o->path, why);
    const Onnx__TypeProto *t = vi->type;
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type->shape)
        return FE_OK;
    const Onnx__TensorShapeProto *sh = t->tensor_type->shape;
    for (size_t k = 0; k < sh->n_dim; k++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[k];
        if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
            continue;
        snprintf(what, sizeof what, "%s '%.24s' dim %zu name", kind, vi->name, k);
        if (fe_onnx_bad_name(d->dim_param, what, why, sizeof why))
            return fe_error_set(err, FE_EINPUT, "%s: %s", o->path, why);
    }
    return FE_OK;
}

/* Every name and string of a node the importer reads or prints. */
static int check_node(const fe_onnx *o, const Onnx__NodeProto *n, size_t i, fe_error *err)
{
    char label[FE_ONNX_NAME_MAX + 128], why[FE_ONNX_NAME_MAX + 256], what[64];
    const char *name = n->name && n->name[0] ? n->name : NULL;
    if (!n->op_type || !n->op_type[0])
        return fe_error_set(err, FE_EINPUT, "%s: node '%s' (#%zu) has no op_type; not a valid "
                            "ONNX model (re-export it)", o->path, name && strlen(name) < 200 &&
                            !fe_onnx_bad_name(name, "", why, sizeof why) ? name : "?", i);
    if (fe_onnx_bad_name(n->op_type, "its op_type", why, sizeof why))
        return fe_error_set(err, FE_EINPUT, "%s: node #%zu: %s", o->path, i, why);
    if (name && fe_onnx_bad_name(name, "its name", why, sizeof why))
        return fe_error_set(err, FE_EINPUT, "%s: node #%zu (%s): %s", o->path, i, n->op_type, why);
    node_label(n, i, label, sizeof label);
    if (n->domain && fe_onnx_bad_name(n->domain, "its domain", why, sizeof why))
        return fe_error_set(err, FE_EINPUT, "%s: %s: %s", o->path, label, why);
    for (size_t k = 0; k < n->n_input + n->n_output; k++) {
        int out = k >= n->n_input;
        snprintf(what, sizeof what, "%s %zu name", out ? "output" : "input", out ? k - n->n_input : k);
        if (fe_onnx_bad_name(out ? n->output[k - n->n_input] : n->input[k], what, why, sizeof why))
            return fe_error_set(err, FE_EINPUT, "%s: %s: %s", o->path, label, why);
    }
    return FE_OK;
}

/* The strings of the graph, each checked once (onnx_read.h). */
static int check_strings(fe_onnx *o, fe_error *err)
{
    const Onnx__GraphProto *g = o->graph;
    char what[64], why[FE_ONNX_NAME_MAX + 256];
    for (size_t i = 0; i < g->n_node; i++)
        if (check_node(o, g->node[i], i, err))
            return err->code;
    for (size_t i = 0; i < g->n_input; i++)
        if (check_value_info(o, g->input[i], "graph input", i, err))
            return err->code;
    for (size_t i = 0; i < g->n_output; i++)
        if (check_value_info(o, g->output[i], "graph output", i, err))
            return err->code;
    for (size_t i = 0; i < g->n_value_info; i++)
        if (check_value_info(o, g->value_info[i], "value_info", i, err))
            return err->code;
    for (size_t i = 0; i < o->ninits; i++) {
        const char *name = o->inits[i]->name;
        if (!name || !name[0])
            return fe_error_set(err, FE_EINPUT, "%s: initializer %zu has no name; not a valid "
                                "ONNX model (re-export it)", o->path, i);
        snprintf(what, sizeof what, "initializer %zu name", i);
        if (fe_onnx_bad_name(name, what, why, sizeof why))
            return fe_error_set(err, FE_EINPUT, "%s: %s", o->path, why);
    }
    return FE_OK;
}

/* The checks on the unpacked model that need no mapping. */
static int check(fe_onnx *o, fe_error *err)
{
    const Onnx__ModelProto *m = o->model;
    const Onnx__GraphProto *g = o->graph;
    if (!m->has_ir_version || m->ir_version < 3)
        return fe_error_set(err, FE_EINPUT, "%s: ONNX IR version %lld is not supported (3 or "
                            "newer; re-export with a recent exporter)", o->path,
                            (long long)(m->has_ir_version ? m->ir_version : 0));
    o->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *d = m->opset_import[i]->domain;
        if (!d || !*d || strcmp(d, "ai.onnx") == 0)
            o->opset = m->opset_import[i]->version;
    }
    if (o->opset < 0)
        return fe_error_set(err, FE_EINPUT, "%s: the model imports no opset of the default ONNX "
                            "domain", o->path);
    if (o->opset < FE_ONNX_OPSET_MIN || o->opset > FE_ONNX_OPSET_MAX)
        return fe_error_set(err, FE_EINPUT, "%s: opset %lld is not supported (%d to %d; convert "
                            "with onnx.version_converter)", o->path, (long long)o->opset,
                            FE_ONNX_OPSET_MIN, FE_ONNX_OPSET_MAX);
    if (g->n_sparse_initializer)
        return fe_error_set(err, FE_EINPUT, "%s: sparse initializer '%s' is not supported",
                            o->path, g->sparse_initializer[0]->values &&
                            g->sparse_initializer[0]->values->name ?
                            g->sparse_initializer[0]->values->name : "?");
    if (check_strings(o, err))
        return err->code;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        char label[FE_ONNX_NAME_MAX + 128];
        node_label(n, i, label, sizeof label);
        for (size_t k = 0; k < n->n_attribute; k++)
            if (n->attribute[k]->g || n->attribute[k]->n_graphs)
                return fe_error_set(err, FE_EINPUT, "%s: %s: control flow (subgraphs) is not "
                                    "supported; export with the branch taken or the loop "
                                    "unrolled", o->path, label);
        if (strcmp(n->op_type, "If") == 0 || strcmp(n->op_type, "Loop") == 0 ||
            strcmp(n->op_type, "Scan") == 0)
            return fe_error_set(err, FE_EINPUT, "%s: %s: control flow is not supported; export "
                                "with the branch taken or the loop unrolled", o->path, label);
    }
    for (size_t i = 0; i < o->ninits; i++) {
        const Onnx__TensorProto *t = o->inits[i];
        if ((t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            || t->n_external_data)
            return fe_error_set(err, FE_EINPUT, "%s: initializer '%s' keeps its data in an "
                                "external file, which is not supported; save the model with "
                                "onnx.save(model, path, save_as_external_data=False)", o->path,
                                t->name ? t->name : "?");
    }
    return FE_OK;
}

fe_onnx *fe_onnx_read(const char *path, fe_error *err)
{
    fe_onnx *o = fe_calloc(1, sizeof *o, err);
    if (!o)
        return NULL;
    o->path = strdup(path);
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fe_error_set(err, FE_EINPUT, "%s: cannot read the ONNX model: %s", path,
                     fd < 0 || errno ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        fe_onnx_free(o);
        return NULL;
    }
    o->file_bytes = st.st_size;
    if (st.st_size == 0) {
        close(fd);
        bad(err, path, "the file is empty");
        fe_onnx_free(o);
        return NULL;
    }
    const uint8_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        fe_error_set(err, FE_EINPUT, "%s: cannot map the ONNX model: %s", path, strerror(errno));
        fe_onnx_free(o);
        return NULL;
    }
    span *graphs = NULL, *inits = NULL;
    size_t ngraphs = 0, ninits = 0, nmrest = 0, ngrest = 0;
    uint8_t *mrest = NULL, *grest = NULL;
    int rc = split(map, (uint64_t)st.st_size, MODEL_GRAPH, &graphs, &ngraphs, &mrest, &nmrest);
    if (rc == -1)
        bad(err, path, "the file is truncated or is not protobuf (an .onnx file is a binary "
                       "ModelProto)");
    else if (rc == 0 && ngraphs != 1)
        bad(err, path, ngraphs ? "more than one graph" : "no graph (is it an ONNX model?)");
    else if (rc == 0 && (rc = split(graphs[0].p, graphs[0].n, GRAPH_INITIALIZER, &inits, &ninits,
                                    &grest, &ngrest)) == -1)
        bad(err, path, "the graph is truncated or malformed");
    if (rc == -2)
        fe_error_set(err, FE_ENOMEM, "out of memory");
    if (!err->code) {
        o->model = onnx__model_proto__unpack(NULL, nmrest, mrest);
        o->graph = onnx__graph_proto__unpack(NULL, ngrest, grest);
        if (!o->model || !o->graph)
            bad(err, path, o->model ? "the graph does not parse as an ONNX GraphProto"
                                    : "it does not parse as an ONNX ModelProto");
    }
    if (!err->code && ninits) {
        o->inits = calloc(ninits, sizeof *o->inits);
        if (!o->inits)
            fe_error_set(err, FE_ENOMEM, "out of memory");
        for (size_t i = 0; !err->code && i < ninits; i++, o->ninits++) {
            o->inits[i] = onnx__tensor_proto__unpack(NULL, inits[i].n, inits[i].p);
            if (!o->inits[i])
                fe_error_set(err, FE_EINPUT, "%s: not a readable ONNX model: initializer %zu "
                             "does not parse as a TensorProto", path, i + 1);
            drop_pages(inits[i].p, inits[i].n);
        }
    }
    free(graphs);
    free(inits);
    free(mrest);
    free(grest);
    munmap((void *)map, (size_t)st.st_size);
    if (!err->code)
        check(o, err);
    if (err->code) {
        fe_onnx_free(o);
        return NULL;
    }
    return o;
}
