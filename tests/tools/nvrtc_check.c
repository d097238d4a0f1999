/* nvrtc_check.c: compile CUDA sources with NVRTC exactly as fuseeng does
 * (kernels/gpu/cuda.c: --gpu-architecture=sm_XY --std=c++17
 * -default-device), for a GPU that need not be here: NVRTC compiles
 * without a driver. tests/cli/cuda_nvrtc.sh runs it on every generated
 * kernel where a CUDA toolkit is installed.
 *
 *   nvrtc_check sm_90 FILE.cu...
 *
 * Prints, per file, "ok FILE R registers, S spill bytes" (ptxas's own
 * count, asked for with -Xptxas -v) or "error FILE" and NVRTC's log;
 * exits 1 if any file failed, 2 without NVRTC. Built by the test with cc,
 * not by the Makefile: nothing of CUDA is needed to build fuseeng.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prog *nvrtcProgram;
static int (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                     const char *const *);
static int (*compile)(nvrtcProgram, int, const char *const *);
static int (*logsize)(nvrtcProgram, size_t *);
static int (*getlog)(nvrtcProgram, char *);
static int (*destroy)(nvrtcProgram *);

static void *open_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
    const char *home = getenv("CUDA_HOME");
    char buf[1024];
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW);
        if (h)
            return h;
    }
    for (int d = 0; d < 2; d++)
        for (int i = 0; names[i]; i++) {
            snprintf(buf, sizeof buf, "%s/lib64/%s", d ? "/usr/local/cuda" : home ? home : "/nonexistent",
                     names[i]);
            void *h = dlopen(buf, RTLD_NOW);
            if (h)
                return h;
        }
    return NULL;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long n;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n)
        b[n] = 0;
    else {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    return b;
}

/* The numbers after "Used" (registers) and before "bytes spill stores". */
static void usage(const char *log, int *regs, int *spill)
{
    const char *u = strstr(log, "Used "), *s = strstr(log, "bytes spill stores");
    *regs = u ? atoi(u + 5) : -1;
    *spill = -1;
    if (s) {
        while (s > log && s[-1] == ' ')
            s--;
        while (s > log && s[-1] >= '0' && s[-1] <= '9')
            s--;
        *spill = atoi(s);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: nvrtc_check sm_XY FILE.cu...\n");
        return 2;
    }
    void *h = open_nvrtc();
    if (!h || !(*(void **)&create = dlsym(h, "nvrtcCreateProgram")) ||
        !(*(void **)&compile = dlsym(h, "nvrtcCompileProgram")) ||
        !(*(void **)&logsize = dlsym(h, "nvrtcGetProgramLogSize")) ||
        !(*(void **)&getlog = dlsym(h, "nvrtcGetProgramLog")) ||
        !(*(void **)&destroy = dlsym(h, "nvrtcDestroyProgram"))) {
        fprintf(stderr, "nvrtc_check: no NVRTC (libnvrtc.so.13 or .12)\n");
        return 2;
    }
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s", argv[1]);
    const char *opts[] = {arch, "--std=c++17", "-default-device", "-Xptxas", "-v"};
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        char *src = read_all(argv[i]);
        nvrtcProgram p;
        size_t n = 0;
        if (!src || create(&p, src, "fuseeng_group.cu", 0, NULL, NULL)) {
            printf("error %s: unreadable\n", argv[i]);
            bad = 1;
            free(src);
            continue;
        }
        int r = compile(p, 5, opts);
        logsize(p, &n);
        char *log = malloc(n + 1);
        if (log) {
            log[0] = 0;
            getlog(p, log);
            log[n] = 0;
        }
        if (r) {
            printf("error %s\n%s\n", argv[i], log ? log : "");
            bad = 1;
        } else {
            int regs, spill;
            usage(log ? log : "", &regs, &spill);
            printf("ok %s %d registers, %d spill bytes\n", argv[i], regs, spill);
        }
        free(log);
        destroy(&p);
        free(src);
    }
    return bad;
}
