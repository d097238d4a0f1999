/* groupsig.h: the structural signature of a candidate group in its graph:
 * two groups get the same signature when they compute the same thing the
 * same way and meet the rest of the graph the same way -- the same ops,
 * attributes, dtypes and shapes in the same order, the same internal
 * edges, external inputs of the same kind, shape and producer op shared
 * among the members in the same pattern, the same outputs escaping the
 * group, and (for a candidate merge) the same split into parts. Names and
 * positions never enter it. A policy whose hooks look only at these things
 * (memo = true) gets one answer per signature (core/script/memo.c).
 *
 * The signature is 128 bits of hash, not the canonical text (group keys,
 * groupkey.h, spell that out and cost a formatting pass per group): a
 * collision between two different structures is a chance of about n^2 /
 * 2^129 among n distinct ones. */
#ifndef FE_GROUPSIG_H
#define FE_GROUPSIG_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

typedef struct fe_groupsig fe_groupsig;

/* Scratch and per-node hashes for signatures of g's groups; NULL on
 * out-of-memory (err set). Free with fe_groupsig_free. g must outlive it. */
fe_groupsig *fe_groupsig_new(const fe_graph *g, fe_error *err);
void fe_groupsig_free(fe_groupsig *s);

/* The signature of nodes[0..n) (sorted, distinct) into out[2]. The parts
 * (part_len[0..nparts) lengths, then each part's sorted members in
 * part_nodes) are how a candidate merges groups; nparts <= 1 (part_len and
 * part_nodes may be NULL) for a group that is one part. salt separates
 * signatures asked for different purposes. */
void fe_groupsig_of(fe_groupsig *s, uint64_t salt, const int32_t *nodes, int n,
                    const int32_t *part_len, const int32_t *part_nodes, int nparts, uint64_t out[2]);

/* The order the parts are given in (each part's rank by first member, the
 * signature's, in turn) as a hash: the signature leaves it out, a caller
 * whose answers depend on it mixes it in. 0 for nparts <= 1. */
uint64_t fe_groupsig_part_order(const int32_t *part_len, const int32_t *part_nodes, int nparts);

#endif
