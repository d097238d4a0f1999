-- tests/fuzz/patterns.lua: seeds for the pattern harness. Prints to the
-- directory given as arg[1] one file per op-pattern source found in the
-- files arg[2..]: the string literal after compile( or compile_error( (the
-- pattern tests) and every string literal inside a `patterns = { ... }`
-- table (policies, docs).
-- Plain Lua 5.4 (lua5.4), run by tests/fuzz/seeds.sh.

-- The Lua string literal starting at s:sub(i, i) (a quote), evaluated, and
-- the index after it; nil if it is not one.
local function literal(s, i)
  local q = s:sub(i, i)
  if q ~= '"' and q ~= "'" then return nil end
  local j = i + 1
  while j <= #s do
    local c = s:sub(j, j)
    if c == "\\" then j = j + 2
    elseif c == q then
      local f = load("return " .. s:sub(i, j))
      local ok, v = pcall(f or error)
      if ok and type(v) == "string" then return v, j + 1 end
      return nil
    elseif c == "\n" then return nil
    else j = j + 1 end
  end
end

local out, n = arg[1], 0
local function write(text)
  n = n + 1
  local f = assert(io.open(("%s/p%03d"):format(out, n), "wb"))
  f:write(text)
  f:close()
end

for k = 2, #arg do
  local f = assert(io.open(arg[k], "rb"))
  local s = f:read("a")
  f:close()
  local found = {}
  for at in s:gmatch("compile_?e?r?r?o?r?%(%s*()") do
    local v = literal(s, at)
    if v then found[#found + 1] = v end
  end
  for body in s:gmatch("patterns%s*=%s*(%b{})") do
    local i = 1
    while i <= #body do
      local v, j = literal(body, i)
      if v then found[#found + 1] = v; i = j else i = i + 1 end
    end
  end
  for _, v in ipairs(found) do write(v) end
end
