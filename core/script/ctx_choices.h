/* ctx_choices.h: ctx:choices, the fused choices around an anchor node
 * (ctx_choices.c over core/plan/choices.c); ctx.c makes the method. */
#ifndef FE_CTX_CHOICES_H
#define FE_CTX_CHOICES_H

#include <lua.h>

#include "choices.h"

/* ctx:choices(anchor [, {depth = 3, max = 64, kinds = {...}}]) on g, whose
 * graph object is at gidx: pushes the list of choices. *ch is the run's
 * chooser, made on the first call (the caller frees it with
 * fe_chooser_free). Bad arguments are Lua errors at the policy's line. */
int fe_ctx_choices(lua_State *L, const fe_graph *g, int gidx, fe_chooser **ch);

#endif
