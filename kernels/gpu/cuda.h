/* cuda.h: the CUDA driver, NVRTC, cuBLAS and cuBLASLt, opened at run time.
 *
 * Nothing of CUDA is needed to build or test the engine: the three
 * libraries are opened with dlopen when a command first asks for the GPU
 * (--device cuda), and a missing one is FE_EINPUT naming it and where it
 * was looked for. The declarations below are the few the back end uses,
 * written from the driver API's documented C signatures; handles are
 * opaque pointers and the enumerations' values are the documented ones.
 *
 * One process uses one device (FUSEENG_CUDA_DEVICE, default 0) through its
 * primary context, made current on the calling thread by every entry
 * point that needs it, and one stream: work is asynchronous in launch
 * order; the synchronous copies to and from the host wait for it.
 */
#ifndef FE_CUDA_H
#define FE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef uint64_t fe_cu_ptr;          /* CUdeviceptr */
typedef struct fe_cu_module_s *fe_cu_module;
typedef struct fe_cu_func_s *fe_cu_func;
typedef struct fe_cu_event_s *fe_cu_event;
typedef struct fe_cu_stream_s *fe_cu_stream;
typedef struct fe_cu_graph_s *fe_cu_graph;     /* CUgraphExec: a graph ready to launch */

/* What the device is, read once when it is opened. */
typedef struct fe_cuda_dev {
    char name[128];
    int cc_major, cc_minor;          /* compute capability */
    int sms;                         /* multiprocessors */
    int max_threads_sm;              /* resident threads per multiprocessor */
    int regs_sm;                     /* 32-bit registers per multiprocessor */
    int64_t mem_bytes, l2_bytes;
    int driver_version, nvrtc_major, nvrtc_minor;
} fe_cuda_dev;

/* Open the libraries and the device, once per process; later calls return
 * the first call's result. FE_OK, or FE_EINPUT saying what is missing (no
 * driver library, no NVRTC, no device) and what to do about it. */
int fe_cuda_open(fe_error *err);
/* The opened device (fe_cuda_open succeeded), else NULL. */
const fe_cuda_dev *fe_cuda_device(void);

/* Device memory. Out of memory on the card is FE_ENOMEM naming the size and
 * what is free. Freeing 0 does nothing. */
int fe_cuda_alloc(fe_cu_ptr *p, size_t bytes, fe_error *err);
void fe_cuda_free(fe_cu_ptr p);
int fe_cuda_upload(fe_cu_ptr dst, const void *src, size_t bytes, fe_error *err);
int fe_cuda_download(void *dst, fe_cu_ptr src, size_t bytes, fe_error *err);
int fe_cuda_memset(fe_cu_ptr dst, unsigned char v, size_t bytes, fe_error *err);
/* Device to device (asynchronous): the copy bandwidth kernels are held to. */
int fe_cuda_copy(fe_cu_ptr dst, fe_cu_ptr src, size_t bytes, fe_error *err);
/* Wait for everything launched so far; a kernel's fault surfaces here. */
int fe_cuda_sync(fe_error *err);

/* A compiled image (cubin) loaded, and one kernel of it. The module is
 * unloaded with fe_cuda_unload. */
int fe_cuda_load(const void *image, fe_cu_module *m, fe_error *err);
void fe_cuda_unload(fe_cu_module m);
int fe_cuda_function(fe_cu_module m, const char *name, fe_cu_func *f, fe_error *err);
/* Registers per thread, local (spill and stack) bytes per thread, static
 * shared bytes, and how many blocks of `threads` fit on a multiprocessor. */
typedef struct fe_cuda_fattr {
    int regs, local_bytes, shared_bytes, max_threads, blocks_per_sm;
} fe_cuda_fattr;
int fe_cuda_attrs(fe_cu_func f, int threads, fe_cuda_fattr *a, fe_error *err);
/* Launch f on grid x threads (1-D) with its arguments' addresses. */
int fe_cuda_launch(fe_cu_func f, unsigned grid, unsigned threads, unsigned shared, void **args,
                   fe_error *err);

/* Events time the stream's work between two records, in ms. */
int fe_cuda_event_new(fe_cu_event *e, fe_error *err);
void fe_cuda_event_free(fe_cu_event e);
int fe_cuda_record(fe_cu_event e, fe_error *err);
int fe_cuda_elapsed(fe_cu_event a, fe_cu_event b, float *ms, fe_error *err);

/* CUDA graphs: the work launched between begin and end is recorded, not
 * run, and instantiated as one graph that replays it with one launch
 * (keep = 0 ends a failed capture, keeping nothing). Nothing that waits
 * for the device (a copy to the host) may happen in between. */
int fe_cuda_capture_begin(fe_error *err);
int fe_cuda_capture_end(fe_cu_graph *g, int keep, fe_error *err);
int fe_cuda_graph_launch(fe_cu_graph g, fe_error *err);
void fe_cuda_graph_free(fe_cu_graph g);

/* NVRTC: compile src for the device's architecture into a cubin (caller
 * frees *image). A compile error is FE_EINPUT with the compiler's log, its
 * line numbers those of src. */
int fe_cuda_compile(const char *src, const char *name, void **image, size_t *bytes, fe_error *err);

/* cuBLAS: C[b] = A[b] x B[b] (row-major, every matrix of the batch at a
 * fixed stride, 0 to broadcast one), f32 accumulation; with acc, C[b] +=
 * A[b] x B[b] (beta 1: what C held is added before the one rounding, as
 * a convolution's bias). a, b and c are FE_F32, FE_F16 or FE_BF16 (one
 * dtype for a and b). ta / tb: A / B are stored transposed. FE_EINPUT when
 * cuBLAS cannot be opened. */
typedef struct fe_cuda_gemm {
    int dtype_ab, dtype_c;
    int64_t m, n, k, batch;
    int ta, tb, acc;
    fe_cu_ptr a, b, c;
    int64_t sa, sb, sc;              /* batch strides, in elements */
} fe_cuda_gemm;
int fe_cuda_gemm_run(const fe_cuda_gemm *g, fe_error *err);

/* cuBLASLt: one GEMM with its epilogue on the stream,
 *
 *   D[b] = act(alpha A[b] x B[b] + C[b] + bias)   (f32 accumulation)
 *
 * gm is the product as for fe_cuda_gemm_run, its C pointer D (acc unused).
 * bias (when has_bias) holds gm.n values of D's dtype, one per column of
 * the row-major D (its last axis), the same for every batch; C (when
 * has_c) is laid out as D, beta 1. act: FE_CUDA_ACT_*; cuBLASLt's GELU is
 * the tanh approximation. Pointers are 256-byte aligned (the allocator's).
 * plan holds the descriptors and the algorithm fe_cuda_lt_prepare chose. */
enum { FE_CUDA_ACT_NONE, FE_CUDA_ACT_RELU, FE_CUDA_ACT_GELU_TANH };
typedef struct fe_cuda_lt {
    fe_cuda_gemm gm;
    float alpha;
    int act, has_bias, has_c;
    fe_cu_ptr bias, c;
    void *plan;
} fe_cuda_lt;
/* Open cuBLASLt once per process: FE_OK, or FE_EINPUT saying why it cannot
 * be used (no library, an entry point missing, no handle); its absence
 * fails nothing else. */
int fe_cuda_lt_open(fe_error *why);
/* Descriptors for l and the heuristic's first algorithm, into l->plan:
 * FE_OK, FE_EINPUT (why) when cuBLASLt has no algorithm for the form. */
int fe_cuda_lt_prepare(fe_cuda_lt *l, fe_error *why);
/* Run l (prepared) on its pointers; asynchronous, capturable. */
int fe_cuda_lt_run(const fe_cuda_lt *l, fe_error *err);
/* Free l->plan; l itself stays the caller's. */
void fe_cuda_lt_release(fe_cuda_lt *l);

#endif
