-- json.lua: the ordered JSON encoder used by examples/gen_models.lua.
--
-- Lua tables have no key order, and generated files must be byte-identical
-- from run to run, so objects are written from an explicit key list instead
-- of pairs(): json.obj{"k1", v1, "k2", v2, ...}. Any other table is an array.

local M = {}

local OBJ = {}

-- An ordered object from a flat key/value list. Values may not be nil.
function M.obj(kv)
  return setmetatable(kv, OBJ)
end

function M.is_obj(t)
  return getmetatable(t) == OBJ
end

local fmt, type, mtype = string.format, type, math.type

-- Shortest text that reads back as the same double; integral floats keep a
-- ".0" so a reader can still tell 2.0 (a float scalar) from 2 (an integer).
local function number(v)
  if mtype(v) == "integer" then
    return fmt("%d", v)
  end
  if v ~= v or v == math.huge or v == -math.huge then
    error("JSON cannot hold " .. tostring(v) .. "; write +-3.4028235e38 for infinity", 3)
  end
  local s = fmt("%.15g", v)
  if tonumber(s) ~= v then
    s = fmt("%.16g", v)
    if tonumber(s) ~= v then s = fmt("%.17g", v) end
  end
  if not s:find("[.eEn]") then s = s .. ".0" end
  return s
end
M.number = number

local escapes = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}

local function str(s)
  if not s:find('[%c"\\]') then return '"' .. s .. '"' end
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or fmt("\\u%04x", c:byte())
  end) .. '"'
end
M.string = str

-- Appends the encoding of v to buffer b (a list of strings). comma and colon
-- are the separators, so one function serves both the compact and the
-- one-entry-per-line styles.
local function encode(v, b, comma, colon)
  local t = type(v)
  if t == "string" then
    b[#b + 1] = str(v)
  elseif t == "number" then
    b[#b + 1] = number(v)
  elseif t == "boolean" then
    b[#b + 1] = v and "true" or "false"
  elseif t == "table" then
    if getmetatable(v) == OBJ then
      b[#b + 1] = "{"
      for i = 1, #v, 2 do
        if i > 1 then b[#b + 1] = comma end
        b[#b + 1] = str(v[i])
        b[#b + 1] = colon
        encode(v[i + 1], b, comma, colon)
      end
      b[#b + 1] = "}"
    else
      b[#b + 1] = "["
      for i = 1, #v do
        if i > 1 then b[#b + 1] = comma end
        encode(v[i], b, comma, colon)
      end
      b[#b + 1] = "]"
    end
  else
    error("cannot encode a " .. t .. " as JSON", 2)
  end
end

-- One value on one line. spaced = true puts a space after ',' and ':'.
function M.encode(v, spaced)
  local b = {}
  if spaced then encode(v, b, ", ", ": ") else encode(v, b, ",", ":") end
  return table.concat(b)
end

return M
