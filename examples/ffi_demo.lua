-- ffi_demo.lua: drive libfuseeng.so from LuaJIT through its FFI. The API
-- blocks of the public headers (between FE_API_BEGIN and FE_API_END) go to
-- ffi.cdef unchanged: core/include/fuseeng.h's, the embedding API, then
-- fuseeng_cli.h's, the rest of what the command does, which needs the first.
--
--   luajit examples/ffi_demo.lua [ROOT [LIBRARY [MODEL]]]
--
-- ROOT is the repository (default "."); LIBRARY defaults to
-- ROOT/build/libfuseeng.so, MODEL to the bundled LLaMA-2 layer.
local ffi = require "ffi"

local root = arg[1] or "."
local libpath = arg[2] or root .. "/build/libfuseeng.so"
local model = arg[3] or root .. "/examples/models/llama2_7b_layer.json"

-- Every API block of a header, in order.
local function api(name)
  local header = assert(io.open(root .. "/core/include/" .. name)):read("*a")
  local blocks = {}
  for block in header:gmatch("/%* FE_API_BEGIN %*/(.-)/%* FE_API_END %*/") do
    blocks[#blocks + 1] = block
  end
  assert(#blocks > 0, name .. " has no FE_API_BEGIN/FE_API_END block")
  return table.concat(blocks)
end
ffi.cdef(api("fuseeng.h"))
local fe = ffi.load(libpath)

local err = ffi.new("fe_error")
local function check(v)
  if v == nil then error(ffi.string(err.message), 2) end
  return v
end

local engine = ffi.gc(check(fe.fe_engine_new(nil, err)), fe.fe_engine_free)
local m = ffi.gc(check(fe.fe_model_load_file(model, nil, err)), fe.fe_model_free)
print(("fuseeng %s from LuaJIT: model %s, %d nodes"):format(
  ffi.string(fe.fe_version()), ffi.string(fe.fe_model_name(m)), fe.fe_model_nodes(m)))

local counts = {}
for _, name in ipairs { "no_fusion", "static_rules", "fuse_all" } do
  local p = check(fe.fe_engine_load_policy(engine, name, err))
  assert(fe.fe_engine_use(engine, p, err) == 0, ffi.string(err.message))
  local plan = check(fe.fe_engine_plan(engine, m, err))
  local json = check(fe.fe_plan_to_json(plan, err))
  counts[name] = fe.fe_plan_groups(plan)
  print(("%-14s %3d kernels, first group: %s, plan JSON %d bytes"):format(
    name, counts[name], ffi.string(fe.fe_plan_group_node(plan, 0, 0)), #ffi.string(json)))
  fe.fe_free(json)
  fe.fe_plan_free(plan)
  fe.fe_policy_free(p)
end
assert(counts.fuse_all < counts.static_rules and counts.static_rules <= counts.no_fusion,
       "plans did not shrink as expected")

-- Simulate a plan against the unfused one: figures as numbers, the table as text.
-- Freed explicitly, in order: a policy before its engine, a report before its plan.
local p = check(fe.fe_engine_load_policy(engine, "gcu_tlf", err))
assert(fe.fe_engine_use(engine, p, err) == 0, ffi.string(err.message))
local plan = check(fe.fe_engine_plan(engine, m, err))
local report = check(fe.fe_engine_simulate(engine, plan, err))
local fig, base = ffi.new("fe_figures"), ffi.new("fe_figures")
fe.fe_report_figures(report, 0, fig)
fe.fe_report_figures(report, 1, base)
print(("gcu_tlf on %s: %.1f us in %d kernels (+%d extern), unfused %.1f us; L3 traffic %d -> %d bytes"):format(
  ffi.string(fe.fe_engine_machine(engine)), fig.time_s * 1e6, fig.kernels, fig.extern_calls, base.time_s * 1e6,
  tonumber(base.l3_bytes), tonumber(fig.l3_bytes)))
-- Every group is a generated kernel, an extern call or a view group.
assert(fig.time_s < base.time_s and fig.kernels + fig.extern_calls + fig.views == fe.fe_plan_groups(plan),
       "simulation is off")
-- The comparison table as fuseeng run prints it is the command's: fuseeng_cli.h.
ffi.cdef(api("fuseeng_cli.h"))
local text = check(fe.fe_report_format(report, nil, fe.FE_FORMAT_TEXT, err))
io.write(ffi.string(text))
fe.fe_free(text)
fe.fe_report_free(report)
fe.fe_plan_free(plan)
fe.fe_policy_free(p)
print("ok")
