/* outfile.h: output files (plans, traces, charts) written whole or not at
 * all, with one kind of error for every way that fails.
 *
 *   fe_outfile o;
 *   if (fe_outfile_open(&o, path, "the trace", err) != FE_OK) return ...;
 *   ... write to o.f ...
 *   return fe_outfile_commit(&o, err);    (or fe_outfile_abort(&o))
 *
 * A regular file (or one that does not exist yet) is written to a
 * temporary file beside it and renamed over it when complete, so a failure
 * part way leaves neither a partial file nor a damaged old one. Anything
 * else (a terminal, a pipe, /dev/null) is written in place. Every failure
 * is FE_EINPUT (exit status 2) with "PATH: cannot write WHAT: strerror".
 */
#ifndef FE_OUTFILE_H
#define FE_OUTFILE_H

#include <limits.h>
#include <stdio.h>

#include "error.h"

typedef struct fe_outfile {
    FILE *f;                 /* write here */
    const char *path;        /* as the caller named it (not copied) */
    const char *what;        /* "the trace", for messages (not copied) */
    char dest[PATH_MAX];     /* the file the rename replaces */
    char tmp[PATH_MAX];      /* the file being written; "" when writing in place */
} fe_outfile;

/* Open path for writing; what names its content in messages. FE_OK, or
 * FE_EINPUT with err set and nothing created. */
int fe_outfile_open(fe_outfile *o, const char *path, const char *what, fe_error *err);

/* Flush, check for write errors, close and move the file into place.
 * FE_OK, or FE_EINPUT with err set and the temporary file removed. */
int fe_outfile_commit(fe_outfile *o, fe_error *err);

/* Give up after a write to o->f failed: remove the temporary file and set
 * err to "PATH: cannot write WHAT: strerror(errno)". Returns FE_EINPUT. */
int fe_outfile_fail(fe_outfile *o, fe_error *err);

/* Give up: close and remove the temporary file (the old file, if any,
 * stays as it was). */
void fe_outfile_abort(fe_outfile *o);

#endif
