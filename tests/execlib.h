/* execlib.h: a check shared by the tests that execute plans (included
 * after testlib.h). */
#ifndef FE_TEST_EXECLIB_H
#define FE_TEST_EXECLIB_H

#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "exec.h"
#include "plan.h"
#include "plan_build.h"

/* Every node of g in one group, run by kernel choice kernel in split TLF
 * parts; the caller frees it. */
static inline fe_plan *tl_one_group(const fe_graph *g, int kernel, int split)
{
    fe_error err = {0};
    int32_t *labels = calloc((size_t)g->nnodes + 1, sizeof *labels);
    assert_non_null(labels);
    fe_plan *p = fe_plan_from_labels(g, labels, &err);
    if (!p)
        fail_msg("plan: %s", err.message);
    p->groups[0].kernel = kernel;
    p->groups[0].split = split;
    free(labels);
    return p;
}

/* Run plan p and the unfused reference on the same inputs: the outputs
 * must agree; the "how" line of node `at`'s group into got_how[size]. */
static inline void tl_agree_how(const fe_graph *g, const fe_plan *p, const char *at, char *got_how,
                                size_t size)
{
    fe_error err = {0};
    fe_exec *ex = fe_exec_new(g, NULL, &err);
    assert_non_null(ex);
    fe_exec_result *ref = NULL, *got = NULL;
    assert_int_equal(fe_exec_reference(ex, &ref, &err), FE_OK);
    if (fe_exec_plan(ex, p, &got, &err) != FE_OK)
        fail_msg("%s", err.message);
    fe_cmp cmp;
    assert_int_equal(fe_exec_compare(g, ref, got, &cmp, &err), FE_OK);
    assert_true(cmp.ok);
    snprintf(got_how, size, "%s", got->how[p->group_of[tl_node(g, at)]]);
    fe_cmp_free(&cmp);
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_exec_free(ex);
}

/* tl_agree_how, and when how is not NULL the group of node `at` must have
 * run as how says (its "how" line contains it). */
static inline void tl_agree(const fe_graph *g, const fe_plan *p, const char *at, const char *how)
{
    char got[4096];
    tl_agree_how(g, p, at, got, sizeof got);
    if (how)
        assert_contains(got, how);
}

#endif
