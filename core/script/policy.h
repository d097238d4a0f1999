/* policy.h: the policy behind fe_policy (fuseeng.h): a registry reference
 * to the Lua table fe.policy{...} made, and what C reads of it. policy.c
 * loads, checks, combines and parameterises policies. */
#ifndef FE_POLICY_H
#define FE_POLICY_H

#include <limits.h>

#include "engine.h"

struct fe_policy {
    fe_engine *e;
    int ref;                 /* the Lua policy table (registry ref) */
    char name[256];
    char driver[16];
    char description[256];
    char source[256];        /* the document it reproduces ("" if unsaid) */
    char path[PATH_MAX];     /* file it came from, or its label */
};

/* Wrap the Lua policy table on top of the stack (popped) into a policy
 * handle, reading its name, driver, description and source. NULL with FE_EINPUT if
 * the table is not a policy the engine can run (fe_policy_check). */
fe_policy *fe_policy_wrap(fe_engine *e, const char *path, fe_error *err);

/* Check what the engine reads of p's table (the fields of drivers.h's
 * table, their types, the driver and the fields it needs) and refresh p's
 * name, driver, description and source from it. A table made by fe.policy passes;
 * one a script made by hand with the policy marker may not. FE_OK or
 * FE_EINPUT naming p's file and the field. */
int fe_policy_check(fe_policy *p, fe_error *err);

#endif
