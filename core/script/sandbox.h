/* sandbox.h: the Lua state that runs untrusted policy and machine files.
 *
 * One owner for everything that keeps a script in its box: the allow-list of
 * globals, read-only library tables, text-only chunks, no finalizers, the
 * instruction budget and the time limit (a count hook), the memory cap (a
 * counting allocator) and the formatting of errors as "file:LINE: message".
 * Nothing else in the engine touches lua_sethook or the allocator.
 */
#ifndef FE_SANDBOX_H
#define FE_SANDBOX_H

#include <lauxlib.h>
#include <stdint.h>

#include "error.h"

typedef struct fe_sandbox_opts {
    int64_t instructions;   /* budget per run; 0 = FE_SANDBOX_INSTRUCTIONS */
    int64_t memory;         /* cap on the state's memory in bytes; 0 = FE_SANDBOX_MEMORY */
    double seconds;         /* wall-clock limit per run; 0 = FE_SANDBOX_SECONDS */
    const char *home;       /* directory holding lua/ and policies/; NULL = find it (home.h) */
} fe_sandbox_opts;

#define FE_SANDBOX_INSTRUCTIONS INT64_C(2000000000)
#define FE_SANDBOX_MEMORY (INT64_C(512) << 20)
/* Long enough for a run that measures with ctx:bench (60 s by default). */
#define FE_SANDBOX_SECONDS 300.0

typedef struct fe_sandbox fe_sandbox;

/* A new state with the standard safe libraries and LPeg preloaded, and
 * require limited to the fuseeng Lua library and preloaded C modules. NULL with err
 * set if the state cannot be created or the library directory not found.
 * Free with fe_sandbox_free (which closes the state). */
fe_sandbox *fe_sandbox_new(const fe_sandbox_opts *opts, fe_error *err);
void fe_sandbox_free(fe_sandbox *sb);

/* Open the C modules (NULL-ended) and let scripts require them by name,
 * e.g. the engine's fuseeng.core (FE_LUA_CORE_MODULES), which the fuseeng
 * library needs. The sandbox knows no module of the engine's itself. */
void fe_sandbox_preload(fe_sandbox *sb, const luaL_Reg *modules);

lua_State *fe_sandbox_L(fe_sandbox *sb);
/* The sandbox of a state made by fe_sandbox_new (for C functions). */
fe_sandbox *fe_sandbox_of(lua_State *L);

/* The directory holding lua/ and policies/ (static storage of sb). */
const char *fe_sandbox_home(const fe_sandbox *sb);

/* Start a metered run of script (its file, or a label such as "combine";
 * NULL keeps the last one): the instruction count, the clock and the stop
 * reset. script names the run in messages that have no line of their own
 * and in the watchdog's message. */
void fe_sandbox_begin(fe_sandbox *sb, const char *script);
/* Instructions used by the current run (a multiple of the hook interval). */
int64_t fe_sandbox_used(const fe_sandbox *sb);
/* Seconds left of the current run's time limit (0 when past it): what a
 * long C call made from a script (ctx:optimal's solver) may take, since
 * the hook cannot stop it. */
double fe_sandbox_seconds_left(const fe_sandbox *sb);
/* Bytes the state holds now, and its cap. */
int64_t fe_sandbox_memory(const fe_sandbox *sb);
int64_t fe_sandbox_memory_cap(const fe_sandbox *sb);
/* Limits of the runs that follow: o's instructions, memory and seconds, a
 * zero keeping the current one (o's home is not read). */
void fe_sandbox_set_limits(fe_sandbox *sb, const fe_sandbox_opts *o);

/* Push a fresh environment table for one script: allow-listed globals,
 * per-script read-only proxies of the libraries, strict globals (reading
 * or assigning an undeclared global is an error). */
void fe_sandbox_push_env(fe_sandbox *sb);

/* Load the text chunk in path (a regular file; binary chunks are refused)
 * with the environment on top of the stack (popped), and leave the loaded
 * function on the stack. what names the file's role in messages ("the
 * policy"); for load_string, label names the chunk (defaults to path). */
int fe_sandbox_load_file(fe_sandbox *sb, const char *path, const char *what, fe_error *err);
int fe_sandbox_load_string(fe_sandbox *sb, const char *src, size_t len, const char *label,
                           fe_error *err);

/* Call the function below nargs arguments like lua_pcall, with messages
 * formatted "file:LINE: message" and the budget and cap named when they
 * are what stopped it. what names the caller in messages about a script
 * that never ran a line ("policy decide"). On error nothing is left on the
 * stack and err holds FE_EINPUT. */
int fe_sandbox_pcall(fe_sandbox *sb, int nargs, int nresults, const char *what, fe_error *err);

/* Does msg start with a place, "chunk:LINE: "? */
int fe_sandbox_has_place(const char *msg);

/* A Lua value for messages, without calling its metamethods ("a table",
 * "'text'", "42"): a script's __tostring is its code and never runs from
 * C. Static per-thread storage. */
const char *fe_sandbox_describe(lua_State *L, int idx);

/* The place where the function at idx was defined, "file:LINE", if it is
 * a script's Lua function (not C, not the fuseeng library's own code):
 * written to buf, returns 1; else 0. For messages about what a hook
 * returned, which have no line of their own. */
int fe_sandbox_fn_place(lua_State *L, int idx, char *buf, size_t size);

/* The watchdog, for programs that own their process (the CLI). The hook
 * cannot interrupt a single long C call (a string pattern that backtracks
 * for hours). Once this is called, each metered run arms a timer for its
 * time limit plus a grace period; if it fires while a script is still
 * running, the process prints "fuseeng: FILE: still inside a C call N s
 * past the time limit (a string pattern?); stopping" on stderr and exits
 * with status 2. Call it once, before any sandbox runs. */
void fe_sandbox_watchdog(void);

#endif
