# graph_arrays.sh: the whole-graph views of core/script/lua_graph_flat.c.
# graph:arrays("flat") holds the same inputs, outputs and readers as the
# node and tensor objects and as graph:arrays()'s lists, and graph:post_dfs()
# is the order a depth-first walk in Lua gives (TVM's post_dfs_order), on
# models with fan-out, several outputs, weights and unused nodes; a form
# other than "lists" or "flat" is a clear error.
. tests/lib.sh

# flat: the flat arrays agree with the objects and the lists form
cat >"$T/flat.lua" <<'LUA'
local fe = require "fuseeng"
-- Fails (exit 2) naming the first entry where the forms or objects disagree.
return fe.policy { name = "flat_check", driver = "plan",
  plan = function(self, graph, ctx)
    local f, l = graph:arrays("flat"), graph:arrays()
    local n = #graph
    local function same(what, i, want, got)
      if want ~= got then
        error(("%s %d: objects say %s, flat says %s"):format(what, i, tostring(want), tostring(got)), 0)
      end
    end
    same("input_at size", 0, n + 1, #f.input_at)
    same("output_at size", 0, n + 1, #f.output_at)
    same("consumer_at size", 0, graph.ntensors + 1, #f.consumer_at)
    same("input total", 0, #f.input + 1, f.input_at[n + 1])
    same("output total", 0, #f.output + 1, f.output_at[n + 1])
    same("consumer total", 0, #f.consumer + 1, f.consumer_at[graph.ntensors + 1])
    same("lists form", 0, nil, l.input)
    same("flat form", 0, nil, f.inputs)
    for v = 1, n do
      local node = graph[v]
      same("op of node", v, node.op, f.op[v])
      same("pattern of node", v, node.pattern, f.pattern[v])
      same("input count of node", v, #node.inputs, f.input_at[v + 1] - f.input_at[v])
      for k, t in ipairs(node.inputs) do
        same("input of node", v, t.index, f.input[f.input_at[v] + k - 1])
        same("input (lists) of node", v, l.inputs[v][k], f.input[f.input_at[v] + k - 1])
      end
      same("output count of node", v, #node.outputs, f.output_at[v + 1] - f.output_at[v])
      for k, t in ipairs(node.outputs) do
        same("output of node", v, t.index, f.output[f.output_at[v] + k - 1])
        same("output (lists) of node", v, l.outputs[v][k], f.output[f.output_at[v] + k - 1])
      end
    end
    for t = 1, graph.ntensors do
      local c = l.consumers[t]
      same("reader count of tensor", t, #c, f.consumer_at[t + 1] - f.consumer_at[t])
      for k = 1, #c do same("reader of tensor", t, c[k], f.consumer[f.consumer_at[t] + k - 1]) end
      same("producer of tensor", t, l.producer[t], f.producer[t])
      same("numel of tensor", t, l.numel[t], f.numel[t])
    end
    return {}
  end }
LUA
# order: post_dfs is TVM's post-DFS order
cat >"$T/order.lua" <<'LUA'
local fe = require "fuseeng"
-- TVM's post_dfs_order written out in Lua from the node objects: each
-- output's producer in output order, inputs in order, then every node no
-- output needs in topological order.
return fe.policy { name = "order_check", driver = "plan",
  plan = function(self, graph, ctx)
    local want, seen = {}, {}
    local function visit(node)
      if seen[node.index] then return end
      seen[node.index] = true
      for _, t in ipairs(node.inputs) do
        if t.producer then visit(t.producer) end
      end
      want[#want + 1] = node.index
    end
    for _, t in ipairs(graph.outputs) do
      if t.producer then visit(t.producer) end
    end
    for i = 1, #graph do visit(graph[i]) end
    local got = graph:post_dfs()
    if #got ~= #want then error(("%d nodes in post_dfs, want %d"):format(#got, #want), 0) end
    for i = 1, #want do
      if got[i] ~= want[i] then
        error(("post_dfs position %d: node %s, want %d"):format(i, tostring(got[i]), want[i]), 0)
      end
    end
    return {}
  end }
LUA
# nodes_of: for every op of the graph, the node indices a walk over graph[i] finds
cat >"$T/nodes_of.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "nodes_of_check", driver = "plan",
  plan = function(self, graph, ctx)
    local want = {}
    for i = 1, #graph do
      local n = graph[i]
      want[n.op] = want[n.op] or {}
      table.insert(want[n.op], i)
    end
    for op, list in pairs(want) do
      local got = graph:nodes_of(op)
      if #got ~= #list then error(("%d %s nodes, want %d"):format(#got, op, #list), 0) end
      for k = 1, #list do
        if got[k] ~= list[k] then error(("%s node %d is %s, want %d"):format(op, k, tostring(got[k]), list[k]), 0) end
      end
    end
    if #graph:nodes_of("sdpa") ~= #(want.sdpa or {}) then error("an op the graph lacks", 0) end
    return {}
  end }
LUA
# outputs listed against topological order, and a node nobody reads
cat >"$T/unused.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "unused",
 "tensors": {"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"}},
 "nodes": [
  {"name": "a", "op": "relu", "inputs": ["x"], "outputs": ["a"]},
  {"name": "dead", "op": "exp", "inputs": ["x"], "outputs": ["dead"]},
  {"name": "b", "op": "exp", "inputs": ["a"], "outputs": ["b"]},
  {"name": "c", "op": "add", "inputs": ["b", "a"], "outputs": ["c"]},
  {"name": "d", "op": "neg", "inputs": ["x"], "outputs": ["d"]}],
 "outputs": ["d", "c"]}
JSON
for m in "$T/unused.json" examples/models/gpt2_block.json examples/models/hub_conflict.json \
         examples/models/resnet50_bottleneck.json examples/models/allreduce_epilogue.json; do
    for check in flat order nodes_of; do
        check "$check check on $(basename "$m")" "$FUSEENG" run "$m" --policy "$T/$check.lua"
    done
done

cat >"$T/bad_op.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "bad_op", driver = "plan",
  plan = function(self, graph, ctx) return graph:nodes_of("convolution") end }
LUA
expect_fail "nodes_of with an unknown op names the place and the op" 2 \
    "bad_op.lua:3: graph:nodes_of: 'convolution' is not an op \\(see fuseeng ops\\)" \
    "$FUSEENG" run examples/models/gpt2_block.json --policy "$T/bad_op.lua"

cat >"$T/bad.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "bad_form", driver = "plan",
  plan = function(self, graph, ctx) return graph:arrays("csr") end }
LUA
expect_fail "arrays with an unknown form names the place and the forms" 2 \
    'bad.lua:3: graph:arrays\(form\): form is "lists" \(the default\) or "flat", not "csr"' \
    "$FUSEENG" run examples/models/gpt2_block.json --policy "$T/bad.lua"

finish
