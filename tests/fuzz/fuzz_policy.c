/* fuzz_policy.c: the policy runtime (core/script: sandbox, policy loading,
 * the drivers, ctx): bytes as a policy's Lua source, loaded in the engine's
 * sandbox and run on the fixed small model under the harness's instruction
 * budget, memory cap and time limit (fuzz.h), so a looping input ends fast.
 * A plan it makes is listed decision by decision and simulated. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fe_error err = {0};
    fe_policy *pol = fe_engine_load_policy_buffer(fz_engine(), (const char *)data, size,
                                                  "fuzz.lua", &err);
    if (!pol) {
        fz_check_error("fe_engine_load_policy_buffer", &err);
        return 0;
    }
    fe_plan_stats st;
    fe_plan *p = fe_policy_plan(pol, fz_model(), &st, &err);
    if (p) {
        fz_text(fe_plan_format(p, &st, NULL, NULL, FE_FORMAT_DECISIONS, &err), "fe_plan_format",
                &err);
        fz_simulate(fz_engine(), p, NULL);
    } else {
        fz_check_error("fe_policy_plan", &err);
    }
    fe_plan_free(p);
    fe_policy_free(pol);
    return 0;
}
