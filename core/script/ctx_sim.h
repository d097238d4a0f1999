/* ctx_sim.h: the simulator as ctx offers it (ctx_sim.c); ctx.c makes the
 * methods. Each takes its Lua arguments from index 2 on (1 is ctx) and
 * pushes one result table, or raises a Lua error at the policy's line. */
#ifndef FE_CTX_SIM_H
#define FE_CTX_SIM_H

#include <lua.h>

#include "graph.h"
#include "machine.h"

/* What a run's simulator calls cost: kernels priced and the time spent
 * pricing them and making their result tables (--stats). */
typedef struct fe_ctx_sim_tally {
    int64_t calls;
    double seconds;
} fe_ctx_sim_tally;

/* ctx:simulate(group [, {split = n}]) */
int fe_ctx_simulate(lua_State *L, const fe_graph *g, const fe_machine *m, fe_ctx_sim_tally *t);
/* ctx:simulate_unfused(group) */
int fe_ctx_simulate_unfused(lua_State *L, const fe_graph *g, const fe_machine *m,
                            fe_ctx_sim_tally *t);
/* ctx:simulate_parts(group [, {split = n or function(part)}]) */
int fe_ctx_simulate_parts(lua_State *L, const fe_graph *g, const fe_machine *m,
                          fe_ctx_sim_tally *t);
/* Push the machine as a plain table (its file's field names): ctx.machine. */
void fe_ctx_push_machine(lua_State *L, const fe_machine *m);

#endif
