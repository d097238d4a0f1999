/* bench_ab.c: a simulated A/B of 4 policies over every example model and
 * the real exports (SHARED/models, ../shared by default): the whole of
 * fuseeng ab, suite checks included, timed end to end.
 *
 * Target (issue 14): at most 3 s on this machine. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fuseeng_cli.h"

#include "bench_util.h"


int main(void)
{
    const char *shared = getenv("SHARED") ? getenv("SHARED") : "../shared";
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/models/*.json", shared);
    glob_t gl;
    int found = glob("examples/models/*.json", 0, NULL, &gl) == 0;
    int exports = found && glob(pattern, GLOB_APPEND, NULL, &gl) == 0;
    if (!found) {
        fprintf(stderr, "bench_ab: run from the repository root (no examples/models)\n");
        return 1;
    }
    const char *policies[] = {"no_fusion", "fuse_all", "gcu_tlf", "memory_aware"};
    fe_error err = {0};
    double t0 = fe_clock_s();
    fe_engine *e = fe_engine_new(NULL, &err);
    fe_ab_suite_options so = {(int)gl.gl_pathc, (const char *const *)gl.gl_pathv, 4, policies,
                              0, NULL, 0, NULL, 0, NULL, NULL};
    fe_ab_suite *s = e ? fe_ab_suite_new(e, &so, &err) : NULL;
    fe_ab *ab = s ? fe_engine_ab_suite(e, s, NULL, &err) : NULL;
    char *text = ab ? fe_ab_format(ab, FE_FORMAT_JSON, &err) : NULL;
    double t = fe_clock_s() - t0;
    int rc = text ? 0 : 1;
    if (text)
        printf("ab: 4 policies x %d models (%s), simulated, with the suite checks and the "
               "JSON report: %.3f s (target <= 3 s)%s\n", fe_ab_suite_rows(s),
               exports ? "examples and real exports" : "examples only: no real exports found",
               t, t <= 3 ? "" : "  ABOVE TARGET");
    else
        fprintf(stderr, "bench_ab: %s\n", err.message);
    fe_free(text);
    fe_ab_free(ab);
    fe_ab_suite_free(s);
    fe_engine_free(e);
    globfree(&gl);
    return rc;
}
