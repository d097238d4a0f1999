/* cuda_group.c: a plan group on the GPU (cuda_group.h). */
#include <stdlib.h>
#include <string.h>

#include "boundary.h"
#include "convert.h"
#include "cuda_aten.h"
#include "cuda_attn.h"
#include "cuda_dnn.h"
#include "cuda_gemm.h"
#include "cuda_group.h"
#include "cuda_lower.h"
#include "cuda_ops.h"
#include "cuda_softmax.h"
#include "fused_views.h"
#include "node.h"
#include "ops.h"

enum { STEP_KERNEL, STEP_GEMM, STEP_HOST, STEP_LT };

/* A run of members the analysis refuses whole is tried as its prefixes,
 * longest first; those longer than this (other than the run itself) are
 * not tried, which bounds the search at n * MAX_PREFIX analyses. */
enum { MAX_PREFIX = 32 };

typedef struct step {
    int kind;
    int32_t node;              /* the member (steps), or -1 (the fused kernel) */
    int first, count;          /* the members it computes: nodes[first .. first+count) */
    fe_cuda_kernel k;          /* STEP_KERNEL */
    fe_cuda_buf *args;         /* its parameters' buffers, in order */
    int nargs, fault;          /* fault: a last int * parameter */
    fe_cu_ptr *pv;             /* nargs + 1 parameter values, and */
    void **av;                 /* their addresses, for the launch */
    fe_cuda_gemm gm;           /* STEP_GEMM, pointers set per run from */
    fe_cuda_buf gb[3];         /* A, B and C's buffers */
    fe_cuda_lt lt;             /* STEP_LT: gm's pointers from gb, and */
    fe_cuda_buf lx[2];         /* its C's and bias's buffers */
    void **host;               /* STEP_HOST: a buffer per input, then per output, */
    fe_k_tensor *views;        /* and their views */
} step;

struct fe_cuda_group {
    const fe_graph *g;
    int32_t *nodes;
    int n;
    int32_t *ins, *outs;
    int nins, nouts;
    step *steps;
    int nsteps, cap, fused, nhost;
    int cur_first, cur_count;  /* the members the steps made now compute */
    int dry;                   /* sources only: nothing compiled or allocated */
    int32_t *tmp_t;            /* tensors of the group's own buffers */
    fe_cu_ptr *tmp_p;
    int ntmp;
    fe_cu_ptr scratch;         /* the lowered members' scratch (cuda_lower.h), */
    int64_t scratch_bytes;     /* as much as the largest needs */
    int64_t temp_bytes;
    fe_cuda_kernel *ks;        /* the kernels, for fe_cuda_group_kernels */
    int nks;
    char lt_form[48];          /* the cuBLASLt step's epilogue, "bias+gelu" */
    int nfailed;               /* generated kernels that did not build (NOT_BUILT), */
    char failed[320];          /* the first one's reason */
    char how[1024];
};

/* kernel_step's answer for a kernel that did not build (NVRTC refused its
 * source, or the driver would not load it): the step is dropped and the
 * caller falls back, to smaller kernels and at last to the host, so that a
 * legal plan still runs. Out of memory is an error, never a fallback. */
enum { NOT_BUILT = 100 };

/* Tensor t's buffer: the group's own, else the caller's. */
static fe_cu_ptr tensor_buf(const fe_cuda_group *gr, const fe_cu_ptr *dev, int32_t t)
{
    for (int i = 0; i < gr->ntmp; i++)
        if (gr->tmp_t[i] == t)
            return gr->tmp_p[i];
    return dev[t];
}

static fe_cu_ptr buf_of(const fe_cuda_group *gr, const fe_cu_ptr *dev, fe_cuda_buf b)
{
    return (b.t == FE_CUDA_SCRATCH ? gr->scratch : tensor_buf(gr, dev, b.t)) + (fe_cu_ptr)b.off;
}

/* A new step at the end, zeroed; NULL when out of memory. */
static step *new_step(fe_cuda_group *gr, fe_error *err)
{
    if (gr->nsteps == gr->cap) {
        int cap = gr->cap ? 2 * gr->cap : 8;
        step *s = realloc(gr->steps, (size_t)cap * sizeof *s);
        if (!s)
            return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
        gr->steps = s;
        gr->cap = cap;
    }
    step *s = &gr->steps[gr->nsteps++];
    memset(s, 0, sizeof *s);
    s->first = gr->cur_first;
    s->count = gr->cur_count;
    return s;
}

/* Steps from first on, freed: the group ends before them. */
static void drop_steps(fe_cuda_group *gr, int first)
{
    for (int s = first; gr->steps && s < gr->nsteps; s++) {
        step *st = &gr->steps[s];
        fe_cuda_kernel_free(&st->k);
        fe_cuda_lt_release(&st->lt);
        free(st->args);
        free(st->pv);
        free(st->av);
        if (st->host) {
            const fe_node *nd = fe_graph_node(gr->g, st->node);
            for (int k = 0; k < nd->nin + nd->nout; k++)
                free(st->host[k]);
            free(st->host);
            gr->nhost--;
        }
        free(st->views);
    }
    if (first < gr->nsteps)
        gr->nsteps = first;
}

/* ---- the fused kernel ---- */

/* Analyse nodes[0..n) storing stores[0..ns) and print the kernel. */
static char *fused_source(const fe_graph *g, const int32_t *nodes, int n, const int32_t *stores,
                          int ns, int sms, fe_cuda_shape *sh, fe_k_fused *p, fe_error *why)
{
    fe_k_prog_spec sp = {.g = g, .nodes = nodes, .nnodes = n, .stores = stores, .nstores = ns,
                         .anchor = -1, .result = -1, .col_axis = -1};
    memset(p, 0, sizeof *p);
    if (fe_k_fused_analyse(p, &sp, why))
        return NULL;
    return fe_cuda_src(p, "fe_kernel", sms, sh, why);
}

/* A kernel step from source src (taken over) whose parameters are the
 * buffers args[0..nargs) (taken over) and, with fault, the fault flag. */
static int kernel_step(fe_cuda_group *gr, int32_t node, char *src, const fe_cuda_shape *sh,
                       fe_cuda_buf *args, int nargs, int fault, fe_error *err)
{
    step *s = new_step(gr, err);
    if (!s) {
        free(src);
        free(args);
        return FE_ENOMEM;
    }
    s->kind = STEP_KERNEL;
    s->node = node;
    s->args = args;
    s->nargs = nargs;
    s->fault = fault;
    s->pv = calloc((size_t)nargs + 1, sizeof *s->pv);
    s->av = calloc((size_t)nargs + 1, sizeof *s->av);
    if (!s->pv || !s->av) {
        free(src);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int a = 0; a <= nargs; a++)
        s->av[a] = &s->pv[a];
    fe_cuda_dump(src);
    if (gr->dry) {
        s->k.src = src;
        s->k.shape = *sh;
        return FE_OK;
    }
    int rc = fe_cuda_kernel_build(&s->k, src, sh, err);
    if (rc == FE_OK || rc == FE_ENOMEM)
        return rc;
    if (!gr->failed[0]) {   /* the reason on one line (its escaped newlines as spaces) */
        char *o = gr->failed;
        for (const char *c = err->message; *c && o < gr->failed + sizeof gr->failed - 1; c++) {
            if (!strncmp(c, "\\x0a", 4)) {
                c += 3;
                if (o > gr->failed && o[-1] != ' ')
                    *o++ = ' ';
            } else if (*c != ' ' || (o > gr->failed && o[-1] != ' ')) {
                *o++ = *c;
            }
        }
        *o = '\0';
    }
    gr->nfailed++;
    drop_steps(gr, (int)(s - gr->steps));
    memset(err, 0, sizeof *err);
    return NOT_BUILT;
}

/* The parameters of analysed program p: its inputs' tensors, then its
 * outputs'. NULL when out of memory. */
static fe_cuda_buf *prog_args(const fe_k_fused *p)
{
    fe_cuda_buf *a = malloc(((size_t)(p->nins + p->nouts) + 1) * sizeof *a);
    if (!a)
        return NULL;
    for (int i = 0; i < p->nins; i++)
        a[i] = fe_cuda_tbuf(p->ins[i].tensor, 0);
    for (int o = 0; o < p->nouts; o++)
        a[p->nins + o] = fe_cuda_tbuf(p->outs[o].tensor, 0);
    return a;
}

/* ---- steps ---- */

/* A member on the host: staging buffers for its operands. */
static int host_step(fe_cuda_group *gr, const fe_node *nd, int32_t node, fe_error *err)
{
    const fe_graph *g = gr->g;
    step *s = new_step(gr, err);
    if (!s)
        return FE_ENOMEM;
    s->kind = STEP_HOST;
    s->node = node;
    s->host = calloc((size_t)(nd->nin + nd->nout) + 1, sizeof *s->host);
    s->views = calloc((size_t)(nd->nin + nd->nout) + 1, sizeof *s->views);
    if (!s->host || !s->views)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int k = 0; k < nd->nin + nd->nout; k++) {
        int32_t t = k < nd->nin ? fe_node_input(g, nd, k) : fe_node_output(g, nd, k - nd->nin);
        size_t b = (size_t)fe_graph_tensor(g, t)->bytes;
        if (!(s->host[k] = malloc(b ? b : 1)))
            return fe_error_set(err, FE_ENOMEM, "out of memory (%zu bytes to stage %s on the host)",
                                b, fe_node_name(g, nd));
        s->views[k] = fe_k_graph_view(g, t, s->host[k]);
    }
    gr->nhost++;
    return FE_OK;
}

/* A GEMM step of gm on buffers a, b, c for member node. */
static int gemm_step(fe_cuda_group *gr, int32_t node, const fe_cuda_gemm *gm, fe_cuda_buf a,
                     fe_cuda_buf b, fe_cuda_buf c, fe_error *err)
{
    step *s = new_step(gr, err);
    if (!s)
        return FE_ENOMEM;
    s->kind = STEP_GEMM;
    s->node = node;
    s->gm = *gm;
    s->gb[0] = a, s->gb[1] = b, s->gb[2] = c;
    return FE_OK;
}

/* The pieces of a lowered member as its steps; the group's scratch grows
 * to the largest lowering's (members run one after another). */
static int lowered_steps(fe_cuda_group *gr, int32_t node, fe_cuda_lowering *lw, fe_error *err)
{
    int rc = FE_OK;
    for (int i = 0; i < lw->n && rc == FE_OK; i++) {
        fe_cuda_piece *pc = &lw->p[i];
        if (pc->kind == FE_CUDA_PIECE_GEMM) {
            rc = gemm_step(gr, node, &pc->gm, pc->ga, pc->gb, pc->gc, err);
            continue;
        }
        fe_cuda_buf *a = malloc(((size_t)pc->nargs + 1) * sizeof *a);
        char *src = pc->src;
        pc->src = NULL;   /* the step owns it now */
        if (!a) {
            free(src);
            return fe_error_set(err, FE_ENOMEM, "out of memory");
        }
        memcpy(a, pc->args, (size_t)pc->nargs * sizeof *a);
        rc = kernel_step(gr, node, src, &pc->shape, a, pc->nargs, pc->fault, err);
    }
    if (lw->scratch > gr->scratch_bytes)
        gr->scratch_bytes = lw->scratch;
    return rc;
}

/* The one kernel of an op that is a kernel of its own: a pool, a softmax
 * over an axis the analysis does not fuse, a data-movement op. */
static char *single_src(const fe_graph *g, const fe_node *nd, int sms, fe_cuda_shape *sh,
                        fe_error *why)
{
    switch (nd->op) {
    case FE_OP_MAX_POOL2D: case FE_OP_AVG_POOL2D:
        return fe_cuda_pool_src(g, nd, sms, sh, why);
    case FE_OP_SOFTMAX: case FE_OP_LOG_SOFTMAX:
        return fe_cuda_softmax_axis_src(g, nd, sms, sh, why);
    case FE_OP_CUSTOM:
        return fe_cuda_aten_src(g, nd, sms, sh, why);
    case FE_OP_COMPARE: case FE_OP_ARANGE: case FE_OP_TRILU:
        return fe_cuda_position_src(g, nd, sms, sh, why);
    default:
        return fe_cuda_src_node(g, nd, sms, sh, why);
    }
}

/* A single_src kernel as a step: its parameters the member's inputs, its
 * output and the fault flag. */
static int single_step(fe_cuda_group *gr, int32_t id, char *src, const fe_cuda_shape *sh,
                       fe_error *err)
{
    const fe_node *nd = fe_graph_node(gr->g, id);
    fe_cuda_buf *a = malloc(((size_t)nd->nin + 2) * sizeof *a);
    if (!a) {
        free(src);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int k = 0; k < nd->nin; k++)
        a[k] = fe_cuda_tbuf(fe_node_input(gr->g, nd, k), 0);
    a[nd->nin] = fe_cuda_tbuf(fe_node_output(gr->g, nd, 0), 0);
    return kernel_step(gr, id, src, sh, a, nd->nin + 1, 1, err);
}

/* Member id analysed alone as a generated kernel: 1 when it is one (its
 * step added, or an error below 0), 0 with why when not. */
static int fused_member(fe_cuda_group *gr, int32_t id, int sms, fe_error *why, fe_error *err)
{
    const fe_node *nd = fe_graph_node(gr->g, id);
    fe_k_fused p;
    fe_cuda_shape sh;
    int32_t out = fe_node_output(gr->g, nd, 0);
    memset(&p, 0, sizeof p);   /* cleared below whether or not it was analysed */
    char *src = nd->nout == 1 ? fused_source(gr->g, &id, 1, &out, 1, sms, &sh, &p, why) : NULL;
    if (!src) {
        fe_k_fused_clear(&p);
        return 0;
    }
    fe_cuda_buf *a = prog_args(&p);
    int na = p.nins + p.nouts;
    fe_k_fused_clear(&p);
    if (!a) {
        free(src);
        return -fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    int rc = kernel_step(gr, id, src, &sh, a, na, 0, err);
    if (rc == NOT_BUILT)
        return fe_error_set(why, FE_EINPUT, "its kernel did not build"), 0;
    return rc ? -rc : 1;
}

/* One step (or a lowered member's several) for member i; what runs on the
 * host says why in note. */
static int member_step(fe_cuda_group *gr, int i, int sms, char *note, size_t nn, fe_error *err)
{
    const fe_graph *g = gr->g;
    int32_t id = gr->nodes[i];
    const fe_node *nd = fe_graph_node(g, id);
    fe_error why = {0};
    fe_cuda_shape sh;
    fe_cuda_gemm gm;
    char *src = NULL;
    int rc, first = gr->nsteps;
    if (nd->op == FE_OP_MATMUL) {
        if (fe_cuda_gemm_plan(g, nd, &gm, &why) == 0)
            return gemm_step(gr, id, &gm, fe_cuda_tbuf(fe_node_input(g, nd, 0), 0),
                             fe_cuda_tbuf(fe_node_input(g, nd, 1), 0),
                             fe_cuda_tbuf(fe_node_output(g, nd, 0), 0), err);
    } else if (nd->op == FE_OP_CONV2D || nd->op == FE_OP_SDPA) {
        fe_cuda_lowering lw;
        memset(&lw, 0, sizeof lw);
        rc = nd->op == FE_OP_CONV2D ? fe_cuda_conv_lower(g, nd, sms, &lw, &why)
                                    : fe_cuda_sdpa_lower(g, nd, sms, &lw, &why);
        if (rc == FE_OK)
            rc = lowered_steps(gr, id, &lw, err);
        fe_cuda_lowering_clear(&lw);
        if (rc == NOT_BUILT) {   /* the pieces before it go too: all on the host */
            drop_steps(gr, first);
            fe_error_set(&why, FE_EINPUT, "a kernel of its lowering did not build");
        } else if (rc == FE_OK || why.code == FE_OK) {
            return rc;   /* lowered, or a failure of the group's own */
        }
    } else {
        /* a softmax over the last axis is the analysis's: try that first */
        int sm = nd->op == FE_OP_SOFTMAX || nd->op == FE_OP_LOG_SOFTMAX;
        if (!sm && (src = single_src(g, nd, sms, &sh, &why)) &&
            (rc = single_step(gr, id, src, &sh, err)) != NOT_BUILT)
            return rc;
        if (why.code != FE_ENOMEM) {
            memset(&why, 0, sizeof why);
            if ((rc = fused_member(gr, id, sms, &why, err)))
                return rc < 0 ? -rc : FE_OK;
        }
        /* an integer result the analysis refused (it computes in float) */
        const fe_tensor *y = nd->nout == 1 ? fe_graph_tensor(g, fe_node_output(g, nd, 0)) : NULL;
        if (why.code != FE_ENOMEM && y && fe_k_dtype_is_int(y->dtype) && y->dtype != FE_BOOL &&
            nd->op != FE_OP_CUSTOM) {
            fe_error iw = {0};   /* refused: the analysis's reason stands */
            if ((src = fe_cuda_int_src(g, nd, sms, &sh, &iw)) &&
                (rc = single_step(gr, id, src, &sh, err)) != NOT_BUILT)
                return rc;
            if (iw.code == FE_ENOMEM)
                return fe_error_set(err, FE_ENOMEM, "%s", iw.message);
        }
        if (sm && why.code != FE_ENOMEM) {
            memset(&why, 0, sizeof why);
            if ((src = single_src(g, nd, sms, &sh, &why)) &&
                (rc = single_step(gr, id, src, &sh, err)) != NOT_BUILT)
                return rc;
        }
        if (gr->nfailed && !why.message[0])
            fe_error_set(&why, FE_EINPUT, "its kernel did not build");
    }
    if (why.code == FE_ENOMEM)
        return fe_error_set(err, FE_ENOMEM, "%s", why.message);
    size_t l = strlen(note);
    if (l + 1 < nn)
        snprintf(note + l, nn - l, "%s%s on the host (%.160s)", l ? "; " : "", fe_node_op_name(nd),
             why.message[0] ? why.message : "no CUDA kernel");
    return host_step(gr, nd, id, err);
}

/* Ops the fused analysis never takes: each is a step of its own. */
static int opaque(const fe_node *n)
{
    switch (n->op) {
    case FE_OP_MATMUL: case FE_OP_CONV2D: case FE_OP_SDPA: case FE_OP_MAX_POOL2D:
    case FE_OP_AVG_POOL2D: case FE_OP_CONCAT: case FE_OP_GATHER: case FE_OP_EMBEDDING:
    case FE_OP_CUSTOM: case FE_OP_ALL_REDUCE: case FE_OP_PAD:
        return 1;
    default:
        return 0;
    }
}

/* As nodes_step below, storing stores[0..ns). */
static int stores_step(fe_cuda_group *gr, const int32_t *nodes, int n, const int32_t *stores,
                       int ns, int sms, fe_error *err)
{
    int rc = 0;
    fe_error why = {0};
    fe_k_fused p;
    fe_cuda_shape sh;
    char *src = fused_source(gr->g, nodes, n, stores, ns, sms, &sh, &p, &why);
    if (src) {
        fe_cuda_buf *a = prog_args(&p);
        int na = p.nins + p.nouts;
        if (!a) {
            free(src);
            rc = -fe_error_set(err, FE_ENOMEM, "out of memory");
        } else {
            rc = kernel_step(gr, nodes[0], src, &sh, a, na, 0, err);
            rc = rc == NOT_BUILT ? 0 : rc ? -rc : 1;
        }
    } else if (why.code == FE_ENOMEM) {
        rc = -fe_error_set(err, FE_ENOMEM, "%s", why.message);
    }
    fe_k_fused_clear(&p);
    return rc;
}

/* Members nodes[0..n) (topologically ordered, and nothing outside them
 * runs between them) as one generated kernel storing what is read outside
 * them: 1 when they are, 0 when the analysis refuses them, or an error
 * code below 0. */
static int nodes_step(fe_cuda_group *gr, const int32_t *nodes, int n, int sms, fe_error *err)
{
    int32_t *ins = NULL, *outs = NULL;
    int nins, nouts;
    if (fe_k_boundary(gr->g, nodes, n, &ins, &nins, &outs, &nouts, err))
        return -FE_ENOMEM;
    int rc = stores_step(gr, nodes, n, outs, nouts, sms, err);
    free(ins);
    free(outs);
    return rc;
}

/* A group of views only whose outputs no one kernel stores (GPT-2's qkv
 * split into q, k^T and v: one domain cannot hold three shapes): a kernel
 * per output, a strided copy through its chain of views (cpu/group_views.c
 * does the same), so no intermediate is written. 1 when every output's
 * chain is a kernel, 0 when one is not (no step is added then: steps of
 * the outputs before it are dropped), or an error code below 0. */
static int view_steps(fe_cuda_group *gr, int sms, fe_error *err)
{
    const fe_graph *g = gr->g;
    for (int i = 0; i < gr->n; i++)
        if (!fe_k_fused_view_op(fe_graph_node(g, gr->nodes[i])->op))
            return 0;
    int32_t *chain = malloc((size_t)gr->n * sizeof *chain);
    if (!chain)
        return -fe_error_set(err, FE_ENOMEM, "out of memory");
    int rc = 1, first = gr->nsteps;
    for (int k = 0; k < gr->nouts && rc == 1; k++) {
        int nc = fe_k_view_chain(g, gr->nodes, gr->n, gr->outs[k], chain);
        rc = nc > 0 ? stores_step(gr, chain, nc, &gr->outs[k], 1, sms, err) : 0;
    }
    free(chain);
    if (rc == 0)
        drop_steps(gr, first);
    return rc;
}

/* Device buffers for the members' outputs that stay inside the group. */
static int own_buffers(fe_cuda_group *gr, fe_error *err)
{
    const fe_graph *g = gr->g;
    size_t nt = 1;
    for (int i = 0; i < gr->n; i++)
        nt += (size_t)fe_graph_node(g, gr->nodes[i])->nout;
    gr->tmp_t = malloc(nt * sizeof *gr->tmp_t);
    gr->tmp_p = calloc(nt, sizeof *gr->tmp_p);
    if (!gr->tmp_t || !gr->tmp_p)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < gr->n; i++) {
        const fe_node *nd = fe_graph_node(g, gr->nodes[i]);
        for (int k = 0; k < nd->nout; k++) {
            int32_t t = fe_node_output(g, nd, k);
            if (fe_k_ids_has(gr->outs, gr->nouts, t))
                continue;
            int64_t b = fe_graph_tensor(g, t)->bytes;
            gr->tmp_t[gr->ntmp] = t;
            int rc = gr->dry ? FE_OK : fe_cuda_alloc(&gr->tmp_p[gr->ntmp], (size_t)b, err);
            if (rc)
                return rc;
            gr->ntmp++;
            gr->temp_bytes += b;
        }
    }
    return FE_OK;
}

/* ---- running ---- */

static int run_host(const fe_cuda_group *gr, const step *st, const fe_cu_ptr *dev, fe_error *err)
{
    const fe_graph *g = gr->g;
    const fe_node *nd = fe_graph_node(g, st->node);
    int rc = FE_OK;
    for (int k = 0; k < nd->nin && rc == FE_OK; k++) {
        int32_t t = fe_node_input(g, nd, k);
        rc = fe_cuda_download(st->host[k], tensor_buf(gr, dev, t), (size_t)fe_graph_tensor(g, t)->bytes,
                              err);
    }
    if (rc == FE_OK)   /* the views sit in the step: a node may have 4096 operands */
        rc = fe_k_node_run(g, nd, st->views, st->views + nd->nin, err);
    for (int k = 0; k < nd->nout && rc == FE_OK; k++) {
        int32_t t = fe_node_output(g, nd, k);
        rc = fe_cuda_upload(tensor_buf(gr, dev, t), st->host[nd->nin + k],
                            (size_t)fe_graph_tensor(g, t)->bytes, err);
    }
    return rc;
}

int fe_cuda_group_run(fe_cuda_group *gr, const fe_cu_ptr *dev, fe_cu_ptr fault, fe_error *err)
{
    const fe_graph *g = gr->g;
    int rc = FE_OK;
    if (gr->dry)
        return fe_error_set(err, FE_ERUNTIME, "cuda: a group planned without a device cannot run");
    for (int s = 0; s < gr->nsteps && rc == FE_OK; s++) {
        step *st = &gr->steps[s];
        if (st->kind == STEP_HOST) {
            rc = run_host(gr, st, dev, err);
        } else if (st->kind == STEP_GEMM) {
            fe_cuda_gemm gm = st->gm;
            gm.a = buf_of(gr, dev, st->gb[0]);
            gm.b = buf_of(gr, dev, st->gb[1]);
            gm.c = buf_of(gr, dev, st->gb[2]);
            rc = fe_cuda_gemm_run(&gm, err);
        } else if (st->kind == STEP_LT) {
            fe_cuda_lt l = st->lt;
            l.gm.a = buf_of(gr, dev, st->gb[0]);
            l.gm.b = buf_of(gr, dev, st->gb[1]);
            l.gm.c = buf_of(gr, dev, st->gb[2]);
            l.c = l.has_c ? buf_of(gr, dev, st->lx[0]) : 0;
            l.bias = l.has_bias ? buf_of(gr, dev, st->lx[1]) : 0;
            rc = fe_cuda_lt_run(&l, err);
        } else {
            for (int a = 0; a < st->nargs; a++)
                st->pv[a] = buf_of(gr, dev, st->args[a]);
            st->pv[st->nargs] = fault;   /* read only by kernels that take it */
            rc = fe_cuda_launch(st->k.fn, st->k.shape.grid, st->k.shape.threads, 0, st->av, err);
        }
        if (rc && st->node >= 0)
            fe_error_prefix(err, "node '%s': ", fe_node_name(g, fe_graph_node(g, st->node)));
    }
    return rc;
}

/* Free every step and the group's own buffers, leaving no steps. */
static void clear_steps(fe_cuda_group *gr)
{
    drop_steps(gr, 0);
    for (int i = 0; i < gr->ntmp; i++)
        fe_cuda_free(gr->tmp_p[i]);
    gr->ntmp = 0;
}

/* ---- cuBLASLt epilogues ----
 *
 * Which of the two ways runs a group that fe_cuda_lt_match takes (cuBLAS
 * and the epilogue kernel, or one cuBLASLt call) is measured when the
 * group is compiled (before any CUDA-graph capture), on scratch buffers of
 * the group's sizes: a warm-up, then the median of LT_REPS calls each,
 * timed with events. The decision is the group's, made again in every
 * process (the disk cache holds kernel images, not timings).
 * FUSEENG_CUDA_LT=0 or 1 forces it, for tests. */

enum { LT_WARM = 2, LT_REPS = 7 };

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* The median ms of the group's steps (way 0) and of f's Lt call (way 1),
 * on zeroed scratch buffers for the group's inputs and output. */
static int lt_measure(fe_cuda_group *gr, fe_cuda_lt_form *f, float ms[2], fe_error *err)
{
    const fe_graph *g = gr->g;
    fe_cu_ptr *dev = calloc((size_t)g->ntensors + 1, sizeof *dev);
    fe_cu_event ev[2] = {0, 0};
    float t[2][LT_REPS];
    int rc = dev ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < gr->nins + gr->nouts && rc == FE_OK; i++) {
        int32_t id = i < gr->nins ? gr->ins[i] : gr->outs[i - gr->nins];
        size_t b = (size_t)fe_graph_tensor(g, id)->bytes;
        if ((rc = fe_cuda_alloc(&dev[id], b, err)) == FE_OK)
            rc = fe_cuda_memset(dev[id], 0, b, err);
    }
    if (rc == FE_OK && (rc = fe_cuda_event_new(&ev[0], err)) == FE_OK)
        rc = fe_cuda_event_new(&ev[1], err);
    fe_cuda_lt l = f->lt;
    if (rc == FE_OK) {
        l.gm.a = dev[f->a];
        l.gm.b = dev[f->b];
        l.gm.c = dev[f->d];
        l.c = f->c >= 0 ? dev[f->c] : 0;
        l.bias = f->bias >= 0 ? dev[f->bias] : 0;
    }
    for (int r = -LT_WARM; r < LT_REPS && rc == FE_OK; r++)
        for (int w = 0; w < 2 && rc == FE_OK; w++) {
            float x = 0;
            if ((rc = fe_cuda_record(ev[0], err)) == FE_OK)
                rc = w ? fe_cuda_lt_run(&l, err) : fe_cuda_group_run(gr, dev, 0, err);
            if (rc == FE_OK && (rc = fe_cuda_record(ev[1], err)) == FE_OK)
                rc = fe_cuda_elapsed(ev[0], ev[1], &x, err);
            if (r >= 0)
                t[w][r] = x;
        }
    if (rc == FE_OK)
        for (int w = 0; w < 2; w++) {
            qsort(t[w], LT_REPS, sizeof t[w][0], cmp_float);
            ms[w] = t[w][LT_REPS / 2];
        }
    fe_cuda_sync(NULL);
    fe_cuda_event_free(ev[0]);
    fe_cuda_event_free(ev[1]);
    for (int i = 0; dev && i < gr->nins + gr->nouts; i++)
        fe_cuda_free(dev[i < gr->nins ? gr->ins[i] : gr->outs[i - gr->nins]]);
    free(dev);
    return rc;
}

/* The group's steps replaced by f's one Lt call (taking over f's plan). */
static int lt_adopt(fe_cuda_group *gr, fe_cuda_lt_form *f, fe_error *err)
{
    clear_steps(gr);
    gr->temp_bytes = 0;
    step *s = new_step(gr, err);
    if (!s)
        return FE_ENOMEM;
    s->kind = STEP_LT;
    s->node = gr->nodes[0];
    s->first = 0;
    s->count = gr->n;
    s->lt = f->lt;
    f->lt.plan = NULL;
    s->gb[0] = fe_cuda_tbuf(f->a, 0);
    s->gb[1] = fe_cuda_tbuf(f->b, 0);
    s->gb[2] = fe_cuda_tbuf(f->d, 0);
    s->lx[0] = fe_cuda_tbuf(f->c >= 0 ? f->c : f->d, 0);
    s->lx[1] = fe_cuda_tbuf(f->bias >= 0 ? f->bias : f->d, 0);
    snprintf(gr->lt_form, sizeof gr->lt_form, "%s", f->name);
    return FE_OK;
}

/* Decide between the group's steps and one cuBLASLt call (the note above),
 * saying which and why in note. Only errors of the device fail it. */
static int lt_choose(fe_cuda_group *gr, char *note, size_t nn, fe_error *err)
{
    fe_cuda_lt_form f;
    fe_error why = {0};
    char say[300] = "";
    float ms[2] = {0, 0};
    const char *env = getenv("FUSEENG_CUDA_LT");
    int mode = env && !strcmp(env, "0") ? 0 : env && !strcmp(env, "1") ? 1 : 2;
    int rc = FE_OK;
    if (!fe_cuda_lt_match(gr->g, gr->nodes, gr->n, gr->ins, gr->nins, gr->outs, gr->nouts, &f, &why)) {
        if (why.message[0])
            snprintf(say, sizeof say, "not cuBLASLt: %.250s", why.message);
    } else if (gr->dry) {
        snprintf(say, sizeof say, "a cuBLASLt candidate, epilogue %s, measured against cuBLAS + "
                 "kernel on the card", f.name);
    } else if (mode == 0) {
        snprintf(say, sizeof say, "cuBLASLt epilogue %s off (FUSEENG_CUDA_LT=0)", f.name);
    } else if (fe_cuda_lt_prepare(&f.lt, &why)) {
        if (why.code == FE_ENOMEM)
            return fe_error_set(err, FE_ENOMEM, "%s", why.message);
        snprintf(say, sizeof say, "cuBLASLt not used: %.250s", why.message);
    } else if (mode == 1) {
        snprintf(say, sizeof say, "cuBLASLt epilogue %s (forced by FUSEENG_CUDA_LT=1, not measured)",
                 f.name);
        rc = lt_adopt(gr, &f, err);
    } else if ((rc = lt_measure(gr, &f, ms, err)) == FE_OK) {
        if (ms[1] < ms[0]) {
            snprintf(say, sizeof say, "cuBLASLt epilogue %s: %.3f vs %.3f ms for cuBLAS + kernel",
                     f.name, ms[1], ms[0]);
            rc = lt_adopt(gr, &f, err);
        } else {
            snprintf(say, sizeof say, "cuBLAS + kernel: %.3f vs %.3f ms for cuBLASLt epilogue %s",
                     ms[0], ms[1], f.name);
        }
    }
    fe_cuda_lt_release(&f.lt);
    size_t l = strlen(note);
    if (say[0] && l + 1 < nn)
        snprintf(note + l, nn - l, "%s%s", l ? "; " : "", say);
    return rc;
}

static void describe(fe_cuda_group *gr, const char *note)
{
    const fe_graph *g = gr->g;
    if (gr->fused) {
        const fe_cuda_kernel *k = &gr->steps[0].k;
        if (gr->dry) {
            snprintf(gr->how, sizeof gr->how, "cuda_fused: %s kernel of %d ops, %u x %u threads",
                     k->shape.kind == FE_CUDA_ROWS ? "rows" : k->shape.kind == FE_CUDA_COLS
                     ? "columns" : "elementwise", gr->n, k->shape.grid, k->shape.threads);
            return;
        }
        snprintf(gr->how, sizeof gr->how, "cuda_fused: %s kernel of %d ops, %u x %u threads, %d "
                 "registers, %d spill bytes a thread%s",
                 k->shape.kind == FE_CUDA_ROWS ? "rows" : k->shape.kind == FE_CUDA_COLS ? "columns"
                                                                                       : "elementwise",
                 gr->n, k->shape.grid, k->shape.threads, k->attr.regs, k->attr.local_bytes,
                 k->from_cache ? ", cached" : "");
        return;
    }
    int nk = 0, nb = 0;
    for (int s = 0; s < gr->nsteps; s++) {
        nk += gr->steps[s].kind == STEP_KERNEL;
        nb += gr->steps[s].kind == STEP_GEMM || gr->steps[s].kind == STEP_LT;
    }
    int len = snprintf(gr->how, sizeof gr->how, "cuda_steps: %d op%s in %d step%s (%d kernel%s, %d "
                       "cuBLAS, %d on the host)", gr->n, gr->n == 1 ? "" : "s", gr->nsteps,
                       gr->nsteps == 1 ? "" : "s", nk, nk == 1 ? "" : "s", nb, gr->nhost);
    if (note[0] && len > 0 && (size_t)len < sizeof gr->how)
        snprintf(gr->how + len, sizeof gr->how - (size_t)len, ": %s", note);
    (void)g;
}

/* The group, compiled for the open device, or with dry (sms > 0) only
 * its steps and sources for a device of sms multiprocessors. */
static fe_cuda_group *build(const fe_graph *g, const int32_t *nodes, int n, int dry, int sms,
                            fe_error *err)
{
    const fe_cuda_dev *d = fe_cuda_device();
    fe_cuda_group *gr = calloc(1, sizeof *gr);
    char note[720] = "";
    fe_error why = {0};
    int rc;
    if (!dry && !d) {
        free(gr);
        return fe_error_set(err, FE_ERUNTIME, "cuda: the device is not open"), NULL;
    }
    if (!dry)
        sms = d->sms;
    if (!gr || !(gr->nodes = malloc(((size_t)n + 1) * sizeof *gr->nodes))) {
        fe_cuda_group_free(gr);
        return fe_error_set(err, FE_ENOMEM, "out of memory"), NULL;
    }
    gr->g = g;
    gr->n = n;
    gr->dry = dry;
    memcpy(gr->nodes, nodes, (size_t)n * sizeof *nodes);
    fe_k_ids_sort(gr->nodes, n);
    gr->cur_first = 0;
    gr->cur_count = n;
    rc = fe_k_boundary(g, gr->nodes, n, &gr->ins, &gr->nins, &gr->outs, &gr->nouts, err);
    if (rc == FE_OK) {
        fe_k_fused p;
        fe_cuda_shape sh;
        char *src = fused_source(g, gr->nodes, n, gr->outs, gr->nouts, sms, &sh, &p, &why);
        if (src) {
            fe_cuda_buf *a = prog_args(&p);
            int na = p.nins + p.nouts;
            if (!a) {
                free(src);
                rc = fe_error_set(err, FE_ENOMEM, "out of memory");
            } else {
                rc = kernel_step(gr, -1, src, &sh, a, na, 0, err);
                gr->fused = rc == FE_OK;
                if (rc == NOT_BUILT)   /* falls back below, saying why */
                    rc = FE_OK;
            }
        }
        fe_k_fused_clear(&p);
        if (!src && why.code == FE_ENOMEM)
            rc = fe_error_set(err, FE_ENOMEM, "%s", why.message);
    }
    if (rc == FE_OK && !gr->fused) {
        int done = n > 1 ? view_steps(gr, sms, err) : 0;
        if (done < 0)
            rc = -done;
        else if (done)
            snprintf(note, sizeof note, "views only, a kernel per output");
        else
            rc = own_buffers(gr, err);
        /* runs of members between opaque ones as one kernel each (a
         * matmul's epilogue); a run the analysis refuses, as its longest
         * prefixes it takes, member by member where none does */
        for (int i = 0; i < n && rc == FE_OK && !done;) {
            int j = i;
            while (j < n && !opaque(fe_graph_node(g, gr->nodes[j])))
                j++;
            int took = 0;
            for (int k = j; k > i + 1 && !took && rc == FE_OK;
                 k = k == j && j - i > MAX_PREFIX ? i + MAX_PREFIX : k - 1) {
                gr->cur_first = i;
                gr->cur_count = k - i;
                if ((took = nodes_step(gr, gr->nodes + i, k - i, sms, err)) < 0)
                    rc = -took;
                else if (took)
                    i = k;
            }
            if (took || rc)
                continue;
            gr->cur_first = i;
            gr->cur_count = 1;
            rc = member_step(gr, i, sms, note, sizeof note, err);
            i++;
        }
        if (rc == FE_OK && gr->scratch_bytes > 0) {
            gr->temp_bytes += gr->scratch_bytes;
            if (!dry)
                rc = fe_cuda_alloc(&gr->scratch, (size_t)gr->scratch_bytes, err);
        }
        if (rc == FE_OK && n > 1 && why.message[0]) {
            char tmp[480];
            snprintf(tmp, sizeof tmp, "%s", note);
            snprintf(note, sizeof note, "not one kernel: %.160s%s%.250s", why.message,
                     tmp[0] ? "; " : "", tmp);
        }
        if (rc == FE_OK && gr->nfailed) {
            char tmp[720];
            snprintf(tmp, sizeof tmp, "%s", note);
            snprintf(note, sizeof note, "%d generated kernel%s did not build, so smaller ones "
                     "or the host ran its ops (%.300s)%s%.300s", gr->nfailed,
                     gr->nfailed == 1 ? "" : "s", gr->failed, tmp[0] ? "; " : "", tmp);
        }
        if (rc == FE_OK)
            rc = lt_choose(gr, note, sizeof note, err);
    }
    if (rc == FE_OK) {
        gr->ks = calloc((size_t)gr->nsteps + 1, sizeof *gr->ks);
        if (!gr->ks)
            rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        for (int s = 0; gr->ks && s < gr->nsteps; s++)
            if (gr->steps[s].kind == STEP_KERNEL)
                gr->ks[gr->nks++] = gr->steps[s].k;
    }
    if (rc) {
        fe_cuda_group_free(gr);
        return NULL;
    }
    describe(gr, note);
    return gr;
}

fe_cuda_group *fe_cuda_group_new(const fe_graph *g, const int32_t *nodes, int n, fe_error *err)
{
    return build(g, nodes, n, 0, 0, err);
}

fe_cuda_group *fe_cuda_group_plan(const fe_graph *g, const int32_t *nodes, int n, int sms,
                                  fe_error *err)
{
    return build(g, nodes, n, 1, sms > 0 ? sms : 1, err);
}

void fe_cuda_group_free(fe_cuda_group *gr)
{
    if (!gr)
        return;
    clear_steps(gr);
    fe_cuda_free(gr->scratch);
    free(gr->tmp_t);
    free(gr->tmp_p);
    free(gr->steps);
    free(gr->ks);
    free(gr->nodes);
    free(gr->ins);
    free(gr->outs);
    free(gr);
}

const char *fe_cuda_group_how(const fe_cuda_group *gr) { return gr->how; }
int fe_cuda_group_is_fused(const fe_cuda_group *gr) { return gr->fused; }
int fe_cuda_group_host_steps(const fe_cuda_group *gr) { return gr->nhost; }
int64_t fe_cuda_group_temp_bytes(const fe_cuda_group *gr) { return gr->temp_bytes; }

int fe_cuda_group_inputs(const fe_cuda_group *gr, const int32_t **ids)
{
    *ids = gr->ins;
    return gr->nins;
}

int fe_cuda_group_outputs(const fe_cuda_group *gr, const int32_t **ids)
{
    *ids = gr->outs;
    return gr->nouts;
}

int fe_cuda_group_parts(const fe_cuda_group *gr, const int32_t **members, int *part_of,
                        int64_t *threads, int64_t *held)
{
    int nparts = 0;
    for (int i = 0; i < gr->n; i++) {
        part_of[i] = -1;
        if (threads)
            threads[i] = 0;
        if (held)
            held[i] = 0;
    }
    for (int s = 0; s < gr->nsteps; s++) {
        const step *st = &gr->steps[s];
        int kernel = st->kind == STEP_KERNEL;
        int64_t t = kernel ? (int64_t)st->k.shape.grid * st->k.shape.threads : 0;
        int64_t h = kernel ? st->k.shape.held : 0;
        if (s > 0 && st->first == gr->steps[s - 1].first && st->count == gr->steps[s - 1].count) {
            if (threads && t > threads[nparts - 1])   /* more steps of the same members */
                threads[nparts - 1] = t;
            if (held && h > held[nparts - 1])
                held[nparts - 1] = h;
            continue;
        }
        for (int i = st->first; i < st->first + st->count && i < gr->n; i++)
            if (part_of[i] < 0)
                part_of[i] = nparts;
        if (threads && nparts < gr->n)
            threads[nparts] = t;
        if (held && nparts < gr->n)
            held[nparts] = h;
        nparts++;
    }
    for (int i = 0; i < gr->n; i++)   /* a member no step computes (none should): alone */
        if (part_of[i] < 0)
            part_of[i] = nparts++;
    *members = gr->nodes;
    return nparts;
}

int fe_cuda_group_kernels(const fe_cuda_group *gr, const fe_cuda_kernel **ks)
{
    *ks = gr->ks;
    return gr->nks;
}

void fe_cuda_group_show(const fe_cuda_group *gr, const char *indent, FILE *f)
{
    for (int s = 0; s < gr->nsteps; s++) {
        const step *st = &gr->steps[s];
        const char *who = st->node >= 0 ? fe_node_name(gr->g, fe_graph_node(gr->g, st->node)) : "group";
        if (st->kind == STEP_LT) {
            fprintf(f, "%s%s: cuBLASLt gemm %lld x %lld x %lld, batch %lld, epilogue %s\n", indent, who,
                    (long long)st->lt.gm.m, (long long)st->lt.gm.n, (long long)st->lt.gm.k,
                    (long long)st->lt.gm.batch, gr->lt_form);
            continue;
        }
        if (st->kind == STEP_GEMM) {
            fprintf(f, "%s%s: cuBLAS gemm %lld x %lld x %lld, batch %lld%s\n", indent, who,
                    (long long)st->gm.m, (long long)st->gm.n, (long long)st->gm.k, (long long)st->gm.batch,
                    st->gm.acc ? ", adding to C" : "");
            continue;
        }
        if (st->kind == STEP_HOST) {
            fprintf(f, "%s%s: on the host (CPU reference kernel, operands copied)\n", indent, who);
            continue;
        }
        const fe_cuda_kernel *k = &st->k;
        if (gr->dry)
            fprintf(f, "%s%s: launch %u blocks x %u threads\n", indent, who, k->shape.grid,
                    k->shape.threads);
        else
            fprintf(f, "%s%s: launch %u blocks x %u threads; %d registers, %d local (spill) bytes "
                    "a thread, %d blocks a multiprocessor\n", indent, who, k->shape.grid,
                    k->shape.threads, k->attr.regs, k->attr.local_bytes, k->attr.blocks_per_sm);
        const char *p = k->src;
        while (p && *p) {
            size_t n = strcspn(p, "\n");
            fprintf(f, "%s  %.*s\n", indent, (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
}
