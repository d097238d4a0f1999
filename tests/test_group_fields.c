/* test_group_fields.c: the group primitives hooks call once per candidate
 * pair, checked against plain-Lua references on real greedy runs: id,
 * a:shared_bytes(b), a:feeds(b), names, parts made once, and tensor lists with no
 * duplicates; and the errors for groups that overlap or are no groups. */
#include "testlib.h"
#include "api.h"
#include "plan.h"
#include "planning.h"

/* A greedy policy whose hooks compare every primitive with its Lua
 * reference and raise an error naming the first that disagrees; decide
 * refuses nothing the engine allows, so every pair is asked. */
static const char PROBE[] =
    "local fe = require 'fuseeng'\n"
    "local function eq(a, b, what) if a ~= b then error(what .. ': ' .. tostring(a) .. ' ~= ' .. tostring(b), 2) end end\n"
    "local function set(list) local s = {} for _, t in ipairs(list) do s[t.name] = t end return s end\n"
    "local function shared(a, b)\n"   /* the Lua score_fusion_memory it replaced */
    "  local mine, seen, sum = {}, {}, 0\n"
    "  for _, t in ipairs(a.inputs) do mine[t.name] = true end\n"
    "  for _, t in ipairs(a.outputs) do mine[t.name] = true end\n"
    "  for _, l in ipairs({ b.inputs, b.outputs }) do for _, t in ipairs(l) do\n"
    "    if mine[t.name] and not seen[t.name] then seen[t.name] = true; sum = sum + t.bytes end end end\n"
    "  return sum\n"
    "end\n"
    "local function feeds(a, b) local o = set(a.outputs) for _, t in ipairs(b.inputs) do if o[t.name] then return true end end return false end\n"
    "local function nodes_key(g) local t = {} for i, n in ipairs(g.nodes) do t[i] = n.index end return table.concat(t, ',') end\n"
    "local function no_dups(list, what) local s = {} for _, t in ipairs(list) do eq(s[t.name], nil, what) s[t.name] = true end end\n"
    "return fe.policy{name = 'fields', driver = 'greedy', reask = true, fallback_on_error = 'stop',\n"
    "  score = function(self, a, b, ctx)\n"
    "    eq(a:shared_bytes(b), shared(a, b), 'shared_bytes'); eq(b:shared_bytes(a), shared(b, a), 'shared_bytes reversed')\n"
    "    eq(a:feeds(b), feeds(a, b), 'feeds'); eq(b:feeds(a), feeds(b, a), 'feeds reversed')\n"
    "    local ids = ctx.state.ids or {}; ctx.state.ids = ids\n"
    "    for _, g in ipairs({ a, b }) do\n"
    "      local k = nodes_key(g)\n"
    "      eq(ids[g.id] == nil or ids[g.id] == k, true, 'one id, one node set')\n"
    "      ids[g.id] = k\n"
    "    end\n"
    "    eq(a.id ~= b.id, true, 'different sets, different ids'); eq(math.type(a.id), 'integer', 'id type')\n"
    "    return a:shared_bytes(b)\n"
    "  end,\n"
    "  decide = function(self, grp, ctx)\n"
    "    local p = grp.parts\n"
    "    eq(rawequal(p, grp.parts), true, 'parts made once'); eq(rawequal(p[1], grp.parts[1]), true, 'same part objects')\n"
    "    eq(ctx.state.ids[p[1].id], nodes_key(p[1]), 'a part has the id it was scored under')\n"
    "    eq(p[1].id == grp.id, false, 'a part is not the pair')\n"
    /* The pair's id names its set too: once merged, the group is asked for
     * under its partition label, whose id is kept by label and size. */
    "    local ids, k = ctx.state.ids, nodes_key(grp)\n"
    "    eq(ids[grp.id] == nil or ids[grp.id] == k, true, 'one id, one node set (a pair)'); ids[grp.id] = k\n"
    "    no_dups(grp.inputs, 'inputs'); no_dups(grp.outputs, 'outputs'); no_dups(grp.internal, 'internal')\n"
    "    local nm = {} for i, n in ipairs(grp.nodes) do nm[i] = n.name end\n"
    "    eq(grp.names, table.concat(nm, ', '), 'names'); eq(p[1].names, tostring(p[1]):sub(8, -2), 'names of a part')\n"
    "    local ok, msg = pcall(grp.shared_bytes, grp, p[1])\n"
    "    eq(ok, false, 'overlap raises'); eq(msg:find(\"is in both groups\") ~= nil, true, 'overlap message: ' .. tostring(msg))\n"
    "    ok, msg = pcall(grp.feeds, grp, 'q_proj')\n"
    "    eq(ok, false, 'no group raises'); eq(msg:find('fuseeng.group expected') ~= nil, true, 'no group message: ' .. tostring(msg))\n"
    "    ctx.state.asked = (ctx.state.asked or 0) + 1\n"
    "    return #grp <= 6, 'probed'\n"
    "  end}\n";

static void fields_on(const char *path)
{
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        fail_msg("engine: %s", err.message);
    fe_policy *p = fe_engine_load_policy_buffer(e, PROBE, strlen(PROBE), "fields.lua", &err);
    if (!p)
        fail_msg("policy: %s", err.message);
    fe_model *m = fe_model_load_file(path, NULL, &err);
    if (!m)
        fail_msg("model %s: %s", path, err.message);
    if (fe_engine_use(e, p, &err) != FE_OK)
        fail_msg("use: %s", err.message);
    fe_plan *plan = fe_engine_plan(e, m, &err);
    if (!plan)
        fail_msg("%s: %s", path, err.message);
    int probed = 0;
    for (int32_t d = 0; d < plan->ndecisions; d++)
        if (plan->decisions[d].reason >= 0 &&
            strstr(fe_strtab_str(plan->strs, plan->decisions[d].reason), "probed"))
            probed++;
    if (probed == 0)
        fail_msg("%s: decide never ran", path);
    fe_plan_free(plan);
    fe_model_free(m);
    fe_policy_free(p);
    fe_engine_free(e);
}

static void group_fields(void **s)
{
    (void)s;
    fields_on("examples/models/llama2_7b_layer.json");
    fields_on("examples/models/resnet50_bottleneck.json");
    fields_on("examples/models/hub_conflict.json");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_fields),
    };
    return cmocka_run_group_tests_name("group_fields", tests, NULL, NULL);
}
