/* reason.c: "{partK}" in decide reasons (see reason.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reason.h"

/* The part number of a "{partK}" at s, or 0. */
static int part_at(const char *s)
{
    return strncmp(s, "{part", 5) == 0 && s[5] >= '1' && s[5] <= '9' && s[6] == '}' ? s[5] - '0'
                                                                                   : 0;
}

int fe_reason_names_parts(const char *reason)
{
    for (const char *s = strchr(reason, '{'); s; s = strchr(s + 1, '{'))
        if (part_at(s))
            return 1;
    return 0;
}

typedef struct text {
    char **buf;
    size_t *cap, len;
    int oom;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > *t->cap) {
        size_t cap = *t->cap ? *t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *b = realloc(*t->buf, cap);
        if (!b) {
            t->oom = 1;
            return;
        }
        *t->buf = b;
        *t->cap = cap;
    }
    memcpy(*t->buf + t->len, s, n);
    t->len += n;
    (*t->buf)[t->len] = '\0';
}

static void puts_(text *t, const char *s)
{
    put(t, s, strlen(s));
}

static void quoted(text *t, const fe_graph *g, int32_t v)
{
    put(t, "'", 1);
    puts_(t, fe_node_name(g, fe_graph_node(g, v)));
    put(t, "'", 1);
}

/* A part's names: every member up to two, else the first and last (most
 * of a big part's names would make a decision log of megabytes). */
static void names(text *t, const fe_graph *g, const int32_t *m, int32_t n)
{
    put(t, "{", 1);
    if (n > 0)
        quoted(t, g, m[0]);
    if (n == 2) {
        put(t, ", ", 2);
        quoted(t, g, m[1]);
    } else if (n > 2) {
        put(t, ", ..., ", 7);
        quoted(t, g, m[n - 1]);
    }
    put(t, "}", 1);
    if (n > 2) {
        char count[32];
        snprintf(count, sizeof count, " (%d nodes)", (int)n);
        puts_(t, count);
    }
}

const char *fe_reason_with_parts(const fe_graph *g, const char *reason, const int32_t *part_len,
                                 const int32_t *part_nodes, int nparts, char **buf, size_t *cap)
{
    text t = {buf, cap, 0, 0};
    put(&t, "", 0);
    const char *s = reason;
    for (const char *b = strchr(s, '{'); b; b = strchr(b + 1, '{')) {
        int k = part_at(b);
        if (!k || k > nparts)
            continue;
        put(&t, s, (size_t)(b - s));
        int32_t at = 0;
        for (int i = 0; i < k - 1; i++)
            at += part_len[i];
        names(&t, g, part_nodes + at, part_len[k - 1]);
        s = b + 7;
        b = s - 1;
    }
    puts_(&t, s);
    return t.oom ? NULL : *buf;
}
