/* lua_json.h: a data file written in Lua (an A/B suite) as JSON text: the
 * file runs in the policy sandbox and the table it returns is written out,
 * so that Lua and JSON sources share one reader and one set of messages. */
#ifndef FE_LUA_JSON_H
#define FE_LUA_JSON_H

#include "error.h"

/* Run path in a fresh sandbox (default limits) and return the JSON text of
 * the table it returns: a table with keys 1..n is an array, one with
 * string keys an object; numbers, strings and booleans as such. Anything
 * else (functions, mixed keys, cycles) is FE_EINPUT naming the key.
 * Caller frees with free(). */
char *fe_lua_file_json(const char *path, fe_error *err);

#endif
