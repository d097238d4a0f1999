/* bench_execute.c: wall time and memory of `fuseeng run --execute` on the
 * 7B 2-layer export at S=512 (issue 16, "Fast enough to use": at most 30 s
 * wall, peak memory at most 1.5x the model's floor).
 *
 * Opt-in: the run takes 30 s on a quiet two-core machine and minutes on a
 * busy one, so it runs only with FE_BENCH_7B=1 (the model path from
 * FE_BENCH_7B_MODEL, default ../shared/models/llama2-7b-2l-sdpa.json). The
 * figures come from the command's own JSON (peak_rss_bytes, floor_bytes,
 * check_ms, the plan's median and rounds); the wall time is the whole
 * process, as a user waits for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The number after "key": at its first occurrence past from, or -1. */
static double num(const char *json, const char *from, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(from ? from : json, pat);
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

int main(void)
{
    const char *on = getenv("FE_BENCH_7B"), *model = getenv("FE_BENCH_7B_MODEL");
    const char *build = getenv("BUILD");
    if (!on || strcmp(on, "1") != 0) {
        printf("7B 2-layer run --execute: skipped (set FE_BENCH_7B=1; it takes 30 s or more)\n");
        return 0;
    }
    if (!model)
        model = "../shared/models/llama2-7b-2l-sdpa.json";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/fuseeng run '%s' --policy policies/fuse_all.lua --execute --json",
             build ? build : "build", model);
    size_t cap = 1 << 20, n = 0;
    char *out = malloc(cap);
    if (!out)
        return 1;
    double t0 = now();
    FILE *f = popen(cmd, "r");
    if (!f) {
        fprintf(stderr, "bench_execute: cannot run %s\n", cmd);
        return 1;
    }
    for (size_t k; (k = fread(out + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *o = realloc(out, cap *= 2);
            if (!o)
                return 1;
            out = o;
        }
    }
    out[n] = 0;
    int rc = pclose(f);
    double wall = now() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench_execute: %s failed (status %d)\n", cmd, rc);
        return 1;
    }
    const char *ex = strstr(out, "\"executed\"");
    const char *plan = ex ? strstr(ex, "\"plan\"") : NULL;
    const char *unf = ex ? strstr(ex, "\"unfused\": {") : NULL;
    double rss = num(out, ex, "peak_rss_bytes"), fl = num(out, ex, "floor_bytes");
    printf("7B 2-layer run --execute (S=512, fuse_all): %.1f s wall (target <= 30 s)\n", wall);
    printf("  check pass (reference + plan)   %10.0f ms\n", num(out, ex, "check_ms"));
    printf("  plan, median of %2.0f round(s)    %10.0f ms\n", num(out, ex, "rounds"),
           plan ? num(out, plan, "median_ms") : -1);
    printf("  unfused, same rounds            %10.0f ms\n", unf ? num(out, unf, "median_ms") : -1);
    printf("  peak RSS %.3f GB, floor %.3f GB (weights + activations at peak): %.2fx "
           "(target <= 1.5x)\n", rss / 1e9, fl / 1e9, fl > 0 ? rss / fl : 0);
    free(out);
    return 0;
}
