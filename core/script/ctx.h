/* ctx.h: the ctx a policy's hooks receive (ctx.c): the one place that
 * builds it, with all its fields and methods. */
#ifndef FE_CTX_H
#define FE_CTX_H

#include "run.h"

/* Push the ctx of run r (after fe_run_begin) and keep its slot in r->ctx. */
void fe_ctx_push(fe_run *r);

/* The run is over: cut ctx from it (a ctx a script kept raises "this ctx
 * belongs to a finished run") and free what its methods held (ctx:bench's
 * session). Call before fe_run_end; nothing happens if no ctx was pushed. */
void fe_ctx_end(fe_run *r);

#endif
