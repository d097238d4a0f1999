/* show.h: what this CPU executes for each group of a plan, for a reader
 * (fuseeng run --show-kernels), as Inductor's output code shows the Triton
 * kernels it generated. */
#ifndef FE_SHOW_H
#define FE_SHOW_H

#include <stdio.h>

#include "error.h"
#include "plan.h"

/* Compile every group of p as execution would (nothing runs, no memory for
 * tensors) and write, per group, its members, how it runs and its fused
 * programs' listings to f, after a line naming the host's vector width,
 * threads and caches. FE_OK, or an error when the graph has an op no
 * kernel runs (fe_exec_executable's) or memory runs out. */
int fe_exec_show_plan(const fe_plan *p, FILE *f, fe_error *err);

/* The same for the GPU: per group how it runs on the card and each
 * generated kernel's launch, registers, spills and CUDA source. Without a
 * usable GPU, what the generator writes (grids sized for
 * FE_SHOW_CUDA_SMS multiprocessors, an H100's and H200's count), saying so. */
#define FE_SHOW_CUDA_SMS 132
int fe_exec_show_plan_cuda(const fe_plan *p, FILE *f, fe_error *err);

#endif
