/* dimarg.h: dims as options and files write them, "NAME=V" or a sweep
 * "NAME=V1,V2,...": the one parser (dimarg.c) of --dim, the C API's dims
 * text ("B=8,S=4096", one NAME=V per comma) and A/B suites' dims, with one
 * set of limits. fe_dimarg and fe_dimarg_parse are public (fuseeng.h), so
 * that the command line parses with it too. */
#ifndef FE_DIMARG_H
#define FE_DIMARG_H

#include "fuseeng.h"

/* The limits, spelled out in fe_dimarg's arrays in fuseeng.h. */
#define FE_DIMARG_NAME 128     /* a name's bytes, its NUL included */
#define FE_DIMARG_VALUES 64    /* values of one dim */

#endif
