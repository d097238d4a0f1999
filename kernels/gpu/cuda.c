/* cuda.c: the driver API, NVRTC, cuBLAS and cuBLASLt through dlopen (cuda.h).
 *
 * Note on where the libraries are looked for. The driver's libcuda.so.1
 * comes with the kernel driver and is on the loader's path wherever a GPU
 * works at all. NVRTC and cuBLAS come with the toolkit or with a Python
 * wheel, often off that path: each is tried by soname, then in
 * $FUSEENG_CUDA_LIBS (a colon-separated list of folders), $CUDA_HOME/lib64
 * and /usr/local/cuda/lib64, newest major version first. A library that
 * cannot be found is FE_EINPUT naming it and those places. cuBLASLt is
 * optional: without it matmul groups keep cuBLAS and a kernel, and say so.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "graph.h"

/* ---- the entry points, by their documented C signatures ---- */

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUgraph_st *CUgraph;

static struct {
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemAlloc)(fe_cu_ptr *, size_t);
    CUresult (*MemFree)(fe_cu_ptr);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemcpyHtoD)(fe_cu_ptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, fe_cu_ptr, size_t);
    CUresult (*ModuleLoadData)(fe_cu_module *, const void *);
    CUresult (*ModuleUnload)(fe_cu_module);
    CUresult (*ModuleGetFunction)(fe_cu_func *, fe_cu_module, const char *);
    CUresult (*FuncGetAttribute)(int *, int, fe_cu_func);
    CUresult (*Occupancy)(int *, fe_cu_func, int, size_t);
    CUresult (*LaunchKernel)(fe_cu_func, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, fe_cu_stream, void **, void **);
    CUresult (*EventCreate)(fe_cu_event *, unsigned);
    CUresult (*EventDestroy)(fe_cu_event);
    CUresult (*EventRecord)(fe_cu_event, fe_cu_stream);
    CUresult (*EventSynchronize)(fe_cu_event);
    CUresult (*EventElapsedTime)(float *, fe_cu_event, fe_cu_event);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*StreamCreate)(fe_cu_stream *, unsigned);
    CUresult (*MemsetD8Async)(fe_cu_ptr, unsigned char, size_t, fe_cu_stream);
    CUresult (*MemcpyDtoDAsync)(fe_cu_ptr, fe_cu_ptr, size_t, fe_cu_stream);
    CUresult (*BeginCapture)(fe_cu_stream, int);
    CUresult (*EndCapture)(fe_cu_stream, CUgraph *);
    CUresult (*GraphInstantiate)(fe_cu_graph *, CUgraph, unsigned long long);
    CUresult (*GraphLaunch)(fe_cu_graph, fe_cu_stream);
    CUresult (*GraphExecDestroy)(fe_cu_graph);
    CUresult (*GraphDestroy)(CUgraph);
} cu;

typedef struct nvrtc_prog *nvrtcProgram;
static struct {
    int (*Version)(int *, int *);
    int (*GetNumSupportedArchs)(int *);
    int (*GetSupportedArchs)(int *);
    int (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                         const char *const *);
    int (*CompileProgram)(nvrtcProgram, int, const char *const *);
    int (*GetProgramLogSize)(nvrtcProgram, size_t *);
    int (*GetProgramLog)(nvrtcProgram, char *);
    int (*GetCUBINSize)(nvrtcProgram, size_t *);
    int (*GetCUBIN)(nvrtcProgram, char *);
    int (*GetPTXSize)(nvrtcProgram, size_t *);
    int (*GetPTX)(nvrtcProgram, char *);
    int (*DestroyProgram)(nvrtcProgram *);
    const char *(*GetErrorString)(int);
} rtc;

typedef struct cublas_ctx *cublasHandle_t;
static struct {
    int (*Create)(cublasHandle_t *);
    int (*SetStream)(cublasHandle_t, fe_cu_stream);
    int (*GemmStridedBatchedEx)(cublasHandle_t, int, int, int, int, int, const void *,
                                const void *, int, int, long long, const void *, int, int,
                                long long, const void *, void *, int, int, long long, int, int,
                                int);
} blas;

/* Documented enumeration values used here. */
enum {
    ATTR_MAX_THREADS_PER_BLOCK = 1, ATTR_SMS = 16, ATTR_CC_MAJOR = 75, ATTR_CC_MINOR = 76,
    ATTR_MAX_THREADS_SM = 39, ATTR_REGS_SM = 82, ATTR_L2 = 38,
    FATTR_MAX_THREADS = 0, FATTR_SHARED = 1, FATTR_LOCAL = 3, FATTR_REGS = 4,
    CU_ERR_OOM = 2, CAPTURE_RELAXED = 2,
    R_32F = 0, R_16F = 2, R_16BF = 14, COMPUTE_32F = 68, GEMM_DEFAULT = -1
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static fe_error open_err;            /* why opening failed, code FE_OK if it did not */
static fe_cuda_dev dev;
static CUcontext ctx;
/* Every launch, copy and event goes to one stream of ours, created with
 * the default flags so that the synchronous copies (legacy stream) wait
 * for it; the legacy stream itself cannot be captured into a graph. */
static fe_cu_stream stream;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static fe_error blas_err;
static cublasHandle_t blas_h;

/* dlopen name by soname, then in the folders above; NULL if not found.
 * names: candidate file names, newest first. */
static void *open_lib(const char *const *names, char *where, size_t wn)
{
    const char *dirs[8];
    char buf[4096], home[1024];
    int nd = 0;
    const char *env = getenv("FUSEENG_CUDA_LIBS");
    const char *ch = getenv("CUDA_HOME");
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    char envcopy[2048] = "";
    if (env)
        snprintf(envcopy, sizeof envcopy, "%s", env);
    for (char *s = envcopy, *tok, *sv; nd < 5 && (tok = strtok_r(s, ":", &sv)); s = NULL)
        dirs[nd++] = tok;
    if (ch && *ch) {
        snprintf(home, sizeof home, "%s/lib64", ch);
        dirs[nd++] = home;
    }
    dirs[nd++] = "/usr/local/cuda/lib64";
    for (int d = 0; d < nd; d++)
        for (int i = 0; names[i]; i++) {
            snprintf(buf, sizeof buf, "%s/%s", dirs[d], names[i]);
            void *h = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
        }
    snprintf(where, wn, "the loader's path%s%s%s, /usr/local/cuda/lib64", env ? ", " : "",
             env ? env : "", ch && *ch ? ", $CUDA_HOME/lib64" : "");
    return NULL;
}

/* Resolve the first of names ("a|b": alternatives in order, the
 * versioned entry point the C header maps a name to first) into *fp; 0,
 * or -1 naming it in err. */
static int sym(void *h, const char *lib, const char *names, void *fp, fe_error *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", names);
    void *p = NULL;
    for (char *s = buf, *tok, *sv; !p && (tok = strtok_r(s, "|", &sv)); s = NULL)
        p = dlsym(h, tok);
    if (!p)
        return fe_error_set(err, FE_EINPUT, "%s has no %s: the library is too old for fuseeng's "
                            "CUDA back end", lib, names), -1;
    memcpy(fp, &p, sizeof p);
    return 0;
}

static int cu_fail(CUresult r, const char *what, fe_error *err)
{
    const char *s = NULL, *n = NULL;
    if (cu.GetErrorString)
        cu.GetErrorString(r, &s);
    if (cu.GetErrorName)
        cu.GetErrorName(r, &n);
    return fe_error_set(err, r == CU_ERR_OOM ? FE_ENOMEM : FE_ERUNTIME, "cuda: %s failed: %s (%s)",
                        what, s ? s : "unknown error", n ? n : "?");
}

#define CU(call, what)                                                                            \
    do {                                                                                          \
        CUresult r_ = (call);                                                                     \
        if (r_ != 0)                                                                              \
            return cu_fail(r_, what, err);                                                        \
    } while (0)

static int load_driver(fe_error *err)
{
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    char where[2200];
    void *h = open_lib(names, where, sizeof where);
    if (!h)
        return fe_error_set(err, FE_EINPUT, "--device cuda: no NVIDIA driver library (libcuda.so.1) "
                            "in %s: run on a machine with an NVIDIA GPU and its driver, or use "
                            "--device cpu", where);
    const char *L = "libcuda.so.1";
    if (sym(h, L, "cuInit", &cu.Init, err) || sym(h, L, "cuDriverGetVersion", &cu.DriverGetVersion, err) ||
        sym(h, L, "cuDeviceGet", &cu.DeviceGet, err) ||
        sym(h, L, "cuDeviceGetCount", &cu.DeviceGetCount, err) ||
        sym(h, L, "cuDeviceGetName", &cu.DeviceGetName, err) ||
        sym(h, L, "cuDeviceGetAttribute", &cu.DeviceGetAttribute, err) ||
        sym(h, L, "cuDeviceTotalMem_v2", &cu.DeviceTotalMem, err) ||
        sym(h, L, "cuDevicePrimaryCtxRetain", &cu.PrimaryCtxRetain, err) ||
        sym(h, L, "cuCtxSetCurrent", &cu.CtxSetCurrent, err) ||
        sym(h, L, "cuCtxSynchronize", &cu.CtxSynchronize, err) ||
        sym(h, L, "cuMemAlloc_v2", &cu.MemAlloc, err) || sym(h, L, "cuMemFree_v2", &cu.MemFree, err) ||
        sym(h, L, "cuMemGetInfo_v2", &cu.MemGetInfo, err) ||
        sym(h, L, "cuMemcpyHtoD_v2", &cu.MemcpyHtoD, err) ||
        sym(h, L, "cuMemcpyDtoH_v2", &cu.MemcpyDtoH, err) ||
        sym(h, L, "cuModuleLoadData", &cu.ModuleLoadData, err) ||
        sym(h, L, "cuModuleUnload", &cu.ModuleUnload, err) ||
        sym(h, L, "cuModuleGetFunction", &cu.ModuleGetFunction, err) ||
        sym(h, L, "cuFuncGetAttribute", &cu.FuncGetAttribute, err) ||
        sym(h, L, "cuOccupancyMaxActiveBlocksPerMultiprocessor", &cu.Occupancy, err) ||
        sym(h, L, "cuLaunchKernel", &cu.LaunchKernel, err) ||
        sym(h, L, "cuEventCreate", &cu.EventCreate, err) ||
        sym(h, L, "cuEventDestroy_v2", &cu.EventDestroy, err) ||
        sym(h, L, "cuEventRecord", &cu.EventRecord, err) ||
        sym(h, L, "cuEventSynchronize", &cu.EventSynchronize, err) ||
        sym(h, L, "cuEventElapsedTime_v2|cuEventElapsedTime", &cu.EventElapsedTime, err) ||
        sym(h, L, "cuGetErrorName", &cu.GetErrorName, err) ||
        sym(h, L, "cuGetErrorString", &cu.GetErrorString, err) ||
        sym(h, L, "cuStreamCreate", &cu.StreamCreate, err) ||
        sym(h, L, "cuMemsetD8Async", &cu.MemsetD8Async, err) ||
        sym(h, L, "cuMemcpyDtoDAsync_v2", &cu.MemcpyDtoDAsync, err) ||
        sym(h, L, "cuStreamBeginCapture_v2", &cu.BeginCapture, err) ||
        sym(h, L, "cuStreamEndCapture", &cu.EndCapture, err) ||
        sym(h, L, "cuGraphInstantiateWithFlags", &cu.GraphInstantiate, err) ||
        sym(h, L, "cuGraphLaunch", &cu.GraphLaunch, err) ||
        sym(h, L, "cuGraphExecDestroy", &cu.GraphExecDestroy, err) ||
        sym(h, L, "cuGraphDestroy", &cu.GraphDestroy, err))
        return -1;
    return 0;
}

static int load_nvrtc(fe_error *err)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
    char where[2200];
    void *h = open_lib(names, where, sizeof where);
    if (!h)
        return fe_error_set(err, FE_EINPUT, "--device cuda: no NVRTC (libnvrtc.so.13 or .12) in %s: "
                            "install the CUDA toolkit's runtime compiler or name its folder in "
                            "FUSEENG_CUDA_LIBS", where);
    const char *L = "libnvrtc";
    return sym(h, L, "nvrtcVersion", &rtc.Version, err) ||
           sym(h, L, "nvrtcGetNumSupportedArchs", &rtc.GetNumSupportedArchs, err) ||
           sym(h, L, "nvrtcGetSupportedArchs", &rtc.GetSupportedArchs, err) ||
           sym(h, L, "nvrtcCreateProgram", &rtc.CreateProgram, err) ||
           sym(h, L, "nvrtcCompileProgram", &rtc.CompileProgram, err) ||
           sym(h, L, "nvrtcGetProgramLogSize", &rtc.GetProgramLogSize, err) ||
           sym(h, L, "nvrtcGetProgramLog", &rtc.GetProgramLog, err) ||
           sym(h, L, "nvrtcGetCUBINSize", &rtc.GetCUBINSize, err) ||
           sym(h, L, "nvrtcGetCUBIN", &rtc.GetCUBIN, err) ||
           sym(h, L, "nvrtcGetPTXSize", &rtc.GetPTXSize, err) ||
           sym(h, L, "nvrtcGetPTX", &rtc.GetPTX, err) ||
           sym(h, L, "nvrtcDestroyProgram", &rtc.DestroyProgram, err) ||
           sym(h, L, "nvrtcGetErrorString", &rtc.GetErrorString, err)
           ? -1 : 0;
}

static int open_device(fe_error *err)
{
    int n = 0, ord = 0, v;
    size_t total = 0;
    CUdevice d;
    const char *e = getenv("FUSEENG_CUDA_DEVICE");
    if (e && *e)
        ord = atoi(e);
    CU(cu.Init(0), "cuInit (is the driver loaded and a GPU visible?)");
    CU(cu.DeviceGetCount(&n), "cuDeviceGetCount");
    if (n <= 0 || ord < 0 || ord >= n)
        return fe_error_set(err, FE_EINPUT, "--device cuda: %s (FUSEENG_CUDA_DEVICE=%d, %d device%s)",
                            n <= 0 ? "the driver sees no GPU" : "no such device", ord, n,
                            n == 1 ? "" : "s");
    CU(cu.DeviceGet(&d, ord), "cuDeviceGet");
    CU(cu.DeviceGetName(dev.name, (int)sizeof dev.name, d), "cuDeviceGetName");
    CU(cu.DeviceGetAttribute(&dev.cc_major, ATTR_CC_MAJOR, d), "cuDeviceGetAttribute");
    CU(cu.DeviceGetAttribute(&dev.cc_minor, ATTR_CC_MINOR, d), "cuDeviceGetAttribute");
    CU(cu.DeviceGetAttribute(&dev.sms, ATTR_SMS, d), "cuDeviceGetAttribute");
    CU(cu.DeviceGetAttribute(&dev.max_threads_sm, ATTR_MAX_THREADS_SM, d), "cuDeviceGetAttribute");
    CU(cu.DeviceGetAttribute(&dev.regs_sm, ATTR_REGS_SM, d), "cuDeviceGetAttribute");
    CU(cu.DeviceGetAttribute(&v, ATTR_L2, d), "cuDeviceGetAttribute");
    dev.l2_bytes = v;
    CU(cu.DeviceTotalMem(&total, d), "cuDeviceTotalMem_v2");
    dev.mem_bytes = (int64_t)total;
    CU(cu.DriverGetVersion(&dev.driver_version), "cuDriverGetVersion");
    CU(cu.PrimaryCtxRetain(&ctx, d), "cuDevicePrimaryCtxRetain");
    CU(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent");
    CU(cu.StreamCreate(&stream, 0), "cuStreamCreate");
    rtc.Version(&dev.nvrtc_major, &dev.nvrtc_minor);
    return 0;
}

static void open_once(void)
{
    memset(&open_err, 0, sizeof open_err);
    if (load_driver(&open_err) || load_nvrtc(&open_err) || open_device(&open_err))
        return;
}

int fe_cuda_open(fe_error *err)
{
    pthread_once(&once, open_once);
    if (open_err.code != FE_OK)
        return fe_error_set(err, open_err.code, "%s", open_err.message);
    /* another thread (an OpenMP worker, the watchdog's) may call next */
    CU(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent");
    return FE_OK;
}

const fe_cuda_dev *fe_cuda_device(void)
{
    return ctx ? &dev : NULL;
}

/* ---- memory, modules, launches, events ---- */

int fe_cuda_alloc(fe_cu_ptr *p, size_t bytes, fe_error *err)
{
    *p = 0;
    CUresult r = cu.MemAlloc(p, bytes ? bytes : 1);
    if (r == CU_ERR_OOM) {
        size_t fr = 0, tot = 0;
        cu.MemGetInfo(&fr, &tot);
        return fe_error_set(err, FE_ENOMEM, "cuda: out of memory on the GPU: %.1f MiB asked for, "
                            "%.1f MiB of %.1f MiB free", bytes / 1048576.0, fr / 1048576.0,
                            tot / 1048576.0);
    }
    CU(r, "cuMemAlloc_v2");
    return FE_OK;
}

void fe_cuda_free(fe_cu_ptr p)
{
    if (p)
        cu.MemFree(p);
}

int fe_cuda_upload(fe_cu_ptr dst, const void *src, size_t bytes, fe_error *err)
{
    if (bytes)
        CU(cu.MemcpyHtoD(dst, src, bytes), "copy to the GPU");
    return FE_OK;
}

int fe_cuda_download(void *dst, fe_cu_ptr src, size_t bytes, fe_error *err)
{
    if (bytes)
        CU(cu.MemcpyDtoH(dst, src, bytes), "copy from the GPU");
    return FE_OK;
}

int fe_cuda_memset(fe_cu_ptr dst, unsigned char v, size_t bytes, fe_error *err)
{
    if (bytes)
        CU(cu.MemsetD8Async(dst, v, bytes, stream), "cuMemsetD8Async");
    return FE_OK;
}

int fe_cuda_copy(fe_cu_ptr dst, fe_cu_ptr src, size_t bytes, fe_error *err)
{
    if (bytes)
        CU(cu.MemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync");
    return FE_OK;
}

int fe_cuda_sync(fe_error *err)
{
    CU(cu.CtxSynchronize(), "a kernel on the GPU");
    return FE_OK;
}

int fe_cuda_load(const void *image, fe_cu_module *m, fe_error *err)
{
    CU(cu.ModuleLoadData(m, image), "loading a compiled kernel");
    return FE_OK;
}

void fe_cuda_unload(fe_cu_module m)
{
    if (m)
        cu.ModuleUnload(m);
}

int fe_cuda_function(fe_cu_module m, const char *name, fe_cu_func *f, fe_error *err)
{
    CU(cu.ModuleGetFunction(f, m, name), "cuModuleGetFunction");
    return FE_OK;
}

int fe_cuda_attrs(fe_cu_func f, int threads, fe_cuda_fattr *a, fe_error *err)
{
    CU(cu.FuncGetAttribute(&a->regs, FATTR_REGS, f), "cuFuncGetAttribute");
    CU(cu.FuncGetAttribute(&a->local_bytes, FATTR_LOCAL, f), "cuFuncGetAttribute");
    CU(cu.FuncGetAttribute(&a->shared_bytes, FATTR_SHARED, f), "cuFuncGetAttribute");
    CU(cu.FuncGetAttribute(&a->max_threads, FATTR_MAX_THREADS, f), "cuFuncGetAttribute");
    a->blocks_per_sm = 0;
    if (threads > 0 && threads <= a->max_threads)
        CU(cu.Occupancy(&a->blocks_per_sm, f, threads, 0), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    return FE_OK;
}

int fe_cuda_launch(fe_cu_func f, unsigned grid, unsigned threads, unsigned shared, void **args,
                   fe_error *err)
{
    if (grid == 0)
        return FE_OK;
    CU(cu.LaunchKernel(f, grid, 1, 1, threads, 1, 1, shared, stream, args, NULL), "cuLaunchKernel");
    return FE_OK;
}

int fe_cuda_event_new(fe_cu_event *e, fe_error *err)
{
    CU(cu.EventCreate(e, 0), "cuEventCreate");
    return FE_OK;
}

void fe_cuda_event_free(fe_cu_event e)
{
    if (e)
        cu.EventDestroy(e);
}

int fe_cuda_record(fe_cu_event e, fe_error *err)
{
    CU(cu.EventRecord(e, stream), "cuEventRecord");
    return FE_OK;
}

int fe_cuda_elapsed(fe_cu_event a, fe_cu_event b, float *ms, fe_error *err)
{
    CU(cu.EventSynchronize(b), "a kernel on the GPU");
    CU(cu.EventElapsedTime(ms, a, b), "cuEventElapsedTime_v2|cuEventElapsedTime");
    return FE_OK;
}

/* ---- graphs ---- */

int fe_cuda_capture_begin(fe_error *err)
{
    /* relaxed: a library called while capturing (cuBLAS) may query or
     * allocate without ending the capture */
    CU(cu.BeginCapture(stream, CAPTURE_RELAXED), "cuStreamBeginCapture");
    return FE_OK;
}

int fe_cuda_capture_end(fe_cu_graph *g, int keep, fe_error *err)
{
    CUgraph raw = NULL;
    *g = NULL;
    CUresult r = cu.EndCapture(stream, &raw);
    if (r == 0 && keep)
        r = cu.GraphInstantiate(g, raw, 0);
    if (raw)
        cu.GraphDestroy(raw);
    if (!keep)
        return FE_OK;
    CU(r, "capturing the plan into a CUDA graph");
    return FE_OK;
}

int fe_cuda_graph_launch(fe_cu_graph g, fe_error *err)
{
    CU(cu.GraphLaunch(g, stream), "cuGraphLaunch");
    return FE_OK;
}

void fe_cuda_graph_free(fe_cu_graph g)
{
    if (g)
        cu.GraphExecDestroy(g);
}

/* ---- NVRTC ---- */

/* The architecture to compile for: the device's own (a cubin) when this
 * NVRTC knows it, else the newest it knows below it, as PTX the driver
 * compiles at load. */
static int pick_arch(int *arch, int *ptx)
{
    int n = 0, want = dev.cc_major * 10 + dev.cc_minor, best = 0;
    *ptx = 0;
    if (rtc.GetNumSupportedArchs(&n) || n <= 0 || n > 256) {
        *arch = want;
        return 0;
    }
    int a[256];
    rtc.GetSupportedArchs(a);
    for (int i = 0; i < n; i++) {
        if (a[i] == want) {
            *arch = want;
            return 0;
        }
        if (a[i] < want && a[i] > best)
            best = a[i];
    }
    if (!best)
        return -1;
    *arch = best;
    *ptx = 1;
    return 0;
}

/* The compiler's first error, with the source line it names. */
static void compile_error(const char *src, const char *name, const char *log, fe_error *err)
{
    char pat[160], line[400] = "";
    const char *at = NULL;
    long ln = 0;
    snprintf(pat, sizeof pat, "%s(", name);
    at = strstr(log, pat);
    if (at)
        ln = strtol(at + strlen(pat), NULL, 10);
    if (ln > 0) {
        const char *s = src;
        for (long k = 1; k < ln && s; k++) {
            s = strchr(s, '\n');
            s = s ? s + 1 : NULL;
        }
        if (s) {
            size_t n = strcspn(s, "\n");
            snprintf(line, sizeof line, "\n  line %ld of the generated source: %.*s", ln,
                     (int)(n < 300 ? n : 300), s);
        }
    }
    fe_error_set(err, FE_EINPUT, "cuda: NVRTC could not compile kernel %s (a fuseeng code "
                 "generator bug: please report it with --show-kernels --device cuda):\n%.1500s%s",
                 name, log, line);
}

int fe_cuda_compile(const char *src, const char *name, void **image, size_t *bytes, fe_error *err)
{
    int arch, ptx;
    char opt[64];
    *image = NULL;
    if (pick_arch(&arch, &ptx))
        return fe_error_set(err, FE_EINPUT, "cuda: NVRTC %d.%d cannot compile for %s (sm_%d%d): use "
                            "a newer CUDA toolkit", dev.nvrtc_major, dev.nvrtc_minor, dev.name,
                            dev.cc_major, dev.cc_minor);
    snprintf(opt, sizeof opt, "--gpu-architecture=%s_%d", ptx ? "compute" : "sm", arch);
    const char *opts[] = {opt, "--std=c++17", "-default-device"};
    nvrtcProgram p;
    int r = rtc.CreateProgram(&p, src, name, 0, NULL, NULL);
    if (r)
        return fe_error_set(err, FE_ENOMEM, "cuda: nvrtcCreateProgram: %s", rtc.GetErrorString(r));
    r = rtc.CompileProgram(p, 3, opts);
    if (r) {
        size_t n = 0;
        rtc.GetProgramLogSize(p, &n);
        char *log = malloc(n + 1);
        if (log) {
            log[0] = 0;
            rtc.GetProgramLog(p, log);
            log[n] = 0;
        }
        compile_error(src, name, log ? log : rtc.GetErrorString(r), err);
        free(log);
        rtc.DestroyProgram(&p);
        return err ? err->code : FE_EINPUT;
    }
    size_t n = 0;
    r = ptx ? rtc.GetPTXSize(p, &n) : rtc.GetCUBINSize(p, &n);
    char *img = r ? NULL : malloc(n + 1);
    if (img && (ptx ? rtc.GetPTX(p, img) : rtc.GetCUBIN(p, img)) == 0) {
        img[n] = 0;
        *image = img;
        *bytes = n;
        rtc.DestroyProgram(&p);
        return FE_OK;
    }
    free(img);
    rtc.DestroyProgram(&p);
    return fe_error_set(err, FE_ENOMEM, "cuda: reading NVRTC's output failed");
}

/* ---- cuBLAS ---- */

static void blas_open(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
    char where[2200];
    void *h = open_lib(names, where, sizeof where);
    memset(&blas_err, 0, sizeof blas_err);
    if (!h) {
        fe_error_set(&blas_err, FE_EINPUT, "--device cuda: no cuBLAS (libcublas.so.13 or .12) in %s, "
                     "which matmul groups need: install it or name its folder in FUSEENG_CUDA_LIBS",
                     where);
        return;
    }
    if (sym(h, "libcublas", "cublasCreate_v2", &blas.Create, &blas_err) ||
        sym(h, "libcublas", "cublasSetStream_v2", &blas.SetStream, &blas_err) ||
        sym(h, "libcublas", "cublasGemmStridedBatchedEx", &blas.GemmStridedBatchedEx, &blas_err))
        return;
    int r = blas.Create(&blas_h);
    if (r == 0)
        r = blas.SetStream(blas_h, stream);
    if (r)
        fe_error_set(&blas_err, FE_ERUNTIME, "cuda: cublasCreate failed (status %d)", r);
}

static int rtype(int dt)
{
    return dt == FE_F16 ? R_16F : dt == FE_BF16 ? R_16BF : R_32F;
}

int fe_cuda_gemm_run(const fe_cuda_gemm *g, fe_error *err)
{
    pthread_once(&blas_once, blas_open);
    if (blas_err.code != FE_OK)
        return fe_error_set(err, blas_err.code, "%s", blas_err.message);
    if (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX || g->batch > INT32_MAX)
        return fe_error_set(err, FE_EINPUT, "cuda: a matmul of %lld x %lld x %lld is beyond cuBLAS's "
                            "int dimensions", (long long)g->m, (long long)g->n, (long long)g->k);
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return FE_OK;
    float one = 1.0f, beta = g->acc ? 1.0f : 0.0f;
    /* Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets B first. */
    int lda = (int)(g->ta ? g->m : g->k), ldb = (int)(g->tb ? g->k : g->n);
    int r = blas.GemmStridedBatchedEx(blas_h, g->tb, g->ta, (int)g->n, (int)g->m, (int)g->k, &one,
                                      (const void *)(uintptr_t)g->b, rtype(g->dtype_ab), ldb, g->sb,
                                      (const void *)(uintptr_t)g->a, rtype(g->dtype_ab), lda, g->sa,
                                      &beta, (void *)(uintptr_t)g->c, rtype(g->dtype_c), (int)g->n,
                                      g->sc, (int)g->batch, COMPUTE_32F, GEMM_DEFAULT);
    if (r)
        return fe_error_set(err, r == 3 ? FE_ENOMEM : FE_ERUNTIME, "cuda: cublasGemmStridedBatchedEx "
                            "failed (status %d) on %lld x %lld x %lld, batch %lld", r, (long long)g->m,
                            (long long)g->n, (long long)g->k, (long long)g->batch);
    return FE_OK;
}

/* ---- cuBLASLt ----
 *
 * The product is cuBLAS's column-major transpose (fe_cuda_gemm_run): Lt's
 * A is our B, its B our A, D is n x m column-major with ld n. Lt adds its
 * bias vector per row of that D, which is per element of our row-major
 * output's last axis, as a bias of a linear layer broadcasts. */

typedef struct lt_ctx *cublasLtHandle_t;
typedef struct lt_desc *cublasLtMatmulDesc_t;
typedef struct lt_layout *cublasLtMatrixLayout_t;
typedef struct lt_pref *cublasLtMatmulPreference_t;
typedef struct { uint64_t data[8]; } lt_algo;
typedef struct {                     /* cublasLtMatmulHeuristicResult_t */
    lt_algo algo;
    size_t workspace;
    int state;
    float waves;
    int reserved[4];
} lt_heur;

static struct {
    int (*Create)(cublasLtHandle_t *);
    int (*DescCreate)(cublasLtMatmulDesc_t *, int, int);
    int (*DescSet)(cublasLtMatmulDesc_t, int, const void *, size_t);
    int (*DescDestroy)(cublasLtMatmulDesc_t);
    int (*LayoutCreate)(cublasLtMatrixLayout_t *, int, uint64_t, uint64_t, int64_t);
    int (*LayoutSet)(cublasLtMatrixLayout_t, int, const void *, size_t);
    int (*LayoutDestroy)(cublasLtMatrixLayout_t);
    int (*PrefCreate)(cublasLtMatmulPreference_t *);
    int (*PrefSet)(cublasLtMatmulPreference_t, int, const void *, size_t);
    int (*PrefDestroy)(cublasLtMatmulPreference_t);
    int (*Heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                     cublasLtMatmulPreference_t, int, lt_heur *, int *);
    int (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                  cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,
                  const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                  const lt_algo *, void *, size_t, fe_cu_stream);
} lt;

/* cuBLASLt's documented values */
enum {
    LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4, LT_DESC_EPILOGUE = 7, LT_DESC_BIAS_POINTER = 8,
    LT_LAYOUT_BATCH_COUNT = 5, LT_LAYOUT_BATCH_STRIDE = 6, LT_PREF_MAX_WORKSPACE = 1,
    LT_EPI_DEFAULT = 1, LT_EPI_RELU = 2, LT_EPI_BIAS = 4, LT_EPI_GELU = 32
};
#define LT_WORKSPACE ((size_t)32 << 20)   /* what the heuristic may ask for, allocated once */

static pthread_once_t lt_once = PTHREAD_ONCE_INIT;
static fe_error lt_err;
static cublasLtHandle_t lt_h;
static fe_cu_ptr lt_ws;

static void lt_open_once(void)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                                        NULL};
    static const char *L = "libcublasLt";
    char where[2200];
    void *h = open_lib(names, where, sizeof where);
    memset(&lt_err, 0, sizeof lt_err);
    if (!h) {
        fe_error_set(&lt_err, FE_EINPUT, "no cuBLASLt (libcublasLt.so.13 or .12) in %s", where);
        return;
    }
    if (sym(h, L, "cublasLtCreate", &lt.Create, &lt_err) ||
        sym(h, L, "cublasLtMatmulDescCreate", &lt.DescCreate, &lt_err) ||
        sym(h, L, "cublasLtMatmulDescSetAttribute", &lt.DescSet, &lt_err) ||
        sym(h, L, "cublasLtMatmulDescDestroy", &lt.DescDestroy, &lt_err) ||
        sym(h, L, "cublasLtMatrixLayoutCreate", &lt.LayoutCreate, &lt_err) ||
        sym(h, L, "cublasLtMatrixLayoutSetAttribute", &lt.LayoutSet, &lt_err) ||
        sym(h, L, "cublasLtMatrixLayoutDestroy", &lt.LayoutDestroy, &lt_err) ||
        sym(h, L, "cublasLtMatmulPreferenceCreate", &lt.PrefCreate, &lt_err) ||
        sym(h, L, "cublasLtMatmulPreferenceSetAttribute", &lt.PrefSet, &lt_err) ||
        sym(h, L, "cublasLtMatmulPreferenceDestroy", &lt.PrefDestroy, &lt_err) ||
        sym(h, L, "cublasLtMatmulAlgoGetHeuristic", &lt.Heuristic, &lt_err) ||
        sym(h, L, "cublasLtMatmul", &lt.Matmul, &lt_err))
        return;
    int r = lt.Create(&lt_h);
    if (r) {
        fe_error_set(&lt_err, FE_EINPUT, "cublasLtCreate failed (status %d)", r);
        return;
    }
    fe_error e = {0};
    if (fe_cuda_alloc(&lt_ws, LT_WORKSPACE, &e))
        fe_error_set(&lt_err, FE_EINPUT, "no workspace for cuBLASLt: %s", e.message);
}

int fe_cuda_lt_open(fe_error *why)
{
    if (!ctx)
        return fe_error_set(why, FE_EINPUT, "the device is not open");
    pthread_once(&lt_once, lt_open_once);
    if (lt_err.code != FE_OK)
        return fe_error_set(why, lt_err.code, "%s", lt_err.message);
    return FE_OK;
}

typedef struct lt_plan {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc, ld;   /* Lt's A (our B), B (our A), C, D */
    lt_algo algo;
    size_t ws;
} lt_plan;

void fe_cuda_lt_release(fe_cuda_lt *l)
{
    lt_plan *p = l->plan;
    if (!p)
        return;
    if (p->desc)
        lt.DescDestroy(p->desc);
    cublasLtMatrixLayout_t ls[4] = {p->la, p->lb, p->lc, p->ld};
    for (int i = 0; i < 4; i++)
        if (ls[i])
            lt.LayoutDestroy(ls[i]);
    free(p);
    l->plan = NULL;
}

/* A column-major rows x cols layout of batch matrices stride apart. */
static int lt_layout(cublasLtMatrixLayout_t *out, int dt, int64_t rows, int64_t cols, int64_t ld,
                     int64_t batch, int64_t stride)
{
    int32_t nb = (int32_t)batch;
    int r = lt.LayoutCreate(out, rtype(dt), (uint64_t)rows, (uint64_t)cols, ld);
    if (!r && batch > 1)
        r = lt.LayoutSet(*out, LT_LAYOUT_BATCH_COUNT, &nb, sizeof nb) ||
            lt.LayoutSet(*out, LT_LAYOUT_BATCH_STRIDE, &stride, sizeof stride);
    return r;
}

int fe_cuda_lt_prepare(fe_cuda_lt *l, fe_error *why)
{
    const fe_cuda_gemm *g = &l->gm;
    if (fe_cuda_lt_open(why))
        return why ? why->code : FE_EINPUT;
    if (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX || g->batch > INT32_MAX ||
        g->m == 0 || g->n == 0 || g->k == 0 || g->batch == 0)
        return fe_error_set(why, FE_EINPUT, "a matmul of %lld x %lld x %lld, batch %lld, is not a "
                            "cuBLASLt call", (long long)g->m, (long long)g->n, (long long)g->k,
                            (long long)g->batch);
    lt_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fe_error_set(why, FE_ENOMEM, "out of memory");
    fe_cuda_lt_release(l);
    l->plan = p;
    int32_t ta = g->tb, tb = g->ta;   /* Lt's A is our B */
    uint32_t epi = (l->has_bias ? LT_EPI_BIAS : 0) |
                   (l->act == FE_CUDA_ACT_RELU ? LT_EPI_RELU : l->act == FE_CUDA_ACT_GELU_TANH
                    ? LT_EPI_GELU : 0);
    if (!epi)
        epi = LT_EPI_DEFAULT;
    /* the heuristic reads the bias pointer for its alignment only: the
     * workspace (256-byte aligned) stands in until the run sets the real one */
    const void *bias = (const void *)(uintptr_t)(l->bias ? l->bias : lt_ws);
    uint64_t wsb = LT_WORKSPACE;
    int r = lt.DescCreate(&p->desc, COMPUTE_32F, R_32F);
    if (!r)
        r = lt.DescSet(p->desc, LT_DESC_TRANSA, &ta, sizeof ta) ||
            lt.DescSet(p->desc, LT_DESC_TRANSB, &tb, sizeof tb) ||
            lt.DescSet(p->desc, LT_DESC_EPILOGUE, &epi, sizeof epi) ||
            (l->has_bias && lt.DescSet(p->desc, LT_DESC_BIAS_POINTER, &bias, sizeof bias));
    if (!r)
        r = lt_layout(&p->la, g->dtype_ab, ta ? g->k : g->n, ta ? g->n : g->k, ta ? g->k : g->n,
                      g->batch, g->sb) ||
            lt_layout(&p->lb, g->dtype_ab, tb ? g->m : g->k, tb ? g->k : g->m, tb ? g->m : g->k,
                      g->batch, g->sa) ||
            lt_layout(&p->lc, g->dtype_c, g->n, g->m, g->n, g->batch, g->sc) ||
            lt_layout(&p->ld, g->dtype_c, g->n, g->m, g->n, g->batch, g->sc);
    if (r) {
        fe_cuda_lt_release(l);
        return fe_error_set(why, FE_EINPUT, "cuBLASLt refused the descriptors (status %d)", r);
    }
    cublasLtMatmulPreference_t pref = NULL;
    lt_heur h[1];
    int got = 0;
    memset(h, 0, sizeof h);
    r = lt.PrefCreate(&pref);
    if (!r)
        r = lt.PrefSet(pref, LT_PREF_MAX_WORKSPACE, &wsb, sizeof wsb);
    if (!r)
        r = lt.Heuristic(lt_h, p->desc, p->la, p->lb, p->lc, p->ld, pref, 1, h, &got);
    if (pref)
        lt.PrefDestroy(pref);
    if (r || got < 1 || h[0].state != 0) {
        fe_cuda_lt_release(l);
        return fe_error_set(why, FE_EINPUT, "cuBLASLt has no algorithm for it (status %d, %d found)",
                            r ? r : h[0].state, got);
    }
    p->algo = h[0].algo;
    p->ws = h[0].workspace;
    return FE_OK;
}

int fe_cuda_lt_run(const fe_cuda_lt *l, fe_error *err)
{
    const fe_cuda_gemm *g = &l->gm;
    const lt_plan *p = l->plan;
    if (!p)
        return fe_error_set(err, FE_ERUNTIME, "cuda: a cuBLASLt call run before it was prepared");
    fe_cu_ptr ptrs[5] = {g->a, g->b, g->c, l->has_c ? l->c : 0, l->has_bias ? l->bias : 0};
    for (int i = 0; i < 5; i++)
        if (ptrs[i] & 255)
            return fe_error_set(err, FE_ERUNTIME, "cuda: a cuBLASLt operand is not 256-byte aligned "
                                "(the algorithm was chosen for aligned buffers)");
    float beta = l->has_c ? 1.0f : 0.0f;
    const void *bias = (const void *)(uintptr_t)l->bias;
    int r = l->has_bias ? lt.DescSet(p->desc, LT_DESC_BIAS_POINTER, &bias, sizeof bias) : 0;
    if (!r)
        r = lt.Matmul(lt_h, p->desc, &l->alpha, (const void *)(uintptr_t)g->b, p->la,
                      (const void *)(uintptr_t)g->a, p->lb, &beta,
                      (const void *)(uintptr_t)(l->has_c ? l->c : g->c), p->lc,
                      (void *)(uintptr_t)g->c, p->ld, &p->algo, (void *)(uintptr_t)lt_ws, p->ws,
                      stream);
    if (r)
        return fe_error_set(err, r == 3 ? FE_ENOMEM : FE_ERUNTIME, "cuda: cublasLtMatmul failed "
                            "(status %d) on %lld x %lld x %lld, batch %lld", r, (long long)g->m,
                            (long long)g->n, (long long)g->k, (long long)g->batch);
    return FE_OK;
}
