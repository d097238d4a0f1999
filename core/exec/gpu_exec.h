/* gpu_exec.h: a session's plans run on the GPU (fe_gpu_exec_attach): the
 * executor's plan runs and timed runs come here, the
 * unfused reference stays on the CPU, so every --execute compares the
 * card's numbers with the CPU's reference kernels.
 *
 * Note on memory. A session copies its inputs and weights to the card once.
 * A plan is compiled once per session (its groups, cuda_group.h) and gets
 * one arena for every activation that crosses groups: offsets planned by
 * liveness in execution order (a tensor's bytes are reused once its last
 * reader has run), allocated when the plan is compiled, never per launch.
 * Views alias their source, as on the CPU.
 *
 * Note on timing. Times are CUDA events around each group and the plan,
 * after the plan has run once (compilation, module loading and first-touch
 * costs are not counted); each run is launched one kernel at a time from
 * the host (no CUDA graph).
 */
#ifndef FE_GPU_EXEC_H
#define FE_GPU_EXEC_H

#include "exec.h"

/* Make session ex run its plans on the GPU (fe_exec_set_runner): FE_OK,
 * or FE_EINPUT naming what is missing (driver, NVRTC, a GPU). */
int fe_gpu_exec_attach(fe_exec *ex, fe_error *err);

#endif
