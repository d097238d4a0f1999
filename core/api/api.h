/* api.h: the objects behind the public handles (fuseeng.h, fuseeng_cli.h),
 * text results, and the few engine internals the rest of core/api needs.
 * The handles of engines, policies and models wrap the script layer's
 * planner and policy references and the IR's graph; their files
 * (api_engine.c, api_policy.c, api_model_load.c) are the ones that reach
 * into them. A public fe_plan is core/plan's plan itself. */
#ifndef FE_API_H
#define FE_API_H

#include <stdio.h>

#include "execute.h"
#include "fuseeng_cli.h"
#include "graph.h"
#include "jsonw.h"
#include "machine.h"
#include "measure.h"
#include "plan.h"
#include "planner.h"
#include "policy.h"
#include "sim.h"

struct fe_engine {
    fe_planner *pl;             /* the Lua state, machine, profile, ctx:bench's limits */
    fe_policy *active;          /* fe_engine_use's; fe_policy_free clears it */
};

struct fe_policy {
    fe_engine *e;
    fe_policy_ref r;            /* the Lua table in e's planner */
};

struct fe_model {
    fe_graph *g;
};

struct fe_report {
    fe_sim_report plan, base;   /* the plan and its model's unfused plan */
    int have_plan, have_base;
    fe_plan *unfused;           /* base's plan, which base refers to */
};

struct fe_result {
    fe_execution x;
    const fe_plan *plan;        /* not owned */
};

struct fe_timing {
    fe_measured m;
    const fe_plan *plan;        /* not owned */
    uint64_t seed;              /* as used: defaults filled in */
    double budget;
};

/* Prints obj (with arg, in format) to f; FE_OK or an error code with err set. */
typedef int (*fe_api_writer)(const void *obj, const void *arg, int format, FILE *f, fe_error *err);

/* What write prints, as a string the caller frees with fe_free; NULL with
 * err set when it fails or memory runs out. */
char *fe_api_text(fe_api_writer write, const void *obj, const void *arg, int format,
                  fe_error *err);

/* Sets err to FE_EINPUT "fn: what is NULL" when p is NULL; returns 1 then. */
int fe_api_null(const void *p, const char *fn, const char *what, fe_error *err);

/* ---- engines and models (api_engine.c, api_model_load.c) ---- */

/* The sandbox options of an engine's options: its Lua limits
 * (max_instructions, max_memory, max_seconds) and home; o NULL gives every
 * default. The one place the public limits become sandbox options. */
fe_sandbox_opts fe_api_sandbox_opts(const fe_engine_options *o);

/* The machine e plans and simulates for. */
const fe_machine *fe_api_machine(const fe_engine *e);
/* Make the shipped machine name (never a path) e's machine. */
int fe_api_use_shipped_machine(fe_engine *e, const char *name, fe_error *err);
/* Make a copy of m (as fe_api_machine gave it) e's machine again. */
void fe_api_set_machine(fe_engine *e, const fe_machine *m);
/* The graph behind a model. */
const fe_graph *fe_api_graph(const fe_model *m);
/* A model handle owning g (caller frees with fe_model_free); NULL if g is
 * NULL (err already set by whoever failed to make it), or with FE_ENOMEM,
 * g freed, if the handle cannot be had. */
fe_model *fe_api_model(fe_graph *g, fe_error *err);

/* The whole-plan figures of simulated totals t (api_sim.c). */
void fe_api_figures(const fe_sim_totals *t, fe_figures *out);

/* ---- saved plans (api_files.c), for reports ---- */

/* The plan file's path. */
const char *fe_api_saved_path(const fe_saved_plan *s);
/* The setup object (fe_saved_plan_format's JSON) into w. */
void fe_api_saved_json(const fe_saved_plan *s, fe_jw *w);

#endif
