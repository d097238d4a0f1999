/* choices.h: fused choices around an anchor node (choices.c), seed 001's
 * recursive fusion: the sets of nodes one kernel holding the anchor could
 * run, grown one neighbour at a time (an epilogue consumer, a prologue
 * producer, or both: cross-subgraph), each legal by legality.c's rules,
 * without duplicates and in a fixed order. Policies price and pick among
 * them (ctx:choices); this file only enumerates.
 */
#ifndef FE_CHOICES_H
#define FE_CHOICES_H

#include "partition.h"

/* Kinds of choice, as bits for fe_choice_opts.kinds. The anchor alone has
 * kind 0. */
enum {
    FE_CHOICE_EPILOGUE = 1,   /* every added node is downstream of the anchor */
    FE_CHOICE_PROLOGUE = 2,   /* every added node is upstream of the anchor */
    FE_CHOICE_CROSS = 4,      /* both, or a sibling reached through them */
    FE_CHOICE_ALL = 7
};

/* Limits on the options (messages quote them). */
#define FE_CHOICE_MAX_DEPTH 64
#define FE_CHOICE_MAX_COUNT 100000

typedef struct fe_choice_opts {
    int depth;   /* most nodes added to the anchor, 0..FE_CHOICE_MAX_DEPTH */
    int max;     /* most choices returned, the anchor alone included, 1..FE_CHOICE_MAX_COUNT */
    int kinds;   /* FE_CHOICE_* bits to return (and grow) */
} fe_choice_opts;

/* One choice: members nodes[off .. off + n) of its set, sorted by id
 * (topological); n - 1 nodes were added to the anchor. */
typedef struct fe_choice {
    int32_t off, n;
    int32_t parent;   /* the choice it grew from (index), -1 for the anchor alone */
    int kind;         /* 0 (anchor alone) or one FE_CHOICE_* bit */
} fe_choice;

/* The answer of one call: owned by the chooser, valid until its next call. */
typedef struct fe_choice_set {
    const fe_choice *items;
    int32_t n;
    const int32_t *nodes;
    int truncated;    /* 1 if max (or the per-level work bound) cut the enumeration */
    int64_t illegal;  /* distinct candidate sets legality refused */
} fe_choice_set;

typedef struct fe_chooser fe_chooser;

/* A chooser for g (which must outlive it): a partition with every node
 * alone, for legality, and scratch. NULL with err set on out-of-memory.
 * Free with fe_chooser_free. */
fe_chooser *fe_chooser_new(const fe_graph *g, fe_error *err);
void fe_chooser_free(fe_chooser *c);

/* The choices around anchor under o into *out (memory owned by c): the
 * anchor alone first, then level by level (one more node each), within a
 * level epilogues, prologues, cross, each kind by member ids. FE_OK;
 * FE_EINPUT for an anchor or option out of range (message says which);
 * FE_ENOMEM. */
int fe_chooser_around(fe_chooser *c, int32_t anchor, const fe_choice_opts *o,
                      fe_choice_set *out, fe_error *err);

#endif
