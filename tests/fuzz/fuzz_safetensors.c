/* fuzz_safetensors.c: the safetensors reader (core/ir/safetensors.c) and the
 * matching of data files to a graph (core/exec/datafiles.c): bytes as a
 * safetensors file. One the reader accepts has every tensor's bytes read
 * (a tensor reaching past the file shows under ASan), is matched against
 * the fixed small model as weights, inputs and outputs, and is written back
 * (the tensors of fuseeng's dtypes), which must read again the same. */
#include "datacheck.h"
#include "fuzz.h"
#include "api.h"
#include "safetensors.h"

static volatile unsigned fz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write(0, ".safetensors", data, size);
    if (!path)
        return 0;
    fe_error err = {0};
    fe_st_file *f = fe_st_open(path, &err);
    if (!f) {
        fz_check_error("fe_st_open", &err);
        return 0;
    }
    unsigned sum = 0;
    for (int i = 0; i < fe_st_count(f); i++) {
        const fe_st_tensor *t = fe_st_at(f, i);
        for (int64_t b = 0; b < t->nbytes; b++)
            sum += ((const unsigned char *)t->data)[b];
        if (fe_st_find(f, t->name) != t) {
            fprintf(stderr, "fuzz: tensor %d is not found by its name\n", i);
            abort();
        }
    }
    for (int role = FE_DATA_WEIGHTS; role <= FE_DATA_OUTPUTS; role++)
        if (fe_datacheck(fz_model()->g, f, role, &err) != FE_OK)
            fz_check_error("fe_datacheck", &err);
    const char *again = fz_path(1, ".safetensors");
    fe_st_writer *w = fe_st_writer_new(again, &err);
    int kept = 0;
    for (int i = 0; w && i < fe_st_count(f); i++) {
        const fe_st_tensor *t = fe_st_at(f, i);
        if (t->dtype < 0)
            continue;
        if (fe_st_writer_add(w, t->name, t->dtype, t->rank, t->shape, t->data, t->nbytes, &err)) {
            fz_check_error("fe_st_writer_add", &err);   /* only an empty name is refused */
            continue;
        }
        kept++;
    }
    if (w && fe_st_writer_finish(w, &err) == FE_OK) {
        fe_st_file *g = fe_st_open(again, &err);
        int same = g && fe_st_count(g) == kept;
        for (int i = 0; same && i < fe_st_count(f); i++) {
            const fe_st_tensor *a = fe_st_at(f, i), *b = fe_st_find(g, a->name);
            if (a->dtype < 0 || !*a->name)
                continue;
            same = b && b->dtype == a->dtype && b->rank == a->rank && b->nbytes == a->nbytes &&
                   !memcmp(b->shape, a->shape, sizeof a->shape[0] * (size_t)a->rank) &&
                   (!a->nbytes || !memcmp(b->data, a->data, (size_t)a->nbytes));
        }
        if (!same) {
            fprintf(stderr, "fuzz: a file written does not read back the same: %s\n",
                    g ? "other tensors" : err.message);
            abort();
        }
        fe_st_close(g);
    } else if (w) {
        fz_check_error("fe_st_writer_finish", &err);
    }
    fe_st_close(f);
    fz_sink = sum;   /* keeps the reads */
    return 0;
}
