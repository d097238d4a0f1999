/* fused_compile.c: a group compiled for this CPU (fused_prog.h): analysed
 * for any device (group/fused_ir.h), then lowered: outputs larger than
 * half the last-level cache this process can keep (fe_k_cache_share)
 * written with streaming stores, runs of instructions folded into register
 * passes (fused_vm.c), the tile width, streaming and row prefetching
 * chosen (fused_tile.c), and the per-thread states allocated (fused_run.c).
 * Apart from fused_run.c, as SQLite's vdbeaux.c is from vdbe.c: this file
 * writes the program once, fused_run.c runs it many times.
 */
#include <stdlib.h>

#include "cache.h"
#include "fused_prog.h"

fe_k_prog *fe_k_prog_compile(const fe_k_prog_spec *spec, fe_error *err)
{
    fe_k_prog_spec sp = *spec;
    sp.stream_bytes = fe_k_cache_share() / 2;
    fe_k_prog *p = calloc(1, sizeof *p);
    if (!p) {
        fe_error_set(err, FE_ENOMEM, "fused: out of memory");
        return NULL;
    }
    fe_k_fused *f = &p->f;
    if (fe_k_fused_analyse(f, &sp, err))
        goto fail;
    p->nexec = f->ncode;
    p->xins = calloc((size_t)(f->nins ? f->nins : 1), sizeof *p->xins);
    p->accbuf = calloc((size_t)(f->nouts ? f->nouts : 1), sizeof *p->accbuf);
    if (!p->xins || !p->accbuf)
        goto oom;
    if (fe_k_prog_build_runs(p, err))
        goto fail;
    fe_k_prog_tile(p);
    if (fe_k_prog_alloc_threads(p))
        goto oom;
    return p;
oom:
    fe_error_set(err, FE_ENOMEM, "fused: out of memory");
fail:
    fe_k_prog_free(p);
    return NULL;
}
