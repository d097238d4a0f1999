/* fused_views.h: views of a fused program's inputs as strided loads
 * (fused_views.c explains the index maps). Private to the fused executors,
 * the CPU's and the card's. */
#ifndef FE_FUSED_VIEWS_H
#define FE_FUSED_VIEWS_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

/* Element (i0, .., i[rank-1]) of the view is element
 * off + sum_k i_k * st[k] of tensor src, counted in elements of its dtype. */
typedef struct fe_k_sview {
    int32_t src;
    int rank;
    int64_t shape[FE_MAX_RANK];
    int64_t st[FE_MAX_RANK];       /* may be 0 (expanded axes) */
    int64_t off;
} fe_k_sview;

/* Whether op is one the executor folds into its loads (reshape, transpose,
 * slice, expand: the registry's view ops). */
int fe_k_fused_view_op(int op);
/* 1 if tensor t is made by one of nodes[0..n), else 0. */
int fe_k_produced_in(const fe_graph *g, int32_t t, const int32_t *nodes, int n);
/* For a group nodes[0..n) of views only, the members tensor t is made
 * through, producers first, into chain (room for n); their count. A view
 * reads one data input, input 0. */
int fe_k_view_chain(const fe_graph *g, const int32_t *nodes, int n, int32_t t, int32_t *chain);

/* v = tensor t itself: contiguous strides, offset 0. */
void fe_k_sview_of(fe_k_sview *v, const fe_graph *g, int32_t t);

/* v = node n (a view op) applied to v. Returns 0, or -1 with FE_EINPUT and
 * a message naming the node when the view is not affine in v's strides (a
 * reshape merging axes that are not adjacent in memory) or its attributes
 * do not match its output's shape. */
int fe_k_sview_apply(fe_k_sview *v, const fe_graph *g, const fe_node *n, fe_error *err);

/* Strides of v over a domain of rank r that v's shape is right-aligned
 * to (ds: v's shape padded with 1s on the left): 0 on size-1 axes. */
void fe_k_sview_domain(const fe_k_sview *v, int r, const int64_t *ds, int64_t *dst);
/* The part of tensor t from off along its axis `axis` that a value of
 * domain shape D[0..r) fills (a concat's operand's place): its strides over
 * the domain into dst and its first element into *base; -1 if the value
 * does not fit there. */
int fe_k_part_strides(const fe_graph *g, int32_t t, int axis, int64_t off, int r, const int64_t *D,
                      int64_t *dst, int64_t *base);

/* What folding left of a program's nodes (fe_k_fold_views); owned, freed
 * by fe_k_folded_free. */
typedef struct fe_k_folded {
    int32_t *keep;                 /* the nodes still to compile, in order */
    int nkeep;
    int32_t *vt;                   /* folded views: their tensors, and maps */
    fe_k_sview *vs;
    int nv;
    int32_t *aout, *ain;           /* reshapes dropped: output aout[k] is read and written */
    int nalias;                    /* as the values of ain[k], in the same order */
} fe_k_folded;

/* Fold the views of a program's external inputs. Walks nodes[0..n) in
 * topological order; a view op whose source is not produced by any of the
 * nodes (nor is `avoid`, the anchor) or is itself a folded view is
 * resolved into f->vs (its output tensor into f->vt) and dropped. A
 * reshape that is not folded so is dropped as an alias when no node reads
 * it (its output is stored from its input's values, whose row-major order
 * it keeps) or when it only adds or drops leading 1s (nodes read it as its
 * input, which broadcasts alike). The other nodes are copied to f->keep. Returns 0, or -1
 * with FE_EINPUT naming the node whose view is not a strided load, or
 * FE_ENOMEM (free f either way). */
int fe_k_fold_views(const fe_graph *g, const int32_t *nodes, int n, int32_t avoid, fe_k_folded *f,
                    fe_error *err);
/* Whether fe_k_fold_views drops node nd of nodes[0..n), a view of a value
 * they compute, as an alias (the reshapes above); a program cannot read
 * other views of its own values. */
int fe_k_view_aliased(const fe_graph *g, const fe_node *nd, const int32_t *nodes, int n,
                      int32_t avoid);
void fe_k_folded_free(fe_k_folded *f);

#endif
