/* bench_eager.c: whole models executed on this CPU three ways, in one run:
 * unfused, under the best of a few shipped policies, and in PyTorch eager
 * mode (scripts/torch_eager.py: the model a user would run instead, same
 * shapes, dtypes and threads).
 *
 * Target (issue 16): for every example model and real export, the best
 * policy's plan is at least 1.2x faster than the unfused plan and faster
 * than PyTorch eager. The fuseeng figures are `run --execute` medians of
 * interleaved plan/unfused rounds; PyTorch's is the median of its own runs,
 * measured right after, so the ratios compare one machine state as far as
 * two processes can.
 *
 * The ceiling column is Amdahl's bound from the same runs: the unfused
 * plan's time over its time in library ops (matmul, conv2d, sdpa), which
 * every plan runs on the same kernels. A model whose ceiling is under 1.2x
 * cannot meet the target by fusion on this host, whatever the policy; the
 * target column says so rather than only MISSED.
 *
 *   BENCH_EAGER_MODELS=a.json,b.json    models (default: examples/models and
 *                                       $SHARED/models)
 *   BENCH_EAGER_POLICIES=p,q            policies tried (default below)
 *   BENCH_EAGER_BUDGET=S                seconds of timed runs per measurement */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define PYTHON "/usr/bin/python3"

static int split(char *list, const char **out, int cap)
{
    int n = 0;
    for (char *t = strtok(list, ","); t && n < cap; t = strtok(NULL, ","))
        out[n++] = t;
    return n;
}

int main(void)
{
    const char *shared = getenv("SHARED") ? getenv("SHARED") : "../shared";
    const char *budget = getenv("BENCH_EAGER_BUDGET") ? getenv("BENCH_EAGER_BUDGET") : "1";
    char pol_buf[1024], mod_buf[8192], pattern[4096];
    snprintf(pol_buf, sizeof pol_buf, "%s",
             getenv("BENCH_EAGER_POLICIES") ? getenv("BENCH_EAGER_POLICIES")
                                            : "fuse_all,gcu_tlf,tvm_fuseops,xla_priority");
    const char *policies[32], *models[256];
    int npol = split(pol_buf, policies, 32), nmod = 0;
    glob_t gl = {0};
    if (getenv("BENCH_EAGER_MODELS")) {
        snprintf(mod_buf, sizeof mod_buf, "%s", getenv("BENCH_EAGER_MODELS"));
        nmod = split(mod_buf, models, 256);
    } else {
        snprintf(pattern, sizeof pattern, "%s/models/*.json", shared);
        if (glob("examples/models/*.json", 0, NULL, &gl) != 0) {
            fprintf(stderr, "bench_eager: run from the repository root (no examples/models)\n");
            return 1;
        }
        glob(pattern, GLOB_APPEND, NULL, &gl);
        for (size_t i = 0; i < gl.gl_pathc && nmod < 256; i++)
            models[nmod++] = gl.gl_pathv[i];
    }
    if (system(PYTHON " -c 'import torch' 2>/dev/null") != 0) {
        printf("eager: skipped: %s has no torch (Debian: python3-torch)\n", PYTHON);
        return 0;
    }
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char errpath[] = "/tmp/bench_eager_XXXXXX";   /* PyTorch's stderr, said when it fails */
    int efd = mkstemp(errpath);
    if (efd < 0) {
        perror("bench_eager: mkstemp");
        return 1;
    }
    close(efd);
    printf("%-22s %11s %11s %-16s %11s %8s %8s %8s  %s\n", "model", "unfused ms", "fused ms",
           "best policy", "eager ms", "vs unf", "ceiling", "vs eager", "target");
    int met = 0, rows = 0;
    for (int m = 0; m < nmod; m++) {
        double t0 = fe_clock_s(), best = -1, unfused = -1, ceiling = -1;
        const char *best_pol = "-";
        char cmd[8192];
        for (int k = 0; k < npol; k++) {
            snprintf(cmd, sizeof cmd, "%s/fuseeng run '%s' --policy %s --execute --budget %s "
                     "--json 2>/dev/null", build, models[m], policies[k], budget);
            json_t *r = run_json(cmd);
            double f = json_num(r, "summary.executed.plan.median_ms");
            double u = json_num(r, "summary.executed.unfused.median_ms");
            double c = json_num(r, "summary.executed.ceiling");
            json_decref(r);
            if (f > 0 && (best < 0 || f < best))
                best = f, best_pol = policies[k];
            /* the unfused plan is timed beside every policy: keep its best,
             * and the ceiling measured in the same run */
            if (u > 0 && (unfused < 0 || u < unfused))
                unfused = u, ceiling = c;
        }
        snprintf(cmd, sizeof cmd, PYTHON " scripts/torch_eager.py '%s' --time --budget %s "
                 "--json 2>'%s'", models[m], budget, errpath);
        json_t *e = run_json(cmd);
        double eager = json_num(e, "ms");
        json_decref(e);
        char why[512] = "";
        FILE *ef = eager < 0 ? fopen(errpath, "r") : NULL;
        if (ef) {   /* its last line: the error, or a traceback's exception */
            char line[512];
            snprintf(why, sizeof why, "it exited without a message\n");
            while (fgets(line, sizeof line, ef))
                if (line[0] != '\n')
                    snprintf(why, sizeof why, "%s", line);
            fclose(ef);
        }
        char name[64];
        const char *base = strrchr(models[m], '/') ? strrchr(models[m], '/') + 1 : models[m];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(base, "."), base);
        if (best < 0) {
            printf("%-22s could not be executed by fuseeng (run it with --execute to see why)\n",
                   name);
            continue;
        }
        int ok = best * 1.2 <= unfused && (eager < 0 || best < eager);
        char eager_s[32] = "n/a", ratio_s[32] = "n/a", ceil_s[32] = "-", target[64];
        if (ceiling > 0)
            snprintf(ceil_s, sizeof ceil_s, "%.2fx", ceiling);
        snprintf(target, sizeof target, "%s", ok ? "met" : "MISSED");
        if (!ok && ceiling > 0 && ceiling < 1.2)
            snprintf(target, sizeof target, "MISSED (out of reach: ceiling %.2fx)", ceiling);
        if (eager > 0) {
            snprintf(eager_s, sizeof eager_s, "%.2f", eager);
            snprintf(ratio_s, sizeof ratio_s, "%.2fx", eager / best);
        }
        printf("%-22s %11.2f %11.2f %-16s %11s %7.2fx %8s %8s  %s  (%.0f s)\n", name, unfused,
               best, best_pol, eager_s, unfused / best, ceil_s, ratio_s, target, fe_clock_s() - t0);
        if (why[0])
            printf("%-22s PyTorch eager failed: %s", "", why);
        fflush(stdout);
        met += ok;
        rows++;
    }
    printf("eager: %d of %d models meet the target (fused >= 1.2x unfused and faster than "
           "PyTorch eager); ratios > 1 mean fuseeng's plan is faster\n", met, rows);
    unlink(errpath);
    globfree(&gl);
    return 0;
}
