/* api_exec.c: a plan executed on this CPU's kernels against the unfused
 * reference (fuseeng run --execute): agreement output by output and the
 * measured times (core/exec/execute.c does the work). */
#include <stdlib.h>

#include "api.h"

fe_result *fe_plan_execute(const fe_plan *p, const fe_execute_options *o, fe_error *err)
{
    if (fe_api_null(p, "fe_plan_execute", "the plan", err))
        return NULL;
    if (o && (o->budget < 0 || o->budget > 86400 || o->rtol < 0 || o->rtol >= 1 ||
              o->expect_rtol < 0 || o->expect_rtol >= 1 ||
              (o->device != FE_DEVICE_CPU && o->device != FE_DEVICE_CUDA))) {
        fe_error_set(err, FE_EINPUT, "fe_plan_execute: budget %g s must be in [0, 86400], "
                     "rtol %g and expect_rtol %g in [0, 1) and device %d FE_DEVICE_CPU or "
                     "FE_DEVICE_CUDA", o->budget, o->rtol, o->expect_rtol, o->device);
        return NULL;
    }
    fe_result *x = calloc(1, sizeof *x);
    if (!x) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    fe_execution_opts eo = {0};
    if (o)
        eo = (fe_execution_opts){o->seed, o->budget, o->no_timing, o->rtol, o->weights, o->inputs,
                                 o->expect, o->expect_rtol, o->device};
    if (fe_execute_plan(p, &eo, &x->x, err) != FE_OK) {
        free(x);
        return NULL;
    }
    x->plan = p;
    return x;
}

int fe_result_ok(const fe_result *x)
{
    return x && x->x.cmp.ok;
}

int fe_result_check(const fe_result *x, fe_error *err)
{
    if (fe_api_null(x, "fe_result_check", "the result", err))
        return FE_EINPUT;
    return fe_execution_check(x->plan, &x->x, err);
}

int fe_result_save_outputs(const fe_result *x, const char *path, fe_error *err)
{
    if (fe_api_null(x, "fe_result_save_outputs", "the result", err) ||
        fe_api_null(path, "fe_result_save_outputs", "the path", err))
        return FE_EINPUT;
    return fe_df_save(x->plan->g, x->x.ref, path, err);
}

double fe_result_ms(const fe_result *x, int unfused)
{
    if (!x || !x->x.timed)
        return 0;
    return unfused ? x->x.base_st.median_ms : x->x.plan_st.median_ms;
}

static int write_result(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    const fe_result *x = obj;
    (void)arg, (void)err;
    if ((format & FE_FORMAT_MASK) == FE_FORMAT_JSON) {
        fe_jw w;
        fe_jw_init(&w, f, 2);
        fe_execution_json(x->plan, &x->x, &w);
    } else {
        fe_execution_text(x->plan, &x->x, f);
    }
    return FE_OK;
}

char *fe_result_format(const fe_result *x, int format, fe_error *err)
{
    if (fe_api_null(x, "fe_result_format", "the result", err))
        return NULL;
    return fe_api_text(write_result, x, NULL, format, err);
}

void fe_result_free(fe_result *x)
{
    if (!x)
        return;
    fe_execution_free(&x->x);
    free(x);
}

const char *fe_threads(void)
{
    return fe_exec_threads();
}
