/* drivers.h: the one list of what a policy table may hold and of the
 * drivers that read it (drivers.c). fe.policy (lua/fuseeng.lua, through
 * fuseeng.core), the checker (policy.c) and the planning run (planning.c)
 * all read these tables; adding a driver is one row in FE_DRIVERS plus
 * the driver's file. */
#ifndef FE_DRIVERS_H
#define FE_DRIVERS_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"

/* A field of a policy table. */
typedef struct fe_policy_field {
    const char *name;
    int type;                 /* its Lua type in a policy fe.policy made (LUA_T...) */
    int source_type;          /* another type fe.policy accepts and compiles into
                                 `type` (dataflow text), or LUA_TNONE */
    const char *const *words; /* a string field's allowed values, NULL-ended, the
                                 first the default; NULL for any string */
} fe_policy_field;

/* A number a driver reads from the policy's params, and its default when
 * the params do not set it: the one place the default is written (a policy
 * that lets --param tune it declares it with fe.driver_params). */
typedef struct fe_driver_param {
    const char *name;
    int64_t value;
} fe_driver_param;

/* A driver: the C loop that proposes candidates and asks the hooks. */
typedef struct fe_driver {
    const char *name;
    int (*drive)(fe_run *r);  /* grows r->part; returns r->status (see below) */
    const char *const *hooks; /* the hooks it calls, NULL-ended (every driver
                                 also runs split and kernel on the final groups) */
    const char *needs;        /* the field it cannot run without, or NULL */
    const char *needs_what;   /* that field in messages: "the X driver needs ..." */
    /* Check the needed field of the policy table at t beyond its type; 0,
     * or 1 with the problem written to why. NULL: nothing to check. */
    int (*check)(lua_State *L, int t, char *why, size_t size);
    const fe_driver_param *params;  /* its numeric params and their defaults, ended
                                       by a NULL name; NULL: none listed */
} fe_driver;

extern const fe_policy_field FE_POLICY_FIELDS[];
extern const int FE_NPOLICY_FIELDS;
extern const fe_driver FE_DRIVERS[];
extern const int FE_NDRIVERS;

/* The greedy driver's params: window (pairs at most this many positions
 * apart) and max_rounds, in this order (FE_GREEDY_WINDOW, ...). */
extern const fe_driver_param FE_GREEDY_PARAMS[];
enum { FE_GREEDY_WINDOW, FE_GREEDY_MAX_ROUNDS };

/* The driver called name, or NULL. */
const fe_driver *fe_driver_find(const char *name);

/* "a, b, c or d": the drivers' names (quoted = 0), or a field's words
 * (quoted = 1), into buf. */
const char *fe_driver_names(char *buf, size_t size);
const char *fe_policy_field_words(const fe_policy_field *f, char *buf, size_t size);

/* Drivers (driver_*.c). Each grows r->part and returns r->status; a
 * driver ends early, returning FE_OK, when fe_run_over says the policy is
 * disabled. */
int fe_drive_greedy(fe_run *r);
int fe_drive_patterns(fe_run *r);
int fe_drive_dataflow(fe_run *r);
int fe_drive_plan(fe_run *r);
int fe_drive_priority(fe_run *r);
/* Merge a hook's list of groups (plan()'s form: lists of nodes that may
 * carry split, kernel and reason) at stack slot list, each checked and
 * logged (driver_plan.c; the plan driver's and the priority driver's
 * fixed groups): owner[v] the index of the group that took node v (-1 on
 * entry; NULL when the caller does not need it), made[i] (if not NULL) the group id item i + 1 became, -1 when
 * rejected; groups of one node are logged only when log_single. */
int fe_drive_groups(fe_run *r, int list, int32_t *owner, int32_t *made, int log_single,
                    const char *default_reason);
/* Call the hook at stack slot fn (plan, fixed) with the graph and check it
 * returned a table: its stack slot, or 0 with the run faulted. */
int fe_drive_groups_hook(fe_run *r, int fn, const char *name);
/* The patterns driver's list beyond its type (driver_patterns.c). */
int fe_drive_patterns_check(lua_State *L, int t, char *why, size_t size);

#endif
