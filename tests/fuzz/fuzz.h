/* fuzz.h: what the harnesses in tests/fuzz share: the input written to a
 * file of this process (the readers under test take paths, as the fuseeng
 * command gives them), one engine kept across inputs under tight Lua limits,
 * and the fixed small model (tests/fuzz/model.json).
 *
 * Each harness defines LLVMFuzzerTestOneInput. It is built twice: with
 * clang -fsanitize=fuzzer for `make fuzz` (tests/fuzz/fuzz.sh), and with the
 * project's compiler plus replay.c for `make test`, which feeds it the kept
 * regression inputs and the seeds. The harnesses run from the repository's
 * top directory. Included by one harness file per program, so its helpers
 * are static. */
#ifndef FE_FUZZ_H
#define FE_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuseeng_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MODEL "tests/fuzz/model.json"

/* Lua limits per run: small enough that a looping input stops in well
 * under a second even under ASan, large enough for every shipped policy
 * on the small model. */
#define FZ_INSTRUCTIONS 5000000
#define FZ_MEMORY (INT64_C(64) << 20)
#define FZ_SECONDS 5.0

static char fz_paths[2][64];

static inline void fz_cleanup(void)
{
    for (int i = 0; i < 2; i++)
        if (fz_paths[i][0])
            unlink(fz_paths[i]);
}

/* A path private to this process ending in suffix; slot 0 or 1. Removed at
 * exit. */
static inline const char *fz_path(int slot, const char *suffix)
{
    if (!fz_paths[slot][0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fz_paths[slot], sizeof fz_paths[slot], "%s/fuseeng-fuzz-%ld-%d%s",
                 dir && *dir && strlen(dir) < 24 ? dir : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid(), slot, suffix);
        atexit(fz_cleanup);
    }
    return fz_paths[slot];
}

/* Write the input to slot's file; its path, or NULL (then skip the input). */
static inline const char *fz_write(int slot, const char *suffix, const uint8_t *data, size_t size)
{
    const char *path = fz_path(slot, suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || n != size)
        return NULL;
    return path;
}

static fe_engine *fz_the_engine;

static inline void fz_free_engine(void)
{
    fe_engine_free(fz_the_engine);
    fz_the_engine = NULL;
}

/* The engine kept across inputs (the Lua state is reused: creating one per
 * input would spend the time on loading the fuseeng library). Exits if it
 * cannot be made: the harness is then run from the wrong directory. */
static inline fe_engine *fz_engine(void)
{
    if (fz_the_engine)
        return fz_the_engine;
    fe_engine_options o = {0};
    o.max_instructions = FZ_INSTRUCTIONS;
    o.max_memory = FZ_MEMORY;
    o.max_seconds = FZ_SECONDS;
    o.bench_budget = 0.001;
    fe_error err = {0};
    fz_the_engine = fe_engine_new(&o, &err);
    if (!fz_the_engine) {
        fprintf(stderr, "fuzz: cannot make an engine: %s\n", err.message);
        exit(1);
    }
    atexit(fz_free_engine);
    return fz_the_engine;
}

static fe_model *fz_the_model;

static inline void fz_free_model(void)
{
    fe_model_free(fz_the_model);
    fz_the_model = NULL;
}

/* The fixed small model, loaded once. */
static inline fe_model *fz_model(void)
{
    if (fz_the_model)
        return fz_the_model;
    fe_error err = {0};
    fz_the_model = fe_model_load_file(FZ_MODEL, NULL, &err);
    if (!fz_the_model) {
        fprintf(stderr, "fuzz: %s (run from the repository's top directory)\n", err.message);
        exit(1);
    }
    atexit(fz_free_model);
    return fz_the_model;
}

/* Every failing call must leave a message: an error without one is a bug
 * of the engine (the user would see an empty line). FUZZ_VERBOSE=1 prints
 * the messages (to see what the inputs run into). */
static inline void fz_check_error(const char *what, const fe_error *err)
{
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz: %s: %s\n", what, err->message);
    if (err->code == FE_OK || !err->message[0]) {
        fprintf(stderr, "fuzz: %s failed with code %d and message '%s'\n", what, err->code,
                err->message);
        abort();
    }
}

/* Text a call returned for people or files: freed, or its failure checked. */
static inline void fz_text(char *text, const char *what, const fe_error *err)
{
    if (!text)
        fz_check_error(what, err);
    fe_free(text);
}

/* Simulate p on e's machine against unfused and format the report as text
 * and JSON with every group (s, the plan file p came from, may be NULL). */
static inline void fz_simulate(fe_engine *e, const fe_plan *p, const fe_saved_plan *s)
{
    fe_error err = {0};
    fe_report *r = fe_engine_simulate(e, p, &err);
    if (!r) {
        fz_check_error("fe_engine_simulate", &err);
        return;
    }
    for (int format = FE_FORMAT_TEXT; format <= FE_FORMAT_JSON; format++)
        fz_text(fe_report_format(r, s, format | FE_WITH_GROUPS, &err), "fe_report_format", &err);
    fe_report_free(r);
}

#endif
