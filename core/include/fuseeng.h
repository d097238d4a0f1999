/* fuseeng.h: the public C API of fuseeng, a Lua-scriptable operator-fusion
 * policy engine.
 *
 * The block between the FE_API_BEGIN and FE_API_END lines holds only plain C
 * declarations (no macros, no inline code), so LuaJIT can feed it to
 * ffi.cdef unchanged. Every function says what it returns and who owns
 * what: a pointer returned by fe_* stays owned by the object it came from
 * unless the comment says "caller frees", in which case it is released with
 * the fe_*_free function named there.
 */
#ifndef FUSEENG_H
#define FUSEENG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FE_API_BEGIN */

/* Error codes. The CLI exits with 2 for FE_EINPUT and 1 for the others. */
enum {
    FE_OK = 0,
    FE_ERUNTIME = 1,   /* the engine failed while doing what was asked */
    FE_EINPUT = 2,     /* bad input: model, plan, policy, option or usage */
    FE_ENOMEM = 3,     /* an allocation failed */
    FE_ECHECK = 4      /* a numeric check failed (fused != reference) */
};

/* Every call that can fail takes an fe_error; on failure it holds the code
 * and one message naming the file, the place and what to fix. */
typedef struct fe_error {
    int code;
    char message[1024];
} fe_error;

/* Version string of the library, e.g. "0.1.0"; static storage. */
const char *fe_version(void);

/* FE_API_END */

#ifdef __cplusplus
}
#endif

#endif
