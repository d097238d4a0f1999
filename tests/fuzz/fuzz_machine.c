/* fuzz_machine.c: the machine-file loader (core/script/machine_file.c and
 * the checks of core/sim/machine.c): bytes as a machine file (Lua, run in
 * the engine's sandbox under its instruction budget and memory cap); a
 * machine it accepts simulates the fixed small model's unfused plan, so the
 * cost model meets every value the checks let through. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write(0, ".lua", data, size);
    if (!path)
        return 0;
    fe_error err = {0};
    if (fe_engine_set_machine(fz_engine(), path, &err) != FE_OK) {
        fz_check_error("fe_engine_set_machine", &err);
        return 0;
    }
    fe_plan *p = fe_model_unfused(fz_model(), &err);
    if (p)
        fz_simulate(fz_engine(), p, NULL);
    else
        fz_check_error("fe_model_unfused", &err);
    fe_plan_free(p);
    return 0;
}
