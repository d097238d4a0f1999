/* error.h: the one error type of the engine: a code and a message that names
 * the file, the place and what to fix. */
#ifndef FE_ERROR_H
#define FE_ERROR_H

#include <stddef.h>

/* The codes and the struct are public too: the embedding header
 * (core/include/fuseeng.h) defines the same for users, who see no header
 * of ours, under the same guard, so that a file seeing both (core/api)
 * gets one definition. core/api/api_abi.c checks at compile time that the
 * two agree; change them together. */
#ifndef FE_ERROR_DEFINED
#define FE_ERROR_DEFINED
enum {
    FE_OK = 0,
    FE_ERUNTIME = 1,   /* the engine failed while doing what was asked */
    FE_EINPUT = 2,     /* bad input: model, plan, policy, option or usage */
    FE_ENOMEM = 3,     /* an allocation failed */
    FE_ECHECK = 4      /* a numeric check failed (fused != reference) */
};

typedef struct fe_error {
    int code;
    char message[1024];
} fe_error;
#endif

/* Set err (if not NULL) to code and a printf-style message; returns code so
 * callers can write `return fe_error_set(err, FE_EINPUT, ...)`. */
int fe_error_set(fe_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the current message with a printf-style context ("model.json: ").
 * Keeps the code; does nothing if err is NULL or holds no error. */
void fe_error_prefix(fe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Chain an inner cause to the current message: "outer: cause". Keeps the
 * code; does nothing if err is NULL or holds no error. So that an error
 * never loses why it happened ("matmul: epilogue failed: ..."). */
void fe_error_cause(fe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Copy src into dst (size bytes, always terminated, truncated if need be)
 * with each control character written as \xNN: C0 and DEL bytes, and the
 * C1 controls U+0080..U+009F; keep_lines keeps '\n' and '\t'. Returns the
 * length of dst. The public fe_escape. */
size_t fe_escape_into(char *dst, size_t size, const char *src, int keep_lines);

/* The offset of the first byte of s that fe_escape_into would escape with
 * that keep_lines, or -1 if there is none. */
long fe_control_at(const char *s, int keep_lines);

/* s escaped as fe_escape_into does, in a new string (caller frees); NULL
 * if out of memory. */
char *fe_escape_dup(const char *s, int keep_lines);

/* Exit status for an error code: 0 ok, 2 bad input or usage, 1 otherwise. */
int fe_error_exit_code(int code);

/* The one edit distance of the engine's "did you mean" hints (C and, as
 * fuseeng.core.closest, Lua): the name among names[0..n) within two edits
 * of key (a swap of neighbours is one edit) and fewer edits than key has
 * letters, the nearest, the first in byte order among equals; NULL if none
 * is that close. Returns one of names. */
const char *fe_closest(const char *key, const char *const *names, int n);
/* " (did you mean 'x'?)" into hint for the closest of list's names
 * (separated by commas and spaces, as "known: a, b, c" messages list
 * them), or ""; returns hint. */
const char *fe_did_you_mean(const char *key, const char *list, char *hint, size_t size);

/* Out-of-memory helpers: abort-free allocation that records FE_ENOMEM. */
void *fe_malloc(size_t n, fe_error *err);
void *fe_calloc(size_t n, size_t size, fe_error *err);

#endif
