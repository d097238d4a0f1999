/* infile.h: opening input files (models, plans, profiles, scripts) with
 * one rule and one kind of error for every reader.
 *
 * Only regular files are read. A FIFO, a device or a directory is refused
 * before anything blocks on it: opening a FIFO for reading waits for a
 * writer, so it is opened non-blocking and checked with fstat first.
 * Every failure is FE_EINPUT (exit status 2) and names the path.
 */
#ifndef FE_INFILE_H
#define FE_INFILE_H

#include <stddef.h>

#include "error.h"

/* The most fe_infile_read takes: JSON documents beyond it are not plans or
 * profiles of any model the engine can hold. */
#define FE_INFILE_MAX ((size_t)1 << 30)

/* A read-only descriptor of the regular file at path (caller closes), its
 * size in *size; -1 with err set ("PATH: cannot open WHAT: ...", or "is not
 * a regular file"). what names the file's role in messages ("the plan"). */
int fe_infile_open(const char *path, const char *what, size_t *size, fe_error *err);

/* The whole regular file at path, NUL-terminated (caller frees), its length
 * in *len; NULL with err set. Files over max bytes are refused by name. */
char *fe_infile_read(const char *path, const char *what, size_t max, size_t *len, fe_error *err);

#endif
