/* group.c: compile and run one plan group (see group.h).
 *
 * Note on how a group is taken apart.
 *
 * A group with one out-fusable op (matmul, conv2d) is anchored on it. Walking
 * back from the anchor's inputs inside the group finds its prologue (per
 * operand), walking forward from its output its epilogue:
 *
 *     x --[add]--[rms_norm]--> A --\
 *                                  [matmul] --> Y --[add bias]--[gelu]--> out
 *     w -------------------------> B --/
 *        `------ prologue A ------'             `------- epilogue -------'
 *
 * The prologue becomes a fused program whose result is handed to the GEMM
 * packer row by row (so A is never materialised); the epilogue a fused
 * program whose anchor is the GEMM's finished output block. A member that is
 * neither (a side branch) or a prologue value the epilogue needs makes the
 * group run op by op, and the reason is reported. Groups without an anchor
 * compile into one fused program when every member is elementwise,
 * broadcast or a row reduction.
 *
 * A group with a max_pool2d or avg_pool2d (legality's pool class) is
 * anchored on the pool the same way, with an epilogue only: the pool
 * computes one output plane (n, c) at a time and the epilogue program runs
 * on it while it is in cache, as on a conv2d's output rows. Elementwise
 * ops before the pool make the group run op by op.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary.h"
#include "choice.h"
#include "conv.h"
#include "convert.h"
#include "fused.h"
#include "group.h"
#include "group_impl.h"
#include "group_dnn.h"
#include "group_views.h"
#include "matmul.h"
#include "node.h"
#include "ops.h"
#include "tensor_mem.h"

int fe_k_group_index(const fe_k_group *gr, int32_t node)
{
    return fe_k_node_index(gr->nodes, gr->n, node);
}

static int member(const fe_k_group *gr, int32_t node)
{
    return fe_k_group_index(gr, node) >= 0;
}

/* "add, gelu" from node ids */
static void op_list(const fe_graph *g, const int32_t *ids, int n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 16 < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                                fe_node_op_name(fe_graph_node(g, ids[i])));
}

/* "add, gelu": the ops of the members with role r */
static void role_ops(const fe_k_group *gr, const int *role, int r, char *buf, size_t size)
{
    int32_t *ids = malloc((size_t)gr->n * sizeof(int32_t));
    int m = 0;
    buf[0] = 0;
    if (!ids)
        return;
    for (int i = 0; i < gr->n; i++)
        if (role[i] == r)
            ids[m++] = gr->nodes[i];
    op_list(gr->g, ids, m, buf, size);
    free(ids);
}

static void split_note(const fe_k_group *gr, char *buf, size_t size)
{
    if (gr->split > 1)
        snprintf(buf, size, "; TLF: %d tiles along the outermost output axis", gr->split);
    else
        buf[0] = 0;
}

/* ---- per-op ---- */

void fe_k_group_set_perop(fe_k_group *gr, const char *reason)
{
    char ops[256];
    gr->mode = MODE_PEROP;
    gr->kernel = FE_K_CHOICE_PER_OP;
    snprintf(gr->perop_why, sizeof gr->perop_why, "%s", reason ? reason : "");
    op_list(gr->g, gr->nodes, gr->n, ops, sizeof ops);
    if (gr->n == 1)
        snprintf(gr->how, sizeof gr->how, "reference kernel: %s%s%s%s", ops,
                 reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
    else
        snprintf(gr->how, sizeof gr->how, "%s: %d ops run one by one (%s), intermediates "
                 "materialised%s%s%s", fe_k_choice_name(FE_K_CHOICE_PER_OP), gr->n, ops, reason ? "; not fused because " : "",
                 reason ? reason : "", gr->split > 1 ? "; TLF split not applied" : "");
    /* temporaries: every produced tensor that does not leave the group */
    gr->temp_bytes = 0;
    for (int i = 0; i < gr->n; i++) {
        const fe_node *n = fe_graph_node(gr->g, gr->nodes[i]);
        for (int k = 0; k < n->nout; k++) {
            int32_t t = fe_node_output(gr->g, n, k);
            if (!fe_k_ids_has(gr->outs, gr->nouts, t))
                gr->temp_bytes += fe_graph_tensor(gr->g, t)->bytes;
        }
    }
}

/* ---- fused ---- */

static int try_fused(fe_k_group *gr, fe_error *why)
{
    char desc[256], sn[96];
    gr->prog = fe_k_prog_compile_nodes(gr->g, gr->nodes, gr->n, gr->outs, gr->nouts, why);
    if (!gr->prog)
        return -1;
    gr->mode = MODE_FUSED;
    gr->kernel = FE_K_CHOICE_FUSED;
    split_note(gr, sn, sizeof sn);
    snprintf(gr->how, sizeof gr->how, "%s: %s%s", fe_k_choice_name(FE_K_CHOICE_FUSED),
             fe_k_prog_describe(gr->prog, desc, sizeof desc), sn);
    return 0;
}

/* A group of views only with several outputs: a program per output
 * (group_views.c), each a copy of its chain of views. Tried before one
 * fused program, which cannot take outputs of different shapes and, for
 * outputs of one shape, reads the source once per output all the same but
 * through the f32 tiles (GPT-2's q, k, v split: 0.5x of its ops run one by
 * one). 0 when it runs so. */
static int try_views(fe_k_group *gr)
{
    fe_error why = {0};
    if (gr->nouts < 2 || !(gr->views = fe_k_views_new(gr->g, gr->nodes, gr->n, gr->outs, gr->nouts, &why)))
        return -1;
    gr->mode = MODE_VIEWS;
    gr->kernel = FE_K_CHOICE_FUSED;
    snprintf(gr->how, sizeof gr->how, "%s: views only, each of its %d outputs a program of its own "
             "(no intermediate written)", fe_k_choice_name(FE_K_CHOICE_FUSED), gr->nouts);
    return 0;
}

/* A group whose column reductions are read by later members: fused
 * programs in turn (group_stages.c). 0 when it runs so; otherwise why,
 * which holds one program's reason, also gets the stages' when it differs
 * (the concat one program cannot run is not what stops the stages). */
static int try_stages(fe_k_group *gr, fe_error *why)
{
    fe_error e = {0};
    char desc[256], sn[96];
    if (!(gr->stages = fe_k_stages_new(gr->g, gr->nodes, gr->n, gr->outs, gr->nouts, &e))) {
        if (e.code == FE_ENOMEM)
            *why = e;
        else if (strcmp(e.message, why->message)) {
            size_t l = strlen(why->message);
            snprintf(why->message + l, sizeof why->message - l, "; as programs in turn: %s",
                     e.message);
        }
        return -1;
    }
    gr->mode = MODE_STAGES;
    gr->kernel = FE_K_CHOICE_FUSED;
    gr->temp_bytes = fe_k_stages_temp_bytes(gr->stages);
    split_note(gr, sn, sizeof sn);
    snprintf(gr->how, sizeof gr->how, "%s: %s%s", fe_k_choice_name(FE_K_CHOICE_FUSED),
             fe_k_stages_describe(gr->stages, desc, sizeof desc), sn);
    return 0;
}

/* ---- anchored (matmul / conv) ---- */

/* Mark role r on the producers of tensor t inside the group, recursively. */
static int mark_back(fe_k_group *gr, int32_t t, int r, int *role)
{
    int32_t p = fe_graph_tensor(gr->g, t)->producer;
    int i = fe_k_group_index(gr, p);
    if (i < 0)
        return 0;
    if (role[i] == r)
        return 0;
    if (role[i] != 0)
        return -1;
    role[i] = r;
    const fe_node *n = fe_graph_node(gr->g, p);
    for (int k = 0; k < n->nin; k++)
        if (mark_back(gr, fe_node_input(gr->g, n, k), r, role))
            return -1;
    return 0;
}

static void mark_fwd(fe_k_group *gr, int32_t t, int *role)
{
    const fe_tensor *tt = fe_graph_tensor(gr->g, t);
    for (int k = 0; k < tt->ncons; k++) {
        int32_t c = fe_tensor_consumer(gr->g, tt, k);
        int i = fe_k_group_index(gr, c);
        if (i < 0 || role[i] == 3)
            continue;
        role[i] = 3;
        const fe_node *n = fe_graph_node(gr->g, c);
        for (int j = 0; j < n->nout; j++)
            mark_fwd(gr, fe_node_output(gr->g, n, j), role);
    }
}

/* Compile a sub-program of the members with role r. */
static fe_k_prog *sub_prog(fe_k_group *gr, const int *role, int r, int32_t anchor,
                           int32_t result, int32_t extra_store, const int64_t *domain, int drank,
                           int col_axis, int *count, fe_error *why)
{
    int32_t *ids = malloc((size_t)gr->n * sizeof(int32_t)), *st = malloc((size_t)(gr->nouts + 2) * sizeof(int32_t));
    int n = 0, ns = 0;
    fe_k_prog *p = NULL;
    if (!ids || !st) {
        fe_error_set(why, FE_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < gr->n; i++)
        if (role[i] == r)
            ids[n++] = gr->nodes[i];
    for (int k = 0; k < gr->nouts; k++) {
        int32_t pr = fe_graph_tensor(gr->g, gr->outs[k])->producer;
        if (fe_k_ids_has(ids, n, pr) || (gr->outs[k] == anchor))
            st[ns++] = gr->outs[k];
    }
    if (extra_store >= 0 && !fe_k_ids_has(st, ns, extra_store))
        st[ns++] = extra_store;
    *count = n;
    if (n == 0)
        goto out;
    fe_k_prog_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.g = gr->g;
    sp.nodes = ids;
    sp.nnodes = n;
    sp.stores = st;
    sp.nstores = ns;
    sp.anchor = anchor;
    sp.result = result;
    sp.domain = domain;
    sp.domain_rank = drank;
    sp.col_axis = col_axis;
    p = fe_k_prog_compile(&sp, why);
out:
    free(ids);
    free(st);
    return p;
}

int fe_k_group_try_anchor(fe_k_group *gr, int blas, fe_error *why)
{
    const fe_graph *g = gr->g;
    int na = 0, ai = -1, rc = -1;
    int *role = calloc((size_t)gr->n, sizeof(int));
    char pro_s[2][400] = {"", ""}, epi_s[400] = "", ops[256], sn[96];
    if (!role)
        return fe_error_set(why, FE_ENOMEM, "out of memory"), -1;
    for (int i = 0; i < gr->n; i++) {
        int op = fe_graph_node(g, gr->nodes[i])->op;
        if (op == FE_OP_MATMUL || op == FE_OP_CONV2D) {
            na++;
            ai = i;
        }
    }
    if (na != 1) {
        if (na)
            fe_error_set(why, FE_EINPUT, "the group has %d matmul/conv2d ops (one kernel takes one)", na);
        else
            fe_error_set(why, FE_EINPUT, "the group has no matmul or conv2d");
        goto out;
    }
    const fe_node *an = fe_graph_node(g, gr->nodes[ai]);
    int is_conv = an->op == FE_OP_CONV2D;
    gr->anchor = gr->nodes[ai];
    gr->opnd[0] = fe_node_input(g, an, 0);
    gr->opnd[1] = fe_node_input(g, an, 1);
    gr->y = fe_node_output(g, an, 0);
    role[ai] = 9;
    for (int k = 0; k < 2; k++)
        if (mark_back(gr, gr->opnd[k], k + 1, role)) {
            fe_error_set(why, FE_EINPUT, "a node feeds both operands of %s '%s'", fe_node_op_name(an),
                         fe_node_name(g, an));
            goto out;
        }
    if (is_conv && an->nin > 2) {
        int32_t bp = fe_graph_tensor(g, fe_node_input(g, an, 2))->producer;
        if (bp >= 0 && member(gr, bp)) {
            fe_error_set(why, FE_EINPUT, "conv2d '%s' takes no prologue on its bias",
                         fe_node_name(g, an));
            goto out;
        }
    }
    mark_fwd(gr, gr->y, role);
    for (int i = 0; i < gr->n; i++) {
        const fe_node *n = fe_graph_node(g, gr->nodes[i]);
        if (!role[i]) {
            fe_error_set(why, FE_EINPUT, "node '%s' (%s) is neither a prologue nor an epilogue of "
                         "%s '%s'", fe_node_name(g, n), fe_node_op_name(n), fe_node_op_name(an),
                         fe_node_name(g, an));
            goto out;
        }
        if (is_conv && role[i] == 2) {
            fe_error_set(why, FE_EINPUT, "conv2d '%s' takes no prologue on its weights (node '%s')",
                         fe_node_name(g, an), fe_node_name(g, n));
            goto out;
        }
        if (role[i] == 3)   /* epilogue inputs made by a prologue must be stored */
            for (int k = 0; k < n->nin; k++) {
                int32_t t = fe_node_input(g, n, k), p = fe_graph_tensor(g, t)->producer;
                int j = fe_k_group_index(gr, p);
                if (j >= 0 && (role[j] == 1 || role[j] == 2) &&
                    !fe_k_ids_has(gr->outs, gr->nouts, t)) {
                    fe_error_set(why, FE_EINPUT, "epilogue node '%s' reads %s, an intermediate of the "
                                 "prologue", fe_node_name(g, n), fe_tensor_name(g, fe_graph_tensor(g, t)));
                    goto out;
                }
            }
    }
    /* prologues */
    for (int k = 0; k < 2; k++) {
        const fe_tensor *ot = fe_graph_tensor(g, gr->opnd[k]);
        int trans = fe_node_attr_bool(g, an, k ? "transpose_b" : "transpose_a", 0) && ot->rank > 1;
        int cnt = 0;
        for (int i = 0; i < gr->n; i++)
            cnt += role[i] == k + 1;
        if (!cnt)
            continue;
        if (trans) {
            fe_error_set(why, FE_EINPUT, "a prologue on %s '%s' needs transpose_%c = false",
                         fe_node_op_name(an), fe_node_name(g, an), k ? 'b' : 'a');
            goto out;
        }
        gr->pro_sep[k] = blas;
        if (blas)   /* BLAS takes no prologue: a separate pass materialises the operand */
            gr->pro[k] = sub_prog(gr, role, k + 1, -1, -1, gr->opnd[k], NULL, 0, -1, &cnt, why);
        else
            gr->pro[k] = sub_prog(gr, role, k + 1, -1, gr->opnd[k], -1, fe_tensor_shape(g, ot),
                                  ot->rank, ot->rank - 1 < 0 ? 0 : ot->rank - 1, &cnt, why);
        if (!gr->pro[k])
            goto out;
        role_ops(gr, role, k + 1, ops, sizeof ops);
        if (is_conv)
            snprintf(pro_s[k], sizeof pro_s[k], "; prologue on the input (%d ops: %s), one image "
                     "ahead of the convolution", cnt, ops);
        else
            snprintf(pro_s[k], sizeof pro_s[k], blas ? "; prologue on %c (%d ops: %s) as a "
                     "separate fused pass" : "; prologue on %c (%d ops: %s) fused into packing",
                     k ? 'B' : 'A', cnt, ops);
        if (blas)
            gr->temp_bytes += ot->bytes;
    }
    /* epilogue */
    {
        const fe_tensor *yt = fe_graph_tensor(g, gr->y);
        int cnt = 0, col = is_conv ? 2 : fe_graph_tensor(g, gr->opnd[1])->rank == 1 ? yt->rank
                                                                                    : yt->rank - 1;
        gr->epi = sub_prog(gr, role, 3, gr->y, -1, -1, fe_tensor_shape(g, yt), yt->rank, col, &cnt, why);
        if (cnt && !gr->epi)
            goto out;
        if (cnt) {
            role_ops(gr, role, 3, ops, sizeof ops);
            snprintf(epi_s, sizeof epi_s, blas ? "; epilogue (%d ops: %s) as a separate pass over "
                     "the output" : "; epilogue (%d ops: %s) on each output block in cache%s", cnt, ops,
                     fe_k_prog_full_rows(gr->epi) ? " (whole rows)" : "");
            if (blas)
                gr->temp_bytes += yt->bytes;
        } else if (!fe_k_ids_has(gr->outs, gr->nouts, gr->y)) {
            fe_error_set(why, FE_EINPUT, "the output of %s '%s' is not used", fe_node_op_name(an),
                         fe_node_name(g, an));
            goto out;
        }
    }
    gr->mode = MODE_ANCHOR;
    gr->kernel = blas ? FE_K_CHOICE_MATMUL_BLAS : FE_K_CHOICE_MATMUL_BLOCKED;
    split_note(gr, sn, sizeof sn);
    {
        int mr, nr, mc, kc, nc;
        fe_k_gemm_blocking(&mr, &nr, &mc, &kc, &nc);
        if (blas)
            snprintf(gr->how, sizeof gr->how, "%s: OpenBLAS sgemm%s%s%s%s",
                     fe_k_choice_name(FE_K_CHOICE_MATMUL_BLAS), pro_s[0], pro_s[1], epi_s, sn);
        else
            snprintf(gr->how, sizeof gr->how, "%s: %s as packed %dx%d GEMM, blocks %dx%d, "
                     "k %d%s%s%s%s", fe_k_choice_name(FE_K_CHOICE_MATMUL_BLOCKED), fe_node_op_name(an), mr, nr, mc, nc, kc, pro_s[0], pro_s[1], epi_s, sn);
    }
    rc = 0;
out:
    free(role);
    if (rc) {
        for (int k = 0; k < 2; k++) {
            fe_k_prog_free(gr->pro[k]);
            gr->pro[k] = NULL;
            gr->pro_sep[k] = 0;
        }
        fe_k_prog_free(gr->epi);
        gr->epi = NULL;
        gr->temp_bytes = 0;
    }
    return rc;
}

typedef struct pctx {
    fe_k_prog *p;
    fe_k_tensor *bufs;
    int round_dt;       /* epilogue: the anchor output's dtype unless f32, else -1 */
    int64_t rows, cols; /* conv prologue: rows (C x H) and columns (W) of one image */
} pctx;

static const float *pro_row(void *ctx, int64_t r, int64_t c0, int64_t n, float *tmp)
{
    const pctx *c = ctx;
    return fe_k_prog_result_row(c->p, c->bufs, r, c0, n, tmp);
}

/* A conv2d prologue: image n of the operand, row by row (its program's rows
 * are (n, c, h) and its columns w), into dst. */
static int pro_img(void *ctx, int64_t n, float *dst)
{
    const pctx *c = ctx;
    #pragma omp parallel for schedule(static) if (c->rows * c->cols >= (1 << 15))
    for (int64_t r = 0; r < c->rows; r++) {
        float *d = dst + r * c->cols;
        const float *got = fe_k_prog_result_row(c->p, c->bufs, n * c->rows + r, 0, c->cols, d);
        if (got != d)
            memcpy(d, got, (size_t)c->cols * sizeof(float));
    }
    return 0;
}

static int epi_block(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
                     int64_t ld, int tid)
{
    const pctx *c = ctx;
    /* The unfused matmul stores its output in its dtype before the
     * epilogue reads it; round the block the same way so that both agree. */
    if (c->round_dt >= 0)
        for (int64_t i = 0; i < mc; i++)
            fe_k_round_to(c->round_dt, blk + i * ld, nc);
    return fe_k_prog_run_block(c->p, c->bufs, i0, mc, j0, nc, blk, ld, tid);
}

int fe_k_group_run_anchor(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err)
{
    const fe_graph *g = gr->g;
    const fe_node *an = fe_graph_node(g, gr->anchor);
    int ydt = fe_graph_tensor(g, gr->y)->dtype;
    pctx pc[2] = {{gr->pro[0], bufs, -1, 0, 0}, {gr->pro[1], bufs, -1, 0, 0}},
         ec = {gr->epi, bufs, ydt != FE_F32 ? ydt : -1, 0, 0};   /* bool, ints too: 7 -> 1 */
    int rc = FE_OK;
    void *tmp[2] = {NULL, NULL};
    int32_t y = gr->y;

    /* separate prologue passes (BLAS) materialise their operand */
    for (int k = 0; k < 2; k++)
        if (gr->pro[k] && gr->pro_sep[k] && !bufs[gr->opnd[k]].data) {
            size_t b = (size_t)fe_graph_tensor(g, gr->opnd[k])->bytes;
            if (!(tmp[k] = fe_k_tensor_mem(b))) {
                rc = fe_error_set(err, FE_ENOMEM, "out of memory for a prologue pass");
                goto out;
            }
            bufs[gr->opnd[k]] = fe_k_graph_view(g, gr->opnd[k], tmp[k]);
        }
    for (int k = 0; k < 2; k++)
        if (gr->pro[k] && gr->pro_sep[k] && (rc = fe_k_prog_run(gr->pro[k], bufs, 0, 1, err)))
            goto out;
    for (int k = 0; k < 2; k++)
        if (gr->pro[k])
            fe_k_prog_reset(gr->pro[k]);
    /* the anchor's output needs a view even when it is never stored */
    if (!bufs[y].data && !gr->epi) {
        rc = fe_error_set(err, FE_ERUNTIME, "no buffer for %s", fe_tensor_name(g, fe_graph_tensor(g, y)));
        goto out;
    }
    fe_k_tensor yv = fe_k_graph_view(g, y, bufs[y].data);
    fe_k_tensor av = fe_k_graph_view(g, gr->opnd[0], bufs[gr->opnd[0]].data);
    fe_k_tensor bv = fe_k_graph_view(g, gr->opnd[1], bufs[gr->opnd[1]].data);
    if (an->op == FE_OP_MATMUL) {
        fe_k_mm mm;
        int rank;
        int64_t shape[FE_MAX_RANK];
        memset(&mm, 0, sizeof mm);
        mm.a = &av;
        mm.b = &bv;
        mm.ta = fe_node_attr_bool(g, an, "transpose_a", 0);
        mm.tb = fe_node_attr_bool(g, an, "transpose_b", 0);
        mm.y = &yv;
        mm.impl = gr->kernel == FE_K_CHOICE_MATMUL_BLAS ? FE_K_MM_BLAS : FE_K_MM_BLOCKED;
        if (gr->pro[0] && !gr->pro_sep[0]) {
            mm.arow = pro_row;
            mm.actx = &pc[0];
        }
        if (gr->pro[1] && !gr->pro_sep[1]) {
            mm.brow = pro_row;
            mm.bctx = &pc[1];
        }
        if (gr->epi) {
            mm.epi = epi_block;
            mm.ectx = &ec;
            mm.epi_full_rows = fe_k_prog_full_rows(gr->epi);
            fe_k_prog_reset(gr->epi);
        }
        if (fe_k_matmul_shape(&av, &bv, mm.ta, mm.tb, &rank, shape, err)) {
            rc = FE_EINPUT;
            goto out;
        }
        int64_t N = mm.b->rank == 1 ? 1 : shape[rank - 1], rows = 1;
        for (int i = 0; i < rank; i++)
            rows *= shape[i];
        rows = N ? rows / N : 0;
        for (int part = 0; part < gr->split && rc == FE_OK; part++) {
            mm.r0 = rows * part / gr->split;
            mm.r1 = rows * (part + 1) / gr->split;
            if (mm.r0 == mm.r1)
                continue;
            rc = fe_k_matmul(&mm, err);
        }
    } else {
        fe_k_conv cv;
        fe_k_tensor biasv;
        int64_t t[3];
        memset(&cv, 0, sizeof cv);
        cv.x = &av;
        cv.w = &bv;
        if (an->nin > 2) {
            biasv = fe_k_graph_view(g, fe_node_input(g, an, 2), bufs[fe_node_input(g, an, 2)].data);
            cv.bias = &biasv;
        }
        cv.y = &yv;
        cv.groups = fe_node_attr_int(g, an, "groups", 1);
        const char *keys[3] = {"stride", "padding", "dilation"};
        int64_t dflt[3] = {1, 0, 1}, *dst[3] = {cv.stride, cv.pad, cv.dil};
        for (int k = 0; k < 3; k++) {
            int c = fe_node_attr_ints(g, an, keys[k], t, 3);
            dst[k][0] = c == -1 ? dflt[k] : t[0];
            dst[k][1] = c == -1 ? dflt[k] : c == 1 ? t[0] : t[1];
        }
        if (gr->epi) {
            cv.epi = epi_block;
            cv.ectx = &ec;
            cv.epi_full_rows = fe_k_prog_full_rows(gr->epi);
            fe_k_prog_reset(gr->epi);
        }
        if (gr->pro[0]) {
            pc[0].rows = av.shape[1] * av.shape[2];
            pc[0].cols = av.shape[3];
            cv.ximg = pro_img;
            cv.xctx = &pc[0];
        }
        int64_t rows = yv.shape[0] * yv.shape[1];
        for (int part = 0; part < gr->split && rc == FE_OK; part++) {
            cv.r0 = rows * part / gr->split;
            cv.r1 = rows * (part + 1) / gr->split;
            if (cv.r0 == cv.r1)
                continue;
            rc = fe_k_conv2d(&cv, err);
        }
    }
    if (rc == FE_ERUNTIME && fe_k_prog_failure(gr->epi))
        fe_error_cause(err, "%s", fe_k_prog_failure(gr->epi));
    if (rc && err && strncmp(err->message, "node '", 6))
        fe_error_prefix(err, "node '%s' (%s): ", fe_node_name(g, an), fe_node_op_name(an));
out:
    for (int k = 0; k < 2; k++)
        if (tmp[k]) {
            free(tmp[k]);
            bufs[gr->opnd[k]].data = NULL;
        }
    return rc;
}

/* ---- pool with an epilogue ---- */

static int is_pool(const fe_node *n)
{
    return n->op == FE_OP_MAX_POOL2D || n->op == FE_OP_AVG_POOL2D;
}

/* A max pool's input padded with -inf (or the lowest float, as exports
 * write it) on H and W by a member that only the pool reads: the padded
 * positions never win, so the pool pads the unpadded input itself, with
 * no window left without an input element (each side under the window's
 * extent). The pad's index in gr->nodes, its sizes into gr->pool_pad and
 * its input as gr->opnd[0]; -1 if there is none. */
static int pool_pad(fe_k_group *gr, const fe_node *pn, const fe_k_pool *p)
{
    const fe_graph *g = gr->g;
    const fe_tensor *xt = fe_graph_tensor(g, gr->opnd[0]);
    int32_t v = xt->producer;
    if (pn->op != FE_OP_MAX_POOL2D || v < 0 || !member(gr, v) || xt->ncons != 1 ||
        fe_k_ids_has(gr->outs, gr->nouts, gr->opnd[0]) || p->pad[0] || p->pad[1])
        return -1;
    int64_t lo[2], hi[2];
    double value;
    if (!fe_k_node_pad_hw(g, fe_graph_node(g, v), lo, hi, &value) || value > -FLT_MAX)
        return -1;
    for (int a = 0; a < 2; a++) {
        int64_t extent = (p->kernel[a] - 1) * p->dil[a] + 1;
        if (lo[a] >= extent || hi[a] >= extent)
            return -1;
    }
    gr->pool_pad[0] = lo[0];
    gr->pool_pad[1] = lo[1];
    gr->opnd[0] = fe_node_input(g, fe_graph_node(g, v), 0);
    for (int i = 0; i < gr->n; i++)
        if (gr->nodes[i] == v)
            return i;
    return -1;
}

static int try_pool(fe_k_group *gr, fe_error *why)
{
    const fe_graph *g = gr->g;
    int np = 0, pi = -1, cnt = 0, rc = -1;
    char ops[256], sn[96];
    for (int i = 0; i < gr->n; i++)
        if (is_pool(fe_graph_node(g, gr->nodes[i]))) {
            np++;
            pi = i;
        }
    if (np != 1)
        return fe_error_set(why, FE_EINPUT, "the group has %d pooling ops (one kernel takes one)", np), -1;
    int *role = calloc((size_t)gr->n, sizeof(int));
    if (!role)
        return fe_error_set(why, FE_ENOMEM, "out of memory"), -1;
    const fe_node *pn = fe_graph_node(g, gr->nodes[pi]);
    gr->anchor = gr->nodes[pi];
    gr->opnd[0] = fe_node_input(g, pn, 0);
    gr->y = fe_node_output(g, pn, 0);
    role[pi] = 9;
    fe_k_pool pool;
    int padi = fe_k_node_pool(g, pn, &pool, NULL) ? -1 : pool_pad(gr, pn, &pool);
    if (padi >= 0)
        role[padi] = 9;
    mark_fwd(gr, gr->y, role);
    for (int i = 0; i < gr->n; i++)
        if (!role[i]) {
            const fe_node *n = fe_graph_node(g, gr->nodes[i]);
            fe_error_set(why, FE_EINPUT, "node '%s' (%s) is not an epilogue of %s '%s'",
                         fe_node_name(g, n), fe_node_op_name(n), fe_node_op_name(pn),
                         fe_node_name(g, pn));
            goto out;
        }
    const fe_tensor *yt = fe_graph_tensor(g, gr->y);
    /* rows (n, c), columns (oh, ow): one pooled plane per row */
    gr->epi = sub_prog(gr, role, 3, gr->y, -1, -1, fe_tensor_shape(g, yt), yt->rank, 2, &cnt, why);
    if (!gr->epi)
        goto out;
    role_ops(gr, role, 3, ops, sizeof ops);
    sn[0] = 0;
    if (gr->split > 1)
        snprintf(sn, sizeof sn, "; TLF split not applied (the pool already runs plane by plane)");
    gr->mode = MODE_POOL;
    gr->kernel = FE_K_CHOICE_FUSED;
    char pads[160] = "";
    if (padi >= 0)
        snprintf(pads, sizeof pads, " (pad '%s' folded into its padding)",
                 fe_node_name(g, fe_graph_node(g, gr->nodes[padi])));
    snprintf(gr->how, sizeof gr->how, "%s: %s plane by plane%s; epilogue (%d ops: %s) on each "
             "pooled plane in cache%s", fe_k_choice_name(FE_K_CHOICE_FUSED), fe_node_op_name(pn),
             pads, cnt, ops, sn);
    rc = 0;
out:
    free(role);
    if (rc) {
        fe_k_prog_free(gr->epi);
        gr->epi = NULL;
    }
    return rc;
}

static int run_pool(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err)
{
    const fe_graph *g = gr->g;
    const fe_node *pn = fe_graph_node(g, gr->anchor);
    int ydt = fe_graph_tensor(g, gr->y)->dtype;
    pctx ec = {gr->epi, bufs, ydt != FE_F32 ? ydt : -1, 0, 0};
    fe_k_pool p;
    int rc = fe_k_node_pool(g, pn, &p, err);
    if (rc)
        return rc;
    p.epi = epi_block;
    p.ectx = &ec;
    p.pad[0] += gr->pool_pad[0];
    p.pad[1] += gr->pool_pad[1];
    fe_k_prog_reset(gr->epi);
    fe_k_tensor xv = fe_k_graph_view(g, gr->opnd[0], bufs[gr->opnd[0]].data);
    fe_k_tensor yv = fe_k_graph_view(g, gr->y, bufs[gr->y].data);
    rc = pn->op == FE_OP_MAX_POOL2D ? fe_k_max_pool2d(&xv, &p, &yv, err)
                                    : fe_k_avg_pool2d(&xv, &p, &yv, err);
    if (rc == FE_ERUNTIME && fe_k_prog_failure(gr->epi))
        fe_error_cause(err, "%s", fe_k_prog_failure(gr->epi));
    if (rc && err && strncmp(err->message, "node '", 6))
        fe_error_prefix(err, "node '%s' (%s): ", fe_node_name(g, pn), fe_node_op_name(pn));
    return rc;
}

/* ---- public ---- */

fe_k_group *fe_k_group_new(const fe_graph *g, const int32_t *nodes, int n, int split,
                                 int kernel, fe_error *err)
{
    fe_k_group *gr;
    fe_error why = {0};
    if (n < 1 || !nodes)
        return fe_error_set(err, FE_EINPUT, "a group needs at least one node"), NULL;
    if (!fe_k_choice_get(kernel))
        return fe_error_set(err, FE_EINPUT, "unknown kernel choice %d (known: %s)", kernel,
                            fe_k_choice_names()), NULL;
    gr = calloc(1, sizeof *gr);
    if (!gr)
        return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
    gr->g = g;
    gr->n = n;
    gr->split = split < 1 ? 1 : split;
    gr->anchor = -1;
    gr->nodes = malloc((size_t)n * sizeof(int32_t));
    if (!gr->nodes) {
        free(gr);
        return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
    }
    memcpy(gr->nodes, nodes, (size_t)n * sizeof(int32_t));
    fe_k_ids_sort(gr->nodes, n);
    for (int i = 0; i < n; i++)
        if (gr->nodes[i] < 0 || gr->nodes[i] >= g->nnodes || (i && gr->nodes[i] == gr->nodes[i - 1])) {
            fe_k_group_free(gr);
            return fe_error_set(err, FE_EINPUT, "bad or repeated node id in a group"), NULL;
        }
    if (fe_k_boundary(g, gr->nodes, n, &gr->ins, &gr->nins, &gr->outs, &gr->nouts, err)) {
        fe_k_group_free(gr);
        return NULL;
    }
    int nanchor = 0, npool = 0, fusable = 1;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, gr->nodes[i]);
        if (nd->op == FE_OP_MATMUL || nd->op == FE_OP_CONV2D)
            nanchor++;
        npool += n > 1 && is_pool(nd);
        if (nd->op == FE_OP_CUSTOM)
            fusable = 0;
    }
    char reason[1100];
    reason[0] = 0;
    switch (kernel) {
    case FE_K_CHOICE_PER_OP:
        snprintf(reason, sizeof reason, "kernel %s was requested", fe_k_choice_name(kernel));
        fe_k_group_set_perop(gr, n > 1 ? reason : NULL);
        break;
    case FE_K_CHOICE_FUSED:
        if (npool ? try_pool(gr, &why) : try_fused(gr, &why) && try_stages(gr, &why)) {
            snprintf(reason, sizeof reason, "kernel %s cannot take it: %s",
                     fe_k_choice_name(kernel), why.message);
            fe_k_group_set_perop(gr, reason);
        }
        break;
    case FE_K_CHOICE_MATMUL_BLOCKED:
    case FE_K_CHOICE_MATMUL_BLAS: {
        int blas = kernel == FE_K_CHOICE_MATMUL_BLAS;
        if (blas && nanchor == 1) {
            for (int i = 0; i < n; i++)
                if (fe_graph_node(g, gr->nodes[i])->op == FE_OP_CONV2D)
                    blas = 0;   /* sgemm has no im2col: conv runs blocked, said below */
        }
        if (fe_k_group_try_anchor(gr, blas, &why)) {
            snprintf(reason, sizeof reason, "kernel %s cannot take it: %s",
                     fe_k_choice_get(kernel)->name, why.message);
            fe_k_group_set_perop(gr, reason);
        } else if (blas != (kernel == FE_K_CHOICE_MATMUL_BLAS)) {
            size_t l = strlen(gr->how);
            snprintf(gr->how + l, sizeof gr->how - l, " (%s was requested; it has no conv2d)",
                     fe_k_choice_name(FE_K_CHOICE_MATMUL_BLAS));
        }
        break;
    }
    case FE_K_CHOICE_ONEDNN: {
        fe_k_dnn_group *dg = fusable ? fe_k_group_dnn_new(gr, 0, &why) : NULL;
        if (dg) {
            fe_k_group_set_dnn(gr, dg, "");
            break;
        }
        snprintf(reason, sizeof reason, "kernel %s cannot take it: %s", fe_k_choice_name(kernel),
                 fusable ? why.message : "it contains a custom op");
        memset(&why, 0, sizeof why);
        if (nanchor == 1 && fusable && !fe_k_group_try_anchor(gr, 0, &why)) {   /* our GEMM, with the reason */
            size_t l = strlen(gr->how);
            snprintf(gr->how + l, sizeof gr->how - l, " (%s)", reason);
        } else {
            fe_k_group_set_perop(gr, reason);
        }
        break;
    }
    default: /* auto */
        if (!fusable) {
            fe_k_group_set_perop(gr, n > 1 ? "it contains a custom op" : NULL);
        } else if (nanchor) {
            if (!fe_k_group_try_anchor(gr, 0, &why))
                fe_k_group_auto_dnn(gr);
            else if (why.code != FE_ENOMEM && fe_k_group_perop_or_dnn(gr, why.message, err)) {
                fe_k_group_free(gr);
                return NULL;
            }
        } else if (npool) {
            if (try_pool(gr, &why))
                fe_k_group_set_perop(gr, why.message);
        } else if (try_views(gr) && try_fused(gr, &why) && try_stages(gr, &why)) {
            fe_k_group_set_perop(gr, n > 1 ? why.message : NULL);
        }
    }
    if (why.code == FE_ENOMEM) {
        fe_k_group_free(gr);
        return fe_error_set(err, FE_ENOMEM, "%s", why.message), NULL;
    }
    /* no fused kernel takes it whole: fused around the members none runs */
    if (kernel == FE_K_CHOICE_AUTO && gr->mode == MODE_PEROP && n > 1 && fe_k_group_try_parts(gr, err)) {
        fe_k_group_free(gr);
        return NULL;
    }
    if (kernel == FE_K_CHOICE_AUTO && fe_k_group_auto_guard(gr, err)) {
        fe_k_group_free(gr);
        return NULL;
    }
    /* A group that runs op by op is never slower than its ops run as
     * separate groups: it runs exactly those (the reference kernels of
     * per_op are slower than the fused single-op programs and oneDNN). */
    if (gr->mode == MODE_PEROP && n > 1 && kernel != FE_K_CHOICE_PER_OP && !gr->sub &&
        fe_k_group_make_subs(gr, err)) {
        fe_k_group_free(gr);
        return NULL;
    }
    return gr;
}

void fe_k_group_drop_kernels(fe_k_group *gr)
{
    fe_k_prog_free(gr->prog);
    fe_k_prog_free(gr->pro[0]);
    fe_k_prog_free(gr->pro[1]);
    fe_k_prog_free(gr->epi);
    fe_k_views_free(gr->views, gr->nouts);
    fe_k_stages_free(gr->stages);
    fe_k_dnn_group_free(gr->dnn);
    fe_k_group_free_parts(gr);
    gr->prog = gr->pro[0] = gr->pro[1] = gr->epi = NULL;
    gr->views = NULL;
    gr->stages = NULL;
    gr->dnn = NULL;
}

void fe_k_group_free(fe_k_group *gr)
{
    if (!gr)
        return;
    fe_k_group_drop_kernels(gr);
    fe_k_group_free_subs(gr);
    free(gr->nodes);
    free(gr->ins);
    free(gr->outs);
    free(gr);
}

const char *fe_k_group_how(const fe_k_group *gr) { return gr->how; }
int fe_k_group_kernel(const fe_k_group *gr) { return gr->kernel; }
int fe_k_group_is_fused(const fe_k_group *gr) { return gr->mode != MODE_PEROP; }
int fe_k_group_fell_back(const fe_k_group *gr) { return gr->fell_back; }
int64_t fe_k_group_temp_bytes(const fe_k_group *gr) { return gr->temp_bytes; }

void fe_k_group_show(const fe_k_group *gr, const char *indent, FILE *f)
{
    const char *anchor = gr->mode == MODE_ANCHOR || gr->mode == MODE_POOL
                             ? fe_node_op_name(fe_graph_node(gr->g, gr->anchor)) : NULL;
    if (gr->mode == MODE_FUSED) {
        fe_k_prog_show(gr->prog, gr->g, indent, f);
        return;
    }
    if (gr->mode == MODE_VIEWS)
        fe_k_views_show(gr->views, gr->nouts, gr->g, gr->outs, indent, f);
    if (gr->mode == MODE_STAGES)
        fe_k_stages_show(gr->stages, indent, f);
    if (gr->mode == MODE_PARTS)
        fe_k_group_show_parts(gr, indent, f);
    for (int k = 0; k < 2 && gr->mode == MODE_ANCHOR; k++)
        if (gr->pro[k]) {
            fprintf(f, "%sprologue of the %s's %s operand%s:\n", indent, anchor, k ? "second" : "first",
                    gr->pro_sep[k] ? ", a pass of its own" : ", on each block it reads");
            fe_k_prog_show(gr->pro[k], gr->g, indent, f);
        }
    if (gr->epi) {
        fprintf(f, "%sepilogue on each output block of the %s:\n", indent, anchor);
        fe_k_prog_show(gr->epi, gr->g, indent, f);
    }
    for (int i = 0; gr->sub && i < gr->n; i++)
        fprintf(f, "%s%s: %s\n", indent,
                fe_node_name(gr->g, fe_graph_node(gr->g, gr->nodes[i])), gr->sub[i]->how);
}

int fe_k_group_inputs(const fe_k_group *gr, const int32_t **ids)
{
    *ids = gr->ins;
    return gr->nins;
}

int fe_k_group_outputs(const fe_k_group *gr, const int32_t **ids)
{
    *ids = gr->outs;
    return gr->nouts;
}

/* The group's kernel as compiled, without the fallback. */
static int run_kernel(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err)
{
    switch (gr->mode) {
    case MODE_FUSED:
        return fe_k_prog_run_all(gr->prog, bufs, gr->split, err);
    case MODE_VIEWS:
        return fe_k_views_run(gr->views, gr->nouts, bufs, err);
    case MODE_STAGES:
        return fe_k_stages_run(gr->stages, bufs, gr->split, err);
    case MODE_ANCHOR:
        return fe_k_group_run_anchor(gr, bufs, err);
    case MODE_POOL:
        return run_pool(gr, bufs, err);
    case MODE_DNN:
        return fe_k_dnn_group_run(gr->dnn, bufs, err);
    case MODE_PARTS:
        return fe_k_group_run_parts(gr, bufs, err);
    default:
        return fe_k_group_run_perop(gr, bufs, err);
    }
}

/* A legal group always runs: a fused kernel that fails at run time for a
 * reason of its own (FE_ERUNTIME: a block shape it cannot hand its
 * epilogue, say) gives way to the group's ops one by one, which rewrite
 * every output, and the group's description says so and why. Bad input
 * and out of memory stay errors: the ops one by one would fail the same. */
int fe_k_group_run(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err)
{
    fe_error inner = {0};
    int rc = run_kernel(gr, bufs, &inner);
    if (rc != FE_ERUNTIME || gr->mode == MODE_PEROP || gr->n < 2) {
        if (rc && err)
            *err = inner;
        return rc;
    }
    if ((rc = fe_k_group_fall_back(gr, inner.message, err)))
        return rc;
    return run_kernel(gr, bufs, err);
}
