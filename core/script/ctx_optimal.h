/* ctx_optimal.h: ctx:optimal(opts), the optimal plan of a window under the
 * cost model (ctx_optimal.c; the search is core/plan's optimal.h). ctx.c
 * makes the method. */
#ifndef FE_CTX_OPTIMAL_H
#define FE_CTX_OPTIMAL_H

#include <lua.h>

#include "candidates.h"
#include "ctx_sim.h"
#include "run.h"

/* ctx:optimal with its options at stack index 2 and the run's graph
 * object at gidx, the top. *space is the run's search scratch, made on the first
 * call (free it with fe_cand_space_free when the run ends); pricing with
 * the simulator is counted in t. Pushes the answer (a table, or nil, a
 * message and a kind), returns the number of values; raises a Lua error
 * at the policy's line for a wrong option or a hook's wrong answer. */
int fe_ctx_optimal(lua_State *L, fe_run *r, int gidx, fe_cand_space **space, fe_ctx_sim_tally *t);

#endif
