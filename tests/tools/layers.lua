-- layers.lua: check the source tree's architecture (run by tests/cli/layers.sh
-- with plain lua5.4, outside the engine's sandbox, since it reads files).
--
--   lua5.4 tests/tools/layers.lua ROOT
--
-- Prints one TAP line per rule:
--   1. every file of a layer folder includes only headers of its own layer or
--      of layers beneath it (the Makefile enforces this for compiled files;
--      this names the offending line, and covers headers too);
--   2. the command line (core/cli) includes only the public header and its own;
--   3. no two modules (foo.c + foo.h) depend on each other, directly or round
--      a longer circle: when two files need each other, a concept is misplaced
--      (a header without a .c, such as a private state header, is not a module:
--      what it includes counts for the modules that include it);
--   4. no source file is over MAX_LINES lines.
local root = arg[1] or "."
local MAX_LINES = 1100

-- Bottom to top; the order is the Makefile's LAYERS.
local LAYERS = { "core/ir", "kernels", "core/import", "core/plan", "core/sim", "core/exec",
                 "core/script", "core/api", "core/cli" }
local rank = {}
for i, l in ipairs(LAYERS) do rank[l] = i end

local function lines_of(path)
  local f = assert(io.open(root .. "/" .. path))
  local t = {}
  for line in f:lines() do t[#t + 1] = line end
  f:close()
  return t
end

-- Every .c and .h file of the layer folders, and where each header lives.
local files, home = {}, {}
for _, l in ipairs(LAYERS) do
  local p = io.popen("ls " .. root .. "/" .. l)
  for name in p:lines() do
    if name:match("%.[ch]$") then
      files[#files + 1] = { layer = l, name = name, path = l .. "/" .. name }
      if name:match("%.h$") then
        assert(not home[name], "header " .. name .. " exists in two layers")
        home[name] = l
      end
    end
  end
  p:close()
end

local n = 0
local function report(ok, what, problems)
  n = n + 1
  print((ok and "ok " or "not ok ") .. n .. " - " .. what)
  for _, p in ipairs(problems) do print("# " .. p) end
end

-- Rules 1 and 2, and the module graph for rule 3.
local up, cli, long = {}, {}, {}
local deps = {}      -- module -> set of modules it includes
local has_c = {}
for _, f in ipairs(files) do
  if f.name:match("%.c$") then has_c[(f.path:gsub("%.c$", ""))] = true end
end
for _, f in ipairs(files) do
  local mod = f.path:gsub("%.[ch]$", "")
  deps[mod] = deps[mod] or {}
  local text = lines_of(f.path)
  if #text > MAX_LINES then
    long[#long + 1] = ("%s has %d lines (split it along a seam)"):format(f.path, #text)
  end
  for ln, line in ipairs(text) do
    local h = line:match('^%s*#%s*include%s+"([^"]+)"')
    if h then
      local where = home[h]
      local at = ("%s:%d: includes \"%s\""):format(f.path, ln, h)
      if h:find("/") then
        up[#up + 1] = at .. ": include by name; the Makefile gives each layer its -I paths"
      elseif f.layer == "core/cli" then
        if h ~= "fuseeng.h" and where ~= "core/cli" then
          cli[#cli + 1] = at .. (" from %s: the command line goes through fuseeng.h")
                                 :format(where or "outside the layers")
        end
      elseif where and rank[where] > rank[f.layer] then
        up[#up + 1] = at .. (" from %s, a layer above %s"):format(where, f.layer)
      end
      if where then
        local to = where .. "/" .. h:gsub("%.h$", "")
        if to ~= mod then deps[mod][to] = true end
      end
    end
  end
end
report(#up == 0, "every layer includes only its own and lower layers' headers", up)
report(#cli == 0, "core/cli includes only fuseeng.h and its own headers", cli)

-- Rule 3: strongly connected modules (Tarjan), reported as circles.
local index, low, onstack, stack, circles, counter = {}, {}, {}, {}, {}, 0
-- The modules v depends on, looking through header-only ones.
local function targets(v)
  local out, seen, todo = {}, { [v] = true }, { v }
  while #todo > 0 do
    for w in pairs(deps[table.remove(todo)] or {}) do
      if not seen[w] then
        seen[w] = true
        if has_c[w] then out[w] = true else todo[#todo + 1] = w end
      end
    end
  end
  return out
end

local function visit(v)
  counter = counter + 1
  index[v], low[v] = counter, counter
  stack[#stack + 1] = v; onstack[v] = true
  for w in pairs(targets(v)) do
    do
      if not index[w] then
        visit(w); low[v] = math.min(low[v], low[w])
      elseif onstack[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
  end
  if low[v] == index[v] then
    local comp = {}
    repeat
      local w = table.remove(stack); onstack[w] = nil; comp[#comp + 1] = w
    until w == v
    if #comp > 1 then
      table.sort(comp)
      circles[#circles + 1] = "these include each other in a circle: " .. table.concat(comp, ", ")
    end
  end
end
local mods = {}
for m in pairs(deps) do if has_c[m] then mods[#mods + 1] = m end end
table.sort(mods)
for _, m in ipairs(mods) do if not index[m] then visit(m) end end
report(#circles == 0, "no modules include each other (directly or in a circle)", circles)

report(#long == 0, ("no source file over %d lines"):format(MAX_LINES), long)
print("1.." .. n)
