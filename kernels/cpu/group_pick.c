/* group_pick.c: which kernel a plan group runs, by measuring: AUTO puts
 * our GEMM (matmul_blocked) against oneDNN when both take an anchored
 * group, op by op against oneDNN when our GEMM cannot (a zero pad before a
 * conv2d, which oneDNN folds into the conv's padding), and last, whatever
 * fused kernel it chose against the group's ops one by one, as the unfused
 * plan runs them (a fused group must never be slower than its members).
 * Each choice is timed once per shape in the process (versus.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "group.h"
#include "group_impl.h"
#include "node.h"
#include "ops.h"
#include "versus.h"

/* AUTO leaves anchors below this many FLOPs to our GEMM: there the call
 * costs more than the kernel, and timing them is noise. */
#define DNN_MIN_FLOPS 4000000

static int find_anchor(const fe_k_group *gr)
{
    int ai = -1;
    for (int i = 0; i < gr->n; i++) {
        int op = fe_graph_node(gr->g, gr->nodes[i])->op;
        if (op == FE_OP_MATMUL || op == FE_OP_CONV2D) {
            if (ai >= 0)
                return -1;
            ai = i;
        }
    }
    return ai;
}

fe_k_dnn_group *fe_k_group_dnn_new(fe_k_group *gr, int prologue, fe_error *why)
{
    int ai = find_anchor(gr);
    if (ai < 0)
        return fe_error_set(why, FE_EINPUT, "the group needs exactly one matmul or conv2d"), NULL;
    return fe_k_dnn_group_new(gr->g, gr->nodes, gr->n, gr->nodes[ai], gr->outs, gr->nouts,
                              prologue, why);
}

void fe_k_group_set_dnn(fe_k_group *gr, fe_k_dnn_group *dg, const char *note)
{
    gr->dnn = dg;
    gr->mode = MODE_DNN;
    gr->kernel = FE_K_CHOICE_ONEDNN;
    gr->anchor = -1;
    gr->temp_bytes = fe_k_dnn_group_temp_bytes(dg);
    snprintf(gr->how, sizeof gr->how, "%s: %s%s%s", fe_k_choice_name(FE_K_CHOICE_ONEDNN),
             fe_k_dnn_group_desc(dg), note, gr->split > 1 ? "; TLF split not applied (oneDNN "
             "runs the whole output)" : "");
}

static int run_anchor_cb(void *ctx, fe_k_tensor *bufs, fe_error *err)
{
    return fe_k_group_run_anchor(ctx, bufs, err);
}

/* AUTO on a group our GEMM runs (MODE_ANCHOR): if oneDNN can take it too,
 * time both once per key in the process and keep the faster. */
void fe_k_group_auto_dnn(fe_k_group *gr)
{
    fe_error why = {0};
    int64_t flops = 0, bytes = 0;
    double td, to;
    char note[200];
    fe_op_cost(gr->g, fe_graph_node(gr->g, gr->anchor), &flops, &bytes);
    if (flops < DNN_MIN_FLOPS)
        return;
    fe_k_dnn_group *dg = fe_k_group_dnn_new(gr, 1, &why);   /* a prologue as a pass of its own */
    size_t l = strlen(gr->how);
    if (!dg) {
        snprintf(gr->how + l, sizeof gr->how - l, " (%s cannot take it: %s)",
                 fe_k_choice_name(FE_K_CHOICE_ONEDNN), why.message);
        return;
    }
    int faster = fe_k_dnn_group_choose(dg, fe_k_choice_name(FE_K_CHOICE_MATMUL_BLOCKED), gr->ins,
                                       gr->nins, gr->outs, gr->nouts, run_anchor_cb, gr, &td, &to);
    if (faster > 0) {
        snprintf(note, sizeof note, "; chosen over %s: %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_MATMUL_BLOCKED), td, to);
        fe_k_group_drop_kernels(gr);
        fe_k_group_set_dnn(gr, dg, note);
        return;
    }
    if (faster == 0)
        snprintf(gr->how + l, sizeof gr->how - l, "; chosen over %s (%s): %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_ONEDNN), fe_k_dnn_group_desc(dg), to, td);
    fe_k_dnn_group_free(dg);
}

void fe_k_group_free_subs(fe_k_group *gr)
{
    for (int i = 0; gr->sub && i < gr->n; i++)
        fe_k_group_free(gr->sub[i]);
    free(gr->sub);
    gr->sub = NULL;
}

/* A per_op group's members as groups of their own, with the kernels AUTO
 * picks for each, as the unfused plan runs them. */
int fe_k_group_make_subs(fe_k_group *gr, fe_error *err)
{
    if (!(gr->sub = calloc((size_t)gr->n, sizeof *gr->sub)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < gr->n; i++)
        if (!(gr->sub[i] = fe_k_group_new(gr->g, &gr->nodes[i], 1, 1, FE_K_CHOICE_AUTO, err))) {
            fe_k_group_free_subs(gr);
            return err->code ? err->code : FE_ENOMEM;
        }
    return FE_OK;
}

int fe_k_group_fall_back(fe_k_group *gr, const char *cause, fe_error *err)
{
    char was[sizeof gr->how], note[sizeof gr->how + 1100];
    if (!gr->sub && fe_k_group_make_subs(gr, err))
        return err && err->code ? err->code : FE_ENOMEM;
    snprintf(was, sizeof was, "%s", gr->how);
    snprintf(note, sizeof note, "fell back at run time: the fused kernel failed (%s; it was %s)",
             cause, was);
    fe_k_group_drop_kernels(gr);
    fe_k_group **subs = gr->sub;
    gr->sub = NULL;
    fe_k_group_set_perop(gr, note);
    gr->sub = subs;
    gr->fell_back = 1;
    return FE_OK;
}

static int run_perop_cb(void *ctx, fe_k_tensor *bufs, fe_error *err)
{
    return fe_k_group_run_perop(ctx, bufs, err);
}

/* AUTO on an anchored group our GEMM cannot take (because of reason): it
 * runs op by op, unless oneDNN takes it whole (a zero pad folded into a
 * conv2d's padding, say) and is faster, timed once per key. */
int fe_k_group_perop_or_dnn(fe_k_group *gr, const char *reason, fe_error *err)
{
    fe_error why = {0};
    double td, to;
    fe_k_group_set_perop(gr, reason);
    fe_k_dnn_group *dg = gr->n > 1 ? fe_k_group_dnn_new(gr, 1, &why) : NULL;
    if (!dg)
        return why.code == FE_ENOMEM ? fe_error_set(err, FE_ENOMEM, "out of memory") : FE_OK;
    int rc = fe_k_group_make_subs(gr, err);
    int faster = rc ? -1 : fe_k_dnn_group_choose(dg, fe_k_choice_name(FE_K_CHOICE_PER_OP), gr->ins,
                                                  gr->nins, gr->outs, gr->nouts, run_perop_cb, gr,
                                                  &td, &to);
    char note[1400];
    size_t l = strlen(gr->how);
    if (faster > 0) {
        fe_k_group_free_subs(gr);
        snprintf(note, sizeof note, "; chosen over %s: %.3f vs %.3f ms (%s cannot take it: %s)",
                 fe_k_choice_name(FE_K_CHOICE_PER_OP), td, to,
                 fe_k_choice_name(FE_K_CHOICE_MATMUL_BLOCKED), reason);
        fe_k_group_set_dnn(gr, dg, note);
        return FE_OK;
    }
    if (faster == 0) {   /* said in the line, and with the reason for fused parts */
        snprintf(gr->how + l, sizeof gr->how - l, "; chosen over %s (%s): %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_ONEDNN), fe_k_dnn_group_desc(dg), to, td);
        l = strlen(gr->perop_why);
        snprintf(gr->perop_why + l, sizeof gr->perop_why - l, ", and its ops one by one measured "
                 "faster than %s (%s): %.3f vs %.3f ms", fe_k_choice_name(FE_K_CHOICE_ONEDNN),
                 fe_k_dnn_group_desc(dg), to, td);
    }
    fe_k_dnn_group_free(dg);
    return rc;
}

/* A key for the group's structure: each member's op, output dtype and
 * shape, and where each input comes from (a member, or an outside tensor's
 * dtype and shape), hashed (FNV-1a). */
static void group_key(const fe_k_group *gr, const char *what, char *buf, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    const fe_graph *g = gr->g;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    for (int i = 0; i < gr->n; i++) {
        const fe_node *n = fe_graph_node(g, gr->nodes[i]);
        MIX(n->op);
        for (int k = 0; k < n->nin + n->nout; k++) {
            int32_t t = k < n->nin ? fe_node_input(g, n, k) : fe_node_output(g, n, k - n->nin);
            const fe_tensor *tt = fe_graph_tensor(g, t);
            int pr = fe_k_group_index(gr, tt->producer);
            MIX(k < n->nin && pr >= 0 ? 1000 + pr : tt->dtype);
            for (int a = 0; a < tt->rank; a++)
                MIX(fe_tensor_shape(g, tt)[a]);
        }
    }
#undef MIX
    snprintf(buf, size, "%s|%d|%016llx", what, gr->n, (unsigned long long)h);
}

/* AUTO times a fused group against its ops one by one only when it
 * computes at least this many elements: below, a run takes microseconds
 * and the two measure alike, within the noise. */
#define GUARD_MIN_ELEMS (1 << 20)
/* ... and when its matmul or conv2d does at most this many FLOPs: above,
 * the GEMM is most of the time and the same kernel either way, while each
 * timed run costs a tenth of a second or more (a 7B layer's GEMMs at
 * S=512 do 17 to 46 GFLOP). "The same kernel" is gemm.c's to keep: its
 * whole-row blocks once ran 10-16% slower than plain ones, unseen here. */
#define GUARD_MAX_FLOPS 8000000000LL
/* Op by op must be faster by more than this share to be kept: a smaller
 * difference is within a shared machine's noise. */
#define GUARD_NOISE 0.05

static int run_group_cb(void *ctx, fe_k_tensor *bufs, fe_error *err)
{
    return fe_k_group_run(ctx, bufs, err);
}

int fe_k_group_auto_guard(fe_k_group *gr, fe_error *err)
{
    char what[32], key[96], note[sizeof gr->how + 128], was[sizeof gr->how];
    double tf, to;
    int64_t elems = 0, flops = 0, bytes = 0;
    if (gr->mode == MODE_PEROP || gr->n < 2)
        return FE_OK;
    for (int i = 0; i < gr->n; i++) {
        const fe_node *nd = fe_graph_node(gr->g, gr->nodes[i]);
        int64_t f = 0;
        elems += fe_graph_tensor(gr->g, fe_node_output(gr->g, nd, 0))->numel;
        if (fe_op_get(nd->op)->flags & FE_OPF_LIBRARY) {
            fe_op_cost(gr->g, nd, &f, &bytes);
            flops += f;
        }
    }
    if (elems < GUARD_MIN_ELEMS || flops > GUARD_MAX_FLOPS)
        return FE_OK;
    fe_error sub_err = {0};
    if (fe_k_group_make_subs(gr, &sub_err))   /* no ops to compare with: it stays fused */
        return sub_err.code == FE_ENOMEM ? fe_error_set(err, FE_ENOMEM, "%s", sub_err.message) : FE_OK;
    snprintf(what, sizeof what, "guard%d.%d", gr->mode, gr->split);   /* per kind of kernel and split */
    group_key(gr, what, key, sizeof key);
    int faster = fe_k_versus(key, gr->g, gr->ins, gr->nins, gr->outs, gr->nouts, run_group_cb, gr,
                             run_perop_cb, gr, &tf, &to);
    if (faster == 0 && to < (1 - GUARD_NOISE) * tf) {
        snprintf(was, sizeof was, "%s", gr->how);
        snprintf(note, sizeof note, "it measured slower fused than its ops one by one: %.3f vs "
                 "%.3f ms (fused, it ran %s)", tf, to, was);
        fe_k_group_drop_kernels(gr);
        fe_k_group **subs = gr->sub;
        gr->sub = NULL;
        fe_k_group_set_perop(gr, note);
        gr->sub = subs;
        return FE_OK;
    }
    fe_k_group_free_subs(gr);
    if (faster >= 0) {
        size_t l = strlen(gr->how);
        snprintf(gr->how + l, sizeof gr->how - l, "; kept over %s: %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_PER_OP), tf, to);
    }
    return FE_OK;
}
