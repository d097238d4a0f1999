/* sandbox.h: the Lua state that runs untrusted policy and machine files.
 *
 * One owner for everything that keeps a script in its box: the allow-list of
 * globals, read-only library tables, text-only chunks, the instruction
 * budget (a count hook), the memory cap (a counting allocator) and the
 * formatting of errors as "file:LINE: message". Nothing else in the engine
 * touches lua_sethook or the allocator.
 */
#ifndef FE_SANDBOX_H
#define FE_SANDBOX_H

#include <lua.h>
#include <stdint.h>

#include "error.h"

typedef struct fe_sandbox_opts {
    int64_t instructions;   /* budget per run; 0 = FE_SANDBOX_INSTRUCTIONS */
    int64_t memory;         /* cap on the state's memory in bytes; 0 = FE_SANDBOX_MEMORY */
    const char *home;       /* directory holding lua/ and policies/; NULL = find it */
} fe_sandbox_opts;

#define FE_SANDBOX_INSTRUCTIONS INT64_C(2000000000)
#define FE_SANDBOX_MEMORY (INT64_C(512) << 20)

typedef struct fe_sandbox fe_sandbox;

/* A new state with the standard safe libraries, LPeg and fuseeng.core
 * preloaded, and require limited to the fuseeng Lua library. NULL with err
 * set if the state cannot be created or the library directory not found.
 * Free with fe_sandbox_free (which closes the state). */
fe_sandbox *fe_sandbox_new(const fe_sandbox_opts *opts, fe_error *err);
void fe_sandbox_free(fe_sandbox *sb);

lua_State *fe_sandbox_L(fe_sandbox *sb);
/* The sandbox of a state made by fe_sandbox_new (for C functions). */
fe_sandbox *fe_sandbox_of(lua_State *L);

/* The directory holding lua/ and policies/ (static storage of sb). */
const char *fe_sandbox_home(const fe_sandbox *sb);

/* Start a metered run: the instruction count and the stop flag reset. */
void fe_sandbox_begin(fe_sandbox *sb);
/* Instructions used by the current run (a multiple of the hook interval). */
int64_t fe_sandbox_used(const fe_sandbox *sb);
/* Bytes the state holds now, and its cap. */
int64_t fe_sandbox_memory(const fe_sandbox *sb);
int64_t fe_sandbox_memory_cap(const fe_sandbox *sb);
void fe_sandbox_set_limits(fe_sandbox *sb, int64_t instructions, int64_t memory);

/* Push a fresh environment table for one script: allow-listed globals,
 * per-script read-only proxies of the libraries, strict globals (reading
 * or assigning an undeclared global is an error). */
void fe_sandbox_push_env(fe_sandbox *sb);

/* Load the text chunk in path (binary chunks are refused) with the
 * environment on top of the stack (popped), and leave the loaded function
 * on the stack. label names it in messages (defaults to path). */
int fe_sandbox_load_file(fe_sandbox *sb, const char *path, fe_error *err);
int fe_sandbox_load_string(fe_sandbox *sb, const char *src, size_t len, const char *label,
                           fe_error *err);

/* Call the function below nargs arguments like lua_pcall, with messages
 * formatted "file:LINE: message" and the budget and cap named when they
 * are what stopped it. what names the caller in messages about a script
 * that never ran a line ("policy decide"). On error nothing is left on the
 * stack and err holds FE_EINPUT. */
int fe_sandbox_pcall(fe_sandbox *sb, int nargs, int nresults, const char *what, fe_error *err);

/* Look a file up: name as given if it is a readable path, else
 * home/subdir/name and home/subdir/name.lua. Writes the path into out. */
int fe_sandbox_find(const fe_sandbox *sb, const char *subdir, const char *name, char *out,
                    size_t size);

#endif
