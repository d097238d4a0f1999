/* setids.h: dense ids for sets of node (or tensor) ids: equal sets get
 * equal ids, so a policy can memoise facts about a group under one small
 * integer (group.id, lua_graph.c). */
#ifndef FE_SETIDS_H
#define FE_SETIDS_H

#include <stdint.h>

typedef struct fe_setids fe_setids;

/* An empty table. NULL on out-of-memory. Free with fe_setids_free. */
fe_setids *fe_setids_new(void);
void fe_setids_free(fe_setids *s);

/* The id of the set v[0..n) (sorted ascending, no repeats): 1, 2, ... in
 * the order sets are first seen, the same id for the same set. The table
 * keeps a copy of each set. -1 on out-of-memory. */
int64_t fe_setids_get(fe_setids *s, const int32_t *v, int32_t n);

#endif
