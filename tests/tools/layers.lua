-- layers.lua: check the source tree's architecture, from its files and from
-- the build's objects (run by tests/cli/layers.sh with plain lua5.4, outside
-- the engine's sandbox, since it reads files and runs nm).
--
--   lua5.4 tests/tools/layers.lua ROOT [OBJDIR] [--dot FILE]
--
-- ROOT is the source tree, OBJDIR the build's object folder (build/obj, one
-- OBJDIR/<folder>/<file>.o per source). The layers and what each sees come
-- from the Makefile, their one owner: LAYERS lists them bottom to top, and a
-- layer sees those listed before it unless a SEES_<layer> line names fewer.
-- core/cli (the command), core/shim (libfuseeng.so's forwarder) and
-- core/include (the public headers) are not layers. Prints one TAP line per
-- rule, each problem under it as a "# " line:
--   1. the Makefile's layer list is sound: every layer is a folder of
--      sources, every SEES_ line belongs to a layer and names only layers
--      listed before it, and no .c or .h under the layers' top folders
--      (core/, kernels/) lies outside the checked folders (the Makefile
--      would not build it, nor this check see it);
--   2. a layer's files (headers too) include only headers of their own
--      folder and of the layers their layer sees, each by its bare name;
--   3. core/cli includes only public headers and its own, core/shim only
--      public headers;
--   4. only core/api, core/cli and core/shim include public headers, and a
--      public header includes only public headers;
--   5. no modules include each other, directly or round a longer circle. A
--      module is a .c with its .h, or a header alone (a private state
--      header): a circle through one is a circle all the same. When two
--      files need each other, a concept is misplaced;
--   6. every object calls or reads only symbols defined in its own folder
--      and in the layers its layer sees (from the objects' symbol tables:
--      an upward call hidden behind a local prototype is caught here, since
--      the include rules cannot see it);
--   7. no comment names a file that does not exist;
--   8. no source file is over MAX_LINES lines.
-- --dot FILE also draws the tree (draw_tree, at the end).
local dot_file
do
  local pos = {}
  local i = 1
  while arg[i] do
    if arg[i] == "--dot" then dot_file = arg[i + 1]; i = i + 2
    else pos[#pos + 1] = arg[i]; i = i + 1 end
  end
  arg[1], arg[2] = pos[1], pos[2]
end
local root = arg[1] or "."
local objdir = arg[2]
local MAX_LINES = 1100

-- Folders that are not layers, and who may include the public headers.
local CLI, SHIM, PUBLIC = "core/cli", "core/shim", "core/include"
local SPECIAL = { CLI, SHIM, PUBLIC }
local PUBLIC_USERS = { ["core/api"] = true, [CLI] = true, [SHIM] = true, [PUBLIC] = true }

-- Generated at build time, never in the tree: the ONNX schema's C code
-- ($(BUILD)/gen), which belongs to core/import (the only layer that sees
-- its header). Its object is OBJDIR/gen/onnx.pb-c.o.
local GENERATED = { ["onnx.pb-c.c"] = "core/import", ["onnx.pb-c.h"] = "core/import" }
local GENERATED_OBJ = { ["gen/onnx.pb-c.o"] = "core/import" }

-- Rule 7's file names: sources and docs, which comments cite. Data files
-- (.json, .safetensors) are left out: comments name them as examples and as
-- outputs of commands (model.json, plan.json), not as files of the tree.
local CITED_EXT = { c = true, h = true, lua = true, sh = true, md = true, py = true }
-- Stems of names that are examples, not files (foo.c); names in capitals
-- (NAME.lua, FILE.lua) are placeholders too unless such a file exists
-- (README.md does).
local EXAMPLE_STEMS = { foo = true, bar = true, baz = true }
-- Other projects' files that comments cite as models (STYLE.md): SQLite's
-- bytecode compiler and machine, Redis's Lua binding, TVM's FuseOps tests.
local FOREIGN = { ["vdbe.c"] = true, ["vdbeaux.c"] = true, ["script_lua.c"] = true,
                  ["tests/python/relay/test_pass_fuse_ops.py"] = true }

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local function is_file(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

local function words(s)
  local t = {}
  for w in s:gmatch("%S+") do t[#t + 1] = w end
  return t
end

-- Appends a problem, formatted, to a rule's list.
local function add(list, fmt, ...) list[#list + 1] = fmt:format(...) end

local function dir_of(path) return path:match("^(.*)/[^/]*$") or "" end
local function base_of(path) return path:match("[^/]*$") end

---------------------------------------------------------------------------
-- The tree: every file but the build's and git's, by path and by name.
local exists, by_name, files_in = {}, {}, {}
do
  local p = io.popen("cd " .. sh_quote(root) .. " && find . -path ./build -prune -o "
                     .. "-name .git -prune -o -type f -print")
  for line in p:lines() do
    local path = line:gsub("^%./", "")
    exists[path], by_name[base_of(path)] = true, true
    local d = dir_of(path)
    files_in[d] = files_in[d] or {}
    table.insert(files_in[d], base_of(path))
  end
  p:close()
  for _, names in pairs(files_in) do table.sort(names) end
end

-- The layers and what each sees, from the Makefile: LAYERS := a b c (over
-- lines joined by a trailing backslash), SEES_<layer> := a b. Make's
-- $(if $(SEES_x),...) treats an empty SEES_ line as none.
local layers, is_layer, sees, rank = {}, {}, {}, {}
local makefile_problems = {}
do
  local text = (read(root .. "/Makefile") or ""):gsub("\\\n", " ")
  local sees_line = {}
  for line in text:gmatch("[^\n]+") do
    if not line:match("^\t") then
      local name, op, value = line:gsub("#.*", ""):match("^%s*([%w_/%.%-]+)%s*([:+?]*=)%s*(.-)%s*$")
      if name == "LAYERS" then
        if op ~= "+=" then layers = {} end
        for _, w in ipairs(words(value)) do layers[#layers + 1] = w end
      elseif name and name:match("^SEES_.") then
        sees_line[name:sub(6)] = words(value)
      end
    end
  end
  if #layers == 0 then
    makefile_problems[#makefile_problems + 1] = "Makefile: no LAYERS := ... line"
  end
  for i, l in ipairs(layers) do
    if l:find("%$") then
      add(makefile_problems, "Makefile: LAYERS names %s; write the folders out (the checker reads them)",
          l)
    elseif not files_in[l] then
      add(makefile_problems, "Makefile: layer %s is not a folder of files", l)
    end
    is_layer[l], rank[l], sees[l] = true, i, {}
    local named = sees_line[l]
    if named and #named > 0 then
      for _, s in ipairs(named) do
        if not (rank[s] and rank[s] < i) then
          add(makefile_problems, "Makefile: SEES_%s names %s, which is not a layer listed before %s",
              l, s, l)
        end
        sees[l][s] = true
      end
    else
      for j = 1, i - 1 do sees[l][layers[j]] = true end
    end
  end
  for l in pairs(sees_line) do
    if not is_layer[l] then
      add(makefile_problems, "Makefile: SEES_%s, but %s is not in LAYERS", l, l)
    end
  end
  table.sort(makefile_problems)
end

-- The folders checked: the layers, then the command, the shim and the
-- public headers.
local folders = {}
for _, l in ipairs(layers) do folders[#folders + 1] = l end
for _, f in ipairs(SPECIAL) do folders[#folders + 1] = f end

-- No source outside them under the same top folders.
do
  local checked, tops = {}, {}
  for _, l in ipairs(folders) do checked[l], tops[l:match("^[^/]+")] = true, true end
  local strays = {}
  for d, names in pairs(files_in) do
    if tops[d:match("^[^/]+")] and not checked[d] then
      for _, name in ipairs(names) do
        if name:match("%.[ch]$") then strays[#strays + 1] = d .. "/" .. name end
      end
    end
  end
  table.sort(strays)
  for _, path in ipairs(strays) do
    add(makefile_problems, "%s is in no layer (Makefile: LAYERS), nor in %s", path,
        table.concat(SPECIAL, ", "))
  end
end

-- Every .c and .h of those folders, and the folder each header lives in.
local files, home, home_problems = {}, {}, {}
for name, l in pairs(GENERATED) do if name:match("%.h$") then home[name] = l end end
for _, l in ipairs(folders) do
  for _, name in ipairs(files_in[l] or {}) do
    if name:match("%.[ch]$") then
      files[#files + 1] = { folder = l, name = name, path = l .. "/" .. name }
      if name:match("%.h$") then
        if home[name] then
          add(home_problems, "%s/%s and %s/%s: two headers of one name, and headers are included "
              .. "by name", home[name], name, l, name)
        end
        home[name] = home[name] or l
      end
    end
  end
end

local n, failed = 0, 0
local function report(ok, what, problems, skip)
  n = n + 1
  if not ok then failed = failed + 1 end
  print((ok and "ok " or "not ok ") .. n .. " - " .. what .. (skip and (" # SKIP " .. skip) or ""))
  for _, p in ipairs(problems) do print("# " .. p) end
end

---------------------------------------------------------------------------
-- Comments, per language: lists of { line = N, text = ... }, one entry per
-- line of a comment.

-- Line numbers of positions visited in increasing order.
local function line_counter(text)
  local pos, line = 1, 1
  return function(p)
    local _, k = text:sub(pos, p - 1):gsub("\n", "")
    line, pos = line + k, p
    return line
  end
end

local function add_comment(out, line, text)
  for piece in (text .. "\n"):gmatch("([^\n]*)\n") do
    out[#out + 1] = { line = line, text = piece }
    line = line + 1
  end
end

-- The end of a string literal opened by quote q at s (or of its line).
local function string_end(text, s, q)
  local j = s + 1
  while true do
    local k = text:find("[\\\n" .. q .. "]", j)
    if not k then return #text end
    local c = text:sub(k, k)
    if c == "\\" then j = k + 2 else return k end
  end
end

-- C: the comments, and the code with comments and literals blanked out.
local function c_scan(text)
  local comments, code, i, at = {}, {}, 1, line_counter(text)
  while true do
    local s = text:find("[/\"']", i)
    if not s then code[#code + 1] = text:sub(i); break end
    code[#code + 1] = text:sub(i, s - 1)
    local two = text:sub(s, s + 1)
    if two == "/*" then
      local e = text:find("*/", s + 2, true) or #text + 1
      add_comment(comments, at(s), text:sub(s + 2, e - 1))
      code[#code + 1], i = " ", e + 2
    elseif two == "//" then
      local e = text:find("\n", s, true) or #text + 1
      add_comment(comments, at(s), text:sub(s + 2, e - 1))
      i = e
    elseif two:sub(1, 1) == "/" then
      code[#code + 1], i = "/", s + 1
    else
      local q = text:sub(s, s)
      code[#code + 1], i = q .. q, string_end(text, s, q) + 1
    end
  end
  return comments, table.concat(code)
end

-- Lua: -- line comments and --[==[ long ]==] ones; strings skipped.
local function lua_comments(text)
  local out, i, at = {}, 1, line_counter(text)
  while true do
    local s = text:find("[-\"'%[]", i)
    if not s then break end
    local c = text:sub(s, s)
    local eq = text:match("^%[(=*)%[", c == "-" and s + 2 or s)
    if c == "-" and text:sub(s + 1, s + 1) ~= "-" then
      i = s + 1
    elseif c == "-" and eq then
      local _, e = text:find("]" .. eq .. "]", s, true)
      e = e or #text
      add_comment(out, at(s), text:sub(s + 4 + #eq, e - 2 - #eq))
      i = e + 1
    elseif c == "-" then
      local e = text:find("\n", s, true) or #text + 1
      add_comment(out, at(s), text:sub(s + 2, e - 1))
      i = e
    elseif c == "[" then
      local e = eq and select(2, text:find("]" .. eq .. "]", s, true))
      i = (e or s) + 1
    else
      i = string_end(text, s, c) + 1
    end
  end
  return out
end

-- Shell, Makefile and Python: # to the end of the line, outside quotes and
-- (shell) here-documents. A shell quote may span lines; a Makefile's or a
-- Python file's quotes end with their line (Python's triple quotes are
-- docstrings, not comments: skipped).
local function hash_comments(text, lang)
  local out, quote, heredoc, pending, ln = {}, nil, nil, nil, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    ln = ln + 1
    if heredoc then
      if line:gsub("^\t+", "") == heredoc then heredoc = nil end
    else
      local i = 1
      while i <= #line do
        local c = line:sub(i, i)
        if quote then
          if line:sub(i, i + #quote - 1) == quote then
            i, quote = i + #quote - 1, nil
          elseif c == "\\" and quote ~= "'" then
            i = i + 1
          end
        elseif lang == "py" and (line:sub(i, i + 2) == '"""' or line:sub(i, i + 2) == "'''") then
          quote, i = line:sub(i, i + 2), i + 2
        elseif c == "'" or c == '"' then
          quote = c
        elseif c == "\\" then
          i = i + 1
        elseif c == "#" and (i == 1 or line:sub(i - 1, i - 1):match("[%s;(|&]")) then
          add_comment(out, ln, line:sub(i + 1))
          break
        elseif lang == "sh" and line:sub(i, i + 1) == "<<" and line:sub(i + 2, i + 2) ~= "<" then
          pending = line:match("^<<%-?%s*['\"]?([%a_][%w_]*)", i) or pending
          i = i + 1
        end
        i = i + 1
      end
      if lang ~= "sh" and quote and #quote == 1 then quote = nil end
      heredoc, pending = pending, nil
    end
  end
  return out
end

local function comments_of(path, text)
  local ext = path:match("%.(%a+)$")
  if ext == "c" or ext == "h" then return (c_scan(text)) end
  if ext == "lua" then return lua_comments(text) end
  if ext == "sh" then return hash_comments(text, "sh") end
  if ext == "py" then return hash_comments(text, "py") end
  return hash_comments(text, "make")
end

---------------------------------------------------------------------------
-- Rules 2, 3 and 4, the module graph for rule 5, and rule 8's lengths.
local up, outside, public, long = {}, {}, {}, {}
for _, p in ipairs(home_problems) do up[#up + 1] = p end
local deps, header_only = {}, {}

-- The rule that f's include of header h (from folder where) breaks, as
-- (its list, the end of the problem's line), or nil.
local function include_problem(f, h, where)
  if h:find("/") then
    return up, ": include by name; the Makefile gives each layer its -I paths"
  elseif where == PUBLIC then
    if not PUBLIC_USERS[f.folder] then
      return public, (", a public header (%s): only core/api, %s and %s include those")
                     :format(PUBLIC, CLI, SHIM)
    end
  elseif not where then
    return nil
  elseif f.folder == PUBLIC then
    return public, (" from %s: a public header includes only public headers"):format(where)
  elseif f.folder == CLI or f.folder == SHIM then
    if where ~= f.folder or f.folder == SHIM then
      return outside, (" from %s: %s goes through the public headers (%s/)"):format(where, f.folder, PUBLIC)
    end
  elseif where ~= f.folder and not sees[f.folder][where] then
    if rank[where] and rank[where] > rank[f.folder] then
      return up, (" from %s, a layer above %s"):format(where, f.folder)
    end
    return up, (" from %s, a folder %s does not see (Makefile: LAYERS, SEES_%s)")
               :format(where, f.folder, f.folder)
  end
end
for _, f in ipairs(files) do
  local mod = f.path:gsub("%.[ch]$", "")
  deps[mod] = deps[mod] or {}
  if f.name:match("%.c$") then
    header_only[mod] = false
  elseif header_only[mod] == nil then
    header_only[mod] = true
  end
  local text = read(root .. "/" .. f.path)
  local count, ln = 0, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    ln = ln + 1
    local h = line:match('^%s*#%s*include%s+"([^"]+)"')
    local where = h and home[h]
    local list, why = nil, nil
    if h then list, why = include_problem(f, h, where) end
    if list then add(list, "%s:%d: includes \"%s\"%s", f.path, ln, h, why) end
    if where and not GENERATED[h] then
      local to = where .. "/" .. h:gsub("%.h$", "")
      if to ~= mod then deps[mod][to] = true end
    end
    count = ln
  end
  if text:sub(-1) == "\n" then count = count - 1 end
  if count > MAX_LINES then
    add(long, "%s has %d lines (split it along a seam)", f.path, count)
  end
end

-- Rule 5: strongly connected modules (Tarjan), reported as circles.
local circles, in_circle = {}, {}
do
  local index, low, onstack, stack, counter = {}, {}, {}, {}, 0
  local function visit(v)
    counter = counter + 1
    index[v], low[v] = counter, counter
    stack[#stack + 1] = v; onstack[v] = true
    for w in pairs(deps[v] or {}) do
      if not index[w] then
        visit(w); low[v] = math.min(low[v], low[w])
      elseif onstack[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local comp = {}
      local raw = {}
      repeat
        local w = table.remove(stack); onstack[w] = nil
        raw[#raw + 1] = w
        comp[#comp + 1] = w .. (header_only[w] and " (a header alone)" or "")
      until w == v
      if #comp > 1 then
        for _, w in ipairs(raw) do in_circle[w] = true end
        table.sort(comp)
        circles[#circles + 1] = "these include each other in a circle: " .. table.concat(comp, ", ")
      end
    end
  end
  local mods = {}
  for m in pairs(deps) do mods[#mods + 1] = m end
  table.sort(mods)
  for _, m in ipairs(mods) do if not index[m] then visit(m) end end
  table.sort(circles)
end

---------------------------------------------------------------------------
-- Rule 6: calls and data references, from `nm -A -g` over every object of
-- the checked folders (one nm for all). Each undefined symbol is looked up
-- among the symbols our objects define, and so has a callee object and a
-- folder; symbols no object of ours defines (libc, Lua, OpenBLAS, oneDNN,
-- protobuf-c) are not ours to check. Only the objects of sources in the
-- tree count: an object left in OBJDIR by a source that moved would define
-- its symbols twice.
--
-- What each folder may reference:
--   a layer    its own folder and the layers it sees;
--   core/cli   its own symbols and the public API: every identifier of
--              core/include's headers (outside comments), wherever it is
--              defined (fe_plan_free lives in core/plan, fe_escape in
--              core/ir). Not "anything of core/api": core/cli cannot
--              include core/api's private headers (rule 3), so reaching a
--              symbol of core/api that no public header declares takes a
--              local prototype, the very bypass this rule is for. What the
--              public headers declare is the command's contract, whichever
--              layer implements it;
--   core/shim  nothing of the engine's: libfuseeng.so loads
--              libfuseeng-core.so with dlopen and finds the calls with
--              dlsym. Its own definitions are the public API again, as
--              forwarders, so they are not in the map of definitions.
local calls, calls_skip = {}, nil
local function public_api()
  local api = {}
  for _, name in ipairs(files_in[PUBLIC] or {}) do
    if name:match("%.h$") then
      local _, code = c_scan(read(root .. "/" .. PUBLIC .. "/" .. name))
      for id in code:gmatch("[%a_][%w_]*") do api[id] = true end
    end
  end
  return api
end

local function objects()
  local objs = {}
  for _, f in ipairs(files) do
    if f.name:match("%.c$") then
      objs[#objs + 1] = { rel = f.folder .. "/" .. f.name:gsub("%.c$", ".o"), folder = f.folder }
    end
  end
  for rel, l in pairs(GENERATED_OBJ) do
    if is_layer[l] then objs[#objs + 1] = { rel = rel, folder = l } end
  end
  table.sort(objs, function(a, b) return a.rel < b.rel end)
  return objs
end

local function allowed(from, to, sym, api)
  if from == SHIM then return false end
  if to == from then return true end
  if from == CLI then return api[sym] == true end
  return sees[from] ~= nil and sees[from][to] == true
end

local function check_calls()
  local objs, by_path, args, missing = objects(), {}, {}, {}
  for _, o in ipairs(objs) do
    local path = objdir .. "/" .. o.rel
    if is_file(path) then
      by_path[path] = o
      args[#args + 1] = sh_quote(path)
    else
      add(missing, "%s: no object for %s (build first)", path, o.rel:gsub("%.o$", ".c"))
    end
  end
  if #args == 0 then
    calls[1] = ("%s: no objects of the checked folders (build first)"):format(objdir)
    return
  end
  for _, m in ipairs(missing) do calls[#calls + 1] = m end
  local defs, refs = {}, {}
  local p = io.popen("nm -A -g " .. table.concat(args, " ") .. " 2>&1")
  for line in p:lines() do
    local path, rest = line:match("^(.-%.o):(.*)$")
    local o = path and by_path[path]
    local kind, sym = (rest or ""):match("(%a)%s+(%S+)%s*$")
    if not (o and kind) then
      if not line:match("no symbols$") then calls[#calls + 1] = "nm: " .. line end
    elseif kind == "U" or kind == "w" or kind == "v" then
      refs[#refs + 1] = { o = o, sym = sym }
    elseif o.folder ~= SHIM then
      local d, strong = defs[sym], not ("WVC"):find(kind, 1, true)
      if d and d.strong and strong then
        add(calls, "%s is defined in both %s and %s", sym, d.o.rel, o.rel)
      elseif not d or strong then
        defs[sym] = { o = o, strong = strong }
      end
    end
  end
  p:close()
  local api = public_api()
  for _, r in ipairs(refs) do
    local d = defs[r.sym]
    if d and d.o ~= r.o and not allowed(r.o.folder, d.o.folder, r.sym, api) then
      local why = r.o.folder == CLI and "core/cli uses the public API only"
                  or r.o.folder == SHIM and "core/shim reaches the engine through dlsym only"
                  or ("%s does not see %s"):format(r.o.folder, d.o.folder)
      add(calls, "%s references %s, defined in %s: %s", r.o.rel, r.sym, d.o.rel, why)
    end
  end
end
if objdir then check_calls() else calls_skip = "no object folder given" end

---------------------------------------------------------------------------
-- Rule 7: file names in comments, in the Makefile, the checked folders'
-- .c and .h files, and the code of tests/, lua/, policies/, scripts/ and
-- examples/ (C, Lua, shell, Python). A word of a comment that is a file name
-- with a cited extension (words with glob or placeholder characters such as
-- * { } $ < > are not names) must exist: a path with a slash from the
-- commenting file's folder or one above it, up to the root (a file of
-- kernels/cpu names kernels/group's headers group/NAME.h), a bare name
-- anywhere in the tree.
-- Not checked: build outputs (build/...), absolute paths (another
-- machine's files), generated files (GENERATED), other projects' files
-- (FOREIGN), examples (EXAMPLE_STEMS, names in capitals).
local stale = {}
local function normalise(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

local function found(name, dir)
  if not name:find("/") then return by_name[name] end
  while true do
    local p = normalise(dir == "" and name or dir .. "/" .. name)
    if exists[p] or (p:match("^%.%./") and is_file(root .. "/" .. p)) then return true end
    if dir == "" then return false end
    dir = dir_of(dir)
  end
end

local function cited_name(word)
  if word:find("://", 1, true) then return nil end
  local w = word:gsub("^[%(%[{<\"'`]+", ""):match("^[^:]*"):gsub("'s$", "")
  w = w:gsub("[%)%]}>\"'`.,;!?]+$", "")
  if not w:match("^[%w_%-%./]+$") then return nil end
  local stem, ext = base_of(w):match("^([%w_][%w_%-%.]*)%.(%a+)$")
  if not (stem and CITED_EXT[ext]) then return nil end
  if w:match("^/") or w:match("^build/") or GENERATED[base_of(w)] or FOREIGN[w] then return nil end
  return w, stem
end

local function check_comments(path)
  local text = read(root .. "/" .. path)
  if not text then return end
  for _, c in ipairs(comments_of(path, text)) do
    for word in c.text:gmatch("%S+") do
      local name, stem = cited_name(word)
      if name and not found(name, dir_of(path))
         and not EXAMPLE_STEMS[stem] and stem:match("%l") then
        add(stale, "%s:%d: names %s, which is no file of the tree", path, c.line, name)
      end
    end
  end
end

do
  local scanned = { "Makefile" }
  for _, f in ipairs(files) do scanned[#scanned + 1] = f.path end
  local code = { c = true, h = true, lua = true, sh = true, py = true }
  local wanted = { tests = code, scripts = code, examples = code,
                   lua = { lua = true }, policies = { lua = true } }
  local dirs = {}
  for d in pairs(files_in) do dirs[#dirs + 1] = d end
  table.sort(dirs)
  for _, d in ipairs(dirs) do
    local top = d:match("^[^/]+")
    for _, name in ipairs(files_in[d]) do
      local ext = name:match("%.(%a+)$")
      if wanted[top] and wanted[top][ext] then scanned[#scanned + 1] = d .. "/" .. name end
    end
  end
  for _, path in ipairs(scanned) do check_comments(path) end
end

-- The drawing: a Graphviz file of every module (a .c with its .h, or a
-- header alone) as a node in its folder's cluster, the clusters bottom to
-- top in the Makefile's order, and an arrow per include between modules.
-- What the rules refuse is drawn so that it stands out: an arrow into a
-- folder its source does not see in red, a circle's members in red. A
-- tree that passes rules 2 and 5 draws with neither.
local function draw_tree(path)
  local by_folder, order = {}, {}
  for _, l in ipairs(layers) do order[#order + 1] = l end
  order[#order + 1] = CLI
  order[#order + 1] = SHIM
  order[#order + 1] = PUBLIC
  local mods = {}
  for m in pairs(deps) do mods[#mods + 1] = m end
  table.sort(mods)
  for _, m in ipairs(mods) do
    local d = dir_of(m)
    by_folder[d] = by_folder[d] or {}
    table.insert(by_folder[d], m)
  end
  local out = { "digraph tree {", "  rankdir=BT; node [shape=box, fontsize=10];" }
  for i, d in ipairs(order) do
    if by_folder[d] then
      out[#out + 1] = ('  subgraph "cluster_%d" { label="%s";'):format(i, d)
      for _, m in ipairs(by_folder[d]) do
        out[#out + 1] = ('    "%s" [label="%s"%s%s];'):format(m, base_of(m),
          header_only[m] and ", style=dashed" or "", in_circle[m] and ", color=red" or "")
      end
      out[#out + 1] = "  }"
    end
  end
  for _, m in ipairs(mods) do
    local from = dir_of(m)
    local tos = {}
    for to in pairs(deps[m]) do tos[#tos + 1] = to end
    table.sort(tos)
    for _, to in ipairs(tos) do
      local d = dir_of(to)
      local ok = d == from or (sees[from] and sees[from][d]) or from == CLI or
                 (d == PUBLIC and (from == "core/api" or from == SHIM))
      out[#out + 1] = ('  "%s" -> "%s"%s;'):format(m, to, ok and "" or " [color=red]")
    end
  end
  out[#out + 1] = "}"
  local f = assert(io.open(path, "w"))
  f:write(table.concat(out, "\n"), "\n")
  f:close()
end
if dot_file then draw_tree(dot_file) end

report(#makefile_problems == 0, "the Makefile's LAYERS and SEES_ lines are sound", makefile_problems)
report(#up == 0, "every layer includes only its own headers and those of the layers it sees", up)
report(#outside == 0, ("%s includes only public headers and its own, %s only public headers")
                      :format(CLI, SHIM), outside)
report(#public == 0, ("only core/api, %s and %s include the public headers (%s)")
                     :format(CLI, SHIM, PUBLIC), public)
report(#circles == 0, "no modules include each other (directly or in a circle)", circles)
report(#calls == 0, "every object references only its own layer's symbols and those of the layers "
                    .. "it sees (core/cli: the public API)", calls, calls_skip)
report(#stale == 0, "no comment names a file that does not exist", stale)
report(#long == 0, ("no source file over %d lines"):format(MAX_LINES), long)
print("1.." .. n)
os.exit(failed == 0 and 0 or 1)
