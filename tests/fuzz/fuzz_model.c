/* fuzz_model.c: the model reader (core/ir/load.c): bytes as a model file,
 * then what `fuseeng check` does with a model it accepts (the text and JSON
 * summaries) and the unfused plan every command starts from, as JSON. */
#include "fuzz.h"

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
    if (p)
        fz_text(fe_plan_to_json(p, &err), "fe_plan_to_json", &err);
    else
        fz_check_error("fe_model_unfused", &err);
    fe_plan_free(p);
    fe_model_free(m);
    return 0;
}
