-- fuseeng.dsl: what the op-pattern and data-flow DSLs share: turning a byte
-- position into `chunk:line:col: message` plus the source line and a caret,
-- and the "this must come next, or the source is wrong right here" combinator
-- their LPeg grammars are built from.
--
-- Errors travel as a small table {pos = , msg = } while a grammar runs, and
-- become a string only at the edge (dsl.raise). That lets pattern.lua try two
-- grammars on one source and report the failure that got further, and lets
-- semantic checks after parsing report positions the same way.

local lpeg = require "lpeg"

local dsl = {}

local Failure = {}   -- metatable marking our own failure tables apart from bugs

-- Stop compiling: `msg` is wrong at byte `pos` of the source.
function dsl.fail(pos, msg)
  error(setmetatable({ pos = pos, msg = msg }, Failure), 0)
end

function dsl.is_failure(e)
  return getmetatable(e) == Failure
end

-- What both grammars are written with: lpeg's P, R, S, V, C, Cp, Ct and
-- this module's expect and fail.
function dsl.vocabulary()
  return lpeg.P, lpeg.R, lpeg.S, lpeg.V, lpeg.C, lpeg.Cp, lpeg.Ct, dsl.expect, dsl.fail
end

-- `patt`, or else a failure at the current position. Used right after a
-- token that commits the parser (an arrow, an opening bracket), where a
-- silent backtrack would only move the error somewhere less helpful.
function dsl.expect(patt, msg)
  return lpeg.P(patt) + lpeg.Cmt(lpeg.P(true), function(_, pos) dsl.fail(pos, msg) end)
end

-- Line number, column and text of the line holding byte `pos`.
function dsl.position(src, pos)
  if pos > #src + 1 then pos = #src + 1 end
  local line, start = 1, 1
  for nl in src:gmatch("()\n") do
    if nl >= pos then break end
    line, start = line + 1, nl + 1
  end
  local stop = src:find("\n", start, true)
  local text = src:sub(start, (stop or #src + 1) - 1):gsub("\r$", "")
  return line, pos - start + 1, text
end

-- The error text: header, offending line, caret under the column. Tabs are
-- kept in the caret's indent so the caret lines up however tabs render.
function dsl.message(chunk, src, pos, msg)
  local line, col, text = dsl.position(src, pos)
  local indent = text:sub(1, col - 1):gsub("[^\t]", " ")
  return string.format("%s:%d:%d: %s\n%s\n%s^", chunk, line, col, msg, text, indent)
end

-- Run `fn(...)`; return its results, or nil and the failure table it raised.
-- Anything that is not one of our failures is a bug and propagates as is.
function dsl.try(fn, ...)
  local res = table.pack(pcall(fn, ...))
  if res[1] then return table.unpack(res, 2, res.n) end
  if dsl.is_failure(res[2]) then return nil, res[2] end
  error(res[2], 0)
end

-- Raise a failure as the user-facing string.
function dsl.raise(chunk, src, failure)
  error(dsl.message(chunk, src, failure.pos, failure.msg), 0)
end

-- " (did you mean 'x'?)" for the closest of `names` (an array), or "": the
-- engine's one edit distance (fe_closest, through fuseeng.core).
local closest = require("fuseeng.core").closest
function dsl.suggest(name, names)
  local best = closest(name, names)
  return best and string.format(" (did you mean '%s'?)", best) or ""
end

return dsl
