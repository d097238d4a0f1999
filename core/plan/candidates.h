/* candidates.h: the candidate groups of an exact plan search (optimal.h):
 * every legal group of up to k nodes of a window, each found once
 * (candidates.c opens with the algorithm).
 *
 * A window is a convex set of nodes (a range of the topological order
 * is one); a candidate is a set of its nodes that is connected through
 * shared tensors (one writes what the other reads, or both read it: the
 * pairs the greedy driver proposes; or any set, asked for) and that
 * fe_part_can_merge
 * (legality.h, the one owner of the rules) accepts as one kernel. Every
 * node alone is a candidate, so a window always has a cover.
 */
#ifndef FE_CANDIDATES_H
#define FE_CANDIDATES_H

#include "partition.h"

/* Node sets: set i is nodes[off[i] .. off[i + 1]), sorted ascending. */
typedef struct fe_cands {
    int64_t n, cap;
    int64_t *off;          /* n + 1 entries once a set is pushed */
    int32_t *nodes;
    int64_t nodecap;
} fe_cands;

/* Append the set nodes[0..n) (sorted, n >= 1). FE_OK or FE_ENOMEM. */
int fe_cands_push(fe_cands *c, const int32_t *nodes, int n);
/* Forget the sets, keep the memory. */
void fe_cands_clear(fe_cands *c);
void fe_cands_free(fe_cands *c);

/* The scratch of the searches on one graph: a partition of single nodes
 * for the legality checks and per-node maps, made once per graph and
 * reused by every window (a model of 100k nodes is solved in thousands
 * of windows). */
typedef struct fe_cand_space fe_cand_space;

/* NULL with FE_ENOMEM; free with fe_cand_space_free. */
fe_cand_space *fe_cand_space_new(const fe_graph *g, fe_error *err);
void fe_cand_space_free(fe_cand_space *s);

/* Is win[0..n) (sorted, distinct node ids) a window: convex? 1, else 0
 * with why (if not NULL). */
int fe_cand_window_ok(fe_cand_space *s, const int32_t *win, int n, char *why, size_t size);

/* May nodes[0..n) (sorted, distinct) run as one kernel? fe_part_can_merge
 * on single nodes: 1, else 0 with why (if not NULL). */
int fe_cand_legal(fe_cand_space *s, const int32_t *nodes, int n, char *why, size_t size);

/* The largest window: the walk keeps two bit sets over the window per
 * node (2 MiB each at this size). */
#define FE_CAND_MAX_WINDOW 4096

typedef struct fe_cand_opts {
    int max_group;            /* most nodes in a candidate, >= 1 */
    int siblings;             /* two readers of one tensor are neighbours */
    int horizontal;           /* any two nodes are: sets need not be connected (2^n of
                                 them: small windows only) */
    int64_t max_candidates;   /* more legal candidates than this is an error */
    double deadline;          /* fe_clock_s() past which the search stops; 0: none */
} fe_cand_opts;

/* Append to out every candidate of window win[0..n) (sorted, convex) of
 * 1 to o->max_group nodes. FE_OK; FE_EINPUT with err saying which limit
 * stopped it (max_candidates, deadline: out then holds what was found);
 * FE_ENOMEM. *visited (if not NULL) gets the connected sets looked at,
 * legal or not. */
int fe_cands_enumerate(fe_cand_space *s, const int32_t *win, int n, const fe_cand_opts *o,
                       fe_cands *out, int64_t *visited, fe_error *err);

/* Growing a solution: append to out every legal union of two of the
 * groups chosen[0..n) (indices into c, disjoint sets), sharing a tensor
 * or not, with the two candidate indices of union i at (*pairs)[2i] and
 * (*pairs)[2i + 1] (caller frees *pairs, NULL if none). FE_OK or
 * FE_ENOMEM. */
int fe_cands_unions(fe_cand_space *s, const fe_cands *c, const int64_t *chosen, int64_t n,
                    fe_cands *out, int64_t **pairs, fe_error *err);

#endif
