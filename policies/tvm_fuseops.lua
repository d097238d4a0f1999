-- tvm_fuseops.lua: TVM's FuseOps, the open-source baseline (apache/tvm, Relay's
-- src/relay/transforms/fuse_ops.cc and src/relay/analysis/graph_partitioner.cc,
-- as they stood before Relay was retired; tests/python/relay/test_pass_fuse_ops.py
-- holds the groupings it must give, and tests/lua/test_tvm_fuseops.lua checks them).
--
-- Every node is offered to its immediate post-dominator (graph:postdom(): the
-- first node every path from it crosses), in TVM's post-DFS order, in two
-- phases. Phase 0: an out-fusable op (conv2d, matmul, pooling, softmax) joins
-- it when every edge up to it is elementwise and every op on the way is at
-- most broadcast; an elementwise/broadcast op joins it when the way there is
-- at most injective and it ends in an injective, reduction or out-fusable
-- group. Phase 1 does the same for injective ops (all the way injective).
-- Reductions and opaque ops never start a fusion, so a reduction ends a group.
-- A fusion is refused when the group would hold more than `max_depth` (256)
-- ops, or, with `max_function_args` > 0, more than that many tensors would
-- cross its boundary.
--
-- Differences: our IR has no tuple nodes (concat reads its inputs directly),
-- so TVM's tuple rules and its third phase (injective ops into intermediate
-- tuples) have nothing to act on; the groupings they produce come out of the
-- first two phases here (the tests show the cases). Ops take TVM's pattern
-- where it differs from our registry's kind (TVM_PATTERN below). Where TVM
-- counts a node's group again for every member met on the way (a quirk of
-- CountNodesUptoSink_), max_depth counts each group once; function arguments
-- are counted as TVM counts them, without its postponed fusions (which, for
-- static shapes, end in the same groups). The engine checks every group: one
-- our kernels cannot hold (data movement inside a conv2d group, which TVM can
-- reach through a side branch) is rejected and runs unfused.
local fe = require "fuseeng"

-- TVM's OpPatternKind, in its order (smaller fuses more easily).
local ELEMWISE, BROADCAST, INJECTIVE, REDUCE, OUT_EWISE, OPAQUE = 0, 1, 2, 3, 4, 8
local NAMES = { [0] = "elemwise", "broadcast", "injective", "reduce", "out_ewise_fusable",
                [8] = "opaque" }
local FROM_KIND = { elemwise = ELEMWISE, broadcast = BROADCAST, injective = INJECTIVE,
                    reduction = REDUCE, out_fusable = OUT_EWISE, opaque = OPAQUE }
-- TVM registers these differently from our registry's kinds: pooling and
-- softmax are kOutEWiseFusable; batch_norm reaches FuseOps already unfolded
-- (SimplifyInference) into a per-channel multiply-add.
local TVM_PATTERN = { max_pool2d = OUT_EWISE, avg_pool2d = OUT_EWISE, softmax = OUT_EWISE,
                      log_softmax = OUT_EWISE, batch_norm = BROADCAST }

-- TVM's post_dfs_order: producers before consumers, inputs in order, from
-- the graph outputs; nodes no output needs follow in topological order.
local function post_dfs(graph, a)
  local inputs, producer, n = a.inputs, a.producer, #a.op
  local order, seen, count = {}, {}, 0
  local stack, next = {}, {}
  local function visit(root)
    if seen[root] then return end
    seen[root] = true
    local sp = 1
    stack[1], next[1] = root, 1
    while sp > 0 do
      local u, k = stack[sp], next[sp]
      local t = inputs[u][k]
      if t then
        next[sp] = k + 1
        local p = producer[t]
        if p > 0 and not seen[p] then
          seen[p] = true
          sp = sp + 1
          stack[sp], next[sp] = p, 1
        end
      else
        count = count + 1
        order[count] = u
        sp = sp - 1
      end
    end
  end
  for _, t in ipairs(graph.outputs) do
    if t.producer then visit(t.producer.index) end
  end
  for i = 1, n do visit(i) end
  return order
end

return fe.policy {
  name = "tvm_fuseops",
  description = "TVM FuseOps: ops fuse into their post-dominator by op pattern (the open-source baseline)",
  source = "TVM Relay FuseOps (fuse_ops.cc, graph_partitioner.cc)",
  driver = "plan",
  params = { max_depth = 256, max_function_args = 0 },
  plan = function(self, graph, ctx)
    local max_depth, max_args = self.params.max_depth, self.params.max_function_args
    if max_depth < 1 or max_depth % 1 ~= 0 then
      error(("max_depth must be an integer >= 1, not %s"):format(max_depth), 0)
    end
    if max_args < 0 or max_args % 1 ~= 0 then
      error(("max_function_args must be an integer >= 0 (0: no limit), not %s"):format(max_args), 0)
    end
    local arrays = graph:arrays()
    local n, outputs, consumers, numel, rank = #arrays.op, arrays.outputs, arrays.consumers,
                                              arrays.numel, arrays.rank
    local pat = {}
    for i = 1, n do pat[i] = TVM_PATTERN[arrays.op[i]] or FROM_KIND[arrays.pattern[i]] end
    -- TVM's edge pattern: the consumer's, except that a broadcast op reading
    -- a tensor of its own output's shape is elementwise on that edge.
    local function edge(t, c)
      local e = pat[c]
      if e == BROADCAST then
        local o = outputs[c][1]
        if numel[o] == numel[t] and rank[o] == rank[t] then return ELEMWISE end
      end
      return e
    end
    local ipdom = graph:postdom()
    -- Groups: union-find over nodes; a root carries its group's pattern,
    -- size and whether an out-fusable op is in it (TVM's anchor_ref).
    local up, gpat, size, anchor = {}, {}, {}, {}
    for i = 1, n do
      up[i], gpat[i], size[i], anchor[i] = i, pat[i], 1, pat[i] == OUT_EWISE
    end
    local function find(x)
      local r = x
      while up[r] ~= r do r = up[r] end
      while up[x] ~= r do up[x], x = r, up[x] end
      return r
    end
    -- The nodes strictly between src and its post-dominator sink (every
    -- path from src reaches sink, so the walk stops there) into `list`, and
    -- the largest edge pattern on the way: TVM's dominator-tree pattern of
    -- src. Buffers are reused: most nodes have one consumer, their sink.
    local stamp, mark, list, stack = 0, {}, {}, {}
    local function region(src, sink)
      local outs = outputs[src]
      if #outs == 1 then
        local t = outs[1]
        local tc = consumers[t]
        if #tc == 1 and tc[1] == sink then return 0, edge(t, sink) end
      end
      stamp = stamp + 1
      local cnt, sp, worst = 0, 1, ELEMWISE
      stack[1] = src
      mark[src] = stamp
      while sp > 0 do
        local u = stack[sp]
        sp = sp - 1
        local us = outputs[u]
        for j = 1, #us do
          local t = us[j]
          local tc = consumers[t]
          for k = 1, #tc do
            local c = tc[k]
            local e = edge(t, c)
            if e > worst then worst = e end
            if c ~= sink and mark[c] ~= stamp then
              mark[c] = stamp
              cnt = cnt + 1
              list[cnt] = c
              sp = sp + 1
              stack[sp] = c
            end
          end
        end
      end
      return cnt, worst
    end

    -- CheckPath: every node on the way (by its group's pattern) and the sink.
    local function check_path(cnt, sink, ok)
      for k = 1, cnt do
        if not ok(gpat[find(list[k])], false) then return false end
      end
      return ok(gpat[find(sink)], true)
    end
    -- Nodes the fused group would hold (CountFusedNodesWithNewChild).
    local function fused_size(src, cnt, target)
      stamp = stamp + 1
      local total = size[target]
      mark[target] = stamp
      local r = find(src)
      if mark[r] ~= stamp then mark[r], total = stamp, total + size[r] end
      for k = 1, cnt do
        r = find(list[k])
        if mark[r] ~= stamp then mark[r], total = stamp, total + size[r] end
      end
      return total
    end
    -- Function arguments, TVM's way (CountArgs_): a group's own arguments
    -- are the graph inputs and weights its members read; a node's count
    -- adds, once per producer group, that group's arguments, or, for a group
    -- that has none, its producer's count, recursively. Only with
    -- max_function_args > 0 (TVM's default for CPUs is no limit).
    local inputs, producer = arrays.inputs, arrays.producer
    local args = {}
    for i = 1, n do
      local c, ins = 0, inputs[i]
      for k = 1, #ins do
        if producer[ins[k]] == 0 then c = c + 1 end
      end
      args[i] = c
    end
    local function count_args(u)
      local r = find(u)
      local sum, seen, ins = args[r], { [r] = true }, inputs[u]
      for k = 1, #ins do
        local p = producer[ins[k]]
        if p > 0 then
          local pr = find(p)
          if not seen[pr] then
            seen[pr] = true
            sum = sum + (args[pr] > 0 and args[pr] or count_args(p))
          end
        end
      end
      return sum
    end
    -- Would fusing src exceed the limit? Each consumer edge of src is an
    -- output argument; the fused count is the largest over its consumers.
    local function too_many_args(src)
      local edges, most, outs = 0, 0, outputs[src]
      for j = 1, #outs do
        local tc = consumers[outs[j]]
        for k = 1, #tc do
          edges = edges + 1
          local c = count_args(tc[k])
          if c > most then most = c end
        end
      end
      local limit = max_args - edges
      return limit > 0 and most > limit
    end
    local function commit(src, cnt, sink)
      local target = find(sink)
      for k = 0, cnt do
        local r = find(k == 0 and src or list[k])
        if r ~= target then
          up[r] = target
          size[target] = size[target] + size[r]
          args[target] = args[target] + args[r]
          if anchor[r] then
            anchor[target] = true
            if gpat[r] > gpat[target] then gpat[target] = gpat[r] end
          end
        end
      end
    end

    local function upto_broadcast(kind) return kind <= BROADCAST end
    local function upto_injective(kind) return kind <= INJECTIVE end
    local function into_anchor(kind, is_sink)
      if not is_sink then return kind <= INJECTIVE end
      return kind <= INJECTIVE or kind == REDUCE or kind == OUT_EWISE
    end

    local order = post_dfs(graph, arrays)
    for phase = 0, 1 do
      for idx = 1, #order do
        local v = order[idx]
        local sink = ipdom[v]
        local rv = find(v)
        local gp = gpat[rv]
        -- reductions and opaque ops start no fusion; out-fusable ops only
        -- in phase 0, injective ones only in phase 1 (after conv2d groups
        -- are complete)
        if sink ~= 0 and (gp <= BROADCAST or (gp == OUT_EWISE and phase == 0)
                          or (gp == INJECTIVE and phase == 1)) and rv ~= find(sink) then
          local cnt, dom = region(v, sink)
          local cond
          if gp == OUT_EWISE then
            if dom == ELEMWISE then cond = upto_broadcast end
          elseif gp <= BROADCAST then
            if dom <= INJECTIVE or dom == REDUCE then cond = into_anchor end
          else
            cond = upto_injective
          end
          if cond and fused_size(v, cnt, find(sink)) <= max_depth
              and (max_args == 0 or not too_many_args(v))
              and check_path(cnt, sink, cond) then
            commit(v, cnt, sink)
          end
        end
      end
    end

    -- The groups, each named by its root (the node the others fused into).
    local groups, at = {}, {}
    for i = 1, n do
      local r = find(i)
      if size[r] > 1 then
        local grp = at[r]
        if not grp then
          grp = {}
          at[r] = grp
          groups[#groups + 1] = grp
          grp.reason = ("%d ops fused into their post-dominator '%s' (TVM pattern %s)")
              :format(size[r], graph[r].name, NAMES[gpat[r]])
        end
        grp[#grp + 1] = i
      end
    end
    return groups
  end,
}
