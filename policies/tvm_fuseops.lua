-- tvm_fuseops.lua: TVM's FuseOps, the open-source baseline (apache/tvm, Relay's
-- src/relay/transforms/fuse_ops.cc and src/relay/analysis/graph_partitioner.cc,
-- as they stood before Relay was retired; tests/python/relay/test_pass_fuse_ops.py
-- holds the groupings it must give, and tests/cli/policy_tvm_fuseops.sh checks
-- them).
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
-- (SimplifyInference) into a per-channel multiply-add; arange is kOpaque
-- (our registry calls it elementwise, as Inductor and XLA fuse an iota).
local TVM_PATTERN = { max_pool2d = OUT_EWISE, avg_pool2d = OUT_EWISE, softmax = OUT_EWISE,
                      log_softmax = OUT_EWISE, batch_norm = BROADCAST, arange = OPAQUE }

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
    -- The flat arrays (one table per field, none per node, which at 1M
    -- nodes halves the memory): node v's inputs are
    -- input[input_at[v] .. input_at[v + 1] - 1], its outputs likewise in
    -- output, tensor t's readers in consumer from consumer_at[t].
    local arrays = graph:arrays("flat")
    local n, numel, rank = #arrays.op, arrays.numel, arrays.rank
    local output, output_at = arrays.output, arrays.output_at
    local consumer, consumer_at = arrays.consumer, arrays.consumer_at
    local input, input_at, producer = arrays.input, arrays.input_at, arrays.producer
    local pat, op, kind = {}, arrays.op, arrays.pattern
    for i = 1, n do pat[i] = TVM_PATTERN[op[i]] or FROM_KIND[kind[i]] end
    -- the names are not read again: let the collector have them
    op, kind, arrays.op, arrays.pattern = nil, nil, nil, nil
    -- TVM's edge pattern: the consumer's, except that a broadcast op reading
    -- a tensor of its own output's shape is elementwise on that edge.
    local function edge(t, c)
      local e = pat[c]
      if e == BROADCAST then
        local o = output[output_at[c]]
        if numel[o] == numel[t] and rank[o] == rank[t] then return ELEMWISE end
      end
      return e
    end
    local ipdom = graph:postdom()
    -- Groups: union-find over nodes; a root carries its group's pattern
    -- and size. gpat is pat itself: merges begin after dom below, the last
    -- reader of the ops' own patterns. A group holds an out-fusable op
    -- (TVM's anchor_ref) exactly when its pattern is out-fusable: it starts
    -- so, and a group that holds one passes that pattern on to the group it
    -- joins (TVM combines the two, and no group joins an opaque one).
    local up, gpat, size = {}, pat, {}
    for i = 1, n do up[i], size[i] = i, 1 end
    local function find(x)
      local r = x
      while up[r] ~= r do r = up[r] end
      while up[x] ~= r do up[x], x = r, up[x] end
      return r
    end
    -- Scratch: mark holds visit stamps (>= 1), filled in order first so
    -- that Lua keeps it an array (set out of order, it would grow as a
    -- hash, rehashing all the way).
    local stamp, mark, list, stack = 0, {}, {}, {}
    for i = 1, n do mark[i] = false end
    -- dom[v]: the largest edge pattern on the way from v to its
    -- post-dominator s, TVM's dominator-tree pattern. The way is every node
    -- reachable from v before s: each consumer c of v, then what lies on
    -- the way from c to its own post-dominator, and so on up the tree to s.
    -- So dom[v] is the largest of v's own edges and of dom along those tree
    -- paths; computed consumers first (backwards), where paths meet the
    -- rest is known (stamps), which costs the tree paths, not every node
    -- on the way.
    local dom = {}
    for v = 1, n do dom[v] = ELEMWISE end
    for v = n, 1, -1 do
      local s = ipdom[v]
      if s ~= 0 then
        stamp = stamp + 1
        local worst = ELEMWISE
        for j = output_at[v], output_at[v + 1] - 1 do
          local t = output[j]
          for k = consumer_at[t], consumer_at[t + 1] - 1 do
            local c = consumer[k]
            local e = edge(t, c)
            if e > worst then worst = e end
            while c ~= s and mark[c] ~= stamp do
              mark[c] = stamp
              if dom[c] > worst then worst = dom[c] end
              c = ipdom[c]
            end
          end
        end
        dom[v] = worst
      end
    end
    -- The nodes strictly between src and its post-dominator sink (every
    -- path from src reaches sink, so the walk stops there) into `list`;
    -- returns their count. Most nodes have one consumer, their sink.
    local function region(src, sink)
      local j = output_at[src]
      if output_at[src + 1] == j + 1 then
        local t = output[j]
        local k = consumer_at[t]
        if consumer_at[t + 1] == k + 1 and consumer[k] == sink then return 0 end
      end
      stamp = stamp + 1
      local cnt, sp = 0, 1
      stack[1] = src
      mark[src] = stamp
      while sp > 0 do
        local u = stack[sp]
        sp = sp - 1
        for j = output_at[u], output_at[u + 1] - 1 do
          local t = output[j]
          for k = consumer_at[t], consumer_at[t + 1] - 1 do
            local c = consumer[k]
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
      return cnt
    end

    -- CheckPath for the nodes on the way: each one's group pattern at most
    -- limit (the sink is checked by the caller).
    local function path_ok(cnt, limit)
      for k = 1, cnt do
        if gpat[find(list[k])] > limit then return false end
      end
      return true
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
    -- max_function_args > 0 (TVM's default for CPUs is no limit); without
    -- it, args is nil and nothing counts them.
    local args = max_args > 0 and {} or nil
    if args then
      for i = 1, n do
        local c = 0
        for k = input_at[i], input_at[i + 1] - 1 do
          if producer[input[k]] == 0 then c = c + 1 end
        end
        args[i] = c
      end
    end
    local function count_args(u)
      local r = find(u)
      local sum, seen = args[r], { [r] = true }
      for k = input_at[u], input_at[u + 1] - 1 do
        local p = producer[input[k]]
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
      local edges, most = 0, 0
      for j = output_at[src], output_at[src + 1] - 1 do
        local t = output[j]
        for k = consumer_at[t], consumer_at[t + 1] - 1 do
          edges = edges + 1
          local c = count_args(consumer[k])
          if c > most then most = c end
        end
      end
      local limit = max_args - edges
      return limit > 0 and most > limit
    end
    -- Root r's group joins root target's.
    local function merge(r, target)
      up[r] = target
      size[target] = size[target] + size[r]
      if args then args[target] = args[target] + args[r] end
      if gpat[r] == OUT_EWISE then gpat[target] = OUT_EWISE end
    end

    -- Each node in TVM's post-DFS order (from the outputs, each node after
    -- its producers), twice. The checks are TVM's CheckPath
    -- conditions as a limit: every group on the way, and the sink's, at
    -- most limit; for an elementwise or broadcast group (into an anchor)
    -- the sink may also be a reduction or out-fusable group. Roots are
    -- found inline when a node is its root or one step from it, which is
    -- most of them (find compresses the paths it walks).
    local order = graph:post_dfs()
    for phase = 0, 1 do
      for idx = 1, n do
        local v = order[idx]
        local sink = ipdom[v]
        if sink ~= 0 then
          local rv = up[v]
          if up[rv] ~= rv then rv = find(v) end
          local gp = gpat[rv]
          -- reductions and opaque ops start no fusion; out-fusable ops only
          -- in phase 0, injective ones only in phase 1 (after conv2d groups
          -- are complete)
          if gp <= BROADCAST or (gp == OUT_EWISE and phase == 0)
              or (gp == INJECTIVE and phase == 1) then
            local rs = up[sink]
            if up[rs] ~= rs then rs = find(sink) end
            if rv ~= rs then
              local d = dom[v]
              local limit, into = -1, false
              if gp == OUT_EWISE then
                if d == ELEMWISE then limit = BROADCAST end
              elseif gp <= BROADCAST then
                if d <= INJECTIVE or d == REDUCE then limit, into = INJECTIVE, true end
              else
                limit = INJECTIVE
              end
              local gs = gpat[rs]
              if gs <= limit or (into and (gs == REDUCE or gs == OUT_EWISE)) then
                local cnt = region(v, sink)
                if (cnt == 0 and size[rs] + size[rv] or fused_size(v, cnt, rs)) <= max_depth
                    and (max_args == 0 or not too_many_args(v))
                    and (cnt == 0 or path_ok(cnt, limit)) then
                  merge(rv, rs)
                  for k = 1, cnt do
                    local r = find(list[k])
                    if r ~= rs then merge(r, rs) end
                  end
                end
              end
            end
          end
        end
      end
    end

    -- The groups, each named by its root (the node the others fused into).
    -- mark is free now: it holds -k at the root of groups[k].
    local groups = {}
    for i = 1, n do
      local r = up[i]
      if up[r] ~= r then r = find(i) end
      if size[r] > 1 then
        local k = mark[r]
        local grp
        if k and k < 0 then
          grp = groups[-k]
        else
          grp = {}
          groups[#groups + 1] = grp
          mark[r] = -#groups
          grp.reason = ("%d ops fused into their post-dominator '%s' (TVM pattern %s)")
              :format(size[r], graph[r].name, NAMES[gpat[r]])
        end
        grp[#grp + 1] = i
      end
    end
    return groups
  end,
}
