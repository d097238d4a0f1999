/* datafiles.h: the safetensors files a command reads or writes beside a
 * run: the weights and the inputs a session runs with (exec.h), the
 * expected outputs a run is compared with (run --execute --expect), a run's
 * outputs written out (--save-outputs). Each file read is matched to the
 * graph first (datacheck.h).
 */
#ifndef FE_DATAFILES_H
#define FE_DATAFILES_H

#include <stdio.h>

#include "compare.h"
#include "datacheck.h"
#include "exec.h"
#include "jsonw.h"
#include "safetensors.h"

/* The files a command reads, each opened (a NULL path: none) and checked
 * against g. FE_OK, or an error with nothing left open. Close with
 * fe_df_close. */
typedef struct fe_df_files {
    fe_st_file *weights, *inputs, *expect;
} fe_df_files;
int fe_df_open(fe_df_files *d, const fe_graph *g, const char *weights, const char *inputs,
               const char *expect, fe_error *err);
void fe_df_close(fe_df_files *d);

/* Where a report's weights and inputs came from: a "data" line of text, or
 * "weights" and "inputs" keys (a path or null) in the open JSON object;
 * nothing when neither came from a file (reports stay as they were). */
void fe_df_text(const fe_df_files *d, FILE *f);
void fe_df_json(const fe_df_files *d, fe_jw *w);

/* Compare r's outputs (got) with f's (the reference, a file matching g's
 * outputs) with relative tolerance rtol, or per output fe_cmp_rtol_expect
 * when rtol <= 0. FE_OK whether or not they agree (cmp->ok); free cmp with
 * fe_cmp_free. */
int fe_df_expect(const fe_graph *g, const fe_exec_result *r, const fe_st_file *f, double rtol,
                 fe_cmp *cmp, fe_error *err);

/* Write r's outputs to path as safetensors, named as in g, whole or not at
 * all. FE_OK or FE_EINPUT / FE_ENOMEM. */
int fe_df_save(const fe_graph *g, const fe_exec_result *r, const char *path, fe_error *err);

#endif
