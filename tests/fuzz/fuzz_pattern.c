/* fuzz_pattern.c: the op-pattern DSL (lua/fuseeng/pattern.lua, LPeg) and the
 * patterns driver that matches its compiled patterns (core/script/
 * driver_patterns.c): the input is a list of pattern sources separated by
 * NUL bytes, made into a patterns-driver policy that fuses every legal
 * candidate, and run on the fixed small model. The sources reach the Lua
 * side byte for byte (each byte written as a decimal escape). */
#include "fuzz.h"

#define MAX_PATTERNS 8

static const char head[] =
    "local fe = require \"fuseeng\"\n"
    "return fe.policy { name = \"fuzz_pattern\", driver = \"patterns\", patterns = {";
static const char tail[] = "} }\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Each byte becomes at most "\ddd"; separators ",\"\"" per pattern. */
    size_t cap = sizeof head + sizeof tail + 4 * size + 4 * MAX_PATTERNS + 8;
    char *src = malloc(cap);
    if (!src)
        return 0;
    size_t at = (size_t)snprintf(src, cap, "%s\"", head);
    int patterns = 1;
    for (size_t i = 0; i < size; i++) {
        if (data[i] == 0) {
            if (patterns == MAX_PATTERNS)
                break;
            patterns++;
            at += (size_t)snprintf(src + at, cap - at, "\",\"");
        } else if (data[i] >= 0x20 && data[i] < 0x7f && data[i] != '"' && data[i] != '\\') {
            src[at++] = (char)data[i];
        } else {
            at += (size_t)snprintf(src + at, cap - at, "\\%03u", data[i]);
        }
    }
    at += (size_t)snprintf(src + at, cap - at, "\"%s", tail);
    fe_engine *e = fz_engine();
    fe_error err = {0};
    fe_policy *pol = fe_engine_load_policy_buffer(e, src, at, "fuzz_pattern.lua", &err);
    free(src);
    if (!pol) {
        fz_check_error("fe_engine_load_policy_buffer", &err);
        return 0;
    }
    fe_plan *p = fe_policy_plan(pol, fz_model(), NULL, &err);
    if (p) {
        char *json = fe_plan_to_json(p, &err);
        if (!json)
            fz_check_error("fe_plan_to_json", &err);
        fe_free(json);
        fe_plan_free(p);
    } else {
        fz_check_error("fe_policy_plan", &err);
    }
    fe_policy_free(pol);
    return 0;
}
