/* cuda_build.c: compiling, caching and loading generated kernels
 * (cuda_build.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "cuda_build.h"
#include "u64map.h"

static char cache_dir[1024];
static int cache_ready;

/* mkdir -p of path; 0 when it exists afterwards. */
static int make_dirs(char *path)
{
    for (char *s = path + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(path, 0755) && errno != EEXIST) {
                *s = '/';
                return -1;
            }
            *s = '/';
        }
    return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

const char *fe_cuda_cache_dir(void)
{
    if (cache_ready)
        return cache_dir;
    const char *d = getenv("FUSEENG_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    cache_dir[0] = 0;
    if (d && !strcmp(d, "off"))
        ;
    else if (d && *d)
        snprintf(cache_dir, sizeof cache_dir, "%s/cuda", d);
    else if (x && *x)
        snprintf(cache_dir, sizeof cache_dir, "%s/fuseeng/cuda", x);
    else if (h && *h)
        snprintf(cache_dir, sizeof cache_dir, "%s/.cache/fuseeng/cuda", h);
    if (cache_dir[0] && make_dirs(cache_dir))
        cache_dir[0] = 0;   /* an unwritable cache only costs compile time */
    cache_ready = 1;
    return cache_dir;
}

/* The whole file at path, NUL-terminated (caller frees), or NULL. */
static char *read_all(const char *path, size_t *n)
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

/* Write data to path through a temporary file and a rename. */
static void write_atomic(const char *path, const void *data, size_t n)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    int ok = fwrite(data, 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path))
        unlink(tmp);
}

void fe_cuda_dump(const char *src)
{
    static char dir[1024];
    static int ready;
    char path[1100];
    if (!ready) {
        const char *d = getenv("FUSEENG_CUDA_DUMP");
        snprintf(dir, sizeof dir, "%s", d ? d : "");
        if (dir[0] && make_dirs(dir))
            dir[0] = 0;
        ready = 1;
    }
    if (!dir[0] || !src)
        return;
    snprintf(path, sizeof path, "%s/%016llx.cu", dir,
             (unsigned long long)fe_fnv1a(FE_FNV_SEED, src, strlen(src)));
    if (access(path, F_OK))
        write_atomic(path, src, strlen(src));
}

int fe_cuda_kernel_build(fe_cuda_kernel *k, char *src, const fe_cuda_shape *shape, fe_error *err)
{
    const fe_cuda_dev *d = fe_cuda_device();
    const char *dir = fe_cuda_cache_dir();
    char base[1200] = "", path[1300];
    void *img = NULL;
    size_t n = 0;
    double t0 = fe_clock_s();
    int rc;
    memset(k, 0, sizeof *k);
    k->src = src;
    k->shape = *shape;
    if (!d)
        return fe_error_set(err, FE_ERUNTIME, "cuda: the device is not open");
    if (dir[0]) {
        uint64_t h = fe_fnv1a(FE_FNV_SEED, src, strlen(src));
        int tag[3] = {d->cc_major * 10 + d->cc_minor, d->nvrtc_major, d->nvrtc_minor};
        h = fe_fnv1a(h, tag, sizeof tag);
        snprintf(base, sizeof base, "%s/%016llx-sm%d", dir, (unsigned long long)h, tag[0]);
        size_t sn = 0;
        snprintf(path, sizeof path, "%s.cu", base);
        char *old = read_all(path, &sn);
        if (old && !strcmp(old, src)) {
            snprintf(path, sizeof path, "%s.bin", base);
            img = read_all(path, &n);
            k->from_cache = img != NULL;
        }
        free(old);
    }
    if (!img) {
        if ((rc = fe_cuda_compile(src, "fuseeng_group.cu", &img, &n, err)))
            return rc;
        if (base[0]) {
            snprintf(path, sizeof path, "%s.bin", base);
            write_atomic(path, img, n);
            snprintf(path, sizeof path, "%s.cu", base);
            write_atomic(path, src, strlen(src));
        }
    }
    rc = fe_cuda_load(img, &k->mod, err);
    free(img);
    if (!rc)
        rc = fe_cuda_function(k->mod, "fe_kernel", &k->fn, err);
    if (!rc)
        rc = fe_cuda_attrs(k->fn, (int)shape->threads, &k->attr, err);
    if (!rc && k->attr.max_threads < (int)shape->threads)
        rc = fe_error_set(err, FE_ERUNTIME, "cuda: the kernel takes at most %d threads a block, "
                          "launched with %u (registers: %d a thread)", k->attr.max_threads,
                          shape->threads, k->attr.regs);
    k->build_ms = (fe_clock_s() - t0) * 1e3;
    return rc;
}

void fe_cuda_kernel_free(fe_cuda_kernel *k)
{
    fe_cuda_unload(k->mod);
    free(k->src);
    memset(k, 0, sizeof *k);
}
