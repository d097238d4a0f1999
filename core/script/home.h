/* home.h: the install home, the directory that holds lua/ (the policy
 * library, machine files) and policies/, and the shipped files in it.
 *
 * One owner for where the engine looks: $FUSEENG_HOME, the places relative
 * to the library's own file, the install prefix compiled in (FE_DATADIR,
 * from the Makefile's PREFIX) and the current directory. The sandbox finds
 * its home here when it is made; policies and machine files are named
 * through it. */
#ifndef FE_HOME_H
#define FE_HOME_H

#include <stddef.h>

/* The home into out (a real path): the directory opt if given, else
 * $FUSEENG_HOME, else the first of the places relative to this library's
 * own file (the build tree keeps lua/ beside build/, an install keeps it
 * in share/fuseeng), the install prefix compiled in and "." that holds
 * lua/fuseeng.lua. 0, or -1 when none does. */
int fe_home_locate(const char *opt, char *out, size_t size);

/* Resolve a policy or machine name into out: a name with a slash is a
 * path, taken as given; a bare name (with or without ".lua") is the shipped
 * file home/subdir/NAME.lua, and only when there is none a file of that
 * name in the current directory. When both exist the shipped one wins and a
 * note on stderr (kind: "policy", "machine") says how to reach the other.
 * 0, or -1 when a bare name is neither. */
int fe_home_find(const char *home, const char *subdir, const char *kind, const char *name,
                 char *out, size_t size);

/* The names of the .lua files in home/subdir (the shipped policies or
 * machines), without ".lua", sorted, joined by ", " into out ("" if none). */
void fe_home_names(const char *home, const char *subdir, char *out, size_t size);

/* snprintf for paths: 0, or -1 if the result would not fit (then out is
 * "", which names no file). */
int fe_home_pathf(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
