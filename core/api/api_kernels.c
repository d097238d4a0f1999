/* api_kernels.c: kernels a program registers for custom nodes, and the
 * plugins that register them (fuseeng.h: fe_kernel_register,
 * fe_kernel_load). The registry is kernels/ops/user_kernel.c's; this file
 * turns its calls into the public fe_kernel_call and back. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "user_kernel.h"

/* What one registration holds: the public function and its user pointer.
 * Kept for the process's life, as the registry's entries are. */
typedef struct binding {
    fe_kernel_fn fn;
    void *user;
} binding;

static int tensors(const fe_k_tensor *k, int n, fe_kernel_tensor *t)
{
    for (int i = 0; i < n; i++)
        t[i] = (fe_kernel_tensor){k[i].data, fe_dtype_name(k[i].dtype), k[i].rank, k[i].shape};
    return n;
}

static int call_public(void *ctx, const fe_k_user_call *c)
{
    const binding *b = ctx;
    int nin = c->n->nin, nout = c->n->nout;
    fe_kernel_tensor few[16], *t = few;
    if (nin + nout > 16 && !(t = malloc((size_t)(nin + nout) * sizeof *t))) {
        snprintf(c->why, c->why_size, "out of memory");
        return 1;
    }
    tensors(c->in, nin, t);
    tensors(c->out, nout, t + nin);
    fe_kernel_call pc = {fe_node_name(c->g, c->n), c->kernel, c->attrs, nin, nout, t, t + nin,
                         c->check, b->user, c->why, c->why_size};
    int rc = b->fn(&pc);
    if (t != few)
        free(t);
    return rc;
}

int fe_kernel_register(const char *name, fe_kernel_fn fn, void *user, fe_error *err)
{
    if (!fn)
        return fe_error_set(err, FE_EINPUT, "fe_kernel_register: kernel '%s': no function given",
                            name ? name : "(null)");
    binding *b = malloc(sizeof *b);
    if (!b)
        return fe_error_set(err, FE_ENOMEM, "fe_kernel_register: out of memory");
    *b = (binding){fn, user};
    void *old = NULL;
    int rc = fe_k_user_register(name, call_public, b, &old, err);
    free(rc ? b : old);   /* the binding it replaced, or this one refused */
    return rc;
}

int fe_kernel_load(const char *path, fe_error *err)
{
    if (fe_api_null(path, "fe_kernel_load", "the plugin's path", err))
        return FE_EINPUT;
    /* a path without a slash would be searched for in the library path;
     * a plugin is a file the user names */
    char rel[4096];
    if (!strchr(path, '/') && snprintf(rel, sizeof rel, "./%s", path) < (int)sizeof rel)
        path = rel;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return fe_error_set(err, FE_EINPUT, "%s: cannot open this kernel plugin: %s (build it "
                            "with cc -shared -fPIC; docs/kernels.md)", path, dlerror());
    int (*init)(fe_kernel_register_fn, fe_error *);
    *(void **)&init = dlsym(h, "fuseeng_kernels");
    if (!init) {
        dlclose(h);
        return fe_error_set(err, FE_EINPUT, "%s: the plugin has no function fuseeng_kernels "
                            "(it must export int fuseeng_kernels(fe_kernel_register_fn, "
                            "fe_error *); docs/kernels.md)", path);
    }
    fe_error mine = {0};
    if (init(fe_kernel_register, &mine) != 0) {
        /* kernels it registered before failing stay: they point into h */
        return fe_error_set(err, FE_EINPUT, "%s: its fuseeng_kernels failed: %s", path,
                            mine.message[0] ? mine.message : "it gave no reason");
    }
    return FE_OK;
}
