/* planfile.h: reading a saved plan the way it was made.
 *
 * A plan file records the model it was made for, the dims the model was
 * loaded with and the machine the policy planned for. A plan made at
 * S=8192 on gcu_big describes another program than the same grouping at
 * S=2048 on gcu (other splits, other times), so the commands that read a
 * plan (sim, bench --plan, profile --plan) load the model at the plan's
 * dims and take the plan's machine; --dim and --machine override them. A
 * plan for another model is refused unless the user insists
 * (--ignore-model-name): node names alone could match by accident. */
#ifndef FE_CLI_PLANFILE_H
#define FE_CLI_PLANFILE_H

#include <stdio.h>

#include "cli.h"
#include "jsonw.h"
#include "plan_json.h"
#include "sandbox.h"
#include "sim.h"

typedef struct fe_cli_planfile {
    fe_plan_file pf;                   /* opened by the caller (fe_plan_file_open) */
    const char *planfile;              /* its path */
    const fe_cli_dims *opts;           /* --dim */
    const char *machine_opt;           /* --machine, or NULL */
    int forced;                        /* in: --ignore-model-name; out: it was needed */
} fe_cli_planfile;

/* MODEL loaded at the plan's dims (--dim overriding them), after checking
 * the plan names it. Caller frees; NULL with err set. */
fe_graph *fe_cli_planfile_model(const char *model, fe_cli_planfile *s, fe_error *err);

/* Load into m, in sandbox sb (whose limits the machine file runs under),
 * the machine: --machine, else the plan's (a shipped machine by name, never
 * a path read from the file), else gcu. */
int fe_cli_planfile_machine(const fe_cli_planfile *s, fe_sandbox *sb, fe_machine *m, fe_error *err);

/* Where the dims and the machine came from: text lines to f, or a JSON
 * object. */
void fe_cli_planfile_text(const fe_cli_planfile *s, const fe_graph *g, const fe_machine *m, FILE *f);
void fe_cli_planfile_json(const fe_cli_planfile *s, const fe_graph *g, const fe_machine *m, fe_jw *w);

#endif
