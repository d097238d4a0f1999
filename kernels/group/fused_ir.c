/* fused_ir.c: an analysed fused group as a value (fused_ir.h): freeing
 * it, and the one question every lowering asks of it first. */
#include <stdlib.h>

#include "fused_ir.h"

void fe_k_fused_clear(fe_k_fused *p)
{
    for (int k = 0; k < p->nins && p->ins; k++)
        free(p->ins[k].ctab);
    free(p->ins);
    free(p->outs);
    free(p->code);
    free(p->consts);
}

/* Does program p only copy its one input to its one output of the same
 * dtype (a transpose, a slice, an expand, a chain of views stored)? Such a
 * program moves bytes as they are, with the per-op kernels' strided copy
 * (cpu/fused_run.c): through the tiles and the f32 slot, an f16 transpose
 * ran at 0.3-0.8x of the op's own copy and a stepped slice at 0.3x. An
 * output of one column (a slice to [1, 1]: every value a row's) is a copy
 * too, loaded and stored as row values; without it an i64 such view had
 * no exact program at all. */
int fe_k_fused_copy_only(const fe_k_fused *p)
{
    if (p->nins != 1 || p->nouts != 1 || p->full_rows || p->ins[0].dtype != p->outs[0].dtype ||
        p->outs[0].strided)
        return 0;
    for (int i = 0; i < p->ncode; i++) {
        int code = p->code[i].code;
        int row = (code == I_LOADROW || code == I_STOREROW) && p->C == 1;
        if ((code != I_LOAD && code != I_STORE && !row) || p->code[i].a.kind == K_ANCHOR)
            return 0;
    }
    return 1;
}
