/* mish.c: a kernel plugin for fuseeng (docs/kernels.md): Mish,
 * y = x * tanh(softplus(x)), for custom nodes in f32.
 *
 *     cc -shared -fPIC -O2 -I core/include examples/kernels/mish.c -o mish.so -lm
 *     fuseeng run model.json --policy fuse_all --execute --kernels ./mish.so
 *
 * fuseeng has no Mish op, so both importers leave one as a custom node;
 * the names below are the ones each asks for: a hand-written node's
 * attrs.kernel ("mish"), an ONNX Mish node (attrs.onnx_op "Mish"), and
 * torch's F.mish or nn.Mish kept whole by export_torch.py (attrs.torch
 * "call_function torch.nn.functional.mish" or "call_module Mish (...)"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuseeng.h"

static int64_t numel(const fe_kernel_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

static int mish(const fe_kernel_call *c)
{
    /* Check first, with or without data: the engine asks once without
     * (c->check) when it validates a plan, then calls with buffers. */
    if (c->nin != 1 || c->nout != 1) {
        snprintf(c->why, c->why_size, "takes one input and one output, not %d and %d", c->nin,
                 c->nout);
        return 1;
    }
    const fe_kernel_tensor *x = &c->in[0], *y = &c->out[0];
    if (strcmp(x->dtype, "f32") || strcmp(y->dtype, "f32")) {
        snprintf(c->why, c->why_size, "computes in f32 only (got %s -> %s)", x->dtype, y->dtype);
        return 1;
    }
    if (numel(x) != numel(y)) {
        snprintf(c->why, c->why_size, "the output must have the input's %lld elements",
                 (long long)numel(x));
        return 1;
    }
    if (c->check)
        return 0;
    const float *in = x->data;
    float *out = y->data;
    for (int64_t i = 0, n = numel(x); i < n; i++) {
        float v = in[i];
        /* softplus without overflow: log1p(exp(v)) is v past 20 in f32 */
        float sp = v > 20.0f ? v : log1pf(expf(v));
        out[i] = v * tanhf(sp);
    }
    return 0;
}

int fuseeng_kernels(fe_kernel_register_fn reg, fe_error *err)
{
    static const char *const names[] = {"mish", "Mish", "torch.nn.functional.mish"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (reg(names[i], mish, NULL, err))
            return 1;
    return 0;
}
