/* error.h: the one error type of the engine: a code and a message that names
 * the file, the place and what to fix. */
#ifndef FE_ERROR_H
#define FE_ERROR_H

#include "fuseeng.h"   /* fe_error and the FE_E* codes are public */

/* Set err (if not NULL) to code and a printf-style message; returns code so
 * callers can write `return fe_error_set(err, FE_EINPUT, ...)`. */
int fe_error_set(fe_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the current message with a printf-style context ("model.json: ").
 * Keeps the code; does nothing if err is NULL or holds no error. */
void fe_error_prefix(fe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The offset of the first byte of s that fe_escape (fuseeng.h) would
 * escape with that keep_lines, or -1 if there is none. */
long fe_control_at(const char *s, int keep_lines);

/* s escaped as fe_escape does, in a new string (caller frees); NULL if out
 * of memory. */
char *fe_escape_dup(const char *s, int keep_lines);

/* Exit status for an error code: 0 ok, 2 bad input or usage, 1 otherwise. */
int fe_error_exit_code(int code);

/* The name among names[0..n) within two edits of key, for "did you mean"
 * hints; NULL if none is that close. Returns one of names. */
const char *fe_closest(const char *key, const char *const *names, int n);

/* Out-of-memory helpers: abort-free allocation that records FE_ENOMEM. */
void *fe_malloc(size_t n, fe_error *err);
void *fe_calloc(size_t n, size_t size, fe_error *err);

#endif
