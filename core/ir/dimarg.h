/* dimarg.h: dims as options and files write them, "NAME=V" or a sweep
 * "NAME=V1,V2,...": the one parser (dimarg.c) of --dim, the C API's dims
 * text ("B=8,S=4096", one NAME=V per comma) and A/B suites' dims, with one
 * set of limits. The command line parses with it too: fe_dimarg and
 * fe_dimarg_parse are public (fuseeng_cli.h), which defines the struct
 * again under this header's guard, FE_DIMARG_DEFINED (core/api/api_abi.c
 * checks that the two agree). */
#ifndef FE_DIMARG_H
#define FE_DIMARG_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The limits. */
#define FE_DIMARG_NAME 128     /* a name's bytes, its NUL included */
#define FE_DIMARG_VALUES 64    /* values of one dim */

#ifndef FE_DIMARG_DEFINED
#define FE_DIMARG_DEFINED
/* "NAME=V", or a sweep "NAME=V1,V2,..." (a dispatch table's buckets, an
 * A/B suite's rows). */
typedef struct fe_dimarg {
    char name[FE_DIMARG_NAME];          /* 1 to 127 bytes: before the first '=' */
    int n;                              /* values: 1 to FE_DIMARG_VALUES */
    int64_t values[FE_DIMARG_VALUES];   /* each positive */
} fe_dimarg;
#endif

/* Parse text[0..len) into d. FE_OK, or FE_EINPUT with a message saying
 * what is wrong, without the text (callers put "--dim TEXT: " or the like
 * before it). */
int fe_dimarg_parse(const char *text, size_t len, fe_dimarg *d, fe_error *err);

#endif
