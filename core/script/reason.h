/* reason.h: decide reasons that name the candidate's parts.
 *
 * A reason may say "{part1}" .. "{part9}" where it names group.parts[k]:
 * the engine writes the part's node names in, as Inductor's fusion log
 * names buffers: {'a'}, {'a', 'b'}, or {'a', ..., 'z'} (N nodes) for a
 * part of more than two nodes. So a reason can name nodes and still be
 * remembered by structure (memo = true): the memo keeps the reason as
 * written and each decision it answers gets its own parts' names. */
#ifndef FE_REASON_H
#define FE_REASON_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

/* Does reason name a part ("{partK}", 1 <= K <= 9)? */
int fe_reason_names_parts(const char *reason);

/* reason with each "{partK}" (K <= nparts) replaced by part K's names;
 * parts are part_len[0..nparts) long, their sorted members one after
 * another in part_nodes. Written into *buf (grown as needed, *cap its
 * size; the caller frees it); "{partK}" past nparts stays as written.
 * Returns *buf, or NULL when out of memory. */
const char *fe_reason_with_parts(const fe_graph *g, const char *reason, const int32_t *part_len,
                                 const int32_t *part_nodes, int nparts, char **buf, size_t *cap);

#endif
