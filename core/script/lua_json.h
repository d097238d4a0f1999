/* lua_json.h: a data file written in Lua (an A/B suite) as JSON text: the
 * file runs in the policy sandbox and the table it returns is written out,
 * so that Lua and JSON sources share one reader and one set of messages. */
#ifndef FE_LUA_JSON_H
#define FE_LUA_JSON_H

#include "error.h"
#include "sandbox.h"

/* Run path in sb (a fresh environment, under sb's limits: the engine's,
 * which the user set) and return the JSON text of the table it returns: a
 * table with keys 1..n is an array, one with string keys an object;
 * numbers, strings and booleans as such. Anything else (functions, mixed
 * keys, cycles) is FE_EINPUT naming the key, as is a run its limits
 * stopped. sb's stack is left as it was. Caller frees with free(). */
char *fe_lua_file_json(fe_sandbox *sb, const char *path, fe_error *err);

#endif
