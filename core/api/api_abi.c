/* api_abi.c: the error type (and fuseeng_cli.h's fe_dimarg, and the
 * device codes of core/exec/exec.h) are defined
 * twice, and this file checks at compile time that the two definitions
 * agree.
 *
 * fe_error and the FE_E* codes belong to core/ir (error.h): every layer
 * fills one. Users see none of our headers, so the public fuseeng.h
 * defines the same, self-contained as SQLite's header is. Both
 * definitions sit under one guard, FE_ERROR_DEFINED, so that a file that
 * sees both (core/api, the tests) compiles with whichever comes first, and
 * the public one stays plain C for LuaJIT's ffi.cdef. A guard would hide a
 * drift, so here, alone, the public definition is compiled under other
 * names (the macros below rename its identifiers), then core/ir's under
 * the real ones, and every code, the size and every field's offset and
 * size must match. Nothing else belongs in this file.
 */
#include <stddef.h>

#define fe_error fe_public_error
#define FE_OK FE_PUBLIC_OK
#define FE_ERUNTIME FE_PUBLIC_ERUNTIME
#define FE_EINPUT FE_PUBLIC_EINPUT
#define FE_ENOMEM FE_PUBLIC_ENOMEM
#define FE_ECHECK FE_PUBLIC_ECHECK
#define FE_DEVICE_CPU FE_PUBLIC_DEVICE_CPU
#define FE_DEVICE_CUDA FE_PUBLIC_DEVICE_CUDA
#define fe_dimarg fe_public_dimarg
#define fe_dimarg_parse fe_public_dimarg_parse
#include "fuseeng_cli.h"
#undef fe_dimarg
#undef fe_dimarg_parse
#undef FE_DIMARG_DEFINED
#undef fe_error
#undef FE_OK
#undef FE_ERUNTIME
#undef FE_EINPUT
#undef FE_ENOMEM
#undef FE_ECHECK
#undef FE_ERROR_DEFINED
#undef FE_DEVICE_CPU
#undef FE_DEVICE_CUDA
#undef FE_DEVICE_DEFINED

#include "dimarg.h"
#include "error.h"
#include "exec.h"

/* Compared as integers: the two enums are different types. */
#define SAME(a, b) _Static_assert((long)(a) == (long)(b), #a " differs between fuseeng.h and core/ir/error.h")

SAME(FE_PUBLIC_OK, FE_OK);
SAME(FE_PUBLIC_ERUNTIME, FE_ERUNTIME);
SAME(FE_PUBLIC_EINPUT, FE_EINPUT);
SAME(FE_PUBLIC_ENOMEM, FE_ENOMEM);
SAME(FE_PUBLIC_ECHECK, FE_ECHECK);
SAME(sizeof(fe_public_error), sizeof(fe_error));
SAME(offsetof(fe_public_error, code), offsetof(fe_error, code));
SAME(sizeof(((fe_public_error *)0)->code), sizeof(((fe_error *)0)->code));
SAME(offsetof(fe_public_error, message), offsetof(fe_error, message));
SAME(sizeof(((fe_public_error *)0)->message), sizeof(((fe_error *)0)->message));
SAME(FE_PUBLIC_DEVICE_CPU, FE_DEVICE_CPU);
SAME(FE_PUBLIC_DEVICE_CUDA, FE_DEVICE_CUDA);
SAME(sizeof(fe_public_dimarg), sizeof(fe_dimarg));
SAME(offsetof(fe_public_dimarg, name), offsetof(fe_dimarg, name));
SAME(sizeof(((fe_public_dimarg *)0)->name), sizeof(((fe_dimarg *)0)->name));
SAME(offsetof(fe_public_dimarg, n), offsetof(fe_dimarg, n));
SAME(offsetof(fe_public_dimarg, values), offsetof(fe_dimarg, values));
SAME(sizeof(((fe_public_dimarg *)0)->values), sizeof(((fe_dimarg *)0)->values));
