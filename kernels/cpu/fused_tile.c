/* fused_tile.c: the tile width of a compiled fused program and the ways
 * its tiles stream (column blocks, prefetching ahead, rows of views
 * prefetched), chosen from what the compiler wrote (fused_compile.c's last step before the threads'
 * state is sized for it). */
#include <stdint.h>

#include "cache.h"
#include "fused_prog.h"

/* Tile width of a program that is one register pass: its slots hold
 * spills only, and a longer tile pays the per-tile binding less often
 * (measured with 16-lane vectors: SwiGLU and GELU went from 46-49 GB/s at
 * 4096 floats to 55-57 GB/s at 16384; longer tiles gained nothing more). */
static const int64_t vm_tile = 16384;

/* Are rows with strides rst over the row axes one after the other in
 * memory? */
static int end_to_end(const fe_k_prog *p, const int64_t *rst)
{
    return p->f.nrdims == 1 && rst[0] == p->f.C;
}

/* Rows at least this wide are not packed several to a tile when that
 * would stage an input (fe_k_prog_tile). */
static const int64_t stage_cols = 1024;

/* Does input in need its rows copied end to end to be read by a tile of
 * several whole rows? */
static int needs_stage(const fe_k_prog *p, const pin *in)
{
    return in->direct && (in->rowinv || !end_to_end(p, in->rst));
}

/* Can a tile be several whole rows? Every instruction must work on rows
 * laid end to end: no per-row values, and outputs a register pass writes
 * must have their rows one after the other in memory (loads, stores and
 * column accumulators go row by row; an input read in place whose rows
 * are not end to end is staged, fe_k_prog_tile). */
static int packable(const fe_k_prog *p)
{
    if (p->f.full_rows || p->f.nrowv > 0)
        return 0;
    for (int i = 0; i < p->nexec; i++) {
        const instr *in = &p->f.code[i];
        if (in->code == I_LOADROW || in->code == I_STOREROW || in->a.kind == K_ANCHOR)
            return 0;
        if (in->code != I_VM)
            continue;
        const vrun *r = &p->runs[in->aux];
        for (int e = 0; e < r->nent; e++) {
            const vent *v = &p->vents[r->ent0 + e];
            const pout *o = v->out >= 0 ? &p->f.outs[v->out] : NULL;
            if (o && o->strided && !end_to_end(p, o->rst))
                return 0;
            if (!o && v->o.kind == K_ANCHOR)
                return 0;
        }
    }
    return 1;
}

void fe_k_prog_tile(fe_k_prog *p)
{
    /* A view's rows not in memory order are fetched rows ahead (fused_run.c) */
    for (int k = 0; k < p->f.nins; k++) {
        const pin *in = &p->f.ins[k];
        p->xins[k].pfrows = in->view >= 0 && in->col == COL_CONTIG && !in->rowinv &&
                            !end_to_end(p, in->rst);
    }
    /* tile width: whole rows when reducing; else short segments (4 KiB per
     * slot): reads of one tile and the streaming stores of the previous one
     * then overlap best (measured: 1024 floats beat 8192 by 20-30% on
     * memory-bound groups) */
    if (p->f.full_rows) {
        /* its register passes prefetch AHEAD as well as the row op its next
         * row: without the first, Add+RMSNorm ran 15% slower; without the
         * second, 16% (softmax 1.4x) */
        p->T = p->f.C;
        p->ahead = 1;
    } else {
        int64_t t = 4096 / (p->f.nslots > 0 ? p->f.nslots : 1);
        t = t < 512 ? 512 : t > 1024 ? 1024 : t;
        int vm = p->nexec == 1 && p->f.code[0].code == I_VM;
        if (vm)
            t = vm_tile;
        /* Inputs that walk the columns but are the same on every row
         * (per-column weights, x * a + b) are read again by every row. A
         * vector program keeps whole rows when the weights' rows fit in a
         * quarter of L2: its prefetch keeps the streamed inputs coming, and
         * the weights are read from L2 (chain6, three weights on 4096
         * columns: 76 GB/s, against 58-62 with L1-sized chunks). Otherwise
         * the tile is capped so that the weights' segments stay in L1 (32
         * KiB with the streamed input), and tiles go chunk by chunk over
         * blocks of rows (fe_k_prog_run): with three such weights on 4096
         * columns, tile passes went from 26 to 40-44 GB/s (measured). */
        int nw = 0;
        for (int k = 0; k < p->f.nins; k++)
            nw += p->f.ins[k].rowinv && p->f.ins[k].col != COL_BCAST;
        int in_l2 = vm && (int64_t)nw * p->f.C * (int64_t)sizeof(float) <= fe_k_cache_l2() / 4;
        if (nw > 0 && p->f.rows > 1 && !in_l2) {
            int64_t cap = 32768 / (4 * (nw + 1));
            cap = cap < 256 ? 256 : cap;
            if (t > cap)
                t = cap;
            p->colblock = 1;
        }
        /* A column-blocked program's next tile is not AHEAD floats on. */
        p->ahead = vm && !p->colblock;
        t &= ~(int64_t)63;
        p->T = p->f.C < t ? p->f.C : t;
        /* Rows narrower than half a tile (attention's heads: 64 or 128
         * values) go several to a tile: one row per tile paid the tile's
         * setup, binding and instruction dispatch for every 64 values. An
         * input read in place whose rows are not end to end (per-column
         * weights above all) is then staged: copied row by row for every
         * tile, a load and a store per element. That pays for narrow rows
         * only: at 4096 columns the tile's setup is a few percent of a
         * row's work, and chain6 (three weights) ran 1.10-1.36x Halide's
         * speed with a row per tile against 0.73-1.25x packed four rows to
         * a tile with its weights staged (AVX-512 Xeon, 2 threads,
         * interleaved). */
        int nstage = 0;
        for (int k = 0; k < p->f.nins; k++)
            nstage += needs_stage(p, &p->f.ins[k]);
        if (p->f.C > 0 && 2 * p->f.C <= t && p->f.rows > 1 && packable(p) &&
            (nstage == 0 || p->f.C < stage_cols)) {
            p->pack = (int)(t / p->f.C);
            p->T = p->pack * p->f.C;
            p->colblock = 0;
            for (int k = 0; k < p->f.nins; k++)   /* rows copied end to end for a tile */
                if (needs_stage(p, &p->f.ins[k]))
                    p->xins[k].stage = ++p->nstage;
        }
    }
    if (p->T < 1)
        p->T = 1;
}
