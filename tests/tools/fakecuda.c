/* fakecuda.c: the CUDA driver API, NVRTC, cuBLAS and cuBLASLt entry points
 * that kernels/gpu/cuda.c opens, emulated on the host, so that a machine
 * with no GPU runs `--device cuda` end to end (tests/cli/cuda_emulated.sh).
 * One shared library serves as libcuda.so.1, libnvrtc.so.12,
 * libcublas.so.12 and libcublasLt.so.12 (links to it in a folder named by
 * FUSEENG_CUDA_LIBS).
 *
 * Note on the emulation. Device memory is host memory. "NVRTC" compiles
 * the generated CUDA C as host C++ (the C++ compiler in $FAKECUDA_CXX,
 * default c++) after the shim below, which defines what NVRTC has built
 * in; the two PTX conversions of the generators' prelude are replaced by
 * host ones. The "cubin" is the resulting shared object, with a header.
 * A launch runs every block in turn and every thread of a block as a
 * fiber (ucontext): __syncthreads and the warp shuffles are barriers at
 * which a fiber yields until its block (or warp) has arrived, so the
 * shared-memory and shuffle reductions run as on the card. cuBLAS's
 * strided-batched GEMM is a plain loop, f32 accumulation, and so is
 * cuBLASLt's matmul with its epilogue (alpha, beta C, a bias per row of
 * the column-major D, relu or tanh GELU), its descriptors checked for the
 * attribute sizes the real library checks. Timings are wall clock and mean
 * nothing (tests force cuBLASLt or not with FUSEENG_CUDA_LT).
 *
 * FAKECUDA_REFUSE=TEXT makes "NVRTC" refuse every source that holds TEXT,
 * for the executor's fallback when a generated kernel does not build.
 *
 * What it checks: indexing, strides, offsets, dtype conversions, NaN
 * rules, the GEMMs' arguments, the steps' order and buffers. What it
 * cannot: races and memory ordering on the card, vector accesses'
 * alignment faults, registers, NVRTC's own acceptance of the source
 * (tests/cli/cuda_clang.sh compiles each source for NVPTX), speed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

typedef uint64_t devptr;

/* ---- the shim every kernel is compiled after ---- */

static const char shim[] =
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#include <ucontext.h>\n"
    "#include <utility>\n"
    "#define __global__\n"
    "#define __device__\n"
    "#define __host__\n"
    "#define __shared__ static\n"
    "#define __forceinline__ inline\n"
    "#define __launch_bounds__(...)\n"
    "struct uint3 { unsigned x, y, z; };\n"
    "struct dim3 { unsigned x, y, z; };\n"
    "static uint3 threadIdx, blockIdx;\n"
    "static dim3 blockDim, gridDim;\n"
    "static const int warpSize = 32;\n"
    "struct alignas(16) float4 { float x, y, z, w; };\n"
    "struct alignas(8) float2 { float x, y; };\n"
    "struct alignas(8) uint2 { unsigned x, y; };\n"
    "struct alignas(16) uint4 { unsigned x, y, z, w; };\n"
    "static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }\n"
    "static inline float2 make_float2(float x, float y) { return float2{x, y}; }\n"
    "static inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }\n"
    "static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }\n"
    "static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }\n"
    "static inline int __float_as_int(float f) { int u; memcpy(&u, &f, 4); return u; }\n"
    "static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }\n"
    "static inline float __fmul_rn(float a, float b) { return a * b; }\n"
    "static inline float __fadd_rn(float a, float b) { return a + b; }\n"
    "static inline double __dmul_rn(double a, double b) { return a * b; }\n"
    "static inline double __dadd_rn(double a, double b) { return a + b; }\n"
    /* f16 <-> f32, round to nearest even, as cvt.rn.f16.f32 */
    "static inline float fe_emu_h2f(unsigned short h) {\n"
    "  unsigned s = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 31, m = h & 1023, u;\n"
    "  if (e == 31) u = s | 0x7f800000u | (m << 13);\n"
    "  else if (e) u = s | ((e + 112) << 23) | (m << 13);\n"
    "  else if (!m) u = s;\n"
    "  else { float f = (float)m * 5.9604644775390625e-8f; memcpy(&u, &f, 4); u |= s; }\n"
    "  float f; memcpy(&f, &u, 4); return f;\n"
    "}\n"
    "static inline unsigned short fe_emu_f2h(float f) {\n"
    "  unsigned u; memcpy(&u, &f, 4);\n"
    "  unsigned s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;\n"
    "  if (a > 0x7f800000u) return (unsigned short)(s | 0x7e00u);\n"
    "  if (a >= 0x477ff000u) return (unsigned short)(s | 0x7c00u);\n"
    "  if (a < 0x38800000u) {\n"
    "    float t; memcpy(&t, &a, 4);\n"
    "    float q = t / 5.9604644775390625e-8f;\n"
    "    return (unsigned short)(s | (unsigned)nearbyintf(q));\n"
    "  }\n"
    "  unsigned r = a + 0xfffu + ((a >> 13) & 1u);\n"
    "  return (unsigned short)(s | ((r - 0x38000000u) >> 13));\n"
    "}\n"
    /* threads as fibers; barriers per block (-1) or per warp */
    "struct fe_fiber { ucontext_t ctx; int state; unsigned tid; int wk; unsigned long wg; };\n"
    "static fe_fiber *fe_f; static unsigned fe_nf; static fe_fiber *fe_cur; static ucontext_t fe_main;\n"
    "static unsigned long fe_gen[33]; static unsigned fe_arr[33];\n"
    "static void (*fe_body)(void *); static void *fe_arg;\n"
    "static float fe_slot[1024];\n"
    "static void fe_barrier(int w) {\n"
    "  int k = w < 0 ? 32 : w;\n"
    "  unsigned need = w < 0 ? fe_nf : (fe_nf - 32u * (unsigned)w < 32u ? fe_nf - 32u * (unsigned)w : 32u);\n"
    "  if (++fe_arr[k] == need) { fe_arr[k] = 0; fe_gen[k]++; return; }\n"
    "  fe_cur->wk = k; fe_cur->wg = fe_gen[k]; fe_cur->state = 2;\n"
    "  swapcontext(&fe_cur->ctx, &fe_main);\n"
    "}\n"
    "static inline void __syncthreads() { fe_barrier(-1); }\n"
    "static inline void __syncwarp(unsigned m = 0xffffffffu) { (void)m; fe_barrier((int)(threadIdx.x >> 5)); }\n"
    "static inline float __shfl_xor_sync(unsigned m, float v, int o, int w = 32) {\n"
    "  (void)m; (void)w; unsigned t = threadIdx.x;\n"
    "  fe_slot[t] = v; fe_barrier((int)(t >> 5));\n"
    "  float r = fe_slot[t ^ (unsigned)o]; fe_barrier((int)(t >> 5)); return r;\n"
    "}\n"
    "static inline int __shfl_xor_sync(unsigned m, int v, int o, int w = 32) {\n"
    "  return __float_as_int(__shfl_xor_sync(m, __int_as_float(v), o, w));\n"
    "}\n"
    "static double fe_dslot[1024];\n"
    "static inline double __shfl_xor_sync(unsigned m, double v, int o, int w = 32) {\n"
    "  (void)m; (void)w; unsigned t = threadIdx.x;\n"
    "  fe_dslot[t] = v; fe_barrier((int)(t >> 5));\n"
    "  double r = fe_dslot[t ^ (unsigned)o]; fe_barrier((int)(t >> 5)); return r;\n"
    "}\n"
    "static void fe_entry() { fe_body(fe_arg); fe_cur->state = 3; swapcontext(&fe_cur->ctx, &fe_main); }\n"
    "static int fe_run(unsigned grid, unsigned block, void (*body)(void *), void *arg) {\n"
    "  enum { STACK = 1 << 16 };\n"
    "  if (block > 1024) return -1;\n"
    "  char *stacks = (char *)malloc((size_t)block * STACK);\n"
    "  fe_fiber *f = (fe_fiber *)calloc(block, sizeof *f);\n"
    "  if (!stacks || !f) { free(stacks); free(f); return -1; }\n"
    "  fe_f = f; fe_nf = block; fe_body = body; fe_arg = arg;\n"
    "  gridDim = dim3{grid, 1, 1}; blockDim = dim3{block, 1, 1};\n"
    "  int rc = 0;\n"
    "  for (unsigned b = 0; b < grid && !rc; b++) {\n"
    "    blockIdx = uint3{b, 0, 0};\n"
    "    memset(fe_gen, 0, sizeof fe_gen); memset(fe_arr, 0, sizeof fe_arr);\n"
    "    for (unsigned t = 0; t < block; t++) {\n"
    "      getcontext(&f[t].ctx);\n"
    "      f[t].ctx.uc_stack.ss_sp = stacks + (size_t)t * STACK; f[t].ctx.uc_stack.ss_size = STACK;\n"
    "      f[t].ctx.uc_link = 0; f[t].state = 1; f[t].tid = t;\n"
    "      makecontext(&f[t].ctx, fe_entry, 0);\n"
    "    }\n"
    "    for (unsigned done = 0; done < block;) {\n"
    "      int moved = 0; done = 0;\n"
    "      for (unsigned t = 0; t < block; t++) {\n"
    "        fe_fiber *x = &f[t];\n"
    "        if (x->state == 3) { done++; continue; }\n"
    "        if (x->state == 2 && fe_gen[x->wk] == x->wg) continue;\n"
    "        x->state = 1; fe_cur = x; threadIdx = uint3{t, 0, 0};\n"
    "        swapcontext(&fe_main, &x->ctx);\n"
    "        moved = 1;\n"
    "      }\n"
    "      if (!moved && done < block) { rc = -2; break; }   /* threads wait at a barrier others passed */\n"
    "    }\n"
    "  }\n"
    "  free(f);\n"
    "  free(stacks);\n"
    "  return rc;\n"
    "}\n"
    "template <typename... A, size_t... I> static void fe_call(void (*k)(A...), void **p, std::index_sequence<I...>)\n"
    "{ k(*(A *)p[I]...); }\n"
    "template <typename... A> static void fe_call(void (*k)(A...), void **p)\n"
    "{ fe_call(k, p, std::index_sequence_for<A...>{}); }\n";

/* after the kernel: its launcher */
static const char trailer[] =
    "\nstatic void fe_emu_body(void *p) { fe_call(fe_kernel, (void **)p); }\n"
    "extern \"C\" int fe_emu_launch(unsigned grid, unsigned block, void **params)\n"
    "{ return fe_run(grid, block, fe_emu_body, params); }\n";

/* ---- small helpers ---- */

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long len;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, f) == (size_t)len) {
        b[len] = 0;
        *n = (size_t)len;
    } else {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* s with every occurrence of a replaced by b (caller frees). */
static char *replace(const char *s, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = 0;
    for (const char *p = strstr(s, a); p; p = strstr(p + la, a))
        n++;
    char *r = malloc(strlen(s) + n * (lb > la ? lb - la : 0) + 1), *o = r;
    if (!r)
        return NULL;
    for (const char *p = s, *q; ; p = q + la) {
        q = strstr(p, a);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, b, lb);
        o += lb;
    }
    return r;
}

/* ---- NVRTC ---- */

typedef struct prog {
    char *src, *log, *img;
    size_t nlog, nimg;
} prog;

#define IMG_MAGIC "FAKECUBIN"

int nvrtcVersion(int *maj, int *min) { *maj = 12; *min = 8; return 0; }
int nvrtcGetNumSupportedArchs(int *n) { *n = 1; return 0; }
int nvrtcGetSupportedArchs(int *a) { a[0] = 90; return 0; }
const char *nvrtcGetErrorString(int r) { return r ? "NVRTC_ERROR_COMPILATION (fake)" : "NVRTC_SUCCESS"; }

int nvrtcCreateProgram(prog **p, const char *src, const char *name, int nh, const char *const *h,
                       const char *const *hn)
{
    (void)name, (void)nh, (void)h, (void)hn;
    *p = calloc(1, sizeof **p);
    if (!*p || !((*p)->src = strdup(src)))
        return 1;
    return 0;
}

int nvrtcCompileProgram(prog *p, int nopt, const char *const *opts)
{
    (void)nopt, (void)opts;
    /* FAKECUDA_REFUSE=TEXT: a source holding TEXT does not compile, as a
     * generator bug NVRTC catches would not; the log names its line */
    const char *refuse = getenv("FAKECUDA_REFUSE");
    const char *at = refuse && *refuse ? strstr(p->src, refuse) : NULL;
    if (at) {
        int line = 1;
        for (const char *c = p->src; c < at; c++)
            line += *c == '\n';
        free(p->log);
        p->log = malloc(160);
        if (p->log)
            p->nlog = (size_t)snprintf(p->log, 160, "fuseeng_group.cu(%d): error: refused by "
                                       "FAKECUDA_REFUSE\n", line);
        return 6;
    }
    char dir[] = "/tmp/fakecuda.XXXXXX", path[256], so[256], cmd[1200], logp[256];
    if (!mkdtemp(dir))
        return 1;
    char *a = replace(p->src, "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));", "f = fe_emu_h2f(h);");
    char *b = a ? replace(a, "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));", "h = fe_emu_f2h(f);")
                : NULL;
    free(a);
    snprintf(path, sizeof path, "%s/k.cpp", dir);
    snprintf(so, sizeof so, "%s/k.so", dir);
    snprintf(logp, sizeof logp, "%s/log", dir);
    FILE *f = fopen(path, "w");
    if (!f || !b) {
        free(b);
        if (f)
            fclose(f);
        return 1;
    }
    fprintf(f, "%s\n#line 1 \"fuseeng_group.cu\"\n%s%s", shim, b, trailer);
    fclose(f);
    free(b);
    const char *cxx = getenv("FAKECUDA_CXX");
    snprintf(cmd, sizeof cmd, "%s -std=c++17 -O1 -w -shared -fPIC -o %s %s >%s 2>&1",
             cxx && *cxx ? cxx : "c++", so, path, logp);
    int rc = system(cmd);
    size_t n = 0;
    free(p->log);
    p->log = read_file(logp, &n);
    p->nlog = p->log ? n : 0;
    char *img = rc == 0 ? read_file(so, &n) : NULL;
    if (img) {
        p->nimg = sizeof IMG_MAGIC + sizeof(uint64_t) + n;
        p->img = malloc(p->nimg);
        if (p->img) {
            uint64_t len = n;
            memcpy(p->img, IMG_MAGIC, sizeof IMG_MAGIC);
            memcpy(p->img + sizeof IMG_MAGIC, &len, sizeof len);
            memcpy(p->img + sizeof IMG_MAGIC + sizeof len, img, n);
        }
        free(img);
    }
    unlink(path);
    unlink(so);
    unlink(logp);
    rmdir(dir);
    return p->img ? 0 : 6;
}

int nvrtcGetProgramLogSize(prog *p, size_t *n) { *n = p->nlog + 1; return 0; }
int nvrtcGetProgramLog(prog *p, char *s)
{
    if (p->log)
        memcpy(s, p->log, p->nlog);
    s[p->nlog] = 0;
    return 0;
}
int nvrtcGetCUBINSize(prog *p, size_t *n) { *n = p->nimg; return 0; }
int nvrtcGetCUBIN(prog *p, char *d) { memcpy(d, p->img, p->nimg); return 0; }
int nvrtcGetPTXSize(prog *p, size_t *n) { return nvrtcGetCUBINSize(p, n); }
int nvrtcGetPTX(prog *p, char *d) { return nvrtcGetCUBIN(p, d); }
int nvrtcDestroyProgram(prog **p)
{
    if (*p) {
        free((*p)->src);
        free((*p)->log);
        free((*p)->img);
        free(*p);
        *p = NULL;
    }
    return 0;
}

/* ---- the driver ---- */

typedef struct module {
    void *h;
    int (*launch)(unsigned, unsigned, void **);
} module;

static int last_fault;   /* a launch that failed: reported at the next sync */

int cuInit(unsigned f) { (void)f; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGet(int *d, int ord) { *d = ord; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGetName(char *s, int n, int d)
{
    (void)d;
    snprintf(s, (size_t)n, "fakecuda (the host, emulating)");
    return 0;
}
int cuDeviceGetAttribute(int *v, int attr, int d)
{
    (void)d;
    switch (attr) {
    case 75: *v = 9; break;           /* compute capability 9.0 */
    case 76: *v = 0; break;
    case 16: *v = 2; break;           /* two multiprocessors: small grids, quick emulation */
    case 39: *v = 2048; break;
    case 82: *v = 65536; break;
    case 38: *v = 50 << 20; break;
    case 1: *v = 1024; break;
    default: *v = 0; break;
    }
    return 0;
}
int cuDeviceTotalMem_v2(size_t *b, int d) { (void)d; *b = (size_t)16 << 30; return 0; }
int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = (void *)&last_fault; return 0; }
int cuCtxSetCurrent(void *c) { (void)c; return 0; }
int cuCtxSynchronize(void)
{
    int f = last_fault;
    last_fault = 0;
    return f ? 719 : 0;   /* CUDA_ERROR_LAUNCH_FAILED */
}
int cuMemAlloc_v2(devptr *p, size_t n)
{
    void *m = NULL;
    if (posix_memalign(&m, 256, n ? n : 1))
        return 2;
    memset(m, 0xa5, n);   /* never zeros: a kernel must write what it owns */
    *p = (devptr)(uintptr_t)m;
    return 0;
}
int cuMemFree_v2(devptr p) { free((void *)(uintptr_t)p); return 0; }
int cuMemGetInfo_v2(size_t *fr, size_t *tot) { *fr = *tot = (size_t)16 << 30; return 0; }
int cuMemcpyHtoD_v2(devptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
int cuMemcpyDtoH_v2(void *d, devptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }
int cuMemcpyDtoD_v2(devptr d, devptr s, size_t n)
{
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return 0;
}
int cuMemsetD8_v2(devptr d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return 0; }

/* One stream, run at once. While it is captured, launches, sets and GEMMs
 * are recorded instead and a graph replays them in order: a launch's
 * parameter array is kept by address and read at replay, which fuseeng's
 * steps satisfy (their parameter values stay put between runs). */
typedef struct ltdesc {               /* a cublasLtMatmulDesc_t */
    int compute, scale, ta, tb;
    unsigned epi;
    const void *bias;
} ltdesc;
typedef struct ltlayout {             /* a cublasLtMatrixLayout_t */
    unsigned type;
    int order, batch;
    unsigned long long rows, cols;
    long long ld, stride;
} ltlayout;
typedef struct ltcall {               /* a cublasLtMatmul's arguments, by value */
    ltdesc d;
    ltlayout l[4];                    /* A, B, C, D */
    float alpha, beta;
    const void *a, *b, *c;
    void *dst;
} ltcall;

typedef struct rec {
    int kind;                         /* 0 launch, 1 memset, 2 gemm, 3 cuBLASLt matmul */
    module *f;
    unsigned gx, bx;
    void **params;
    devptr d;
    unsigned char v;
    size_t n;
    void *gemm[24];                   /* the GEMM's arguments (see gemm_rec) */
    int gi[12];
    long long gl[3];
    float ab[2];
    ltcall lt;
} rec;
typedef struct graph { rec *r; int n, cap; } graph;
static graph *capturing;

static int record(const rec *r)
{
    if (capturing->n == capturing->cap) {
        int cap = capturing->cap ? 2 * capturing->cap : 16;
        rec *nr = realloc(capturing->r, (size_t)cap * sizeof *nr);
        if (!nr)
            return 2;
        capturing->r = nr;
        capturing->cap = cap;
    }
    capturing->r[capturing->n++] = *r;
    return 0;
}

int cuStreamCreate(void **s, unsigned f) { (void)f; *s = (void *)&last_fault; return 0; }
int cuMemsetD8Async(devptr d, unsigned char v, size_t n, void *s)
{
    (void)s;
    if (capturing)
        return record(&(rec){.kind = 1, .d = d, .v = v, .n = n});
    return cuMemsetD8_v2(d, v, n);
}
int cuMemcpyDtoDAsync_v2(devptr d, devptr s, size_t n, void *st) { (void)st; return cuMemcpyDtoD_v2(d, s, n); }
int cuStreamBeginCapture_v2(void *s, int mode)
{
    (void)s, (void)mode;
    if (capturing)
        return 900;   /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
    capturing = calloc(1, sizeof *capturing);
    return capturing ? 0 : 2;
}
int cuStreamEndCapture(void *s, graph **g)
{
    (void)s;
    *g = capturing;
    capturing = NULL;
    return *g ? 0 : 901;
}
int cuGraphInstantiateWithFlags(graph **e, graph *g, unsigned long long f)
{
    (void)f;
    graph *c = calloc(1, sizeof *c);
    if (!c || !(c->r = malloc(((size_t)g->n + 1) * sizeof *c->r)))
        return free(c), 2;
    memcpy(c->r, g->r, (size_t)g->n * sizeof *c->r);
    c->n = c->cap = g->n;
    *e = c;
    return 0;
}
int cuGraphDestroy(graph *g)
{
    if (g)
        free(g->r);
    free(g);
    return 0;
}
int cuGraphExecDestroy(graph *g) { return cuGraphDestroy(g); }

int cuModuleLoadData(module **m, const void *image)
{
    const char *img = image;
    uint64_t len;
    char path[] = "/tmp/fakecuda-XXXXXX.so";
    if (memcmp(img, IMG_MAGIC, sizeof IMG_MAGIC)) {
        fprintf(stderr, "fakecuda: not an image of fakecuda's NVRTC\n");
        return 200;   /* CUDA_ERROR_INVALID_IMAGE */
    }
    memcpy(&len, img + sizeof IMG_MAGIC, sizeof len);
    int fd = mkstemps(path, 3);
    if (fd < 0)
        return 200;
    int ok = write(fd, img + sizeof IMG_MAGIC + sizeof len, (size_t)len) == (ssize_t)len;
    close(fd);
    *m = calloc(1, sizeof **m);
    if (ok && *m)
        (*m)->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    unlink(path);
    if (!*m || !(*m)->h) {
        fprintf(stderr, "fakecuda: %s\n", dlerror());
        free(*m);
        return 200;
    }
    *(void **)&(*m)->launch = dlsym((*m)->h, "fe_emu_launch");
    if (!(*m)->launch)
        fprintf(stderr, "fakecuda: %s\n", dlerror());
    return (*m)->launch ? 0 : 200;
}
int cuModuleUnload(module *m)
{
    if (m) {
        dlclose(m->h);
        free(m);
    }
    return 0;
}
int cuModuleGetFunction(module **f, module *m, const char *name)
{
    (void)name;
    *f = m;   /* one kernel a module: fe_kernel */
    return 0;
}
int cuFuncGetAttribute(int *v, int attr, module *f)
{
    (void)f;
    *v = attr == 0 ? 1024 : attr == 4 ? 32 : 0;
    return 0;
}
int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, module *f, int threads, size_t sh)
{
    (void)f, (void)sh;
    *n = threads > 0 ? 2048 / threads : 0;
    return 0;
}
int cuLaunchKernel(module *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void *stream, void **params, void **extra)
{
    (void)sh, (void)stream, (void)extra;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || bx == 0 || bx > 1024)
        return 1;   /* CUDA_ERROR_INVALID_VALUE */
    if (capturing)
        return record(&(rec){.kind = 0, .f = f, .gx = gx, .bx = bx, .params = params});
    int rc = f->launch(gx, bx, params);
    if (rc) {
        fprintf(stderr, "fakecuda: a launch of %u x %u threads %s\n", gx, bx,
                rc == -2 ? "deadlocked at a barrier" : "could not start its threads");
        last_fault = 1;
    }
    return 0;
}

typedef struct event { double t; } event;
static double now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}
int cuEventCreate(event **e, unsigned f) { (void)f; *e = calloc(1, sizeof **e); return *e ? 0 : 2; }
int cuEventDestroy_v2(event *e) { free(e); return 0; }
int cuEventRecord(event *e, void *s) { (void)s; e->t = now_ms(); return 0; }
int cuEventSynchronize(event *e) { (void)e; return cuCtxSynchronize(); }
int cuEventElapsedTime_v2(float *ms, event *a, event *b) { *ms = (float)(b->t - a->t); return 0; }
int cuGetErrorName(int r, const char **s) { *s = r == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR"; return 0; }
int cuGetErrorString(int r, const char **s) { *s = r == 719 ? "a launch failed (fakecuda)" : "error (fakecuda)"; return 0; }

/* ---- cuBLAS ---- */

static float h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 31, m = h & 1023, u;
    float f;
    if (e == 31)
        u = s | 0x7f800000u | (m << 13);
    else if (e)
        u = s | ((e + 112) << 23) | (m << 13);
    else if (!m)
        u = s;
    else {
        f = (float)m * 5.9604644775390625e-8f;
        memcpy(&u, &f, 4);
        u |= s;
    }
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f2h(float f)
{
    uint32_t u, s, a;
    memcpy(&u, &f, 4);
    s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(s | 0x7e00u);
    if (a >= 0x477ff000u)
        return (uint16_t)(s | 0x7c00u);
    if (a < 0x38800000u) {
        float t;
        memcpy(&t, &a, 4);
        return (uint16_t)(s | (uint32_t)nearbyintf(t / 5.9604644775390625e-8f));
    }
    return (uint16_t)(s | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
}

static float ld(const void *p, int t, long long i)
{
    if (t == 2)
        return h2f(((const uint16_t *)p)[i]);
    if (t == 14) {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    return ((const float *)p)[i];
}

static void st(void *p, int t, long long i, float v)
{
    if (t == 2) {
        ((uint16_t *)p)[i] = f2h(v);
    } else if (t == 14) {
        uint32_t u;
        memcpy(&u, &v, 4);
        ((uint16_t *)p)[i] = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 0x40)
                                                              : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    } else {
        ((float *)p)[i] = v;
    }
}

int cublasCreate_v2(void **h) { *h = (void *)&last_fault; return 0; }
int cublasSetStream_v2(void *h, void *s) { (void)h, (void)s; return 0; }

/* Column-major C = alpha op(A) op(B) + beta C, per batch. */
int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
                               const void *A, int at, int lda, long long sa, const void *B, int bt,
                               int ldb, long long sb, const void *beta, void *C, int ct, int ldc,
                               long long sc, int batch, int compute, int algo)
{
    (void)h, (void)compute, (void)algo;
    /* the type pairs cuBLAS takes with f32 compute (A and B alike; C):
     * 16F/16F, 16F/32F, 16BF/16BF, 16BF/32F, 32F/32F; an f32 product into
     * a 16-bit C is CUBLAS_STATUS_NOT_SUPPORTED on a real card */
    if (at != bt || (at == 0 && ct != 0) || (at != 0 && at != 2 && at != 14) ||
        (ct != 0 && ct != at))
        return 15;
    if (capturing) {
        rec r = {.kind = 2, .gemm = {(void *)A, (void *)B, C}, .gi = {ta, tb, m, n, k, at, lda, bt, ldb, ct,
                 ldc, batch}, .gl = {sa, sb, sc}, .ab = {*(const float *)alpha, *(const float *)beta}};
        return record(&r);
    }
    float al = *(const float *)alpha, be = *(const float *)beta;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) ||
        lda < (ta ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) || ldb < (tb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)))
        return 7;   /* CUBLAS_STATUS_INVALID_VALUE */
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float acc = 0.0f;
                for (int l = 0; l < k; l++)
                    acc += ld(A, at, b * sa + (ta ? l + (long long)i * lda : i + (long long)l * lda)) *
                           ld(B, bt, b * sb + (tb ? j + (long long)l * ldb : l + (long long)j * ldb));
                long long ci = b * sc + i + (long long)j * ldc;
                st(C, ct, ci, be == 0.0f ? al * acc : al * acc + be * ld(C, ct, ci));
            }
    return 0;
}

/* ---- cuBLASLt ---- */

enum { LT_OK = 0, LT_INVALID = 7, LT_NOT_SUPPORTED = 15 };

int cublasLtCreate(void **h) { *h = (void *)&last_fault; return 0; }

int cublasLtMatmulDescCreate(ltdesc **d, int compute, int scale)
{
    *d = calloc(1, sizeof **d);
    if (!*d)
        return 3;   /* CUBLAS_STATUS_ALLOC_FAILED */
    (*d)->compute = compute;
    (*d)->scale = scale;
    (*d)->epi = 1;
    return 0;
}
int cublasLtMatmulDescDestroy(ltdesc *d) { free(d); return 0; }

/* Each attribute has one size, as cuBLASLt documents it. */
int cublasLtMatmulDescSetAttribute(ltdesc *d, int attr, const void *buf, size_t n)
{
    switch (attr) {
    case 3: case 4: case 7:           /* TRANSA, TRANSB (int32), EPILOGUE (uint32) */
        if (n != 4)
            return LT_INVALID;
        memcpy(attr == 3 ? &d->ta : attr == 4 ? &d->tb : (int *)&d->epi, buf, 4);
        return 0;
    case 8:                           /* BIAS_POINTER */
        if (n != sizeof(void *))
            return LT_INVALID;
        memcpy(&d->bias, buf, n);
        return 0;
    default:
        return LT_INVALID;            /* not one fuseeng sets */
    }
}

int cublasLtMatrixLayoutCreate(ltlayout **l, unsigned type, unsigned long long rows,
                               unsigned long long cols, long long ld)
{
    *l = calloc(1, sizeof **l);
    if (!*l)
        return 3;
    **l = (ltlayout){.type = type, .batch = 1, .rows = rows, .cols = cols, .ld = ld};
    return 0;
}
int cublasLtMatrixLayoutDestroy(ltlayout *l) { free(l); return 0; }
int cublasLtMatrixLayoutSetAttribute(ltlayout *l, int attr, const void *buf, size_t n)
{
    if (attr == 5 && n == 4)          /* BATCH_COUNT, int32 */
        memcpy(&l->batch, buf, 4);
    else if (attr == 6 && n == 8)     /* STRIDED_BATCH_OFFSET, int64 */
        memcpy(&l->stride, buf, 8);
    else
        return LT_INVALID;
    return 0;
}

int cublasLtMatmulPreferenceCreate(unsigned long long **p)
{
    *p = calloc(1, sizeof **p);
    return *p ? 0 : 3;
}
int cublasLtMatmulPreferenceDestroy(unsigned long long *p) { free(p); return 0; }
int cublasLtMatmulPreferenceSetAttribute(unsigned long long *p, int attr, const void *buf, size_t n)
{
    if (attr != 1 || n != 8)          /* MAX_WORKSPACE_BYTES, uint64 */
        return LT_INVALID;
    memcpy(p, buf, 8);
    return 0;
}

/* What the real library would refuse: shapes that do not chain, types it
 * has no kernel for in this emulation, epilogues fuseeng does not use. */
static int lt_check(const ltdesc *d, const ltlayout *a, const ltlayout *b, const ltlayout *c,
                    const ltlayout *o)
{
    unsigned long long am = d->ta ? a->cols : a->rows, ak = d->ta ? a->rows : a->cols;
    unsigned long long bk = d->tb ? b->cols : b->rows, bn = d->tb ? b->rows : b->cols;
    int ok_t = (a->type == 0 || a->type == 2 || a->type == 14) && a->type == b->type &&
               c->type == o->type && (o->type == 0 || o->type == 2 || o->type == 14);
    int ok_e = d->epi == 1 || d->epi == 2 || d->epi == 4 || d->epi == 6 || d->epi == 32 ||
               d->epi == 36;
    if (!ok_t || !ok_e || d->compute != 68 || d->scale != 0 || am != o->rows || bn != o->cols ||
        ak != bk || c->rows != o->rows || c->cols != o->cols || c->ld != o->ld ||
        a->ld < (long long)(a->rows > 1 ? a->rows : 1) || b->ld < (long long)(b->rows > 1 ? b->rows : 1) ||
        o->ld < (long long)(o->rows > 1 ? o->rows : 1) || a->batch != o->batch ||
        b->batch != o->batch || c->batch != o->batch || c->stride != o->stride)
        return LT_NOT_SUPPORTED;
    return 0;
}

typedef struct { unsigned long long algo[8]; size_t ws; int state; float waves; int reserved[4]; } ltheur;

int cublasLtMatmulAlgoGetHeuristic(void *h, ltdesc *d, ltlayout *a, ltlayout *b, ltlayout *c,
                                   ltlayout *o, unsigned long long *pref, int want, ltheur *res,
                                   int *got)
{
    (void)h, (void)pref;
    *got = 0;
    if (want < 1)
        return LT_INVALID;
    if (lt_check(d, a, b, c, o))
        return LT_NOT_SUPPORTED;
    memset(res, 0, sizeof *res);
    res->algo[0] = 0x1f;              /* any value: handed back to cublasLtMatmul */
    res->waves = 1.0f;
    *got = 1;
    return 0;
}

/* D = act(alpha op(A) op(B) + beta C + bias), column-major, per batch;
 * cuBLASLt's GELU is 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). */
static int lt_exec(const ltcall *k)
{
    const ltlayout *la = &k->l[0], *lb = &k->l[1], *lc = &k->l[2], *lo = &k->l[3];
    long long m = (long long)lo->rows, n = (long long)lo->cols;
    long long kk = (long long)(k->d.ta ? la->rows : la->cols);
    int relu = (k->d.epi & 2) != 0, gelu = (k->d.epi & 32) != 0, bias = (k->d.epi & 4) != 0;
    if (bias && !k->d.bias)
        return LT_INVALID;
    for (int bt = 0; bt < lo->batch; bt++)
        for (long long j = 0; j < n; j++)
            for (long long i = 0; i < m; i++) {
                float acc = 0.0f;
                for (long long l = 0; l < kk; l++)
                    acc += ld(k->a, (int)la->type, bt * la->stride + (k->d.ta ? l + i * la->ld : i + l * la->ld)) *
                           ld(k->b, (int)lb->type, bt * lb->stride + (k->d.tb ? j + l * lb->ld : l + j * lb->ld));
                float v = k->alpha * acc;
                if (k->beta != 0.0f)
                    v += k->beta * ld(k->c, (int)lc->type, bt * lc->stride + i + j * lc->ld);
                if (bias)
                    v += ld(k->d.bias, (int)lo->type, i);
                if (relu)
                    v = v > 0.0f ? v : 0.0f;
                if (gelu)
                    v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
                st(k->dst, (int)lo->type, bt * lo->stride + i + j * lo->ld, v);
            }
    return 0;
}

int cublasLtMatmul(void *h, ltdesc *d, const float *alpha, const void *A, ltlayout *la,
                   const void *B, ltlayout *lb, const float *beta, const void *C, ltlayout *lc,
                   void *D, ltlayout *lo, const void *algo, void *ws, size_t wsn, void *stream)
{
    (void)h, (void)ws, (void)stream;
    if (!algo || wsn > ((size_t)32 << 20) || lt_check(d, la, lb, lc, lo))
        return LT_INVALID;
    ltcall k = {.d = *d, .l = {*la, *lb, *lc, *lo}, .alpha = *alpha, .beta = *beta, .a = A, .b = B,
                .c = C, .dst = D};
    if (capturing)
        return record(&(rec){.kind = 3, .lt = k});
    return lt_exec(&k);
}

int cuGraphLaunch(graph *g, void *s)
{
    for (int i = 0; i < g->n; i++) {
        const rec *r = &g->r[i];
        int rc = r->kind == 3 ? lt_exec(&r->lt)
               : r->kind == 0 ? cuLaunchKernel(r->f, r->gx, 1, 1, r->bx, 1, 1, 0, s, r->params, NULL)
               : r->kind == 1 ? cuMemsetD8_v2(r->d, r->v, r->n)
               : cublasGemmStridedBatchedEx(NULL, r->gi[0], r->gi[1], r->gi[2], r->gi[3], r->gi[4],
                                            &r->ab[0], r->gemm[0], r->gi[5], r->gi[6], r->gl[0],
                                            r->gemm[1], r->gi[7], r->gi[8], r->gl[1], &r->ab[1],
                                            r->gemm[2], r->gi[9], r->gi[10], r->gl[2], r->gi[11], 0, 0);
        if (rc)
            return rc;
    }
    return 0;
}
