/* lua_fields.h: setting a field of the table on top of the Lua stack, for
 * the bindings that build result tables (ctx's figures, fuseeng.core). */
#ifndef FE_LUA_FIELDS_H
#define FE_LUA_FIELDS_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

void fe_lf_num(lua_State *L, const char *k, double v);
void fe_lf_int(lua_State *L, const char *k, int64_t v);
void fe_lf_str(lua_State *L, const char *k, const char *v);   /* v NULL: nil */
void fe_lf_bool(lua_State *L, const char *k, int v);

/* A member of a C struct shown to Lua: its Lua name, offset and C type. */
typedef enum { FE_LF_NUM, FE_LF_I64, FE_LF_I32, FE_LF_BOOL8, FE_LF_BOOL } fe_lf_type;
typedef struct fe_lf_member {
    const char *name;
    size_t offset;
    fe_lf_type type;
} fe_lf_member;

/* Set the n members of the struct at base as fields of the table on top
 * (raw sets: for fresh tables). m must be a static array: its names are
 * kept as Lua strings in the registry under m's address. */
void fe_lf_members(lua_State *L, const void *base, const fe_lf_member *m, int n);

/* 1 and *v set if the value at idx is a number with an integer value: an
 * integer, or a float such as 2^24 (Lua's ^ always makes floats); 0 for
 * anything else, strings included. */
int fe_lf_integer(lua_State *L, int idx, lua_Integer *v);

#endif
