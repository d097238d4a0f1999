/* datafiles.h: safetensors files matched to a graph: the weights and the
 * inputs a session runs with (exec.h), the expected outputs a run is
 * compared with (run --execute --expect), a run's outputs written out
 * (--save-outputs).
 *
 * A file matches a graph for a role when it holds exactly the graph's
 * tensors of that role (weights: tensors of kind weight; inputs: the graph
 * inputs; outputs: the graph outputs), by name, each of the graph's dtype
 * and of its shape at the graph's dims (after --dim). Anything else is
 * FE_EINPUT naming the file and the first tensor that is missing, extra, or
 * of another dtype or shape.
 */
#ifndef FE_DATAFILES_H
#define FE_DATAFILES_H

#include <stdio.h>

#include "compare.h"
#include "exec.h"
#include "jsonw.h"
#include "safetensors.h"

typedef enum fe_df_role { FE_DF_WEIGHTS, FE_DF_INPUTS, FE_DF_OUTPUTS } fe_df_role;

/* FE_OK if f matches g for role, else FE_EINPUT (see above). */
int fe_df_check(const fe_graph *g, const fe_st_file *f, int role, fe_error *err);

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
