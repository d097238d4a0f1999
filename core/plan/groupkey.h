/* groupkey.h: the two names of a group of nodes, as InfiniCore's profile
 * file keys them: the compat key (op types joined with '+' in topological
 * order, "silu+mul") and the exact key (the first 16 hex digits of SHA-256
 * over the group's canonical text: ops, attributes, internal edges, and the
 * dtypes and shapes of its external inputs). Profiles, kernel caches and
 * Lua's group.key / group.exact_key all use these. */
#ifndef FE_GROUPKEY_H
#define FE_GROUPKEY_H

#include <stddef.h>

#include "graph.h"

/* Compat key into buf; returns the length it needs (excluding NUL). */
size_t fe_group_compat_key(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size);

/* Canonical text into buf (same convention); nodes in topological order. */
size_t fe_group_canonical(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size);

/* A short description for people (a profile's meta.shapes): the compat
 * key, then the dtype[shape] of each external input, "silu+mul
 * f32[2048,11008] f32[2048,11008]". Same buffer convention. */
size_t fe_group_shape_text(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size);

/* Exact key: 16 hex digits and a NUL into out[17]. Returns FE_OK or
 * FE_ENOMEM. */
int fe_group_exact_key(const fe_graph *g, const int32_t *nodes, int n, char out[17]);

#endif
