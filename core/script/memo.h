/* memo.h: a run's answers of the policy's hooks by structural signature
 * (groupsig.h), for a policy that says memo = true: its decide, split and
 * kernel hooks look only at a candidate's structure, so a candidate with
 * the signature of one asked before gets that answer without a call. A
 * model of repeated blocks (every transformer) asks about each structure
 * once instead of once per block. */
#ifndef FE_MEMO_H
#define FE_MEMO_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

typedef struct fe_memo fe_memo;

/* What the hooks are asked: salts of the signatures. */
enum { FE_MEMO_DECIDE = 1, FE_MEMO_SPLIT = 2, FE_MEMO_KERNEL = 3 };

typedef struct fe_memo_answer {
    uint64_t key[2];
    int32_t value;       /* decide: 1, 0 or -1 (no opinion); split: k or 0; kernel: id or -1 */
    char *reason;        /* decide's reason (owned), NULL otherwise */
    int32_t reason_id;   /* the reason interned in the run's decision log, -1 if not,
                            -2 if it names parts (reason.h): interned per decision */
} fe_memo_answer;

/* An empty memo for runs on g; NULL on out-of-memory (err set). */
fe_memo *fe_memo_new(const fe_graph *g, fe_error *err);
void fe_memo_free(fe_memo *m);

/* The signature of a candidate asked as `what` (FE_MEMO_*) into key; the
 * arguments are fe_groupsig_of's. Unlike the signature, the key tells the
 * orders the parts come in apart: a hook sees group.parts in the order
 * given, and its reason may name them ("{part1}", reason.h). */
void fe_memo_key(fe_memo *m, int what, const int32_t *nodes, int n, const int32_t *part_len,
                 const int32_t *part_nodes, int nparts, uint64_t key[2]);

/* The answer stored under key, or NULL; valid until the next put. */
const fe_memo_answer *fe_memo_get(const fe_memo *m, const uint64_t key[2]);

/* Store value, a copy of reason (may be NULL) and its id in the run's log
 * (-1: none) under key. FE_OK or FE_ENOMEM. */
int fe_memo_put(fe_memo *m, const uint64_t key[2], int32_t value, const char *reason,
                int32_t reason_id);

#endif
