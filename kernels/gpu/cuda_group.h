/* cuda_group.h: one plan group compiled for the GPU, the sibling of the
 * CPU's kernels/cpu/group.h. A group runs as
 *
 *   fused     one generated kernel (cuda_src.h) for the whole group;
 *   steps     otherwise its members in order: runs of members the
 *             analysis takes as one generated kernel each, cuBLAS for a
 *             matmul, a kernel of its own for a pool, a pad, a softmax
 *             over another axis or a data-movement op (cuda_dnn.h,
 *             cuda_softmax.h, cuda_ops.h), several steps for a conv2d or
 *             an sdpa (cuda_lower.h: kernels and cuBLAS calls over
 *             scratch), or, for an op with no CUDA kernel, the CPU's
 *             reference kernel with its operands copied to the host and
 *             its output back ("on the host", named in how);
 *   cuBLASLt  a matmul and an epilogue Lt can express (bias, residual,
 *             scale, relu, tanh GELU) as one cuBLASLt call, where that
 *             measured faster than cuBLAS and the epilogue's kernel when
 *             the group was compiled (how gives both times).
 *
 * Tensors inside a group of steps get device buffers of the group's own,
 * and its lowered members one scratch buffer, the largest's size, all
 * allocated once when it is compiled, never per run.
 */
#ifndef FE_CUDA_GROUP_H
#define FE_CUDA_GROUP_H

#include <stdint.h>
#include <stdio.h>

#include "cuda_build.h"
#include "graph.h"

typedef struct fe_cuda_group fe_cuda_group;

/* Compile the group nodes[0..n) (convex, any order) for the open device.
 * Fails on memory, the device, or a generated kernel NVRTC refuses; a
 * member without a CUDA kernel runs on the host rather than failing.
 * Caller frees with fe_cuda_group_free. */
fe_cuda_group *fe_cuda_group_new(const fe_graph *g, const int32_t *nodes, int n, fe_error *err);
void fe_cuda_group_free(fe_cuda_group *gr);

/* One line saying how it runs; owned by the group. */
const char *fe_cuda_group_how(const fe_cuda_group *gr);
/* 1 when the whole group is one kernel. */
int fe_cuda_group_is_fused(const fe_cuda_group *gr);
/* Members that run on the host (copied out and back). */
int fe_cuda_group_host_steps(const fe_cuda_group *gr);
/* External inputs and outputs, as fe_k_group_inputs / _outputs. */
int fe_cuda_group_inputs(const fe_cuda_group *gr, const int32_t **ids);
int fe_cuda_group_outputs(const fe_cuda_group *gr, const int32_t **ids);
/* Device bytes of the group's own buffers. */
int64_t fe_cuda_group_temp_bytes(const fe_cuda_group *gr);
/* Its generated kernels (registers, spills, source): *ks owned by the group. */
int fe_cuda_group_kernels(const fe_cuda_group *gr, const fe_cuda_kernel **ks);
/* For a reader (run --show-kernels --device cuda): each kernel's launch,
 * registers, spills and source, lines after indent. */
void fe_cuda_group_show(const fe_cuda_group *gr, const char *indent, FILE *f);

/* Launch it. dev[t] is tensor t's device buffer for every external input
 * and output; fault points to a device int that kernels set on an
 * out-of-range index. Asynchronous unless a step runs on the host. */
int fe_cuda_group_run(fe_cuda_group *gr, const fe_cu_ptr *dev, fe_cu_ptr fault, fe_error *err);

/* How the group runs as kernels: *members (owned by gr) its members in
 * the order they run, part_of[i] (the caller's array of n) the part that
 * computes members[i], parts being the steps that compute different
 * members (a whole fused group is one part; a matmul and its epilogue
 * kernel two; a member lowered to several kernels one), and threads[p]
 * (the caller's array of n, or NULL) part p's threads, grid x block of its
 * widest kernel, 0 for a library call or a step on the host, and held[p]
 * (likewise, or NULL) the most values a thread of its generated kernels
 * holds at once (fe_cuda_shape.held; 0 for other steps). The count of
 * parts. */
int fe_cuda_group_parts(const fe_cuda_group *gr, const int32_t **members, int *part_of,
                        int64_t *threads, int64_t *held);

/* The same group planned without a device: its steps and their sources
 * (grids sized for sms multiprocessors), nothing compiled or allocated; it
 * can be described and shown, not run. */
fe_cuda_group *fe_cuda_group_plan(const fe_graph *g, const int32_t *nodes, int n, int sms,
                                  fe_error *err);

#endif
