/* policy.h: a policy as the script layer holds it: a registry reference
 * to the Lua table fe.policy{...} made, in a planner's state, and what C
 * reads of it. The public fe_policy (core/api) wraps one. policy.c loads,
 * checks, combines and parameterises policies. */
#ifndef FE_POLICY_H
#define FE_POLICY_H

#include <limits.h>

#include "planner.h"

typedef struct fe_policy_ref {
    fe_planner *pl;          /* whose Lua state holds the table */
    int ref;                 /* the Lua policy table (registry ref) */
    char name[256];
    char driver[16];
    char description[256];
    char source[256];        /* the document it reproduces ("" if unsaid) */
    char path[PATH_MAX];     /* file it came from, or its label */
} fe_policy_ref;

/* Take the Lua policy table on top of the stack (popped) into *p, reading
 * its name, driver, description and source. FE_OK, or FE_EINPUT if the
 * table is not a policy the engine can run (fe_policy_check), or FE_ENOMEM;
 * then *p holds nothing to release. */
int fe_policy_take(fe_planner *pl, const char *path, fe_policy_ref *p, fe_error *err);

/* Load a policy into *p: a name (policies/NAME.lua of the planner's home)
 * or a file, or Lua source (label names it). Its chunk runs once in a fresh
 * environment and must return a policy. FE_OK or the error. */
int fe_policy_load(fe_planner *pl, const char *name_or_path, fe_policy_ref *p, fe_error *err);
int fe_policy_load_buffer(fe_planner *pl, const char *source, size_t len, const char *label,
                          fe_policy_ref *p, fe_error *err);

/* Combine the n policies of pl in list (how: "all", "any", "chain",
 * "vote") into the new policy *out. FE_OK or the error. */
int fe_policy_combine(fe_planner *pl, const char *how, const fe_policy_ref *const *list, int n,
                      fe_policy_ref *out, fe_error *err);

/* Override a parameter of p ("margin", "0.2"), typed by its default: the
 * overridden table replaces p's. FE_OK or the error. */
int fe_policy_override(fe_policy_ref *p, const char *key, const char *value, fe_error *err);

/* Check what the engine reads of p's table (the fields of drivers.h's
 * table, their types, the driver and the fields it needs) and refresh p's
 * name, driver, description and source from it. A table made by fe.policy passes;
 * one a script made by hand with the policy marker may not. FE_OK or
 * FE_EINPUT naming p's file and the field. */
int fe_policy_check(fe_policy_ref *p, fe_error *err);

/* Drop p's reference to its table (p may be NULL). */
void fe_policy_release(fe_policy_ref *p);

#endif
