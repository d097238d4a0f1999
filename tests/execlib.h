/* execlib.h: a check shared by the tests that execute plans (included
 * after testlib.h). */
#ifndef FE_TEST_EXECLIB_H
#define FE_TEST_EXECLIB_H

#include "compare.h"
#include "exec.h"
#include "plan.h"

/* Run plan p and the unfused reference on the same inputs: the outputs
 * must agree and, when how is not NULL, the group of node `at` must have
 * run as how says (its "how" line contains it). */
static inline void tl_agree(const fe_graph *g, const fe_plan *p, const char *at, const char *how)
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
    if (how)
        assert_contains(got->how[p->group_of[tl_node(g, at)]], how);
    fe_cmp_free(&cmp);
    fe_exec_result_free(ref);
    fe_exec_result_free(got);
    fe_exec_free(ex);
}

#endif
