/* cone_memo.h: expression-pattern matches by the structure around the root.
 *
 * A compiled expression pattern of height h (fuseeng.pattern: the most ops
 * on a path from its root down to a variable) looks at its root node, the
 * producers of the root's inputs, theirs, and so on up to h nodes from the
 * root: the cone of height h. What it sees there is structure only: ops,
 * attributes (scalars), which tensor feeds which operand, and which
 * operands are the same tensor. So two roots whose cones have the same
 * structural signature (groupsig.h, the root's place in it included) get
 * the same match, node for node, and a model of repeated blocks is matched
 * once per pattern and block shape instead of once per block. */
#ifndef FE_CONE_MEMO_H
#define FE_CONE_MEMO_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

/* The most nodes a remembered cone may hold; a larger one is matched
 * every time. */
#define FE_CONE_MAX 256

typedef struct fe_cone_memo fe_cone_memo;

/* Matches of g's roots in cones of the given height; NULL on out of memory
 * (err set). Free with fe_cone_memo_free. */
fe_cone_memo *fe_cone_memo_new(const fe_graph *g, int height, fe_error *err);
void fe_cone_memo_free(fe_cone_memo *m);

/* Make root v's cone the current one: 1, or 0 when it is too large to
 * remember (more than FE_CONE_MAX nodes). */
int fe_cone_memo_at(fe_cone_memo *m, int32_t v);

/* Pattern p's remembered match at the current cone: its nodes into
 * out[0..FE_CONE_MAX) and their count (0: it did not match), or -1 when
 * not known yet. */
int fe_cone_memo_get(const fe_cone_memo *m, int p, int32_t *out);

/* Remember pattern p's match at the current cone: nodes[0..n) (n = 0:
 * none). 0; 1 when not remembered (a node outside the cone: the pattern
 * is taller than it said); -1 on out of memory. */
int fe_cone_memo_put(fe_cone_memo *m, int p, const int32_t *nodes, int n);

#endif
