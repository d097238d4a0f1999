/* user_kernel.c: the registry of run-time kernels for custom nodes (see
 * user_kernel.h). A few entries at most, looked up by name per call: a
 * linear scan is all it needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "save.h"
#include "user_kernel.h"

#define MAX_KERNELS 256
#define MAX_KNAME 256

typedef struct entry {
    char name[MAX_KNAME];
    fe_k_user_fn fn;
    void *ctx;
} entry;

static entry kernels[MAX_KERNELS];
static int nkernels;

static entry *find(const char *name)
{
    for (int i = 0; name && i < nkernels; i++)
        if (!strcmp(kernels[i].name, name))
            return &kernels[i];
    return NULL;
}

int fe_k_user_register(const char *name, fe_k_user_fn fn, void *ctx, void **old, fe_error *err)
{
    *old = NULL;
    if (!name || !*name || strlen(name) >= MAX_KNAME)
        return fe_error_set(err, FE_EINPUT, "a kernel's name must be 1 to %d bytes (got %s)",
                            MAX_KNAME - 1, name && *name ? "a longer one" : "none");
    if (!fn)
        return fe_error_set(err, FE_EINPUT, "kernel '%s': no function given", name);
    entry *e = find(name);
    if (!e) {
        if (nkernels == MAX_KERNELS)
            return fe_error_set(err, FE_EINPUT, "kernel '%s': %d kernels are registered already "
                                "(the most there can be)", name, MAX_KERNELS);
        e = &kernels[nkernels++];
        snprintf(e->name, sizeof e->name, "%s", name);
    } else {
        *old = e->ctx;
    }
    e->fn = fn;
    e->ctx = ctx;
    return FE_OK;
}

/* The name attrs.torch's call asks for: "call_function mylib.op" -> "mylib.op",
 * "call_module Foo (path)" -> "Foo"; NULL when it is not such a text. */
static entry *torch_target(const char *torch)
{
    const char *sp = torch ? strchr(torch, ' ') : NULL;
    if (!sp || strncmp(torch, "call_", 5))
        return NULL;
    char name[MAX_KNAME];
    size_t len = strcspn(sp + 1, " ");
    if (len == 0 || len >= sizeof name)
        return NULL;
    memcpy(name, sp + 1, len);
    name[len] = '\0';
    return find(name);
}

static entry *claim(const fe_graph *g, const fe_node *n)
{
    if (n->op != FE_OP_CUSTOM || nkernels == 0)
        return NULL;
    /* attrs.kernel says what the node wants outright: nothing else is tried */
    const char *want = fe_node_attr_str(g, n, "kernel", NULL);
    if (want)
        return find(want);
    entry *e = find(fe_node_attr_str(g, n, "aten", NULL));
    if (!e)
        e = find(fe_node_attr_str(g, n, "onnx_op", NULL));
    if (!e)
        e = torch_target(fe_node_attr_str(g, n, "torch", NULL));
    return e;
}

const char *fe_k_user_kernel(const fe_graph *g, const fe_node *n)
{
    entry *e = claim(g, n);
    return e ? e->name : NULL;
}

/* Call n's kernel (check: without data). */
static int call(const fe_graph *g, const fe_node *n, const fe_k_tensor *in, fe_k_tensor *out,
                int check, fe_error *err)
{
    entry *e = claim(g, n);
    if (!e)
        return fe_error_set(err, FE_EINPUT, "node '%s' (custom) asks for no registered kernel",
                            fe_node_name(g, n));
    fe_k_tensor *v = NULL;
    if (check) {   /* the graph's dtypes and shapes, no data */
        v = calloc((size_t)n->nin + (size_t)n->nout + 1, sizeof *v);
        if (!v)
            return fe_error_set(err, FE_ENOMEM, "node '%s': out of memory", fe_node_name(g, n));
        for (int k = 0; k < n->nin; k++)
            v[k] = fe_k_graph_view(g, fe_node_input(g, n, k), NULL);
        for (int k = 0; k < n->nout; k++)
            v[n->nin + k] = fe_k_graph_view(g, fe_node_output(g, n, k), NULL);
        in = v;
        out = v + n->nin;
    }
    char *attrs = fe_save_attrs(g, n);
    if (!attrs) {
        free(v);
        return fe_error_set(err, FE_ENOMEM, "node '%s': out of memory", fe_node_name(g, n));
    }
    char why[512] = "";
    fe_k_user_call c = {g, n, e->name, attrs, in, out, check, why, sizeof why};
    int rc = e->fn(e->ctx, &c);
    free(attrs);
    free(v);
    if (rc == 0)
        return FE_OK;
    why[sizeof why - 1] = '\0';
    return fe_error_set(err, FE_EINPUT, "node '%s' (custom): the registered kernel '%s' %s: %s",
                        fe_node_name(g, n), e->name, check ? "refused it" : "failed",
                        why[0] ? why : "it gave no reason");
}

int fe_k_user_check(const fe_graph *g, const fe_node *n, fe_error *err)
{
    return call(g, n, NULL, NULL, 1, err);
}

int fe_k_user_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in, fe_k_tensor *out,
                  fe_error *err)
{
    return call(g, n, in, out, 0, err);
}
