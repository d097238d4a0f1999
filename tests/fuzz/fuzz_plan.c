/* fuzz_plan.c: the plan reader (core/plan/plan_json.c through
 * fe_saved_plan_read): bytes as a plan file for the fixed small model, read
 * at the dims and on the machine it records, as `fuseeng sim` reads it;
 * a plan it accepts is simulated against the unfused plan and reported. The
 * model name is not held against the input (--ignore-model-name), so the
 * mutations reach the groups. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write(0, ".json", data, size);
    if (!path)
        return 0;
    fe_error err = {0};
    fe_read_options o = {0};
    o.ignore_model_name = 1;
    fe_saved_plan *s = fe_saved_plan_read(fz_engine(), path, FZ_MODEL, &o, &err);
    if (!s) {
        fz_check_error("fe_saved_plan_read", &err);
        return 0;
    }
    fz_text(fe_saved_plan_format(s, FE_FORMAT_TEXT, &err), "fe_saved_plan_format", &err);
    fz_simulate(fz_engine(), fe_saved_plan_plan(s), s);
    fz_text(fe_plan_to_json(fe_saved_plan_plan(s), &err), "fe_plan_to_json", &err);
    fe_saved_plan_free(s);
    return 0;
}
