/* profile.h: profile files (InfiniCore's profile_result.json, extended):
 * measured times of single ops and fused groups, in milliseconds.
 *
 *   {"single": {"silu": 0.012, "<exact key>": 0.0118, ...},
 *    "fused":  {"silu+mul": 0.013, "<exact key>": 0.0128, ...},
 *    "meta":   {"machine": "host", "unit": "ms", "shapes": {"<exact key>": "text"}}}
 *
 * Keys are InfiniCore's compat keys (an op name; op names joined with '+')
 * or exact keys (groupkey.h: 16 hex digits of SHA-256 over a group's
 * canonical text; a single op is a group of one). Files with only "single"
 * and "fused" load unchanged. */
#ifndef FE_PROFILE_H
#define FE_PROFILE_H

#include "graph.h"

typedef struct fe_profile fe_profile;

/* Read a profile file. Caller frees with fe_profile_free. NULL with
 * FE_EINPUT naming the file, line and column or the entry at fault. */
fe_profile *fe_profile_read(const char *path, fe_error *err);
void fe_profile_free(fe_profile *p);

/* An empty profile to fill (fuseeng profile). */
fe_profile *fe_profile_new(fe_error *err);
/* Add an entry: fused = 0 for "single", 1 for "fused"; text (may be NULL)
 * describes an exact key in meta.shapes. */
int fe_profile_add(fe_profile *p, int fused, const char *key, double ms, const char *text);
/* Write it as JSON; machine names where it was measured. */
int fe_profile_write(const fe_profile *p, const char *path, const char *machine, fe_error *err);

/* What the profile says about a group (nodes sorted, topological order). */
typedef struct fe_profile_lookup {
    int have_separate;       /* every member has a single time */
    double separate_ms;      /* sum of the members' single times */
    int have_fused;
    double fused_ms;
    int fused_exact;         /* the fused time came from the exact key */
    int32_t missing;         /* a member without a single time, or -1 */
} fe_profile_lookup;

/* Single times: the node's exact key first, then its op name (compat).
 * Fused time: the group's exact key first, then its compat key. */
void fe_profile_lookup_group(const fe_profile *p, const fe_graph *g, const int32_t *nodes, int n,
                             fe_profile_lookup *out);

/* Entries in the two tables. */
int32_t fe_profile_count(const fe_profile *p, int fused);

#endif
