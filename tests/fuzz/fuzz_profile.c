/* fuzz_profile.c: the profile reader (core/exec/profile.c): bytes as a
 * profile file; one it accepts is looked up for every node of the fixed
 * small model alone and for every run of consecutive nodes (the groups a
 * policy asks about), then written back, and what was written must read
 * again. */
#include "fuzz.h"
#include "api.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write(0, ".json", data, size);
    if (!path)
        return 0;
    fe_error err = {0};
    fe_profile *p = fe_profile_read(path, &err);
    if (!p) {
        fz_check_error("fe_profile_read", &err);
        return 0;
    }
    const fe_graph *g = fz_model()->g;
    int32_t nodes[8];
    for (int32_t i = 0; i < g->nnodes; i++) {
        for (int n = 1; n <= 3 && i + n <= g->nnodes; n++) {
            for (int k = 0; k < n; k++)
                nodes[k] = i + k;   /* a node's id is its topological index */
            fe_profile_lookup out;
            fe_profile_lookup_group(p, g, nodes, n, &out);
        }
    }
    const char *again = fz_path(1, ".json");
    if (fe_profile_write(p, again, "fuzz", &err) == FE_OK) {
        fe_profile *q = fe_profile_read(again, &err);
        if (!q || fe_profile_count(q, 0) != fe_profile_count(p, 0) ||
            fe_profile_count(q, 1) != fe_profile_count(p, 1)) {
            fprintf(stderr, "fuzz: a profile written does not read back the same: %s\n",
                    q ? "other counts" : err.message);
            abort();
        }
        fe_profile_free(q);
    } else {
        fz_check_error("fe_profile_write", &err);
    }
    fe_profile_free(p);
    return 0;
}
