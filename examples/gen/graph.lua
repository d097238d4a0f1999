-- graph.lua: graph builder, shape inference and model-file writer for examples/gen_models.lua.
--
-- The builder infers every node's output shape itself (symbolically: shapes
-- mix integers and dim names) and declares it, so a mistake in a model
-- script fails here, at the line that made it, instead of in the loader.

local json = require "json"

local M = {}

local fmt, concat = string.format, table.concat

local FLOAT = { f32 = true, f16 = true, bf16 = true }

local function shape_str(s)
  local t = {}
  for i = 1, #s do t[i] = tostring(s[i]) end
  return "[" .. concat(t, ",") .. "]"
end
M.shape_str = shape_str

local function copy(s)
  local t = {}
  for i = 1, #s do t[i] = s[i] end
  return t
end

-- attrs are flat key/value lists (ordered, see json.obj); this reads one.
local function attr(attrs, key, default)
  if attrs then
    for i = 1, #attrs, 2 do
      if attrs[i] == key then return attrs[i + 1] end
    end
  end
  return default
end
M.attr = attr

-- Shape inference. Each function gets the node and its input {shape, dtype}
-- list and returns the output shape and dtype; fail() raises with the node
-- named, as the loader would.

local function fail(node, msg, ...)
  error(fmt("node %s (%s): " .. msg, node.name, node.op, ...), 0)
end

local function axis_of(node, axis, rank)
  local a = axis < 0 and axis + rank or axis
  if a < 0 or a >= rank then fail(node, "axis %d out of range for rank %d", axis, rank) end
  return a + 1 -- Lua index
end

local function num_dim(node, d, what)
  if math.type(d) ~= "integer" then
    fail(node, "%s needs a concrete size here, got dim %s", what, tostring(d))
  end
  return d
end

-- numpy broadcasting over symbolic dims: a name only matches itself or 1.
local function broadcast(node, a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local da = a[#a - n + i] or 1
    local db = b[#b - n + i] or 1
    if da == db or db == 1 then out[i] = da
    elseif da == 1 then out[i] = db
    else fail(node, "shapes %s and %s do not broadcast", shape_str(a), shape_str(b)) end
  end
  return out
end

local function same_float(node, ins)
  local dt = ins[1].dtype
  for i = 2, #ins do
    if ins[i].dtype ~= dt then
      fail(node, "input %d is %s but input 1 is %s", i, ins[i].dtype, dt)
    end
  end
  if not FLOAT[dt] then fail(node, "expects a float tensor, got %s", dt) end
  return dt
end

local function unary(node, ins)
  if #ins ~= 1 then fail(node, "takes 1 input, got %d", #ins) end
  return copy(ins[1].shape), same_float(node, ins)
end

local function binary(node, ins)
  if attr(node.attrs, "scalar") ~= nil then
    if #ins ~= 1 then fail(node, "with a scalar takes 1 tensor, got %d", #ins) end
    return copy(ins[1].shape), same_float(node, ins)
  end
  if #ins ~= 2 then fail(node, "takes 2 inputs, got %d", #ins) end
  return broadcast(node, ins[1].shape, ins[2].shape), same_float(node, ins)
end

local function reduce(node, ins)
  local x = ins[1].shape
  local axes = attr(node.attrs, "axes")
  local keep = attr(node.attrs, "keepdim", false)
  local drop = {}
  if axes then
    for _, a in ipairs(axes) do drop[axis_of(node, a, #x)] = true end
  else
    for i = 1, #x do drop[i] = true end
  end
  local out = {}
  for i = 1, #x do
    if not drop[i] then out[#out + 1] = x[i]
    elseif keep then out[#out + 1] = 1 end
  end
  return out, same_float(node, ins)
end

local function softmax(node, ins)
  axis_of(node, attr(node.attrs, "axis", -1), #ins[1].shape)
  return unary(node, ins)
end

local function norm(node, ins)
  local x = ins[1].shape
  for i = 2, #ins do
    local w = ins[i].shape
    if #w > #x then
      fail(node, "parameter %d %s is longer than x %s", i, shape_str(w), shape_str(x))
    end
    for j = 1, #w do
      if w[j] ~= x[#x - #w + j] then
        fail(node, "parameter %d %s does not match the trailing dims of x %s",
             i, shape_str(w), shape_str(x))
      end
    end
  end
  return copy(x), same_float(node, ins)
end

-- Element count as an integer product and the sorted list of dim names, so
-- that reshapes of symbolic shapes can be checked without resolving them.
local function volume(s)
  local n, syms = 1, {}
  for i = 1, #s do
    if math.type(s[i]) == "integer" then n = n * s[i] else syms[#syms + 1] = s[i] end
  end
  table.sort(syms)
  return n, concat(syms, "*")
end

local function reshape(node, ins)
  local to = attr(node.attrs, "shape")
  if not to then fail(node, "needs attrs.shape") end
  local n1, s1 = volume(ins[1].shape)
  local n2, s2 = volume(to)
  if n1 ~= n2 or s1 ~= s2 then
    fail(node, "cannot reshape %s to %s", shape_str(ins[1].shape), shape_str(to))
  end
  return copy(to), ins[1].dtype
end

local function transpose(node, ins)
  local x = ins[1].shape
  local perm = attr(node.attrs, "perm")
  if #perm ~= #x then fail(node, "perm has %d axes for rank %d", #perm, #x) end
  local out, seen = {}, {}
  for i, p in ipairs(perm) do
    local a = axis_of(node, p, #x)
    if seen[a] then fail(node, "perm repeats axis %d", p) end
    seen[a] = true
    out[i] = x[a]
  end
  return out, ins[1].dtype
end

local function slice(node, ins)
  local x = copy(ins[1].shape)
  local a = axis_of(node, attr(node.attrs, "axis", 0), #x)
  local size = num_dim(node, x[a], "slice")
  local start = attr(node.attrs, "start", 0)
  local stop = attr(node.attrs, "end", size)
  local step = attr(node.attrs, "step", 1)
  if step <= 0 then fail(node, "step must be > 0") end
  if start < 0 then start = start + size end
  if stop < 0 then stop = stop + size end
  start = math.min(math.max(start, 0), size)
  stop = math.min(math.max(stop, 0), size)
  x[a] = stop > start and (stop - start + step - 1) // step or 0
  return x, ins[1].dtype
end

local function concat_(node, ins)
  local out = copy(ins[1].shape)
  local a = axis_of(node, attr(node.attrs, "axis", 0), #out)
  local total = num_dim(node, out[a], "concat")
  for i = 2, #ins do
    local s = ins[i].shape
    if #s ~= #out then fail(node, "input %d has rank %d, input 1 has %d", i, #s, #out) end
    for j = 1, #s do
      if j == a then total = total + num_dim(node, s[j], "concat")
      elseif s[j] ~= out[j] then
        fail(node, "input %d %s differs from input 1 %s off the concat axis",
             i, shape_str(s), shape_str(out))
      end
    end
    if ins[i].dtype ~= ins[1].dtype then fail(node, "inputs differ in dtype") end
  end
  out[a] = total
  return out, ins[1].dtype
end

local function pad(node, ins)
  local out = copy(ins[1].shape)
  local pads = attr(node.attrs, "pads")
  if not pads or #pads % 2 ~= 0 or #pads > 2 * #out then
    fail(node, "pads must be (before, after) pairs for at most %d axes", #out)
  end
  for k = 1, #pads // 2 do
    local a = #out - k + 1
    local extra = pads[2 * k - 1] + pads[2 * k]
    if extra ~= 0 then out[a] = num_dim(node, out[a], "pad") + extra end
  end
  return out, ins[1].dtype
end

local function pair(v, default)
  if v == nil then return default, default end
  if type(v) == "table" then return v[1], v[2] end
  return v, v
end

-- Output size of a conv or pooling window along one axis.
local function window(node, size, k, s, p, d, ceil)
  local span = size + 2 * p - d * (k - 1) - 1
  if span < 0 then fail(node, "window %d does not fit size %d", k, size) end
  local n = ceil and -((-span) // s) or span // s
  if ceil and n * s >= size + p then n = n - 1 end
  return n + 1
end

local function matmul(node, ins)
  if #ins ~= 2 then fail(node, "takes 2 inputs, got %d", #ins) end
  local a, b = copy(ins[1].shape), copy(ins[2].shape)
  if #a < 2 or #b < 2 then fail(node, "this generator only emits matmuls of rank >= 2") end
  if attr(node.attrs, "transpose_a", false) then a[#a], a[#a - 1] = a[#a - 1], a[#a] end
  if attr(node.attrs, "transpose_b", false) then b[#b], b[#b - 1] = b[#b - 1], b[#b] end
  if a[#a] ~= b[#b - 1] then
    fail(node, "inner dims differ: %s x %s (after transposes)", shape_str(a), shape_str(b))
  end
  local ba, bb = {}, {}
  for i = 1, #a - 2 do ba[i] = a[i] end
  for i = 1, #b - 2 do bb[i] = b[i] end
  local out = broadcast(node, ba, bb)
  out[#out + 1] = a[#a - 1]
  out[#out + 1] = b[#b]
  return out, same_float(node, ins)
end

local function conv2d(node, ins)
  local x, w = ins[1].shape, ins[2].shape
  if #x ~= 4 or #w ~= 4 then fail(node, "x and w must be rank 4") end
  local groups = attr(node.attrs, "groups", 1)
  local sh, sw = pair(attr(node.attrs, "stride"), 1)
  local ph, pw = pair(attr(node.attrs, "padding"), 0)
  local dh, dw = pair(attr(node.attrs, "dilation"), 1)
  if num_dim(node, x[2], "conv2d") ~= w[2] * groups then
    fail(node, "x has %d channels, w %s expects %d", x[2], shape_str(w), w[2] * groups)
  end
  if ins[3] and (#ins[3].shape ~= 1 or ins[3].shape[1] ~= w[1]) then
    fail(node, "bias must be [%d]", w[1])
  end
  return {
    x[1], w[1],
    window(node, num_dim(node, x[3], "conv2d"), w[3], sh, ph, dh, false),
    window(node, num_dim(node, x[4], "conv2d"), w[4], sw, pw, dw, false),
  }, same_float(node, ins)
end

local function pool2d(node, ins)
  local x = ins[1].shape
  local kh, kw = pair(attr(node.attrs, "kernel"))
  if not kh then fail(node, "needs attrs.kernel") end
  local sh, sw = pair(attr(node.attrs, "stride"))
  sh, sw = sh or kh, sw or kw
  local ph, pw = pair(attr(node.attrs, "padding"), 0)
  local dh, dw = pair(attr(node.attrs, "dilation"), 1)
  local ceil = attr(node.attrs, "ceil_mode", false)
  return {
    x[1], x[2],
    window(node, num_dim(node, x[3], "pool"), kh, sh, ph, dh, ceil),
    window(node, num_dim(node, x[4], "pool"), kw, sw, pw, dw, ceil),
  }, ins[1].dtype
end

local function batch_norm(node, ins)
  if #ins ~= 5 then fail(node, "takes x, weight, bias, running_mean, running_var") end
  local c = ins[1].shape[2]
  for i = 2, 5 do
    local s = ins[i].shape
    if #s ~= 1 or s[1] ~= c then fail(node, "parameter %d must be [%s]", i, tostring(c)) end
  end
  return copy(ins[1].shape), same_float(node, ins)
end

local function all_reduce(node, ins)
  if not attr(node.attrs, "world_size") then fail(node, "needs attrs.world_size") end
  return unary(node, ins)
end

local INFER = {
  relu = unary, gelu = unary, silu = unary, sigmoid = unary, tanh = unary,
  exp = unary, log = unary, neg = unary, abs = unary, sqrt = unary,
  rsqrt = unary, reciprocal = unary, sin = unary, cos = unary, erf = unary,
  add = binary, sub = binary, mul = binary, div = binary, maximum = binary,
  minimum = binary, pow = binary,
  sum = reduce, mean = reduce, amax = reduce, amin = reduce,
  softmax = softmax, log_softmax = softmax,
  rms_norm = norm, layer_norm = norm,
  reshape = reshape, transpose = transpose, slice = slice, concat = concat_,
  pad = pad,
  matmul = matmul, conv2d = conv2d,
  max_pool2d = pool2d, avg_pool2d = pool2d, batch_norm = batch_norm,
  all_reduce = all_reduce,
}

-- The builder.

local Graph = {}
Graph.__index = Graph

-- o.dims is a flat {"B", 1, "S", 2048} list (ordered, like attrs).
function M.new(o)
  local g = setmetatable({
    name = o.name, source = o.source, dims = o.dims or {},
    dtype = o.dtype or "f32",
    tensors = {},                    -- name -> {shape, dtype, kind}
    inputs = {}, weights = {}, acts = {}, -- names, in declaration order
    nodes = {}, outputs = {},
  }, Graph)
  g.dimset = {}
  for i = 1, #g.dims, 2 do g.dimset[g.dims[i]] = g.dims[i + 1] end
  return g
end

function Graph:_declare(list, name, shape, dtype, kind)
  if self.tensors[name] then error("tensor " .. name .. " declared twice", 3) end
  -- Inferred shapes are made of dims of checked shapes (reshape's target is
  -- matched against its input), so only given shapes need checking.
  for i = 1, kind == "activation" and 0 or #shape do
    local d = shape[i]
    if type(d) == "string" then
      if not self.dimset[d] then error(fmt("tensor %s uses undeclared dim %s", name, d), 3) end
    elseif math.type(d) ~= "integer" or d < 0 then
      error(fmt("tensor %s has a bad dim %s", name, tostring(d)), 3)
    end
  end
  self.tensors[name] = { shape = shape, dtype = dtype or self.dtype, kind = kind }
  if list then list[#list + 1] = name end
  return name
end

function Graph:input(name, shape, dtype)
  return self:_declare(self.inputs, name, shape, dtype, "input")
end

function Graph:weight(name, shape, dtype)
  return self:_declare(self.weights, name, shape, dtype, "weight")
end

-- A tensor that another fragment of the same model declares (the scale
-- generator writes one layer at a time); known for inference, never written.
function Graph:extern(name, shape, dtype, kind)
  return self:_declare(nil, name, shape, dtype, kind)
end

-- Adds a node whose single output tensor has the node's name, as
-- torch.export names them. attrs: flat key/value list or nil.
function Graph:op(op, name, inputs, attrs)
  local infer = INFER[op]
  if not infer then error("the generator has no inference for op " .. op, 2) end
  if self.tensors[name] then error("name " .. name .. " is already a tensor", 2) end
  local ins = {}
  for i, t in ipairs(inputs) do
    ins[i] = self.tensors[t]
    if not ins[i] then error(fmt("node %s: input %s is not defined yet", name, t), 2) end
  end
  if attrs and #attrs == 0 then attrs = nil end
  local node = { name = name, op = op, inputs = inputs, attrs = attrs }
  local shape, dtype = infer(node, ins)
  self:_declare(self.acts, name, shape, dtype, "activation")
  self.nodes[#self.nodes + 1] = node
  return name
end

function Graph:output(name)
  if not self.tensors[name] then error("output " .. name .. " is not a tensor", 2) end
  self.outputs[#self.outputs + 1] = name
end

function Graph:shape(name) return self.tensors[name].shape end

-- Writing. Tensors must precede nodes in the file, but a streamed model
-- produces both layer by layer, so node text goes to a scratch file that is
-- appended when the tensors are done.

local Writer = {}
Writer.__index = Writer

-- file:write reports a full disk by returning nil; a model cut short must
-- not be renamed into place as if it were whole.
local function written(ok, err)
  if not ok then error("write failed: " .. tostring(err), 0) end
end

-- opts.compact: no newlines or spaces; otherwise one tensor or node per line.
function M.writer(f, opts)
  local w = setmetatable({
    f = f, compact = opts and opts.compact, ntensors = 0, nnodes = 0,
    attr_text = setmetatable({}, { __mode = "k" }),
    nf = assert(io.tmpfile()),
  }, Writer)
  f:setvbuf("full", 1 << 20)
  w.nf:setvbuf("full", 1 << 20)
  return w
end

function Writer:header(name, source, dims)
  local c = self.compact
  local sp = c and "" or " "
  local nl = c and "" or "\n "
  local dimobj = json.encode(json.obj(dims), not c)
  written(self.f:write("{", nl, '"format":', sp, '"fuseeng.model/1",', nl,
    '"name":', sp, json.string(name), ",", nl,
    '"source":', sp, json.string(source), ",", nl,
    '"dims":', sp, dimobj, ",", nl,
    '"tensors":', sp, "{"))
end

-- Tensors and nodes are the bulk of a million-node file, so their lines are
-- assembled directly rather than through json.obj tables.
local jstr, jnum = json.string, json.number

local function flat_list(l, comma)
  local b = {}
  for i = 1, #l do
    local v = l[i]
    b[i] = type(v) == "string" and jstr(v) or jnum(v)
  end
  return "[" .. concat(b, comma) .. "]"
end

-- Shapes draw on a handful of sizes and dim names; their texts are memoised.
local dim_text = setmetatable({}, { __index = function(t, v)
  local s = type(v) == "string" and jstr(v) or jnum(v)
  t[v] = s
  return s
end })

local function shape_list(l, comma)
  local n = #l
  if n == 0 then return "[]" end
  local s = dim_text[l[1]]
  for i = 2, n do s = s .. comma .. dim_text[l[i]] end
  return "[" .. s .. "]"
end

function Writer:tensor(name, t)
  local c = self.compact
  local lead = (self.ntensors > 0 and "," or "") .. (c and "" or "\n  ")
  self.ntensors = self.ntensors + 1
  if c then
    written(self.f:write(lead, jstr(name), ':{"shape":', shape_list(t.shape, ","),
      ',"dtype":"', t.dtype, '","kind":"', t.kind, '"}'))
  else
    written(self.f:write(lead, jstr(name), ': {"shape": ', shape_list(t.shape, ", "),
      ', "dtype": "', t.dtype, '", "kind": "', t.kind, '"}'))
  end
end

function Writer:node(n)
  local c = self.compact
  local lead = (self.nnodes > 0 and "," or "") .. (c and "" or "\n  ")
  self.nnodes = self.nnodes + 1
  local name = jstr(n.name)
  local attrs = n.attrs
  if attrs then
    -- Generators share one attrs table between many nodes (every layer's
    -- transpose_b, say), so the text is cached per table.
    local text = self.attr_text[attrs]
    if not text then
      text = json.encode(json.obj(attrs), not c)
      self.attr_text[attrs] = text
    end
    attrs = text
  end
  if c then
    written(self.nf:write(lead, '{"name":', name, ',"op":"', n.op,
      '","inputs":', flat_list(n.inputs, ","), ',"outputs":[', name,
      attrs and '],"attrs":' .. attrs .. '}' or ']}'))
  else
    written(self.nf:write(lead, '{"name": ', name, ', "op": "', n.op,
      '", "inputs": ', flat_list(n.inputs, ", "), ', "outputs": [', name,
      attrs and '], "attrs": ' .. attrs .. '}' or ']}'))
  end
end

function Writer:finish(outputs)
  local c = self.compact
  local close = c and "" or "\n "
  local f = self.f
  written(f:write(self.ntensors > 0 and close or "", "},", c and "" or "\n ",
                  '"nodes":', c and "" or " ", "["))
  written(self.nf:seek("set", 0))
  while true do
    local chunk = self.nf:read(1 << 20)
    if not chunk then break end
    written(f:write(chunk))
  end
  self.nf:close()
  written(f:write(self.nnodes > 0 and close or "", "],", c and "" or "\n ",
                  '"outputs":', c and "" or " ", json.encode(outputs, not c),
                  c and "}\n" or "\n}\n"))
end

-- Writes this graph's declared tensors and nodes. opts.activations = false
-- leaves node outputs undeclared (the loader infers them) except graph outputs.
function Graph:write_body(w, opts)
  local acts = not (opts and opts.activations == false)
  for _, list in ipairs { self.inputs, self.weights } do
    for _, name in ipairs(list) do w:tensor(name, self.tensors[name]) end
  end
  local isout = {}
  for _, name in ipairs(self.outputs) do isout[name] = true end
  for _, name in ipairs(self.acts) do
    if acts or isout[name] then w:tensor(name, self.tensors[name]) end
  end
  for _, n in ipairs(self.nodes) do w:node(n) end
end

-- Runs body(f) on a temporary file next to path and renames it into place
-- only if everything succeeded, so a failed run never leaves half a model.
-- Returns the file size.
function M.write_file(path, body)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("cannot write " .. tmp .. ": " .. err, 0) end
  local ok, perr = pcall(body, f)
  local size = ok and f:seek("end")
  local closed, cerr = f:close()
  if not ok or not closed then
    os.remove(tmp)
    error(ok and ("cannot write " .. tmp .. ": " .. tostring(cerr)) or perr, 0)
  end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then
    os.remove(tmp)
    error("cannot rename " .. tmp .. " to " .. path .. ": " .. rerr, 0)
  end
  return size
end

-- Writes the whole model to path. Returns the number of bytes written.
function Graph:save(path, opts)
  if #self.outputs == 0 then error("model " .. self.name .. " has no outputs", 0) end
  return M.write_file(path, function(f)
    local w = M.writer(f, opts)
    w:header(self.name, self.source, self.dims)
    self:write_body(w, opts)
    w:finish(self.outputs)
  end)
end

return M
