/* ranges.h: the values an integer tensor may hold so that every index it
 * reaches is in range (ranges.c), for a session's random inputs. */
#ifndef FE_RANGES_H
#define FE_RANGES_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

enum {
    FE_RANGE_FREE,      /* its values reach no index: any will do */
    FE_RANGE_IN,        /* every value in [lo, hi) keeps the indices it reaches in range */
    FE_RANGE_UNKNOWN    /* they reach one through a node whose values fuseeng cannot follow */
};

typedef struct fe_range {
    int kind;           /* FE_RANGE_* */
    int64_t lo, hi;     /* FE_RANGE_IN */
    int32_t via;        /* FE_RANGE_UNKNOWN: that node (or where two ranges did not meet) */
    int32_t index;      /* IN and UNKNOWN: a node that indexes with the values (-1: none) */
    int clash;          /* UNKNOWN: two ranges with nothing in common met at via */
} fe_range;

/* Every tensor's range, by tensor id (caller frees), derived backwards from
 * every gather, embedding and exported aten index.Tensor or gather through
 * every op; NULL when out of memory. */
fe_range *fe_ranges(const fe_graph *g);

/* FE_OK unless r (tensor t's) is FE_RANGE_UNKNOWN: then FE_EINPUT naming the
 * tensor, the node it indexes, the node in between and the fix (give its
 * values with --inputs or --weights). */
int fe_range_check(const fe_graph *g, int32_t t, const fe_range *r, fe_error *err);

#endif
