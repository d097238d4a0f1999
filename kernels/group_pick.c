/* group_pick.c: which kernel a plan group runs, by measuring: AUTO puts
 * our GEMM (matmul_blocked) against oneDNN when both take an anchored
 * group, op by op against oneDNN when our GEMM cannot (a zero pad before a
 * conv2d, which oneDNN folds into the conv's padding), and op by op
 * against programs in turn (group_stages.c), which compute again what
 * several stages need. Each choice is timed once per shape in the process
 * (versus.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "group_impl.h"
#include "node.h"
#include "ops.h"
#include "versus.h"

/* AUTO leaves anchors below this many FLOPs to our GEMM: there the call
 * costs more than the kernel, and timing them is noise. */
#define DNN_MIN_FLOPS 4000000

static int find_anchor(const fe_exec_group *gr)
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

fe_k_dnn_group *fe_group_dnn_new(fe_exec_group *gr, int prologue, fe_error *why)
{
    int ai = find_anchor(gr);
    if (ai < 0)
        return fe_error_set(why, FE_EINPUT, "the group needs exactly one matmul or conv2d"), NULL;
    return fe_k_dnn_group_new(gr->g, gr->nodes, gr->n, gr->nodes[ai], gr->outs, gr->nouts,
                              prologue, why);
}

void fe_group_set_dnn(fe_exec_group *gr, fe_k_dnn_group *dg, const char *note)
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
    return fe_group_run_anchor(ctx, bufs, err);
}

/* AUTO on a group our GEMM runs (MODE_ANCHOR): if oneDNN can take it too,
 * time both once per key in the process and keep the faster. */
void fe_group_auto_dnn(fe_exec_group *gr)
{
    fe_error why = {0};
    int64_t flops = 0, bytes = 0;
    double td, to;
    char note[200];
    fe_op_cost(gr->g, fe_graph_node(gr->g, gr->anchor), &flops, &bytes);
    if (flops < DNN_MIN_FLOPS)
        return;
    fe_k_dnn_group *dg = fe_group_dnn_new(gr, 1, &why);   /* a prologue as a pass of its own */
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
        for (int k = 0; k < 2; k++) {
            fe_k_prog_free(gr->pro[k]);
            gr->pro[k] = NULL;
        }
        fe_k_prog_free(gr->epi);
        gr->epi = NULL;
        fe_group_set_dnn(gr, dg, note);
        return;
    }
    if (faster == 0)
        snprintf(gr->how + l, sizeof gr->how - l, "; chosen over %s (%s): %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_ONEDNN), fe_k_dnn_group_desc(dg), to, td);
    fe_k_dnn_group_free(dg);
}

void fe_group_free_subs(fe_exec_group *gr)
{
    for (int i = 0; gr->sub && i < gr->n; i++)
        fe_exec_group_free(gr->sub[i]);
    free(gr->sub);
    gr->sub = NULL;
}

/* A per_op group's members as groups of their own, with the kernels AUTO
 * picks for each, as the unfused plan runs them. */
int fe_group_make_subs(fe_exec_group *gr, fe_error *err)
{
    if (!(gr->sub = calloc((size_t)gr->n, sizeof *gr->sub)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < gr->n; i++)
        if (!(gr->sub[i] = fe_exec_group_new(gr->g, &gr->nodes[i], 1, 1, FE_K_CHOICE_AUTO, err))) {
            fe_group_free_subs(gr);
            return err->code ? err->code : FE_ENOMEM;
        }
    return FE_OK;
}

static int run_perop_cb(void *ctx, fe_k_tensor *bufs, fe_error *err)
{
    return fe_group_run_perop(ctx, bufs, err);
}

/* AUTO on an anchored group our GEMM cannot take (because of reason): it
 * runs op by op, unless oneDNN takes it whole (a zero pad folded into a
 * conv2d's padding, say) and is faster, timed once per key. */
int fe_group_perop_or_dnn(fe_exec_group *gr, const char *reason, fe_error *err)
{
    fe_error why = {0};
    double td, to;
    fe_group_set_perop(gr, reason);
    fe_k_dnn_group *dg = gr->n > 1 ? fe_group_dnn_new(gr, 1, &why) : NULL;
    if (!dg)
        return why.code == FE_ENOMEM ? fe_error_set(err, FE_ENOMEM, "out of memory") : FE_OK;
    int rc = fe_group_make_subs(gr, err);
    int faster = rc ? -1 : fe_k_dnn_group_choose(dg, fe_k_choice_name(FE_K_CHOICE_PER_OP), gr->ins,
                                                  gr->nins, gr->outs, gr->nouts, run_perop_cb, gr,
                                                  &td, &to);
    char note[1400];
    size_t l = strlen(gr->how);
    if (faster > 0) {
        fe_group_free_subs(gr);
        snprintf(note, sizeof note, "; chosen over %s: %.3f vs %.3f ms (%s cannot take it: %s)",
                 fe_k_choice_name(FE_K_CHOICE_PER_OP), td, to,
                 fe_k_choice_name(FE_K_CHOICE_MATMUL_BLOCKED), reason);
        fe_group_set_dnn(gr, dg, note);
        return FE_OK;
    }
    if (faster == 0)
        snprintf(gr->how + l, sizeof gr->how - l, "; chosen over %s (%s): %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_ONEDNN), fe_k_dnn_group_desc(dg), to, td);
    fe_k_dnn_group_free(dg);
    return rc;
}

/* A key for the group's structure: each member's op, output dtype and
 * shape, and where each input comes from (a member, or an outside tensor's
 * dtype and shape), hashed (FNV-1a). */
static void group_key(const fe_exec_group *gr, const char *what, char *buf, size_t size)
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
            int pr = fe_group_index(gr, tt->producer);
            MIX(k < n->nin && pr >= 0 ? 1000 + pr : tt->dtype);
            for (int a = 0; a < tt->rank; a++)
                MIX(fe_tensor_shape(g, tt)[a]);
        }
    }
#undef MIX
    snprintf(buf, size, "%s|%d|%016llx", what, gr->n, (unsigned long long)h);
}

static int run_stages_cb(void *ctx, fe_k_tensor *bufs, fe_error *err)
{
    fe_exec_group *gr = ctx;
    return fe_k_stages_run(gr->stages, bufs, gr->split, err);
}

/* AUTO keeps programs in turn without timing them for groups computing
 * fewer elements than this: there a run takes microseconds and the two
 * measure alike, within the noise. */
#define STAGES_MIN_ELEMS (1 << 20)

int fe_group_auto_stages(fe_exec_group *gr, fe_error *err)
{
    char key[96], note[200];
    double ts, to;
    int64_t elems = 0;
    for (int i = 0; i < gr->n; i++)
        elems += fe_graph_tensor(gr->g, fe_node_output(gr->g, fe_graph_node(gr->g, gr->nodes[i]), 0))->numel;
    if (elems < STAGES_MIN_ELEMS)
        return FE_OK;
    int rc = fe_group_make_subs(gr, err);
    if (rc)
        return rc;
    group_key(gr, "stages", key, sizeof key);
    int faster = fe_k_versus(key, gr->g, gr->ins, gr->nins, gr->outs, gr->nouts, run_stages_cb, gr,
                             run_perop_cb, gr, &ts, &to);
    if (faster == 0 && to < 0.95 * ts) {   /* op by op, by more than the noise */
        snprintf(note, sizeof note, "its %d programs in turn measured slower: %.3f vs %.3f ms",
                 fe_k_stages_count(gr->stages), ts, to);
        fe_k_stages_free(gr->stages);
        gr->stages = NULL;
        fe_exec_group **subs = gr->sub;
        gr->sub = NULL;
        fe_group_set_perop(gr, note);
        gr->sub = subs;
        return FE_OK;
    }
    fe_group_free_subs(gr);
    if (faster >= 0) {
        size_t l = strlen(gr->how);
        snprintf(gr->how + l, sizeof gr->how - l, "; kept over %s: %.3f vs %.3f ms",
                 fe_k_choice_name(FE_K_CHOICE_PER_OP), ts, to);
    }
    return FE_OK;
}
