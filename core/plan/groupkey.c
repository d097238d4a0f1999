/* groupkey.c: compat and exact keys of a group (see groupkey.h).
 *
 * Canonical text, one line per member in topological order:
 *
 *   <op> <attrs as key=value;...> <inputs> -> <dtype>[shape] ...
 *
 * where an input is "%i" for the i-th member's output (internal edge) or
 * "$j" for the j-th distinct external input, and after the members one line
 * per external input: "$j <dtype>[shape]". Names never appear, so two
 * groups that compute the same thing on the same shapes share a key,
 * whatever the model called their tensors. */
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groupkey.h"
#include "ops.h"

typedef struct sbuf {
    char *buf;
    size_t size, len;
} sbuf;

static void put(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(sbuf *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->len < s->size ? s->buf + s->len : NULL,
                      s->len < s->size ? s->size - s->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        s->len += (size_t)n;
}

size_t fe_group_compat_key(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size)
{
    sbuf s = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < n; i++)
        put(&s, "%s%s", i ? "+" : "", fe_node_op_name(fe_graph_node(g, nodes[i])));
    return s.len;
}

static void put_shape(sbuf *s, const fe_graph *g, int32_t t)
{
    const fe_tensor *ts = fe_graph_tensor(g, t);
    const int64_t *d = fe_tensor_shape(g, ts);
    put(s, "%s[", fe_dtype_name(ts->dtype));
    for (int i = 0; i < ts->rank; i++)
        put(s, "%s%lld", i ? "," : "", (long long)d[i]);
    put(s, "]");
}

static void put_attr(sbuf *s, const fe_graph *g, const fe_attr *a)
{
    put(s, "%s=", fe_graph_str(g, a->key));
    switch (a->type) {
    case FE_ATTR_NULL: put(s, "null"); break;
    case FE_ATTR_BOOL:
    case FE_ATTR_INT: put(s, "%lld", (long long)a->v.i); break;
    case FE_ATTR_FLOAT: put(s, "%.17g", a->v.f); break;
    case FE_ATTR_STR: put(s, "%s", fe_graph_str(g, a->v.s)); break;
    case FE_ATTR_INTS:
        for (int i = 0; i < a->n; i++)
            put(s, "%s%lld", i ? "," : "", (long long)fe_graph_resolve(g, g->ints[a->v.off + i]));
        break;
    case FE_ATTR_JSON: put(s, "%s", g->blob + a->v.off); break;
    }
    put(s, ";");
}

/* Index of nodes[] member producing t before position i, or -1. */
static int inner_producer(const fe_graph *g, const int32_t *nodes, int i, int32_t t)
{
    int32_t prod = fe_graph_tensor(g, t)->producer;
    for (int j = 0; j < i; j++)
        if (nodes[j] == prod)
            return j;
    return -1;
}

/* The group's external inputs in order of first use into ext[0..cap);
 * returns their count. */
static int external_inputs(const fe_graph *g, const int32_t *nodes, int n, int32_t *ext, int cap)
{
    int next = 0;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        for (int k = 0; k < nd->nin; k++) {
            int32_t t = fe_node_input(g, nd, k);
            int seen = inner_producer(g, nodes, i, t) >= 0;
            for (int j = 0; j < next && !seen; j++)
                seen = ext[j] == t;
            if (!seen && next < cap)
                ext[next++] = t;
        }
    }
    return next;
}

size_t fe_group_canonical(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size)
{
    sbuf s = {buf, size, 0};
    int32_t ext[256];
    int next = external_inputs(g, nodes, n, ext, 256);
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        put(&s, "%s ", fe_node_op_name(nd));
        for (int a = 0; a < nd->nattr; a++) {
            const fe_attr *at = &g->attrs[nd->attr_off + a];
            /* Exporters' bookkeeping (aten names, raw args) does not change
             * what a known op computes; for a custom op it is the op. */
            const char *k = fe_graph_str(g, at->key);
            if (nd->op == FE_OP_CUSTOM || (strcmp(k, "aten") != 0 && strcmp(k, "args") != 0))
                put_attr(&s, g, at);
        }
        for (int k = 0; k < nd->nin; k++) {
            int32_t t = fe_node_input(g, nd, k);
            int inner = inner_producer(g, nodes, i, t);
            if (inner >= 0) {
                put(&s, " %%%d", inner);
                continue;
            }
            int e = -1;
            for (int j = 0; j < next && e < 0; j++)
                if (ext[j] == t)
                    e = j;
            put(&s, " $%d", e);
        }
        put(&s, " ->");
        for (int k = 0; k < nd->nout; k++) {
            put(&s, " ");
            put_shape(&s, g, fe_node_output(g, nd, k));
        }
        put(&s, "\n");
    }
    for (int j = 0; j < next; j++) {
        put(&s, "$%d ", j);
        put_shape(&s, g, ext[j]);
        put(&s, "\n");
    }
    return s.len;
}

size_t fe_group_shape_text(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size)
{
    sbuf s = {buf, size, 0};
    int32_t ext[256];
    int next = external_inputs(g, nodes, n, ext, 256);
    s.len = fe_group_compat_key(g, nodes, n, buf, size);
    for (int j = 0; j < next; j++) {
        put(&s, " ");
        put_shape(&s, g, ext[j]);
    }
    return s.len;
}

int fe_group_exact_key(const fe_graph *g, const int32_t *nodes, int n, char out[17])
{
    char small[4096];
    size_t len = fe_group_canonical(g, nodes, n, small, sizeof small);
    char *text = small;
    if (len >= sizeof small) {
        text = malloc(len + 1);
        if (!text)
            return FE_ENOMEM;
        fe_group_canonical(g, nodes, n, text, len + 1);
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL);
    if (text != small)
        free(text);
    if (!ok)
        return FE_ERUNTIME;
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return FE_OK;
}
