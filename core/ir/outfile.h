/* outfile.h: output files (plans, traces, charts, an import's model and
 * weights) written whole or not at all, with one kind of error for every
 * way that fails.
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
    int slot;                /* its entry in the table of temporary files, or -1 */
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

/* Two files replaced together (a model and its weights): each written to
 * its temporary file as above, then
 *
 *   fe_outfile_commit_pair(&first, &second, err)
 *
 * flushes both and syncs them to disk, then renames first and second into
 * place with SIGINT, SIGTERM, SIGHUP and SIGQUIT blocked between, so that
 * such a signal gets neither file replaced (it comes before) or both (it
 * waits until after). On an error nothing is replaced and both temporary
 * files are removed, unless the second rename fails after the first (the
 * message says so). A SIGKILL between the renames is the one way to get
 * the first file new and the second old; the caller records in the second
 * what the first holds, so that such a pair is told apart (the model's
 * weights_stamp, docs/import.md). between, if not NULL, is called between
 * the renames, with the signals blocked (a test's hook). FE_OK or
 * FE_EINPUT. */
int fe_outfile_commit_pair(fe_outfile *first, fe_outfile *second, void (*between)(void),
                           fe_error *err);

/* Temporary files are registered while they exist, in a table a signal
 * handler may read. fe_outfile_trap_signals(1) installs handlers for
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT that remove every registered
 * temporary file, then let the signal do what it did before (the previous
 * handler, or the default action: the process ends by the signal);
 * fe_outfile_trap_signals(0) puts the previous handlers back. For a
 * command that writes large files (import); not nested, not for threads
 * that write files concurrently. */
void fe_outfile_trap_signals(int on);

#endif
