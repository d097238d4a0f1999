/* memo.c: hook answers by structural signature (see memo.h). An open
 * addressing table on the signature's first word; the second word must
 * match too. */
#include <stdlib.h>
#include <string.h>

#include "groupsig.h"
#include "memo.h"

struct fe_memo {
    fe_groupsig *sig;
    fe_memo_answer *slots;    /* key {0, 0}: empty */
    size_t cap, n;
};

fe_memo *fe_memo_new(const fe_graph *g, fe_error *err)
{
    fe_memo *m = fe_calloc(1, sizeof *m, err);
    if (!m)
        return NULL;
    if (!(m->sig = fe_groupsig_new(g, err))) {
        free(m);
        return NULL;
    }
    return m;
}

void fe_memo_free(fe_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].reason);
    free(m->slots);
    fe_groupsig_free(m->sig);
    free(m);
}

void fe_memo_key(fe_memo *m, int what, const int32_t *nodes, int n, const int32_t *part_len,
                 const int32_t *part_nodes, int nparts, uint64_t key[2])
{
    fe_groupsig_of(m->sig, (uint64_t)what, nodes, n, part_len, part_nodes, nparts, key);
    key[0] ^= fe_groupsig_part_order(part_len, part_nodes, nparts);
    if (!key[0] && !key[1])
        key[1] = 1;   /* {0, 0} marks an empty slot */
}

static size_t find(const fe_memo_answer *slots, size_t cap, const uint64_t key[2])
{
    size_t h = (size_t)key[0] & (cap - 1);
    while ((slots[h].key[0] || slots[h].key[1]) &&
           (slots[h].key[0] != key[0] || slots[h].key[1] != key[1]))
        h = (h + 1) & (cap - 1);
    return h;
}

const fe_memo_answer *fe_memo_get(const fe_memo *m, const uint64_t key[2])
{
    if (!m->cap)
        return NULL;
    const fe_memo_answer *a = &m->slots[find(m->slots, m->cap, key)];
    return a->key[0] || a->key[1] ? a : NULL;
}

int fe_memo_put(fe_memo *m, const uint64_t key[2], int32_t value, const char *reason,
                int32_t reason_id)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        fe_memo_answer *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return FE_ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].key[0] || m->slots[i].key[1])
                slots[find(slots, cap, m->slots[i].key)] = m->slots[i];
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    fe_memo_answer *a = &m->slots[find(m->slots, m->cap, key)];
    char *copy = NULL;
    if (reason) {
        size_t len = strlen(reason) + 1;
        if (!(copy = malloc(len)))
            return FE_ENOMEM;
        memcpy(copy, reason, len);
    }
    if (a->key[0] || a->key[1]) {
        free(a->reason);
    } else {
        m->n++;
    }
    *a = (fe_memo_answer){{key[0], key[1]}, value, copy, reason_id};
    return FE_OK;
}
