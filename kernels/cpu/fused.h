/* fused.h: the fused tile executor. A group of elementwise / broadcast ops
 * with row reductions (sum, mean, amax, amin over trailing axes, softmax,
 * log_softmax, rms_norm, layer_norm) is compiled once into a small program
 * and run tile by tile: every intermediate lives in per-thread scratch sized
 * for the cache, and no internal tensor is ever materialised.
 *
 * The same program runs three ways: over a whole domain (a fused group), on
 * the output blocks of a matmul / conv (an epilogue: the "anchor" tensor is
 * injected from the block), and row by row to supply a matmul's A operand
 * (a prologue: the "result" tensor is handed to the packer).
 */
#ifndef FE_FUSED_H
#define FE_FUSED_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "graph.h"
#include "fused_ir.h"
#include "ktensor.h"

typedef struct fe_k_prog fe_k_prog;


/* Compile. Returns the program (free with fe_k_prog_free), or NULL with
 * FE_EINPUT and a message saying why the group cannot run fused (the
 * caller then runs it op by op and reports that reason), or FE_ENOMEM. */
fe_k_prog *fe_k_prog_compile(const fe_k_prog_spec *spec, fe_error *err);
void fe_k_prog_free(fe_k_prog *p);

/* fe_k_prog_compile of nodes[0..n) writing stores[0..nstores), with no
 * anchor, result, parts or fixed domain: a fused group or pass of its own. */
static inline fe_k_prog *fe_k_prog_compile_nodes(const fe_graph *g, const int32_t *nodes, int n,
                                                 const int32_t *stores, int nstores, fe_error *err)
{
    fe_k_prog_spec sp = {.g = g, .nodes = nodes, .nnodes = n, .stores = stores,
                         .nstores = nstores, .anchor = -1, .result = -1, .col_axis = -1};
    return fe_k_prog_compile(&sp, err);
}

/* One line describing the program ("5 instrs, 2 loads, rows 2048 x 4096,
 * tile 4096, 3 slots") into buf; returns buf. */
char *fe_k_prog_describe(const fe_k_prog *p, char *buf, size_t size);

/* The program for a reader, each line after indent: its domain and
 * tile width, inputs and outputs by tensor name, then its instructions as
 * statements (fused_show.c). */
void fe_k_prog_show(const fe_k_prog *p, const fe_graph *g, const char *indent, FILE *f);

/* Rows and columns of the domain as the executor sees it. */
int64_t fe_k_prog_rows(const fe_k_prog *p);
int64_t fe_k_prog_cols(const fe_k_prog *p);
int fe_k_prog_full_rows(const fe_k_prog *p);
/* Ops of the group the program computes. */
int fe_k_prog_nops(const fe_k_prog *p);

/* Run over the whole domain, or over part `part` of `nparts` slices of the
 * domain's outermost axis (the group's split tiles). bufs is indexed by tensor id and
 * holds every external input and stored output. A program with column
 * reductions must see its parts in order, 0 first and nparts - 1 last:
 * its results are written at the last. */
int fe_k_prog_run(fe_k_prog *p, const fe_k_tensor *bufs, int part, int nparts, fe_error *err);
/* Forget cached rows (fe_k_prog_reset), then run parts 0 .. nparts - 1 in
 * order: the whole domain, as a group runs its program. */
int fe_k_prog_run_all(fe_k_prog *p, const fe_k_tensor *bufs, int nparts, fe_error *err);

/* Epilogue: run on the block of domain rows [i0, i0+mc) x columns
 * [j0, j0+nc), taking the anchor tensor's values from blk (row stride ld).
 * tid is the calling OpenMP thread (0 .. omp_get_max_threads()-1).
 * Returns 0, or -1 with the cause kept for fe_k_prog_failure. */
int fe_k_prog_run_block(fe_k_prog *p, const fe_k_tensor *bufs, int64_t i0, int64_t mc,
                        int64_t j0, int64_t nc, const float *blk, int64_t ld, int tid);

/* Forget cached rows (prologue results, row-invariant loads) and a kept
 * failure: call before running with other buffers or other input data. */
void fe_k_prog_reset(fe_k_prog *p);

/* Why the last fe_k_prog_run_block since fe_k_prog_reset failed (owned by
 * p), or NULL if none did. */
const char *fe_k_prog_failure(const fe_k_prog *p);

/* Prologue: values of the result tensor at domain row `row`, columns
 * [c0, c0+n), into tmp (returned). Thread-safe per OpenMP thread. */
const float *fe_k_prog_result_row(fe_k_prog *p, const fe_k_tensor *bufs, int64_t row,
                                  int64_t c0, int64_t n, float *tmp);

#endif
