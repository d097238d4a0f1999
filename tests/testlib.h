/* testlib.h: small helpers shared by the C tests (header-only). */
#ifndef FE_TESTLIB_H
#define FE_TESTLIB_H

#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "graph.h"
#include "load.h"

/* Load a model from a JSON string; fails the test with the loader's message. */
static inline fe_graph *tl_graph(const char *json)
{
    fe_error err = {0};
    fe_graph *g = fe_load_model_buffer(json, strlen(json), "test.json", NULL, &err);
    if (!g)
        fail_msg("model did not load: %s", err.message);
    return g;
}

/* The same from JSON written with ' for " (readable inside C strings). */
static inline fe_graph *tl_graph_q(const char *quoted)
{
    char *json = strdup(quoted);
    for (char *c = json; *c; c++)
        if (*c == '\'')
            *c = '"';
    fe_graph *g = tl_graph(json);
    free(json);
    return g;
}

/* Id of the node called name; fails the test if there is none. */
static inline int32_t tl_node(const fe_graph *g, const char *name)
{
    int32_t id = fe_graph_find_node(g, name);
    if (id < 0)
        fail_msg("no node '%s'", name);
    return id;
}

/* Load a model expected to fail; returns the message (static buffer). */
static inline const char *tl_graph_error(const char *json)
{
    static char msg[1024];
    fe_error err = {0};
    fe_graph *g = fe_load_model_buffer(json, strlen(json), "test.json", NULL, &err);
    if (g) {
        fe_graph_free(g);
        fail_msg("model loaded but should not have");
    }
    snprintf(msg, sizeof msg, "%s", err.message);
    return msg;
}

/* The shared directory (../shared unless $SHARED says otherwise). */
static inline const char *tl_shared(void)
{
    const char *s = getenv("SHARED");
    return s && *s ? s : "../shared";
}

/* Paths matching pattern; caller frees with globfree. */
static inline size_t tl_glob(const char *pattern, glob_t *gl, int append)
{
    glob(pattern, append ? GLOB_APPEND : 0, NULL, gl);
    return gl->gl_pathc;
}

#define assert_contains(haystack, needle)                                               \
    do {                                                                                \
        const char *h_ = (haystack), *n_ = (needle);                                    \
        if (!strstr(h_, n_))                                                            \
            fail_msg("'%s' does not contain '%s'", h_, n_);                             \
    } while (0)

#endif
