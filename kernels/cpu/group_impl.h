/* group_impl.h: the inside of a plan group (group.h), shared by group.c,
 * which compiles and runs it, and group_pick.c, which chooses between
 * oneDNN, our GEMM and op-by-op runs by measuring them. Nothing outside
 * kernels/cpu/group*.c includes it. */
#ifndef FE_GROUP_IMPL_H
#define FE_GROUP_IMPL_H

#include "fused.h"
#include "group_dnn.h"
#include "group_stages.h"

/* group.h's handle, named again rather than included: group.h is what the
 * rest of the engine sees, and this header, what group.c's own files share,
 * stays below it instead of leaning on it (C11 allows the repeated typedef). */
typedef struct fe_k_group fe_k_group;

enum { MODE_FUSED, MODE_ANCHOR, MODE_POOL, MODE_PEROP, MODE_DNN, MODE_VIEWS, MODE_STAGES, MODE_PARTS };

struct fe_k_group {
    const fe_graph *g;
    int32_t *nodes;
    int n;
    int split, kernel, mode;
    int32_t *ins, *outs;
    int nins, nouts;
    char how[2048];
    int64_t temp_bytes;
    fe_k_prog *prog;                  /* MODE_FUSED */
    fe_k_prog **views;                /* MODE_VIEWS: a program per output (group_views.h) */
    fe_k_stages *stages;              /* MODE_STAGES: programs in turn (group_stages.h) */
    /* MODE_ANCHOR */
    int32_t anchor;                   /* node id (MODE_POOL too) */
    fe_k_prog *pro[2], *epi;          /* prologues of a and b, epilogue (MODE_POOL too) */
    int pro_sep[2];                   /* prologue materialised by a separate pass */
    int32_t opnd[2], y;               /* the anchor's a/b and output tensors */
    int64_t pool_pad[2];              /* MODE_POOL: a -inf pad folded into the pool's (H, W) */
    fe_k_dnn_group *dnn;              /* MODE_DNN */
    /* MODE_PEROP of several members (unless per_op was asked for): each
     * member as a group of its own, with the kernel AUTO picks for it, as
     * the unfused plan runs it; NULL runs the reference kernels */
    fe_k_group **sub;
    char perop_why[1100];             /* why it runs op by op, as given to fe_k_group_set_perop */
    int fell_back;                    /* its fused kernel failed at run time (fe_k_group_fall_back) */
    /* MODE_PARTS (group_parts.c): fused parts and the members no program
     * runs, in turn; unit[i] is member i's part */
    fe_k_group **part;
    int *unit;
    int nparts;
};

/* The position of node among gr->nodes (sorted), or -1 if it is no member. */
int fe_k_group_index(const fe_k_group *gr, int32_t node);
/* Run op by op, with reason (NULL: none given) in the description. */
void fe_k_group_set_perop(fe_k_group *gr, const char *reason);
/* Free the group's fused kernels (programs, stages, views, oneDNN), so that
 * it can run op by op. */
void fe_k_group_drop_kernels(fe_k_group *gr);

/* group_parts.c */
/* Run op by op: each member with its own group (gr->sub) or, without,
 * its reference kernel. */
int fe_k_group_run_perop(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err);
/* AUTO on a group set to run op by op because no fused kernel takes it
 * whole: fused parts around the members that run in no fused program
 * (MODE_PARTS) when at least one part of several members fuses; otherwise
 * it stays op by op. FE_OK, or an error (memory). */
int fe_k_group_try_parts(fe_k_group *gr, fe_error *err);
int fe_k_group_run_parts(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err);
/* Each part's members, how it runs and its programs (fe_k_group_show). */
void fe_k_group_show_parts(const fe_k_group *gr, const char *indent, FILE *f);
void fe_k_group_free_parts(fe_k_group *gr);
/* Anchor the group on its matmul/conv2d with our GEMM (blas: through
 * BLAS); nonzero with why when it cannot. */
int fe_k_group_try_anchor(fe_k_group *gr, int blas, fe_error *why);
int fe_k_group_run_anchor(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err);

/* group_pick.c */
/* The group whole as one oneDNN primitive (prologue: as group_dnn.h), or
 * NULL with why. */
fe_k_dnn_group *fe_k_group_dnn_new(fe_k_group *gr, int prologue, fe_error *why);
/* Run it by dg, described with note appended. */
void fe_k_group_set_dnn(fe_k_group *gr, fe_k_dnn_group *dg, const char *note);
/* AUTO on a group our GEMM runs: oneDNN instead when it is faster. */
void fe_k_group_auto_dnn(fe_k_group *gr);
/* AUTO on an anchored group our GEMM cannot take (reason): op by op, or
 * oneDNN when it takes the group and is faster. FE_OK, or an error. */
int fe_k_group_perop_or_dnn(fe_k_group *gr, const char *reason, fe_error *err);
/* A per_op group's members as groups of their own (AUTO kernels), as the
 * unfused plan runs them; freed by fe_k_group_free_subs. */
int fe_k_group_make_subs(fe_k_group *gr, fe_error *err);
void fe_k_group_free_subs(fe_k_group *gr);
/* AUTO's last word on a fused group: its kernel timed against its ops one
 * by one (as the unfused plan runs them), once per shape in the process;
 * op by op replaces it when faster by more than the noise, and the group's
 * description says which won and by how much. Groups too small to time,
 * or whose matmul or conv2d dwarfs the rest, are left as they are. FE_OK,
 * or an error. */
int fe_k_group_auto_guard(fe_k_group *gr, fe_error *err);
/* The group's fused kernel failed with cause: from now on it runs its ops
 * one by one, and its description says so, with the cause and what it
 * ran before. FE_OK, or FE_ENOMEM. */
int fe_k_group_fall_back(fe_k_group *gr, const char *cause, fe_error *err);

#endif
