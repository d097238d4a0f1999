"""fx_attention.py: nn.MultiheadAttention decomposed into fuseeng ops.

torch.fx keeps nn.MultiheadAttention as one leaf call (its forward cannot be
traced through); ONNX exports spell it out, and so do we, in the same order,
so both import paths give comparable graphs:

    x [B,L,E] --matmul W_in^T + b_in--> qkv [B,L,3E] --slice--> q, k, v
    q, k, v --reshape [B,L,H,D], transpose--> [B,H,L,D];  q *= 1/sqrt(D)
    p = softmax(q k^T (+ mask));  o = p v --transpose, reshape--> [B,L,E]
    out = o W_out^T + b_out          (weights: mean of p over heads, if used)

Self-attention (query, key and value the same tensor) takes one matmul with
the whole in_proj_weight; otherwise each projection multiplies a slice of it.
What this does not express (bias_kv, zero attention, separate k/v weights,
key padding and 3-D masks) raises Unsupported: the call becomes custom.
"""
import math
import operator

import torch

from fx_graph import Ten, Unsupported
from fx_handlers import binary_op, param, reshape_to, slice_axis, transpose_perm


def _linear(b, x, w, bias, tag):
    """x @ w^T (+ bias) as intermediate nodes named after the FX node and tag."""
    shape = x.shape[:-1] + (w.shape[0],)
    y = b.op("matmul", [x, w], {"transpose_b": True}, shape=shape, dtype=x.dtype, suffix=f"{tag}.mm")
    if bias is None:
        return y
    return b.op("add", [y, bias], shape=shape, dtype=x.dtype, suffix=tag)


def _project(b, x, w, bias, lo, hi, tag):
    """x @ w[lo:hi]^T + bias[lo:hi]: one of q, k, v from the packed in-projection."""
    w = slice_axis(b, w, 0, lo, hi, suffix=f"w{tag}")
    bias = slice_axis(b, bias, 0, lo, hi, suffix=f"b{tag}") if bias is not None else None
    return _linear(b, x, w, bias, tag)


def _heads(b, x, h, tag):
    """[B,L,E] -> [B,H,L,D]."""
    bsz, n, e = x.shape
    x = reshape_to(b, x, (bsz, n, h, e // h), suffix=f"{tag}.split")
    return transpose_perm(b, x, [0, 2, 1, 3], suffix=f"{tag}.heads")


def multihead(b, mod, query, key, value, key_padding_mask, need_weights, attn_mask,
              average_attn_weights):
    if not mod._qkv_same_embed_dim or mod.bias_k is not None or mod.add_zero_attn:
        raise Unsupported("MultiheadAttention with separate k/v dims, bias_kv or zero attention")
    if key_padding_mask is not None:
        raise Unsupported("MultiheadAttention with key_padding_mask")
    if not all(isinstance(t, Ten) and t.rank == 3 for t in (query, key, value)):
        raise Unsupported("MultiheadAttention on unbatched input")
    e, h = mod.embed_dim, mod.num_heads
    d = e // h
    q_in, k_in, v_in = query, key, value
    if not mod.batch_first:    # [L,B,E] -> [B,L,E]
        q_in, k_in, v_in = (transpose_perm(b, t, [1, 0, 2], suffix=f"{tag}.bf")
                            for t, tag in ((query, "q"), (key, "k"), (value, "v")))
    w = param(b, mod, "in_proj_weight")
    bias = param(b, mod, "in_proj_bias") if mod.in_proj_bias is not None else None
    if query is key and key is value:
        qkv = _linear(b, q_in, w, bias, "qkv")
        q, k, v = (slice_axis(b, qkv, 2, i * e, (i + 1) * e, suffix=t) for i, t in enumerate("qkv"))
    else:
        q = _project(b, q_in, w, bias, 0, e, "q")
        k = _project(b, k_in, w, bias, e, 2 * e, "k")
        v = _project(b, v_in, w, bias, 2 * e, 3 * e, "v")
    q, k, v = _heads(b, q, h, "q"), _heads(b, k, h, "k"), _heads(b, v, h, "v")
    q = binary_op(b, "mul", q, 1.0 / math.sqrt(d), suffix="scale")
    bsz, lq, ls = q.shape[0], q.shape[2], k.shape[2]
    s = b.op("matmul", [q, k], {"transpose_b": True}, shape=(bsz, h, lq, ls), dtype=q.dtype,
             suffix="scores")
    if attn_mask is not None:
        if not isinstance(attn_mask, Ten) or attn_mask.rank != 2:
            raise Unsupported("MultiheadAttention with a 3-D attn_mask")
        if attn_mask.dtype == torch.bool:   # True = not allowed
            s = b.op("where", [attn_mask, s], {"scalar": -3.4028235e38, "scalar_index": 1},
                     shape=s.shape, dtype=s.dtype, suffix="masked")
        else:
            s = b.op("add", [s, attn_mask], shape=s.shape, dtype=s.dtype, suffix="masked")
    p = b.op("softmax", [s], {"axis": 3}, shape=s.shape, dtype=s.dtype, suffix="probs")
    o = b.op("matmul", [p, v], shape=(bsz, h, lq, d), dtype=q.dtype, suffix="ctx")
    o = transpose_perm(b, o, [0, 2, 1, 3], suffix="ctx.t")
    o = reshape_to(b, o, (bsz, lq, e), suffix="ctx.merge")
    out_b = None
    if mod.out_proj.bias is not None:
        out_b = b.weight(f"{b.fx.target}.out_proj.bias", mod.out_proj.bias)
    out_w = b.weight(f"{b.fx.target}.out_proj.weight", mod.out_proj.weight)
    out = _linear(b, o, out_w, out_b, "out.proj")
    if not mod.batch_first:
        out = transpose_perm(b, out, [1, 0, 2], suffix="out")
    weights = None
    # Only when something takes output [1]: a dead node would still run.
    if need_weights and any(u.target is operator.getitem and u.args[1] == 1 for u in b.fx.users):
        if average_attn_weights:
            weights = b.op("mean", [p], {"axes": [1]}, shape=(bsz, lq, ls), dtype=p.dtype,
                           suffix="weights")
        else:
            weights = p
    return (out, weights)
