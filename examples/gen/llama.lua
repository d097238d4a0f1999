-- llama.lua: the LLaMA decoder layer, shared by llama2_7b_layer.json and the --layers scale models.

local M = {}

-- LLaMA's MLP width rule: 2/3 of 4*hidden, rounded up to a multiple of 256
-- (gives 11008 for hidden 4096).
function M.mlp_width(hidden)
  local w = 2 * 4 * hidden // 3
  return (w + 255) // 256 * 256
end

-- Model-level inputs every layer reads: the hidden state, the rotary tables
-- and the additive causal mask. cfg: hidden, head_dim, dtype.
function M.inputs(g, cfg)
  g:input("x", { "B", "S", cfg.hidden })
  g:input("cos", { 1, 1, "S", cfg.head_dim })
  g:input("sin", { 1, 1, "S", cfg.head_dim })
  g:input("mask", { 1, 1, "S", "S" })
end

-- Rotary embedding as the Hugging Face code writes it (rotate_half):
-- t*cos + cat(-t[..., d/2:], t[..., :d/2]) * sin.
local function rope(g, p, t, A)
  local tc = g:op("mul", p .. "_cos", { t, "cos" })
  local x1 = g:op("slice", p .. "_x1", { t }, A.first_half)
  local x2 = g:op("slice", p .. "_x2", { t }, A.second_half)
  local nx2 = g:op("neg", p .. "_neg_x2", { x2 })
  local rot = g:op("concat", p .. "_rot", { nx2, x1 }, A.axis3)
  local rs = g:op("mul", p .. "_rot_sin", { rot, "sin" })
  return g:op("add", p .. "_rope", { tc, rs })
end

-- One decoder layer reading tensor x; returns the name of its output.
-- prefix namespaces every weight and node ("" for the single-layer model,
-- "layers.7." in stacked ones). cfg: hidden, heads, head_dim, mlp, eps.
function M.layer(g, prefix, x, cfg)
  local p = prefix
  local h, ff = cfg.hidden, cfg.mlp
  local A = cfg.attrs
  local TB = A.transpose_b

  local w_in = g:weight(p .. "input_layernorm.weight", { h })
  local w_q = g:weight(p .. "self_attn.q_proj.weight", { h, h })
  local w_k = g:weight(p .. "self_attn.k_proj.weight", { h, h })
  local w_v = g:weight(p .. "self_attn.v_proj.weight", { h, h })
  local w_o = g:weight(p .. "self_attn.o_proj.weight", { h, h })
  local w_post = g:weight(p .. "post_attention_layernorm.weight", { h })
  local w_gate = g:weight(p .. "mlp.gate_proj.weight", { ff, h })
  local w_up = g:weight(p .. "mlp.up_proj.weight", { ff, h })
  local w_down = g:weight(p .. "mlp.down_proj.weight", { h, ff })

  local xn = g:op("rms_norm", p .. "input_layernorm", { x, w_in }, A.eps)

  -- [B,S,h] -> [B,nh,S,hd]
  local function heads(name, w)
    local proj = g:op("matmul", p .. name .. "_proj", { xn, w }, TB)
    local view = g:op("reshape", p .. name .. "_view", { proj }, A.split_heads)
    return g:op("transpose", p .. name .. "_heads", { view }, A.swap_12)
  end
  local q = heads("q", w_q)
  local k = heads("k", w_k)
  local v = heads("v", w_v)
  q = rope(g, p .. "q", q, A)
  k = rope(g, p .. "k", k, A)

  local scores = g:op("matmul", p .. "scores", { q, k }, TB)
  local scaled = g:op("mul", p .. "scores_scaled", { scores }, A.scale)
  local masked = g:op("add", p .. "scores_masked", { scaled, "mask" })
  local probs = g:op("softmax", p .. "probs", { masked }, A.last_axis)
  local ctx = g:op("matmul", p .. "attn", { probs, v })
  local ctx_t = g:op("transpose", p .. "attn_t", { ctx }, A.swap_12)
  local ctx_f = g:op("reshape", p .. "attn_flat", { ctx_t }, A.merge_heads)
  local o = g:op("matmul", p .. "o_proj", { ctx_f, w_o }, TB)
  local res = g:op("add", p .. "attn_residual", { x, o })

  local hn = g:op("rms_norm", p .. "post_attention_layernorm", { res, w_post }, A.eps)
  local gate = g:op("matmul", p .. "gate_proj", { hn, w_gate }, TB)
  local up = g:op("matmul", p .. "up_proj", { hn, w_up }, TB)
  local act = g:op("silu", p .. "gate_silu", { gate })
  local glu = g:op("mul", p .. "swiglu", { act, up })
  local down = g:op("matmul", p .. "down_proj", { glu, w_down }, TB)
  return g:op("add", p .. "out", { res, down })
end

-- Configuration for a given hidden size; head_dim stays 128 as in LLaMA-2
-- unless the hidden size is too small for it.
function M.config(hidden, heads, mlp)
  local head_dim
  if heads then
    head_dim = hidden // heads
  else
    head_dim = hidden >= 128 and 128 or hidden
    heads = hidden // head_dim
  end
  if heads * head_dim ~= hidden or head_dim % 2 ~= 0 then
    error(string.format("hidden %d does not split into %d heads of an even size; "
      .. "choose --heads so that hidden / heads is even", hidden, heads), 0)
  end
  local half = head_dim // 2
  return {
    hidden = hidden, heads = heads, head_dim = head_dim,
    mlp = mlp or M.mlp_width(hidden), eps = 1e-5,
    -- Every layer's nodes share these attribute tables: building them once
    -- keeps a million-node model cheap to generate and to encode.
    attrs = {
      transpose_b = { "transpose_b", true },
      eps = { "eps", 1e-5 },
      split_heads = { "shape", { "B", "S", heads, head_dim } },
      merge_heads = { "shape", { "B", "S", hidden } },
      swap_12 = { "perm", { 0, 2, 1, 3 } },
      first_half = { "axis", 3, "start", 0, "end", half },
      second_half = { "axis", 3, "start", half, "end", head_dim },
      axis3 = { "axis", 3 },
      scale = { "scalar", 1 / math.sqrt(head_dim) },
      last_axis = { "axis", -1 },
    },
  }
end

return M
