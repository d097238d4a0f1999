/* fuzz_model.c: the model reader (core/ir/load.c): bytes as a model file,
 * then what `fuseeng check` does with a model it accepts (the text and JSON
 * summaries), the unfused plan every command starts from, as JSON and
 * simulated on the default machine, and a plan by gcu_tlf (loaded once),
 * simulated too: whatever check accepts, the other commands must take. */
#include "fuzz.h"

static fe_policy *policy;

static void free_policy(void)
{
    fe_policy_free(policy);
    policy = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fe_error err = {0};
    fe_model *m = fe_model_load_buffer((const char *)data, size, "fuzz.json", NULL, &err);
    if (!m) {
        fz_check_error("fe_model_load_buffer", &err);
        return 0;
    }
    for (int format = FE_FORMAT_TEXT; format <= FE_FORMAT_JSON; format++)
        fz_text(fe_model_format(m, format, &err), "fe_model_format", &err);
    fe_plan *p = fe_model_unfused(m, &err);
    if (p) {
        fz_text(fe_plan_to_json(p, &err), "fe_plan_to_json", &err);
        fz_simulate(fz_engine(), p, NULL);
    } else {
        fz_check_error("fe_model_unfused", &err);
    }
    fe_plan_free(p);
    if (!policy) {
        if (!(policy = fe_engine_load_policy(fz_engine(), "gcu_tlf", &err))) {
            fprintf(stderr, "fuzz: %s\n", err.message);
            exit(1);
        }
        atexit(free_policy);   /* after the engine's: runs before it */
    }
    if ((p = fe_policy_plan(policy, m, NULL, &err)))
        fz_simulate(fz_engine(), p, NULL);
    else
        fz_check_error("fe_policy_plan", &err);
    fe_plan_free(p);
    fe_model_free(m);
    return 0;
}
