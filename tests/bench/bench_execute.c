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

#include "bench_util.h"

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
    double t0 = fe_clock_s();
    json_t *r = run_json(cmd);
    double wall = fe_clock_s() - t0;
    if (!r) {
        fprintf(stderr, "bench_execute: %s failed\n", cmd);
        return 1;
    }
#define EX(key) json_num(r, "summary.executed." key)
    double rss = EX("peak_rss_bytes"), fl = EX("floor_bytes");
    printf("7B 2-layer run --execute (S=512, fuse_all): %.1f s wall (target <= 30 s)\n", wall);
    printf("  check pass (reference + plan)   %10.0f ms\n", EX("check_ms"));
    printf("  plan, median of %2.0f round(s)    %10.0f ms%s\n", EX("rounds"), EX("plan.median_ms"),
           json_true_at(r, "summary.executed.plan_sample_is_check") ? " (its check run: one "
           "round, which the check pass had warmed)" : "");
    printf("  unfused, same rounds            %10.0f ms\n", EX("unfused.median_ms"));
    printf("  peak RSS %.3f GB, floor %.3f GB (weights + activations at peak): %.2fx "
           "(target <= 1.5x)\n", rss / 1e9, fl / 1e9, fl > 0 ? rss / fl : 0);
#undef EX
    json_decref(r);
    return 0;
}
