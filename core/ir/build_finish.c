/* build_finish.c: finishing a graph builder (build.h) into a graph.
 *
 * Note on finishing. Recording (build.c) only noted names, in the file's
 * order; fe_builder_finish does the work in passes, each of which can fail
 * with a message naming the file, the line and the culprit:
 *
 *   1. dims: apply --dim overrides, check every dim used is declared;
 *   2. declared tensors: resolve shapes, count elements and bytes (checked
 *      for 64-bit overflow);
 *   3. node outputs: each tensor produced once; undeclared ones are created;
 *   4. node inputs: each names a declared or produced tensor;
 *   5. topological sort: Kahn's algorithm taking the lowest file position
 *      first, so a file already in order keeps its order; a cycle is
 *      reported with the nodes on it;
 *   6. inference in topological order: shapes and dtypes from the op
 *      registry, checked against declarations; FLOPs and bytes;
 *   7. graph outputs.
 *
 * Nothing is visible to callers until all passes succeed: a bad model never
 * yields a partial graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "build_state.h"
#include "ops.h"

static const char *str(const fe_builder *b, int32_t id)
{
    return fe_strtab_str(b->g->strs, id);
}

/* Pass 1: every dim is declared and positive; overrides name real dims. */
static int finish_dims(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int64_t i = 0; i < b->nbd; i++) {
        const bdim *d = &b->bd[i];
        if (d->declared)
            continue;
        if (d->overridden) {
            char names[512] = "";
            size_t len = 0;
            for (int64_t j = 0; j < b->nbd; j++)
                if (b->bd[j].declared && len < sizeof names - 64)
                    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                            len ? ", " : "", str(b, b->bd[j].name));
            return fe_build_err(b, 0, "--dim %s: the model has no dim '%s'; its dims are: %s",
                                str(b, d->name), str(b, d->name), len ? names : "(none)");
        }
    }
    g->ndims = (int32_t)b->nbd;
    g->dims = calloc(b->nbd > 0 ? (size_t)b->nbd : 1u, sizeof *g->dims);
    if (!g->dims)
        return fe_build_nomem(b);
    for (int64_t i = 0; i < b->nbd; i++)
        g->dims[i] = (fe_dim){.name = b->bd[i].name, .line = b->bd[i].line,
                              .value = b->bd[i].value};
    return FE_OK;
}

/* Elements and bytes of tensor t from its resolved shape, overflow-checked. */
static int size_tensor(fe_builder *b, fe_tensor *t, int line)
{
    const int64_t *s = &b->g->shape[t->shape_off];
    int64_t n = 1, bytes;
    for (int i = 0; i < t->rank; i++)
        if (__builtin_mul_overflow(n, s[i], &n))
            return fe_build_err(b, line, "tensor '%s' has more elements than fit in 64 bits",
                                str(b, t->name));
    if (__builtin_mul_overflow(n, (int64_t)fe_dtype_size(t->dtype), &bytes))
        return fe_build_err(b, line, "tensor '%s' (%lld elements of %s) has a byte size that "
                            "overflows 64 bits", str(b, t->name), (long long)n,
                            fe_dtype_name(t->dtype));
    if (__builtin_add_overflow(b->total_tensor_bytes, bytes, &b->total_tensor_bytes))
        return fe_build_err(b, line, "tensor '%s': the model's tensors add up to more bytes than fit "
                            "in 64 bits; the shapes are too large (lower the dims)", str(b, t->name));
    t->numel = n;
    t->bytes = bytes;
    return FE_OK;
}

/* Pass 2: resolve the declared tensors' symbolic dims. */
static int finish_declared(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int32_t t = 0; t < g->ntensors; t++) {
        fe_tensor *ts = &g->tensors[t];
        for (int i = 0; i < ts->rank; i++) {
            int32_t d = g->shape_sym[ts->shape_off + i];
            if (d < 0)
                continue;
            if (!b->bd[d].declared)
                return fe_build_err(b, ts->line, "tensor '%s' uses dim '%s', which \"dims\" does not "
                                    "declare", str(b, ts->name), str(b, b->bd[d].name));
            g->shape[ts->shape_off + i] = g->dims[d].value;
        }
        if (size_tensor(b, ts, ts->line))
            return b->err.code;
    }
    return FE_OK;
}

/* Pass 3: give every node output a tensor and a producer. */
static int finish_outputs_of_nodes(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int64_t v = 0; v < b->nbn; v++) {
        const bnode *n = &b->bn[v];
        for (int k = 0; k < n->nout; k++) {
            int32_t name = b->bio[n->io_off + n->nin + k];
            int32_t t = g->tensor_of_name[name];
            if (t < 0) {
                if (RESERVE(g->tensors, b->cap_tensors, (int64_t)g->ntensors + 1))
                    return fe_build_nomem(b);
                t = g->ntensors++;
                g->tensors[t] = (fe_tensor){.name = name, .producer = -1, .shape_off = -1,
                                            .kind = FE_ACTIVATION};
                g->tensor_of_name[name] = t;
            }
            fe_tensor *ts = &g->tensors[t];
            if (ts->producer >= 0)
                return fe_build_err(b, n->line, "tensor '%s' is produced twice: by node '%s' "
                                    "(line %d) and by node '%s'", str(b, name),
                                    str(b, b->bn[ts->producer].name), b->bn[ts->producer].line,
                                    str(b, n->name));
            if (ts->kind != FE_ACTIVATION)
                return fe_build_err(b, n->line, "node '%s' produces tensor '%s', which is declared "
                                    "with kind \"%s\"; node outputs are activations",
                                    str(b, n->name), str(b, name), fe_tkind_name(ts->kind));
            ts->producer = (int32_t)v;   /* builder index for now */
        }
    }
    return FE_OK;
}

/* Pass 4: every input names a tensor that exists and has a value. */
static int finish_inputs_of_nodes(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int64_t v = 0; v < b->nbn; v++) {
        const bnode *n = &b->bn[v];
        for (int k = 0; k < n->nin; k++) {
            int32_t name = b->bio[n->io_off + k];
            int32_t t = g->tensor_of_name[name];
            if (t < 0)
                return fe_build_err(b, n->line, "node '%s' input %d '%s' is not a declared tensor and "
                                    "no node produces it", str(b, n->name), k, str(b, name));
            const fe_tensor *ts = &g->tensors[t];
            if (ts->producer < 0 && ts->kind == FE_ACTIVATION)
                return fe_build_err(b, n->line, "node '%s' reads tensor '%s', an activation that no "
                                    "node produces; declare it with kind \"input\" or \"weight\"",
                                    str(b, n->name), str(b, name));
        }
    }
    return FE_OK;
}

/* A min-heap of builder indices: Kahn's algorithm takes the earliest ready
 * node in file order, which keeps an already sorted file as it is. */
typedef struct heap {
    int32_t *a;
    int64_t n;
} heap;

static void heap_push(heap *h, int32_t v)
{
    int64_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2] > v) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = v;
}

static int32_t heap_pop(heap *h)
{
    int32_t top = h->a[0], last = h->a[--h->n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= last)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0)
        h->a[i] = last;
    return top;
}

/* Report one cycle among the nodes Kahn's algorithm could not place: walk
 * from one of them to a producer that is also unplaced until a node repeats. */
static int report_cycle(fe_builder *b, const int32_t *indeg)
{
    fe_graph *g = b->g;
    int64_t nbn = b->nbn;
    int32_t *seen = malloc((size_t)nbn * sizeof *seen);   /* position on the walk, or -1 */
    int32_t *walk = malloc((size_t)nbn * sizeof *walk);
    if (!seen || !walk) {
        free(seen);
        free(walk);
        return fe_build_nomem(b);
    }
    for (int64_t i = 0; i < nbn; i++)
        seen[i] = -1;
    int32_t v = 0;
    while (indeg[v] == 0)
        v++;
    int64_t len = 0;
    while (seen[v] < 0) {
        seen[v] = (int32_t)len;
        walk[len++] = v;
        const bnode *n = &b->bn[v];
        int32_t next = -1;
        for (int k = 0; k < n->nin && next < 0; k++) {
            int32_t p = g->tensors[g->tensor_of_name[b->bio[n->io_off + k]]].producer;
            if (p >= 0 && indeg[p] > 0)
                next = p;
        }
        v = next;   /* an unplaced node always has an unplaced producer */
    }
    /* walk[seen[v] ..] is the cycle, consumer before producer: print it in
     * data-flow order. */
    /* Names are cut to 60 bytes and the list to what fits, so every append
     * below has room: each adds at most 60 + 4 bytes before the test. */
    char msg[640];
    int m = 0;
    int64_t first = seen[v], count = len - first;
    for (int64_t i = len - 1; i >= first && m < (int)sizeof msg - 160; i--) {
        const char *nm = str(b, b->bn[walk[i]].name);
        m += snprintf(msg + m, sizeof msg - (size_t)m, "%.60s%s -> ", nm, strlen(nm) > 60 ? "..." : "");
    }
    if (m >= (int)sizeof msg - 160)
        m += snprintf(msg + m, sizeof msg - (size_t)m, "... -> ");
    const char *last = str(b, b->bn[walk[len - 1]].name);
    snprintf(msg + m, sizeof msg - (size_t)m, "%.60s%s", last, strlen(last) > 60 ? "..." : "");
    int line = b->bn[walk[len - 1]].line;
    free(seen);
    free(walk);
    return fe_build_err(b, line, "the graph has a cycle through %lld node%s: %s", (long long)count,
                        count == 1 ? "" : "s", msg);
}

/* Pass 5: order[i] = builder index of the i-th node in topological order. */
static int finish_topo(fe_builder *b, int32_t **order_out)
{
    fe_graph *g = b->g;
    int64_t nbn = b->nbn;
    int32_t *indeg = calloc((size_t)nbn, sizeof *indeg);
    int32_t *coff = calloc((size_t)g->ntensors + 1, sizeof *coff);
    int32_t *cons = malloc((size_t)(b->nbio ? b->nbio : 1) * sizeof *cons);
    int32_t *order = malloc((size_t)nbn * sizeof *order);
    heap h = {malloc((size_t)nbn * sizeof(int32_t)), 0};
    int rc = FE_OK;

    if (!indeg || !coff || !cons || !order || !h.a) {
        rc = fe_build_nomem(b);
        goto out;
    }
    /* Consumers of each tensor by builder index, to release successors. */
    for (int64_t v = 0; v < nbn; v++)
        for (int k = 0; k < b->bn[v].nin; k++)
            coff[g->tensor_of_name[b->bio[b->bn[v].io_off + k]] + 1]++;
    for (int32_t t = 0; t < g->ntensors; t++)
        coff[t + 1] += coff[t];
    for (int64_t v = 0; v < nbn; v++)
        for (int k = 0; k < b->bn[v].nin; k++) {
            int32_t t = g->tensor_of_name[b->bio[b->bn[v].io_off + k]];
            cons[coff[t]++] = (int32_t)v;
            if (g->tensors[t].producer >= 0)
                indeg[v]++;
        }
    for (int32_t t = g->ntensors; t > 0; t--)   /* undo the fill's advance */
        coff[t] = coff[t - 1];
    coff[0] = 0;

    for (int64_t v = 0; v < nbn; v++)
        if (indeg[v] == 0)
            heap_push(&h, (int32_t)v);
    int64_t placed = 0;
    while (h.n > 0) {
        int32_t v = heap_pop(&h);
        order[placed++] = v;
        const bnode *n = &b->bn[v];
        for (int k = 0; k < n->nout; k++) {
            int32_t t = g->tensor_of_name[b->bio[n->io_off + n->nin + k]];
            for (int32_t c = coff[t]; c < coff[t + 1]; c++)
                if (--indeg[cons[c]] == 0)
                    heap_push(&h, cons[c]);
        }
    }
    if (placed < nbn) {
        rc = report_cycle(b, indeg);
        goto out;
    }
    *order_out = order;
    order = NULL;
out:
    free(indeg);
    free(coff);
    free(cons);
    free(order);
    free(h.a);
    return rc;
}

/* Lay the nodes out in topological order with tensor ids, and index every
 * tensor's consumers (ascending node ids, each consumer once). */
static int finish_layout(fe_builder *b, const int32_t *order)
{
    fe_graph *g = b->g;
    int64_t nbn = b->nbn;
    int32_t *topo_of = malloc((size_t)nbn * sizeof *topo_of);
    g->nodes = calloc((size_t)(nbn ? nbn : 1), sizeof *g->nodes);
    g->io = malloc((size_t)(b->nbio ? b->nbio : 1) * sizeof *g->io);
    g->cons = malloc((size_t)(b->nbio ? b->nbio : 1) * sizeof *g->cons);
    if (!topo_of || !g->nodes || !g->io || !g->cons) {
        free(topo_of);
        return fe_build_nomem(b);
    }
    g->nnodes = (int32_t)nbn;
    g->nio = b->nbio;
    int64_t io = 0;
    for (int64_t i = 0; i < nbn; i++) {
        const bnode *bn = &b->bn[order[i]];
        fe_node *n = &g->nodes[i];
        topo_of[order[i]] = (int32_t)i;
        *n = (fe_node){.name = bn->name, .op = (uint16_t)bn->op, .io_off = (int32_t)io,
                       .nin = bn->nin, .nout = bn->nout, .attr_off = bn->attr_off,
                       .nattr = bn->nattr, .line = bn->line, .order = order[i]};
        for (int k = 0; k < bn->nin + bn->nout; k++)
            g->io[io++] = g->tensor_of_name[b->bio[bn->io_off + k]];
        g->node_of_name[bn->name] = (int32_t)i;
    }
    for (int32_t t = 0; t < g->ntensors; t++) {
        fe_tensor *ts = &g->tensors[t];
        if (ts->producer >= 0)
            ts->producer = topo_of[ts->producer];
        ts->ncons = 0;
    }
    free(topo_of);

    /* Count, offset, fill; a node reading a tensor twice is one consumer. */
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = &g->nodes[v];
        for (int k = 0; k < n->nin; k++) {
            int dup = 0;
            for (int j = 0; j < k && !dup; j++)
                dup = fe_node_input(g, n, j) == fe_node_input(g, n, k);
            if (!dup)
                g->tensors[fe_node_input(g, n, k)].ncons++;
        }
    }
    int64_t off = 0;
    for (int32_t t = 0; t < g->ntensors; t++) {
        g->tensors[t].cons_off = (int32_t)off;
        off += g->tensors[t].ncons;
        g->tensors[t].ncons = 0;
    }
    g->ncons = off;
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = &g->nodes[v];
        for (int k = 0; k < n->nin; k++) {
            fe_tensor *ts = &g->tensors[fe_node_input(g, n, k)];
            if (ts->ncons == 0 || g->cons[ts->cons_off + ts->ncons - 1] != v)
                g->cons[ts->cons_off + ts->ncons++] = v;
        }
    }
    return FE_OK;
}

static void shape_of(const fe_graph *g, const fe_tensor *t, fe_shape *s)
{
    s->rank = t->rank;
    s->dtype = t->dtype;
    if (t->rank)   /* a graph of scalars may have no shape pool at all */
        memcpy(s->dim, fe_tensor_shape(g, t), sizeof(int64_t) * t->rank);
}

static int same_shape(const fe_graph *g, const fe_tensor *t, const fe_shape *s)
{
    return t->rank == s->rank && t->dtype == s->dtype &&
           (s->rank == 0 || memcmp(fe_tensor_shape(g, t), s->dim, sizeof(int64_t) * (size_t)s->rank) == 0);
}

/* An attribute the op types "dim" (slice bounds, arange's) written as a
 * string names a dim: it becomes a list of one FE_SYM, which
 * fe_node_attr_int resolves, so that --dim moves it with the shapes. */
static int dim_attrs(fe_builder *b, fe_node *n)
{
    fe_graph *g = b->g;
    for (int i = 0; i < n->nattr; i++) {
        fe_attr *a = &g->attrs[n->attr_off + i];
        if (a->type != FE_ATTR_STR || !fe_op_attr_is_dim(n->op, str(b, a->key)))
            continue;
        int64_t d = 0;
        while (d < b->nbd && (!b->bd[d].declared || b->bd[d].name != a->v.s))
            d++;
        if (d == b->nbd)
            return fe_build_err(b, n->line, "node '%s' (%s): attrs.%s is \"%s\", which \"dims\" "
                                "does not declare; expected an integer or a dim name",
                                str(b, n->name), fe_node_op_name(n), str(b, a->key),
                                str(b, a->v.s));
        if (RESERVE(g->ints, b->cap_ints, g->nints + 1))
            return fe_build_nomem(b);
        g->ints[g->nints] = FE_SYM(d);
        a->type = FE_ATTR_INTS;
        a->n = 1;
        a->v.off = g->nints++;
    }
    return FE_OK;
}

/* Pass 6: infer every node's outputs in topological order. */
static int finish_infer(fe_builder *b)
{
    fe_graph *g = b->g;
    fe_infer *in = malloc(sizeof *in);
    fe_shape *out = malloc(FE_MAX_IO * sizeof *out);
    int rc = FE_OK;
    if (!in || !out) {
        rc = fe_build_nomem(b);
        goto done;
    }
    in->g = g;
    in->out = out;
    for (int32_t v = 0; v < g->nnodes && rc == FE_OK; v++) {
        fe_node *n = &g->nodes[v];
        const fe_op *op = fe_op_get(n->op);
        const char *name = str(b, n->name);
        char sb[2][160];

        if (n->nin < op->min_in || (op->max_in != FE_VARIADIC && n->nin > op->max_in)) {
            rc = op->min_in == op->max_in
                     ? fe_build_err(b, n->line, "node '%s' (%s) takes %d input%s; it has %d", name,
                                    op->name, op->min_in, op->min_in == 1 ? "" : "s", n->nin)
                     : fe_build_err(b, n->line, "node '%s' (%s) takes %d to %d inputs; it has %d",
                                    name, op->name, op->min_in, op->max_in, n->nin);
            break;
        }
        if (n->op != FE_OP_CUSTOM && n->nout != 1) {
            rc = fe_build_err(b, n->line, "node '%s' (%s) has %d outputs; it produces exactly one",
                              name, op->name, n->nout);
            break;
        }
        n->pattern = op->pattern;
        n->live = op->live;
        if ((rc = dim_attrs(b, n)))
            break;
        {
            char why[300];
            if (fe_op_check_attrs(g, n, why, sizeof why)) {
                rc = fe_build_err(b, n->line, "node '%s' (%s): %s", name, op->name, why);
                break;
            }
            for (int i = 0; i < n->nattr && rc == FE_OK; i++) {
                const fe_attr *a = &g->attrs[n->attr_off + i];
                for (int j = 0; a->type == FE_ATTR_INTS && j < a->n && rc == FE_OK; j++) {
                    int64_t v = g->ints[a->v.off + j];
                    if (FE_IS_SYM(v) && !b->bd[v - FE_SYM_BASE].declared)
                        rc = fe_build_err(b, n->line, "node '%s' (%s): attrs.%s uses dim '%s', which "
                                          "\"dims\" does not declare", name, op->name, str(b, a->key),
                                          str(b, b->bd[v - FE_SYM_BASE].name));
                }
            }
            if (rc)
                break;
        }
        if (n->op == FE_OP_CUSTOM) {
            const char *p = fe_node_attr_str(g, n, "pattern", "opaque");
            int pk = fe_pattern_parse(p);
            if (pk < 0) {
                rc = fe_build_err(b, n->line, "node '%s' (custom) has attrs.pattern '%s'; expected "
                                  "elemwise, broadcast, injective, reduction, out_fusable or opaque",
                                  name, p);
                break;
            }
            n->pattern = (uint8_t)pk;
            for (int k = 0; k < n->nout; k++) {
                const fe_tensor *t = &g->tensors[fe_node_output(g, n, k)];
                if (!(t->flags & FE_T_DECLARED)) {
                    rc = fe_build_err(b, n->line, "node '%s' (custom) output '%s' must be declared in "
                                      "\"tensors\": fuseeng cannot infer a custom op's shapes", name,
                                      str(b, t->name));
                    break;
                }
            }
        } else {
            in->node = n;
            in->err = &b->err;
            for (int k = 0; k < n->nin; k++)
                shape_of(g, &g->tensors[fe_node_input(g, n, k)], &in->in[k]);
            if (op->infer(in) != FE_OK) {
                /* Put the place and the node in front of the op's sentence. */
                char msg[sizeof b->err.message];
                memcpy(msg, b->err.message, sizeof msg);
                b->err.code = FE_OK;
                rc = fe_build_err(b, n->line, "node '%s' (%s): %s", name, op->name, msg);
                break;
            }
            for (int k = 0; k < n->nout && rc == FE_OK; k++) {
                fe_tensor *t = &g->tensors[fe_node_output(g, n, k)];
                if (t->flags & FE_T_DECLARED) {
                    if (!same_shape(g, t, &out[k]))
                        rc = fe_build_err(b, t->line ? t->line : n->line,
                                          "node '%s' (%s) output '%s' is declared %s %s but the op "
                                          "produces %s %s", name, op->name, str(b, t->name),
                                          fe_shape_str(fe_tensor_shape(g, t), t->rank, sb[0], 160),
                                          fe_dtype_name(t->dtype),
                                          fe_shape_str(out[k].dim, out[k].rank, sb[1], 160),
                                          fe_dtype_name(out[k].dtype));
                    continue;
                }
                if (fe_build_grow_shape(b, out[k].rank)) {
                    rc = fe_build_nomem(b);
                    break;
                }
                t->shape_off = (int32_t)g->nshape;
                t->rank = (uint8_t)out[k].rank;
                t->dtype = (uint8_t)out[k].dtype;
                for (int i = 0; i < out[k].rank; i++) {
                    g->shape[g->nshape + i] = out[k].dim[i];
                    g->shape_sym[g->nshape + i] = -1;
                }
                g->nshape += out[k].rank;
                rc = size_tensor(b, t, n->line);
            }
        }
        if (rc == FE_OK) {
            /* Every sum over nodes and tensors the engine forms (a group's
             * bytes, a plan's FLOPs) is bounded by these totals, so checking
             * them here keeps all later arithmetic in range. */
            int64_t wr = 0;
            int ov = 0;
            for (int k = 0; k < n->nout; k++)
                ov |= __builtin_add_overflow(wr, g->tensors[fe_node_output(g, n, k)].bytes, &wr);
            n->bytes_written = wr;
            ov |= fe_op_cost(g, n, &n->flops, &n->bytes_read);
            ov |= __builtin_add_overflow(b->total_flops, n->flops, &b->total_flops);
            ov |= __builtin_add_overflow(b->total_bytes, n->bytes_read, &b->total_bytes);
            ov |= __builtin_add_overflow(b->total_bytes, n->bytes_written, &b->total_bytes);
            if (ov)
                rc = fe_build_err(b, n->line, "node '%s' (%s): its FLOP or byte count, or the model's "
                                  "total up to it, overflows 64 bits; %s", name, op->name,
                                  n->op == FE_OP_CUSTOM ? "check its attrs.flops and attrs.bytes, or "
                                  "lower the dims" : "the shapes are too large (lower the dims)");
        }
    }
done:
    free(in);
    free(out);
    return rc ? rc : b->err.code;
}

/* Pass 7: the graph's outputs, each produced by some node. */
static int finish_graph_outputs(fe_builder *b)
{
    fe_graph *g = b->g;
    if (b->nouts == 0)
        return fe_build_err(b, 0, "the model lists no outputs; \"outputs\" must name at least one "
                            "tensor");
    g->outputs = malloc((size_t)(b->nouts ? b->nouts : 1) * sizeof *g->outputs);
    if (!g->outputs)
        return fe_build_nomem(b);
    for (int64_t i = 0; i < b->nouts; i++) {
        int32_t t = g->tensor_of_name[b->outs[i].name];
        if (t < 0 || g->tensors[t].producer < 0)
            return fe_build_err(b, b->outs[i].line, "output '%s' is not produced by any node%s",
                                str(b, b->outs[i].name),
                                t < 0 ? "" : " (it is a graph input or weight)");
        g->tensors[t].flags |= FE_T_OUTPUT;
        g->outputs[g->noutputs++] = t;
    }
    return FE_OK;
}

fe_graph *fe_builder_finish(fe_builder *b, fe_error *err)
{
    int32_t *order = NULL;
    fe_graph *g = b->g;

    if (!failed(b) && b->nbn == 0)
        fe_build_err(b, 0, "the model has no nodes");
    if (!failed(b) && !finish_dims(b) && !finish_declared(b) && !finish_outputs_of_nodes(b) &&
        !finish_inputs_of_nodes(b) && !finish_topo(b, &order) && !finish_layout(b, order) &&
        !finish_infer(b) && !finish_graph_outputs(b)) {
        if (!g->name)
            fe_builder_meta(b, "", "");
    }
    free(order);
    if (failed(b)) {
        if (err)
            *err = b->err;
        fe_builder_free(b);
        return NULL;
    }
    b->g = NULL;
    fe_builder_free(b);
    return g;
}
