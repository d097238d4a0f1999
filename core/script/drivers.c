/* drivers.c: the fields of a policy table and the drivers, in one place.
 *
 * fe.policy checks a policy author's table against FE_POLICY_FIELDS and
 * FE_DRIVERS (read through fuseeng.core), fe_policy_check checks the table
 * again from C before every run (a script can forge or change it), and the
 * planning run dispatches to FE_DRIVERS[i].drive. A new driver is one row
 * here; a new field one row, plus what reads it. */
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "drivers.h"

static const char *const FALLBACKS[] = {"stop", "unfused", NULL};
static const char *const TILINGS[] = {"none", "auto", NULL};

const fe_policy_field FE_POLICY_FIELDS[] = {
    {"name", LUA_TSTRING, LUA_TNONE, NULL},
    {"driver", LUA_TSTRING, LUA_TNONE, NULL},
    {"description", LUA_TSTRING, LUA_TNONE, NULL},
    {"source", LUA_TSTRING, LUA_TNONE, NULL},
    {"params", LUA_TTABLE, LUA_TNONE, NULL},
    {"decide", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"score", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"priority", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"plan", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"split", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"kernel", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"copies", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"patterns", LUA_TTABLE, LUA_TNONE, NULL},
    {"dataflow", LUA_TTABLE, LUA_TSTRING, NULL},
    {"default", LUA_TBOOLEAN, LUA_TNONE, NULL},
    {"fallback_on_error", LUA_TSTRING, LUA_TNONE, FALLBACKS},
    {"tiling", LUA_TSTRING, LUA_TNONE, TILINGS},
    {"reask", LUA_TBOOLEAN, LUA_TNONE, NULL},
    {"memo", LUA_TBOOLEAN, LUA_TNONE, NULL},
    {"solo_ops", LUA_TTABLE, LUA_TNONE, NULL},
    {"fixed", LUA_TFUNCTION, LUA_TNONE, NULL},
    {"priority_ops", LUA_TTABLE, LUA_TNONE, NULL},
};
const int FE_NPOLICY_FIELDS = sizeof FE_POLICY_FIELDS / sizeof FE_POLICY_FIELDS[0];

static const char *const GREEDY_HOOKS[] = {"score", "decide", NULL};
static const char *const DECIDE_HOOK[] = {"decide", NULL};
static const char *const PLAN_HOOK[] = {"plan", NULL};
static const char *const PRIORITY_HOOKS[] = {"fixed", "priority", "decide", NULL};

/* Inductor's fuse_nodes (seed 003): candidates within +-64 positions, at
 * most 10 rounds. The Inductor family's policies declare these through
 * fe.driver_params, so --param reaches them. */
const fe_driver_param FE_GREEDY_PARAMS[] = {
    [FE_GREEDY_WINDOW] = {"window", 64},
    [FE_GREEDY_MAX_ROUNDS] = {"max_rounds", 10},
    {NULL, 0},
};

const fe_driver FE_DRIVERS[] = {
    {"greedy", fe_drive_greedy, GREEDY_HOOKS, NULL, NULL, NULL, FE_GREEDY_PARAMS},
    {"patterns", fe_drive_patterns, DECIDE_HOOK, "patterns", "'patterns'", fe_drive_patterns_check,
     NULL},
    {"dataflow", fe_drive_dataflow, DECIDE_HOOK, "dataflow", "'dataflow'", NULL, NULL},
    {"plan", fe_drive_plan, PLAN_HOOK, "plan", "a plan(self, graph, ctx) hook", NULL, NULL},
    {"priority", fe_drive_priority, PRIORITY_HOOKS, NULL, NULL, NULL, NULL},
};
const int FE_NDRIVERS = sizeof FE_DRIVERS / sizeof FE_DRIVERS[0];

const fe_driver *fe_driver_find(const char *name)
{
    for (int i = 0; i < FE_NDRIVERS; i++)
        if (strcmp(FE_DRIVERS[i].name, name) == 0)
            return &FE_DRIVERS[i];
    return NULL;
}

/* "a, b, c or d" from item(i) for i < n. */
static const char *join(char *buf, size_t size, int n, const char *(*item)(const void *, int),
                        const void *arg, int quoted)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < size; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        const char *q = quoted ? "\"" : "";
        at += (size_t)snprintf(buf + at, size - at, "%s%s%s%s", sep, q, item(arg, i), q);
    }
    return buf;
}

static const char *driver_name(const void *arg, int i)
{
    (void)arg;
    return FE_DRIVERS[i].name;
}

static const char *word(const void *arg, int i)
{
    return ((const char *const *)arg)[i];
}

const char *fe_driver_names(char *buf, size_t size)
{
    return join(buf, size, FE_NDRIVERS, driver_name, NULL, 0);
}

const char *fe_policy_field_words(const fe_policy_field *f, char *buf, size_t size)
{
    int n = 0;
    while (f->words && f->words[n])
        n++;
    return join(buf, size, n, word, f->words, 1);
}
