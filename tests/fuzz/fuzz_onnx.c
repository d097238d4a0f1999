/* fuzz_onnx.c: the ONNX importer (core/import: the protobuf reader, the
 * checks of names, arities, attributes and dims, constant folding, the op
 * mapping, the builder, the writing of the model and weights files): bytes
 * as an .onnx file, imported as `fuseeng import` does.
 *
 * What it holds the importer to, beyond no crash, leak or sanitizer report:
 *  - a refused input has a message (fz_check_error) and leaves no file
 *    behind: neither the model, nor the weights, nor a temporary file;
 *  - an accepted one leaves both files, and what import writes the rest of
 *    fuseeng reads: the model file loads as `fuseeng check` loads it, and
 *    the weights file matches it as `run --weights` requires.
 * The files go to a directory of this process's own, emptied after every
 * input. */
#include <dirent.h>
#include <sys/stat.h>

#include "datacheck.h"
#include "fuzz.h"
#include "api.h"
#include "safetensors.h"

static char fz_dir[64], fz_model_out[96], fz_weights_out[96];

static void fz_rmdir(void)
{
    unlink(fz_model_out);
    unlink(fz_weights_out);
    rmdir(fz_dir);
}

/* The private output directory, made once. */
static int fz_outdir(void)
{
    if (fz_dir[0])
        return 0;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fz_dir, sizeof fz_dir, "%s/fuseeng-fuzz-onnx-%ld", base, (long)getpid());
    if (mkdir(fz_dir, 0700) != 0 && access(fz_dir, W_OK) != 0) {
        fprintf(stderr, "fuzz: cannot make %s\n", fz_dir);
        exit(1);
    }
    snprintf(fz_model_out, sizeof fz_model_out, "%s/m.json", fz_dir);
    snprintf(fz_weights_out, sizeof fz_weights_out, "%s/m.safetensors", fz_dir);
    atexit(fz_rmdir);
    return 0;
}

/* The names in the output directory other than the two outputs; aborts
 * naming the first stray file (a temporary file left behind). */
static void fz_no_strays(void)
{
    DIR *d = opendir(fz_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "m.json") ||
            !strcmp(e->d_name, "m.safetensors"))
            continue;
        fprintf(stderr, "fuzz: import left '%s' in %s\n", e->d_name, fz_dir);
        abort();
    }
    if (d)
        closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write(0, ".onnx", data, size);
    if (!path || fz_outdir())
        return 0;
    unlink(fz_model_out);
    unlink(fz_weights_out);
    static const char *const dim_names[] = {"N"};
    static const int64_t dim_values[] = {2};
    fe_import_options o = {fz_weights_out, 0, dim_names, dim_values};
    /* Every other input sets --dim N=2: a dim the model may not have. */
    o.ndims = size % 2;
    fe_error err = {0};
    char *notes = NULL;
    int rc = fe_import_onnx(path, fz_model_out, &o, &notes, &err);
    fe_free(notes);
    fz_no_strays();
    int have_model = access(fz_model_out, F_OK) == 0, have_weights = access(fz_weights_out, F_OK) == 0;
    if (rc != FE_OK) {
        fz_check_error("fe_import_onnx", &err);
        if (have_model || have_weights) {
            fprintf(stderr, "fuzz: a refused import left %s\n", have_model ? "the model" : "the weights");
            abort();
        }
        return 0;
    }
    if (!have_model || !have_weights) {
        fprintf(stderr, "fuzz: an import that succeeded wrote no %s\n", have_model ? "weights" : "model");
        abort();
    }
    fe_model *m = fe_model_load_file(fz_model_out, NULL, &err);
    if (!m) {
        fprintf(stderr, "fuzz: the imported model does not load: %s\n", err.message);
        abort();
    }
    fe_st_file *w = fe_st_open(fz_weights_out, &err);
    if (!w || fe_datacheck(m->g, w, FE_DATA_WEIGHTS, &err) != FE_OK) {
        fprintf(stderr, "fuzz: the imported weights do not match the model: %s\n", err.message);
        abort();
    }
    fe_st_close(w);
    fe_model_free(m);
    return 0;
}
