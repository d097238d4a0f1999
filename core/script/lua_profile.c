/* lua_profile.c: ctx.profile:lookup(group) for profile-driven policies
 * (InfiniCore's stage 2): the members' single times summed, and the fused
 * time by exact key, then compat key. Returns a table:
 *   separate  ms, or nil if some member has no time (then missing = its op)
 *   fused     ms, or nil
 *   key       "exact" or "compat": which key gave the fused time
 */
#include <lauxlib.h>

#include "lua_graph.h"
#include "lua_profile.h"
#include "ops.h"
#include "profile.h"
#include "run.h"

int fe_lua_profile_lookup(lua_State *L)
{
    fe_run *r = fe_run_from_upvalue(L);
    int n;
    const int32_t *nodes = fe_lg_group_nodes(L, 2, r->g, &n);
    if (!nodes)
        return luaL_error(L, "profile:lookup expects a group (call it as ctx.profile:lookup(group))");
    fe_profile_lookup res;
    fe_profile_lookup_group(r->e->profile, r->g, nodes, n, &res);
    lua_createtable(L, 0, 4);
    if (res.have_separate) {
        lua_pushnumber(L, res.separate_ms);
        lua_setfield(L, -2, "separate");
    } else {
        lua_pushstring(L, fe_node_op_name(fe_graph_node(r->g, res.missing)));
        lua_setfield(L, -2, "missing");
    }
    if (res.have_fused) {
        lua_pushnumber(L, res.fused_ms);
        lua_setfield(L, -2, "fused");
        lua_pushstring(L, res.fused_exact ? "exact" : "compat");
        lua_setfield(L, -2, "key");
    }
    return 1;
}
