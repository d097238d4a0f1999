"""fx_handlers.py: how each torch call maps to fuseeng ops (export_torch.py).

Three tables at the bottom: MODULES (by nn.Module class, most derived first),
FUNCTIONS (by the function object FX records: operator.add, torch.cat,
F.layer_norm, ...) and METHODS (by Tensor method name). A handler is called
as handler(b, *args, **kwargs) with the FX call's own arguments, FX nodes
replaced by their mapped values (Ten or Python values); module handlers also
get the module. Handlers name parameters like torch does, so Python binds
either spelling of a call. The FX node's ShapeProp shape (b.op's default)
is the output shape; intermediate tensors get shapes computed here.

A handler raises Unsupported for what it cannot express exactly (a training
mode dropout, circular padding, ...): the call becomes a custom node.
"""
import builtins
import collections
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from fx_graph import ExportError, Ten, Unsupported, elem_size, numel, scalar


def _fxshape(b):
    return tuple(b.fx.meta["tensor_meta"].shape)


def _axis(d, rank):
    d = int(d)
    if not -rank <= d < max(rank, 1):
        raise Unsupported(f"dim {d} out of range for rank {rank}")
    return d % rank if rank else 0


def _pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def _is_num(v):
    return isinstance(v, (int, float, bool))


def param(b, mod, attr):
    """Module parameter or buffer attr as a weight named by its qualified name."""
    return b.weight(f"{b.fx.target}.{attr}", getattr(mod, attr))


def alias(b, input, *args, **kwargs):
    """No node: the FX value is its input (Identity, eval-mode Dropout, contiguous)."""
    return input


def reshape_to(b, x, shape, suffix=None):
    shape = tuple(shape)
    if x.shape == shape:
        return x
    return b.op("reshape", [x], {"shape": list(shape)}, shape=shape, dtype=x.dtype, suffix=suffix)


def _view(b, input, *args, **kwargs):
    """Any view whose result ShapeProp knows: one reshape to that shape."""
    return reshape_to(b, input, _fxshape(b))


def transpose_perm(b, x, perm, suffix=None):
    perm = [_axis(p, x.rank) for p in perm]
    if perm == list(range(x.rank)):
        return x
    shape = tuple(x.shape[p] for p in perm)
    return b.op("transpose", [x], {"perm": perm}, shape=shape, dtype=x.dtype, suffix=suffix)


def slice_axis(b, x, axis, start, end, step=1, suffix=None):
    axis = _axis(axis, x.rank)
    s, e, st = slice(start, end, step).indices(x.shape[axis])
    n = len(range(s, e, st))
    if n == x.shape[axis] and st == 1:
        return x
    if n == 0:
        raise Unsupported("an empty slice")
    shape = x.shape[:axis] + (n,) + x.shape[axis + 1:]
    return b.op("slice", [x], {"axis": axis, "start": s, "end": e, "step": st},
                shape=shape, dtype=x.dtype, suffix=suffix)


def _bshape(a, c):
    """Broadcast shape of two shapes (numpy rules)."""
    n = max(len(a), len(c))
    a, c = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(c)) + tuple(c)
    return tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, c))


def binary_op(b, op, x, y, suffix=None, dtype=None):
    """op(x, y) with a Python number on either side as attrs.scalar."""
    inter = suffix is not None
    if isinstance(x, Ten) and isinstance(y, Ten):
        shape = _bshape(x.shape, y.shape) if inter else None
        return b.op(op, [x, y], shape=shape, dtype=dtype or (x.dtype if inter else None), suffix=suffix)
    if isinstance(x, Ten) and _is_num(y):
        return b.op(op, [x], {"scalar": scalar(y)}, shape=x.shape if inter else None,
                    dtype=dtype or (x.dtype if inter else None), suffix=suffix)
    if _is_num(x) and isinstance(y, Ten):
        return b.op(op, [y], {"scalar": scalar(x), "scalar_index": 0},
                    shape=y.shape if inter else None,
                    dtype=dtype or (y.dtype if inter else None), suffix=suffix)
    raise Unsupported(f"{op} of {type(x).__name__} and {type(y).__name__}")


def _binary(op):
    def h(b, input, other, *args, alpha=None, out=None, rounding_mode=None):
        if rounding_mode is not None or args:
            raise Unsupported(f"{op} with rounding_mode or extra arguments")
        if alpha is not None and alpha != 1:
            if op not in ("add", "sub") or not isinstance(other, Ten):
                raise Unsupported(f"{op} with alpha")
            other = binary_op(b, "mul", other, alpha, suffix="alpha")
        return binary_op(b, op, input, other)
    return h


def _rsub(b, input, other, alpha=1):
    if alpha != 1:
        raise Unsupported("rsub with alpha")
    return binary_op(b, "sub", other, input)


def _unary(op):
    def h(b, input, *args, inplace=False, out=None):
        if args and not (len(args) == 1 and isinstance(args[0], bool)):
            raise Unsupported(f"{op} with extra arguments")
        return b.op(op, [input])
    return h


def _gelu(b, input, approximate="none"):
    return b.op("gelu", [input], {"approximate": approximate} if approximate != "none" else None)


def clamp(b, input, min=None, max=None, out=None):
    if isinstance(min, Ten) or isinstance(max, Ten):
        raise Unsupported("clamp with tensor bounds")
    x = input
    if min is not None and max is not None:
        x = binary_op(b, "maximum", x, min, suffix="lo")
    elif min is not None:
        return binary_op(b, "maximum", x, min)
    if max is not None:
        return binary_op(b, "minimum", x, max)
    return x


def _relu6(b, input, inplace=False):
    return clamp(b, input, 0.0, 6.0)


def _hardtanh(b, input, min_val=-1.0, max_val=1.0, inplace=False):
    return clamp(b, input, min_val, max_val)


def _leaky(b, input, negative_slope=0.01, inplace=False):
    if negative_slope > 1:
        raise Unsupported("leaky_relu with slope > 1")
    return binary_op(b, "maximum", input, binary_op(b, "mul", input, negative_slope, suffix="slope"))


def _square(b, input):
    return b.op("mul", [input, input])


def _where(b, condition, input=None, other=None):
    if input is None:
        raise Unsupported("torch.where(cond) (nonzero)")
    if isinstance(input, Ten) and isinstance(other, Ten):
        return b.op("where", [condition, input, other])
    if isinstance(input, Ten) and _is_num(other):
        return b.op("where", [condition, input], {"scalar": scalar(other)})
    if _is_num(input) and isinstance(other, Ten):
        return b.op("where", [condition, other], {"scalar": scalar(input), "scalar_index": 1})
    raise Unsupported("where of two scalars")


def _masked_fill(b, input, mask, value):
    if isinstance(value, Ten):
        return b.op("where", [mask, value, input])
    return b.op("where", [mask, input], {"scalar": scalar(value), "scalar_index": 1})


def _axes(dim, rank):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return sorted(_axis(d, rank) for d in dims)


def _reduce(op):
    def h(b, input, dim=None, keepdim=False, *, dtype=None, out=None):
        if dtype is not None and dtype != input.dtype:
            raise Unsupported(f"{op} with dtype")
        attrs = {"axes": _axes(dim, input.rank), "keepdim": bool(keepdim) or None}
        return b.op(op, [input], attrs)
    return h


def _max(op, binop):
    def h(b, input, dim=None, keepdim=False, *, other=None, out=None):
        if isinstance(dim, Ten):
            return b.op(binop, [input, dim])
        if dim is None:
            return b.op(op, [input])
        raise Unsupported(f"torch.{op[1:]} with dim returns indices")
    return h


def _softmax(op):
    def h(b, input, dim=None, _stacklevel=3, dtype=None, *, half_to_float=None):
        x = input
        if dtype is not None and dtype != x.dtype:
            x = b.op("cast", [x], {"dtype": b.dtype_name(dtype)}, shape=x.shape, dtype=dtype, suffix="cast")
        if dim is None:
            raise Unsupported("softmax without dim")
        return b.op(op, [x], {"axis": _axis(dim, x.rank)})
    return h


def _softmax_mod(b, mod, input):
    return _softmax("softmax")(b, input, mod.dim)


def _log_softmax_mod(b, mod, input):
    return _softmax("log_softmax")(b, input, mod.dim)


def layer_norm(b, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    ins = [input]
    ns = list(normalized_shape) if isinstance(normalized_shape, (list, tuple)) else [normalized_shape]
    if weight is None and bias is not None:
        weight = b.weight(f"{b.fx.name}.ones", torch.ones(ns, dtype=bias.dtype))
    if weight is not None:
        ins.append(weight)
    if bias is not None:
        ins.append(bias)
    attrs = {"eps": float(eps)}
    if len(ns) != 1:
        attrs["normalized_shape"] = [int(d) for d in ns]
    return b.op("layer_norm", ins, attrs)


def _layer_norm_mod(b, mod, input):
    w = param(b, mod, "weight") if mod.weight is not None else None
    bb = param(b, mod, "bias") if mod.bias is not None else None
    return layer_norm(b, input, mod.normalized_shape, w, bb, mod.eps)


def batch_norm(b, input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training or running_mean is None or running_var is None:
        raise Unsupported("batch norm on batch statistics (training mode)")
    c = input.shape[1]
    if weight is None:
        weight = b.weight(f"{b.fx.name}.ones", torch.ones(c, dtype=running_var.dtype))
    if bias is None:
        bias = b.weight(f"{b.fx.name}.zeros", torch.zeros(c, dtype=running_var.dtype))
    return b.op("batch_norm", [input, weight, bias, running_mean, running_var], {"eps": float(eps)})


def _batch_norm_mod(b, mod, input):
    if mod.training or mod.running_mean is None:
        raise Unsupported("batch norm on batch statistics (training mode or no running stats)")
    w = param(b, mod, "weight") if mod.weight is not None else None
    bb = param(b, mod, "bias") if mod.bias is not None else None
    return batch_norm(b, input, param(b, mod, "running_mean"), param(b, mod, "running_var"),
                      w, bb, False, 0.1, mod.eps)


def conv2d(b, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x = input
    kh, kw = weight.shape[2], weight.shape[3]
    dil = _pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        else:   # "same": PyTorch puts the odd element of a total pad at the end
            tot = [dil[0] * (kh - 1), dil[1] * (kw - 1)]
            lo = [t // 2 for t in tot]
            if any(t % 2 for t in tot):
                pads = [lo[1], tot[1] - lo[1], lo[0], tot[0] - lo[0]]
                shape = x.shape[:2] + (x.shape[2] + tot[0], x.shape[3] + tot[1])
                x = b.op("pad", [x], {"pads": pads}, shape=shape, dtype=x.dtype, suffix="pad")
                padding = 0
            else:
                padding = lo
    ins = [x, weight] + ([bias] if bias is not None else [])
    attrs = {"stride": _pair(stride), "padding": _pair(padding), "dilation": dil, "groups": int(groups)}
    return b.op("conv2d", ins, attrs)


def _conv2d_mod(b, mod, input):
    x = input
    pad = mod.padding
    if mod.padding_mode != "zeros":
        if mod.padding_mode == "circular":
            raise Unsupported("circular padding")
        p = list(mod._reversed_padding_repeated_twice)
        shape = x.shape[:2] + (x.shape[2] + p[2] + p[3], x.shape[3] + p[0] + p[1])
        x = b.op("pad", [x], {"pads": p, "mode": mod.padding_mode}, shape=shape, dtype=x.dtype, suffix="pad")
        pad = 0
    bias = param(b, mod, "bias") if mod.bias is not None else None
    return conv2d(b, x, param(b, mod, "weight"), bias, mod.stride, pad, mod.dilation, mod.groups)


def _ntuple(v, n):
    return [int(v)] * n if isinstance(v, int) else [int(x) for x in v]


def _conv_pads(padding, k, dil):
    """Per-axis symmetric padding of conv1d/3d; padding="same" where the total is even."""
    if padding == "valid":
        return [0] * len(k)
    if padding == "same":
        tot = [d * (n - 1) for d, n in zip(dil, k)]
        if any(t % 2 for t in tot):
            raise Unsupported("padding='same' with an even kernel (asymmetric padding)")
        return [t // 2 for t in tot]
    return _ntuple(padding, len(k))


def conv1d(b, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """[N, C, L] as [N, C, 1, L]: conv2d with a 1 x k kernel (reshapes are views)."""
    if input.rank != 3:
        raise Unsupported("conv1d of an unbatched input")
    n, c, l = input.shape
    o, cg, k = weight.shape
    dil = _ntuple(dilation, 1)
    pad = _conv_pads(padding, [k], dil)
    out = _fxshape(b)
    x = reshape_to(b, input, (n, c, 1, l), suffix="2d")
    w = reshape_to(b, weight, (o, cg, 1, k), suffix="w2d")
    y = b.op("conv2d", [x, w] + ([bias] if bias is not None else []),
             {"stride": [1] + _ntuple(stride, 1), "padding": [0] + pad, "dilation": [1] + dil,
              "groups": int(groups)}, shape=(n, o, 1, out[2]), dtype=input.dtype, suffix="conv")
    return reshape_to(b, y, out)


def conv3d(b, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """[N, C, T, H, W]: per kernel frame k, a conv2d of the frames it reads (time folded
    into the batch) by the weight's frame k, summed over k; time padding a pad first."""
    if input.rank != 5:
        raise Unsupported("conv3d of an unbatched input")
    n, c, t, h, w = input.shape
    o, cg, kt, kh, kw = weight.shape
    st, dil = _ntuple(stride, 3), _ntuple(dilation, 3)
    pad = _conv_pads(padding, [kt, kh, kw], dil)
    out = _fxshape(b)
    to, ho, wo = out[2:]
    x = input
    if pad[0]:
        t += 2 * pad[0]
        x = b.op("pad", [x], {"pads": [0, 0, 0, 0, pad[0], pad[0]]}, shape=(n, c, t, h, w),
                 dtype=x.dtype, suffix="tpad")
    x = transpose_perm(b, x, [0, 2, 1, 3, 4], suffix="tfirst")
    acc = None
    for k in range(kt):
        s = k * dil[0]
        xs = slice_axis(b, x, 1, s, s + (to - 1) * st[0] + 1, st[0], suffix=f"t{k}")
        xs = reshape_to(b, xs, (n * to, c, h, w), suffix=f"t{k}.frames")
        wk = slice_axis(b, weight, 2, k, k + 1, 1, suffix=f"w{k}")
        wk = reshape_to(b, wk, (o, cg, kh, kw), suffix=f"w{k}.2d")
        y = b.op("conv2d", [xs, wk] + ([bias] if bias is not None and k == 0 else []),
                 {"stride": st[1:], "padding": pad[1:], "dilation": dil[1:], "groups": int(groups)},
                 shape=(n * to, o, ho, wo), dtype=input.dtype, suffix=f"t{k}.conv")
        acc = y if acc is None else binary_op(b, "add", acc, y, suffix=f"t{k}.sum")
    y = reshape_to(b, acc, (n, to, o, ho, wo), suffix="unfold")
    return transpose_perm(b, y, [0, 2, 1, 3, 4], suffix="cfirst")


def _convnd_mod(f):
    def h(b, mod, input):
        if mod.padding_mode != "zeros":
            raise Unsupported(f"{mod.padding_mode} padding of a {type(mod).__name__}")
        bias = param(b, mod, "bias") if mod.bias is not None else None
        return f(b, input, param(b, mod, "weight"), bias, mod.stride, mod.padding, mod.dilation,
                 mod.groups)
    return h


def _pool1d(b, kind, input, kernel_size, stride, padding, attrs):
    """[N, C, L] as [N, C, 1, L]: the 2-D pool with a 1 x k window."""
    if input.rank != 3:
        raise Unsupported(f"{kind} of an unbatched input")
    k, p = _ntuple(kernel_size, 1), _ntuple(padding, 1)
    st = k if stride is None or stride == [] or stride == () else _ntuple(stride, 1)
    n, c, l = input.shape
    out = _fxshape(b)
    x = reshape_to(b, input, (n, c, 1, l), suffix="2d")
    y = b.op(kind, [x], dict(attrs, kernel=[1] + k, stride=[1] + st, padding=[0] + p),
             shape=(n, c, 1, out[2]), dtype=input.dtype, suffix="pool")
    return reshape_to(b, y, out)


def max_pool1d(b, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        raise Unsupported("max_pool1d with indices")
    return _pool1d(b, "max_pool2d", input, kernel_size, stride, padding,
                   {"dilation": [1] + _ntuple(dilation, 1), "ceil_mode": bool(ceil_mode) or None})


def avg_pool1d(b, input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _pool1d(b, "avg_pool2d", input, kernel_size, stride, padding,
                   {"ceil_mode": bool(ceil_mode) or None,
                    "count_include_pad": None if count_include_pad else False})


def _pool3d(b, kind, input, kernel_size, stride, padding, dilation, ceil_mode, cip):
    """[N, C, T, H, W] separably: the 2-D pool over (H, W) with the frames in the channels,
    then a k x 1 pool over time on [N, C, T, Ho*Wo]. Exact: a max of maxes, and a box's
    count (padding counted or not, ceil_mode's clipped windows) is the product of its
    per-axis counts, so the mean of means is the mean."""
    if input.rank != 5:
        raise Unsupported(f"{kind} of an unbatched 3-D input")
    k, p, d = _ntuple(kernel_size, 3), _ntuple(padding, 3), _ntuple(dilation, 3)
    st = k if stride is None or stride == [] or stride == () else _ntuple(stride, 3)
    n, c, t, h, w = input.shape
    out = _fxshape(b)
    attrs = {"ceil_mode": bool(ceil_mode) or None}
    if kind == "max_pool2d":
        attrs["dilation"] = d[1:]
    else:
        attrs["count_include_pad"] = None if cip else False
    x = reshape_to(b, input, (n, c * t, h, w), suffix="hw")
    x = b.op(kind, [x], dict(attrs, kernel=k[1:], stride=st[1:], padding=p[1:]),
             shape=(n, c * t, out[3], out[4]), dtype=input.dtype, suffix="poolhw")
    x = reshape_to(b, x, (n, c, t, out[3] * out[4]), suffix="t")
    if kind == "max_pool2d":
        attrs["dilation"] = [d[0], 1]
    x = b.op(kind, [x], dict(attrs, kernel=[k[0], 1], stride=[st[0], 1], padding=[p[0], 0]),
             shape=(n, c, out[2], out[3] * out[4]), dtype=input.dtype, suffix="poolt")
    return reshape_to(b, x, out)


def max_pool3d(b, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        raise Unsupported("max_pool3d with indices")
    return _pool3d(b, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(b, input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise Unsupported("avg_pool3d with divisor_override")
    return _pool3d(b, "avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode,
                   count_include_pad)


def linear(b, input, weight, bias=None):
    """x @ W^T (+ bias): matmul with transpose_b, then add."""
    shape = input.shape[:-1] + (weight.shape[0],)
    if bias is None:
        return b.op("matmul", [input, weight], {"transpose_b": True})
    y = b.op("matmul", [input, weight], {"transpose_b": True}, shape=shape, dtype=input.dtype, suffix="mm")
    return b.op("add", [y, bias])


def sdpa(b, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
         enable_gqa=False):
    """F.scaled_dot_product_attention (torch >= 2: dynamo graphs hold it) as our sdpa."""
    if dropout_p or enable_gqa:
        raise Unsupported("sdpa with dropout or grouped-query heads")
    ins = [query, key, value] + ([attn_mask] if attn_mask is not None else [])
    attrs = {"causal": bool(is_causal)} if is_causal else {}
    if scale is not None:
        attrs["scale"] = float(scale)
    return b.op("sdpa", ins, attrs or None)


def _linear_mod(b, mod, input):
    bias = param(b, mod, "bias") if mod.bias is not None else None
    return linear(b, input, param(b, mod, "weight"), bias)


def _matmul(b, input, other, out=None):
    return b.op("matmul", [input, other])


def _addmm(b, input, mat1, mat2, *, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        raise Unsupported("addmm with alpha or beta")
    shape = mat1.shape[:-1] + mat2.shape[-1:]
    y = b.op("matmul", [mat1, mat2], shape=shape, dtype=mat1.dtype, suffix="mm")
    return b.op("add", [y, input])


def max_pool2d(b, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        raise Unsupported("max_pool2d with indices")
    stride = kernel_size if stride is None or stride == [] else stride
    return b.op("max_pool2d", [input], {"kernel": _pair(kernel_size), "stride": _pair(stride),
                                        "padding": _pair(padding), "dilation": _pair(dilation),
                                        "ceil_mode": bool(ceil_mode) or None})


def avg_pool2d(b, input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise Unsupported("avg_pool2d with divisor_override")
    stride = kernel_size if stride is None or stride == [] else stride
    return b.op("avg_pool2d", [input], {"kernel": _pair(kernel_size), "stride": _pair(stride),
                                        "padding": _pair(padding), "ceil_mode": bool(ceil_mode) or None,
                                        "count_include_pad": None if count_include_pad else False})


def _adaptive(kind):
    def h(b, input, output_size, *args):
        if args and any(args):
            raise Unsupported("adaptive pooling with indices")
        out = tuple(_fxshape(b))
        if out == input.shape:
            return input
        if all(d == 1 for d in out[2:]):   # a global pool: a reduction the policies can fuse
            return b.op("mean" if kind == "avg" else "amax", [input],
                        {"axes": list(range(2, input.rank)), "keepdim": True})
        if input.rank == 5:   # dividing windows: the 3-D pool; uneven averages: matmuls
            ins = input.shape[2:]
            if all(i % o == 0 for i, o in zip(ins, out[2:])):
                k = [i // o for i, o in zip(ins, out[2:])]
                return _pool3d(b, f"{kind}_pool2d", input, k, k, 0, 1, False, True)
            if kind == "avg":
                return _resample3d(b, input, [_adaptive_matrix(i, o) for i, o in zip(ins, out[2:])])
            raise Unsupported(f"adaptive max pooling {list(ins)} -> {list(out[2:])} with uneven "
                              "windows")
        if input.rank != 4:
            raise Unsupported(f"adaptive pooling of rank {input.rank} to a size other than 1")
        ih, iw = input.shape[-2:]
        oh, ow = out[-2:]
        if ih % oh == 0 and iw % ow == 0 and input.rank == 4:
            k = [ih // oh, iw // ow]
            return b.op(f"{kind}_pool2d", [input], {"kernel": k, "stride": k})
        if kind == "avg":   # uneven or overlapping windows: linear, so matmuls by averaging matrices
            return _resample(b, input, {2: _adaptive_matrix(ih, oh), 3: _adaptive_matrix(iw, ow)},
                             "pool")
        raise Unsupported(f"adaptive max pooling {ih}x{iw} -> {oh}x{ow} with uneven windows")
    return h


_TopK = collections.namedtuple("topk", "values indices")


def _aten(b, aten, ins, args, shape, dtype, flops, suffix):
    """A custom node the CPU kernels run (attrs.aten, kernels/ops/aten.c)."""
    nbytes = sum(numel(t.shape) * elem_size(t.dtype) for t in ins) + numel(shape) * elem_size(dtype)
    return b.op("custom", ins, {"aten": aten, "args": args, "pattern": "opaque", "flops": flops,
                                "bytes": nbytes}, shape=shape, dtype=dtype, suffix=suffix)


def _topk(b, input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """(values, indices): argsort along dim (stable, so equal values come in index order;
    PyTorch leaves their order open), a slice of the first k, torch.gather of the values.
    sorted=False gives them sorted too (PyTorch leaves that order open as well)."""
    ax = _axis(dim, input.rank)
    n, k = input.shape[ax], int(k)
    if not 1 <= k <= n:
        raise Unsupported(f"topk with k {k} of a dim of size {n}")
    if input.dtype == torch.bool:
        raise Unsupported("topk of a bool tensor")
    order = _aten(b, "argsort.stable", [input],
                  {"dim": ax, "descending": bool(largest), "stable": True}, input.shape,
                  torch.int64, numel(input.shape) * max(1, (n - 1).bit_length()), "argsort")
    idx = slice_axis(b, order, ax, 0, k, suffix="indices")
    shape = idx.shape
    vals = _aten(b, "gather.default", [input, idx], {"dim": ax}, shape, input.dtype, numel(shape),
                 "values")
    return _TopK(vals, idx)


def _flatten(b, input, start_dim=0, end_dim=-1):
    return reshape_to(b, input, _fxshape(b))


def _flatten_mod(b, mod, input):
    return reshape_to(b, input, _fxshape(b))


def _permute(b, input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    return transpose_perm(b, input, dims)


def _transpose(b, input, dim0, dim1):
    perm = list(range(input.rank))
    a, c = _axis(dim0, input.rank), _axis(dim1, input.rank)
    perm[a], perm[c] = perm[c], perm[a]
    return transpose_perm(b, input, perm)


def _t(b, input):
    return input if input.rank < 2 else _transpose(b, input, 0, 1)


def _getattr(b, obj, name, *default):
    if isinstance(obj, tuple) and name in getattr(obj, "_fields", ()):   # topk's .values
        return getattr(obj, name)
    if isinstance(obj, Ten):
        if name == "T":
            return transpose_perm(b, obj, list(reversed(range(obj.rank))))
        if name == "mT":
            return _transpose(b, obj, -2, -1)
        if name in ("data",):
            return obj
    raise Unsupported(f"attribute {name}")


def _cat(b, tensors, dim=0, *, axis=None, out=None):
    if axis is not None:
        dim = axis
    ts = [t for t in tensors if isinstance(t, Ten)]
    if len(ts) != len(tensors):
        raise Unsupported("cat of non-tensors")
    if len(ts) == 1:
        return ts[0]
    return b.op("concat", ts, {"axis": _axis(dim, ts[0].rank)})


def _stack(b, tensors, dim=0, *, out=None):
    r = tensors[0].rank + 1
    d = _axis(dim, r)
    parts = [reshape_to(b, t, t.shape[:d] + (1,) + t.shape[d:], suffix=f"u{i}")
             for i, t in enumerate(tensors)]
    return b.op("concat", parts, {"axis": d})


def _expand(b, input, *sizes):
    shape = _fxshape(b)
    if shape == input.shape:
        return input
    return b.op("expand", [input], {"shape": list(shape)})


def _pieces(b, x, dim, squeeze=False):
    """The FX node's tuple result as slices of x along dim (chunk, split, unbind)."""
    metas = b.fx.meta["tensor_meta"]
    d, start, out = _axis(dim, x.rank), 0, []
    for i, m in enumerate(metas):
        n = 1 if squeeze else m.shape[d]
        piece = slice_axis(b, x, d, start, start + n, 1, suffix=str(i))
        if squeeze:
            piece = reshape_to(b, piece, tuple(m.shape), suffix=f"{i}.sq")
        out.append(piece)
        start += n
    return tuple(out)


def _chunk(b, input, chunks, dim=0):
    return _pieces(b, input, dim)


def _split(b, tensor, split_size_or_sections, dim=0):
    return _pieces(b, tensor, dim)


def _unbind(b, input, dim=0):
    return _pieces(b, input, dim, squeeze=True)


def _getitem(b, obj, idx):
    if not isinstance(obj, Ten):
        return operator.getitem(obj, idx)
    idx = idx if isinstance(idx, tuple) else (idx,)
    tens = [i for i in idx if isinstance(i, Ten)]
    if tens:
        return _take(b, obj, idx, tens)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    x, axis = obj, 0
    for i in idx:
        if i is Ellipsis:
            axis += obj.rank - n_real
        elif i is None:
            continue
        elif isinstance(i, slice):
            x = slice_axis(b, x, axis, i.start, i.stop, 1 if i.step is None else i.step,
                           suffix=f"s{axis}")
            axis += 1
        elif isinstance(i, int):
            j = i % obj.shape[axis]
            x = slice_axis(b, x, axis, j, j + 1, 1, suffix=f"s{axis}")
            axis += 1
        else:
            raise Unsupported(f"index of type {type(i).__name__}")
    return reshape_to(b, x, _fxshape(b))


def _take(b, obj, idx, tens):
    """x[..., t, ...] with one integer tensor t and full slices: gather (numpy.take)."""
    if len(tens) != 1 or tens[0].dtype == torch.bool:
        raise Unsupported("advanced indexing with several or boolean index tensors")
    pos = idx.index(tens[0])
    if any(not (isinstance(i, slice) and i == slice(None)) for k, i in enumerate(idx) if k != pos):
        raise Unsupported("advanced indexing mixed with slicing")
    return b.op("gather", [obj, tens[0]], {"axis": pos})


def _cast(b, input, *args, **kwargs):
    """to / float / type_as ...: a cast when the dtype changes, else nothing."""
    want = b.fx.meta["tensor_meta"].dtype
    if want == input.dtype:
        return input
    return b.op("cast", [input], {"dtype": b.dtype_name(want)})


def _dropout(b, input, p=0.5, training=False, inplace=False):
    if training and p > 0:
        raise Unsupported("dropout in training mode")
    return input


def _stochastic_depth(b, input, p, mode, training=True):
    if training and p > 0:
        raise Unsupported("stochastic depth in training mode")
    return input


def _pad(b, input, pad, mode="constant", value=None):
    if mode == "circular":
        raise Unsupported("circular padding")
    attrs = {"pads": [int(p) for p in pad]}
    if mode != "constant":
        attrs["mode"] = mode
    if value:
        attrs["value"] = scalar(value)
    return b.op("pad", [input], attrs)


def _roll(b, input, shifts, dims=None):
    """torch.roll: per rolled dim, the last `shift` elements then the rest (two slices, a concat)."""
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    x = input
    if dims is None or dims == [] or dims == ():
        if len(shifts) != 1:
            raise Unsupported("roll of the flattened tensor by several shifts")
        x, dims = reshape_to(b, x, (numel(x.shape),), suffix="flat"), [0]
    dims = [dims] if isinstance(dims, int) else list(dims)
    if len(dims) != len(shifts):
        raise Unsupported("roll with as many shifts as dims")
    for k, (s, d) in enumerate(zip(shifts, dims)):
        d = _axis(d, x.rank)
        n = x.shape[d]
        s = int(s) % n if n else 0
        if s == 0:
            continue
        tail = slice_axis(b, x, d, n - s, n, 1, suffix=f"r{k}a")
        head = slice_axis(b, x, d, 0, n - s, 1, suffix=f"r{k}b")
        x = b.op("concat", [tail, head], {"axis": d}, shape=x.shape, dtype=x.dtype, suffix=f"r{k}")
    return reshape_to(b, x, input.shape, suffix="unflat")


def _flip(b, input, *dims):
    """torch.flip: a gather of the reversed indices per flipped dim (slices step forward only)."""
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    x = input
    for k, d in enumerate(dims):
        d = _axis(d, x.rank)
        if x.shape[d] == 1:
            continue
        idx = b.weight(f"{b.fx.name}.idx{d}", torch.arange(x.shape[d] - 1, -1, -1))
        x = b.op("gather", [x, idx], {"axis": d}, shape=x.shape, dtype=x.dtype, suffix=f"f{k}")
    return x


def _normalize(b, input, p=2.0, dim=1, eps=1e-12, out=None):
    """F.normalize: x / max(||x||_p, eps) along dim, for p = 2 (sqrt of a sum of squares)."""
    if p != 2 or out is not None:
        raise Unsupported(f"normalize with p={p}")
    d = _axis(dim, input.rank)
    kshape = input.shape[:d] + (1,) + input.shape[d + 1:]
    sq = b.op("mul", [input, input], shape=input.shape, dtype=input.dtype, suffix="sq")
    n = b.op("sum", [sq], {"axes": [d], "keepdim": True}, shape=kshape, dtype=input.dtype, suffix="sum")
    n = b.op("sqrt", [n], shape=kshape, dtype=input.dtype, suffix="norm")
    n = binary_op(b, "maximum", n, float(eps), suffix="eps")
    return b.op("div", [input, n], shape=input.shape, dtype=input.dtype)


def _setitem(b, obj, idx, value):
    """Reached only for assignment into a computed tensor (fx_trace folds the constant ones)."""
    raise ExportError(f"node {b.fx.name}: item assignment into a computed tensor (an in-place "
                      "write the graph cannot express); write it with torch.where or torch.cat")


def _resize_matrix(n_in, n_out, mode, align_corners, scale):
    """[n_out, n_in] f32 weights of PyTorch's 1-D nearest, linear or cubic resampling.

    scale is PyTorch's source step (in / out, or 1 / scale_factor when one was
    given): out[i] = sum_j A[i, j] in[j]. Weights are computed in float32 as
    aten's CPU kernels do (upsample_nearest / area_pixel_compute_source_index).
    """
    import numpy as np
    a = np.zeros((n_out, n_in), dtype=np.float32)
    f32 = np.float32
    for i in range(n_out):
        if mode == "nearest":
            same = n_in == n_out or n_out == 2 * n_in   # aten's exact shortcuts
            a[i, i if n_in == n_out else i >> 1 if same else
              min(int(np.floor(f32(i) * f32(scale))), n_in - 1)] = 1
            continue
        if n_in == n_out and not align_corners:
            a[i, i] = 1
            continue
        if mode == "bicubic":   # the source index unclamped, the four taps clamped to the edge
            x = (f32(0) if n_out <= 1 else f32(i) * f32((n_in - 1) / (n_out - 1))) if align_corners \
                else f32(scale) * (f32(i) + f32(0.5)) - f32(0.5)
            i0 = int(np.floor(x))
            for j, w in enumerate(_cubic_coeffs(f32(x - f32(i0)), -0.75)):
                a[i, min(max(i0 - 1 + j, 0), n_in - 1)] += w
            continue
        if align_corners:
            x = f32(0) if n_out <= 1 else f32(i) * f32((n_in - 1) / (n_out - 1))
        else:
            x = max(f32(scale) * (f32(i) + f32(0.5)) - f32(0.5), f32(0))
        i0 = min(int(np.floor(x)), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        l1 = min(x - f32(i0), f32(1))
        a[i, i0] += f32(1) - l1
        a[i, i1] += l1
    return torch.from_numpy(a)


def _cubic_coeffs(t, a):
    """aten's get_cubic_upsample_coefficients in float32: the taps at t + 1, t, 1 - t, 2 - t."""
    import numpy as np
    f, a = np.float32, np.float32(a)

    def near(x):
        return ((a + f(2)) * x - (a + f(3))) * x * x + f(1)

    def far(x):
        return ((a * x - f(5) * a) * x + f(8) * a) * x - f(4) * a
    return [far(t + f(1)), near(t), near(f(1) - t), far(f(2) - t)]


def interpolate(b, input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """F.interpolate nearest / linear / bilinear / bicubic: a matmul by a constant resampling matrix
    per resized axis (the last two at most): x @ A^T for the last, A @ x for the one before."""
    if antialias:
        raise Unsupported("interpolate with antialias")
    if mode not in ("nearest", "linear", "bilinear", "bicubic"):
        raise Unsupported(f"interpolate mode {mode!r} (nearest, linear, bilinear and bicubic are "
                          "mapped)")
    out = _fxshape(b)
    nsp = input.rank - 2
    sf = scale_factor
    if sf is not None and not isinstance(sf, (list, tuple)):
        sf = [sf] * nsp
    mats = {}
    for axis in range(2, input.rank):
        n_in, n_out = input.shape[axis], out[axis]
        f = sf[axis - 2] if sf is not None and not recompute_scale_factor else None
        scale = (1.0 / f) if f else n_in / n_out
        mats[axis] = _resize_matrix(n_in, n_out, mode, bool(align_corners), scale)
    return _resample(b, input, mats, "resize")


def _resample(b, input, mats, what):
    """input times a constant matrix A [out, in] along each axis of mats (the last two at most):
    x @ A^T (transpose_b) for the last axis, A @ x for the one before; an identity is skipped."""
    x = input
    for axis in sorted(mats, reverse=True):
        a = mats[axis]
        n_out, n_in = a.shape
        if n_in == n_out and bool((a == torch.eye(n_in)).all()):
            continue
        if axis < input.rank - 2:
            raise Unsupported(f"{what} of an axis before the last two")
        w = b.weight(f"{b.fx.name}.{what}{axis}", a)
        shape = x.shape[:axis] + (n_out,) + x.shape[axis + 1:]
        if axis == input.rank - 1:
            x = b.op("matmul", [x, w], {"transpose_b": True}, shape=shape, dtype=x.dtype,
                     suffix=f"{what}{axis}")
        else:
            x = b.op("matmul", [w, x], shape=shape, dtype=x.dtype, suffix=f"{what}{axis}")
    return x


def _resample3d(b, input, mats):
    """[N, C, T, H, W] times a matrix per spatial axis: (H, W) as _resample does on
    [N, C*T, H, W], then time as A @ x on [N, C, T, Ho*Wo]."""
    n, c, t, h, w = input.shape
    out = _fxshape(b)
    x = reshape_to(b, input, (n, c * t, h, w), suffix="hw")
    x = _resample(b, x, {2: mats[1], 3: mats[2]}, "pool")
    x = reshape_to(b, x, (n, c, t, out[3] * out[4]), suffix="t")
    x = _resample(b, x, {2: mats[0]}, "poolt")
    return reshape_to(b, x, out)


def _adaptive_matrix(n_in, n_out):
    """[n_out, n_in] f32: row i averages PyTorch's adaptive window [floor(i n_in / n_out),
    ceil((i + 1) n_in / n_out))."""
    a = torch.zeros(n_out, n_in)
    for i in range(n_out):
        s, e = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        a[i, s:e] = 1.0 / (e - s)
    return a


def _upsample_mod(b, mod, input):
    return interpolate(b, input, mod.size, mod.scale_factor, mod.mode, mod.align_corners,
                       getattr(mod, "recompute_scale_factor", None))


def _embedding(b, input, weight, padding_idx=None, max_norm=None, *args):
    if max_norm is not None:
        raise Unsupported("embedding with max_norm (renormalises the table)")
    return b.op("embedding", [weight, input])


def _embedding_mod(b, mod, input):
    if mod.max_norm is not None:
        raise Unsupported("embedding with max_norm")
    return b.op("embedding", [param(b, mod, "weight"), input])


def _mha(b, mod, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
         average_attn_weights=True, is_causal=False):
    import fx_attention
    return fx_attention.multihead(b, mod, query, key, value, key_padding_mask, need_weights,
                                  attn_mask, average_attn_weights)


def custom_flops(b, node, args, kwargs, ins, metas):
    """(FLOPs, how) for a custom node: exact for convolutions, else one per output element."""
    if node.op == "call_module":
        mod = b.gm.get_submodule(node.target)
        if isinstance(mod, nn.modules.conv._ConvNd):
            k = numel(mod.kernel_size) * mod.in_channels // mod.groups
            return 2 * k * numel(metas[0].shape), "2 x kernel x output elements"
    return sum(numel(m.shape) for m in metas), "one per output element"


def _mod(h):
    return lambda b, mod, *a, **k: h(b, *a, **k)


MODULES = {
    nn.Conv2d: _conv2d_mod, nn.Conv1d: _convnd_mod(conv1d), nn.Conv3d: _convnd_mod(conv3d),
    nn.Linear: _linear_mod,
    nn.BatchNorm1d: _batch_norm_mod, nn.BatchNorm2d: _batch_norm_mod, nn.BatchNorm3d: _batch_norm_mod,
    nn.LayerNorm: _layer_norm_mod,
    nn.ReLU: _mod(_unary("relu")), nn.SiLU: _mod(_unary("silu")), nn.Sigmoid: _mod(_unary("sigmoid")),
    nn.Tanh: _mod(_unary("tanh")), nn.Hardswish: _mod(_unary("hardswish")),
    nn.Hardsigmoid: _mod(_unary("hardsigmoid")),
    nn.GELU: lambda b, mod, x: _gelu(b, x, mod.approximate),
    nn.ReLU6: _mod(_relu6),
    nn.Hardtanh: lambda b, mod, x: clamp(b, x, mod.min_val, mod.max_val),
    nn.LeakyReLU: lambda b, mod, x: _leaky(b, x, mod.negative_slope),
    nn.Softmax: _softmax_mod, nn.LogSoftmax: _log_softmax_mod,
    nn.MaxPool2d: lambda b, mod, x: max_pool2d(b, x, mod.kernel_size, mod.stride, mod.padding,
                                               mod.dilation, mod.ceil_mode, mod.return_indices),
    nn.AvgPool2d: lambda b, mod, x: avg_pool2d(b, x, mod.kernel_size, mod.stride, mod.padding,
                                               mod.ceil_mode, mod.count_include_pad,
                                               mod.divisor_override),
    nn.MaxPool1d: lambda b, mod, x: max_pool1d(b, x, mod.kernel_size, mod.stride, mod.padding,
                                               mod.dilation, mod.ceil_mode, mod.return_indices),
    nn.AvgPool1d: lambda b, mod, x: avg_pool1d(b, x, mod.kernel_size, mod.stride, mod.padding,
                                               mod.ceil_mode, mod.count_include_pad),
    nn.MaxPool3d: lambda b, mod, x: max_pool3d(b, x, mod.kernel_size, mod.stride, mod.padding,
                                               mod.dilation, mod.ceil_mode, mod.return_indices),
    nn.AvgPool3d: lambda b, mod, x: avg_pool3d(b, x, mod.kernel_size, mod.stride, mod.padding,
                                               mod.ceil_mode, mod.count_include_pad,
                                               mod.divisor_override),
    nn.AdaptiveAvgPool1d: lambda b, mod, x: _adaptive("avg")(b, x, mod.output_size),
    nn.AdaptiveAvgPool3d: lambda b, mod, x: _adaptive("avg")(b, x, mod.output_size),
    nn.AdaptiveMaxPool3d: lambda b, mod, x: _adaptive("max")(b, x, mod.output_size, mod.return_indices),
    nn.AdaptiveAvgPool2d: lambda b, mod, x: _adaptive("avg")(b, x, mod.output_size),
    nn.AdaptiveMaxPool2d: lambda b, mod, x: _adaptive("max")(b, x, mod.output_size, mod.return_indices),
    nn.Flatten: _flatten_mod, nn.Unflatten: _flatten_mod,
    nn.Identity: _mod(alias),
    nn.Dropout: _mod(alias), nn.Dropout1d: _mod(alias), nn.Dropout2d: _mod(alias),
    nn.Dropout3d: _mod(alias), nn.AlphaDropout: _mod(alias),
    nn.Embedding: _embedding_mod,
    nn.Upsample: _upsample_mod,   # and UpsamplingNearest2d, UpsamplingBilinear2d (subclasses)
    nn.MultiheadAttention: _mha,
}

FUNCTIONS = {
    operator.add: _binary("add"), operator.sub: _binary("sub"), operator.mul: _binary("mul"),
    operator.truediv: _binary("div"), operator.pow: _binary("pow"), operator.matmul: _matmul,
    operator.neg: _unary("neg"), operator.getitem: _getitem, builtins.getattr: _getattr,
    # in place on a tensor (dynamo records ResNet's `out += identity` so): the
    # FX node's name stands for the new value, as with the plain operator
    operator.iadd: _binary("add"), operator.isub: _binary("sub"), operator.imul: _binary("mul"),
    operator.itruediv: _binary("div"),
    torch.add: _binary("add"), torch.sub: _binary("sub"), torch.subtract: _binary("sub"),
    torch.mul: _binary("mul"), torch.multiply: _binary("mul"), torch.div: _binary("div"),
    torch.divide: _binary("div"), torch.true_divide: _binary("div"), torch.pow: _binary("pow"),
    torch.maximum: _binary("maximum"), torch.minimum: _binary("minimum"), torch.rsub: _rsub,
    torch.max: _max("amax", "maximum"), torch.min: _max("amin", "minimum"),
    torch.amax: _reduce("amax"), torch.amin: _reduce("amin"),
    torch.matmul: _matmul, torch.bmm: _matmul, torch.mm: _matmul, torch.addmm: _addmm,
    torch.relu: _unary("relu"), F.relu: _unary("relu"), torch.sigmoid: _unary("sigmoid"),
    F.sigmoid: _unary("sigmoid"), torch.tanh: _unary("tanh"), F.tanh: _unary("tanh"),
    F.silu: _unary("silu"), F.hardswish: _unary("hardswish"), F.hardsigmoid: _unary("hardsigmoid"),
    F.gelu: _gelu, F.relu6: _relu6, F.hardtanh: _hardtanh, F.leaky_relu: _leaky,
    torch.clamp: clamp, torch.clip: clamp,
    torch.exp: _unary("exp"), torch.log: _unary("log"), torch.neg: _unary("neg"),
    torch.abs: _unary("abs"), torch.sqrt: _unary("sqrt"), torch.rsqrt: _unary("rsqrt"),
    torch.reciprocal: _unary("reciprocal"), torch.sin: _unary("sin"), torch.cos: _unary("cos"),
    torch.erf: _unary("erf"), torch.square: _square,
    torch.where: _where, torch.masked_fill: _masked_fill,
    torch.mean: _reduce("mean"), torch.sum: _reduce("sum"),
    torch.softmax: _softmax("softmax"), F.softmax: _softmax("softmax"),
    torch.log_softmax: _softmax("log_softmax"), F.log_softmax: _softmax("log_softmax"),
    F.layer_norm: layer_norm, F.batch_norm: batch_norm, F.linear: linear, F.conv2d: conv2d,
    F.conv1d: conv1d, F.conv3d: conv3d, F.max_pool1d: max_pool1d, F.avg_pool1d: avg_pool1d,
    F.adaptive_avg_pool1d: _adaptive("avg"), F.adaptive_avg_pool3d: _adaptive("avg"),
    F.max_pool2d: max_pool2d, F.avg_pool2d: avg_pool2d,
    F.adaptive_avg_pool2d: _adaptive("avg"), F.adaptive_max_pool2d: _adaptive("max"),
    F.max_pool3d: max_pool3d, F.avg_pool3d: avg_pool3d, F.adaptive_max_pool3d: _adaptive("max"),
    torch.flatten: _flatten, torch.reshape: _view, torch.squeeze: _view, torch.unsqueeze: _view,
    torch.unflatten: _view,
    torch.permute: _permute, torch.transpose: _transpose, torch.swapaxes: _transpose, torch.t: _t,
    torch.cat: _cat, torch.concat: _cat, torch.stack: _stack, torch.broadcast_to: _expand,
    torch.chunk: _chunk, torch.split: _split, torch.unbind: _unbind,
    F.dropout: _dropout, F.dropout2d: _dropout, F.alpha_dropout: _dropout,
    F.pad: _pad, F.embedding: _embedding, F.interpolate: interpolate, F.upsample: interpolate,
    torch.clone: alias, torch.detach: alias, torch.roll: _roll, operator.setitem: _setitem,
    torch.flip: _flip, F.normalize: _normalize, torch.topk: _topk, torch.fliplr: lambda b, input: _flip(b, input, [1]),
    torch.flipud: lambda b, input: _flip(b, input, [0]),
}

if hasattr(F, "scaled_dot_product_attention"):   # torch >= 2.0
    FUNCTIONS[F.scaled_dot_product_attention] = sdpa
# The builtins behind F's Python wrappers, which a dynamo graph may record
# instead (same arguments).
for _fn, _h in ((getattr(torch, "max_pool2d", None), max_pool2d),
                (getattr(torch._C._nn, "avg_pool2d", None), avg_pool2d),
                (getattr(torch._C._nn, "adaptive_avg_pool2d", None), _adaptive("avg"))):
    if _fn is not None:
        FUNCTIONS.setdefault(_fn, _h)

try:   # torchvision's stochastic_depth is an fx.wrap'ed function: one call node
    from torchvision.ops import stochastic_depth as _tv_sd
    FUNCTIONS[_tv_sd] = _stochastic_depth
except ImportError:
    pass

METHODS = {
    "add": _binary("add"), "add_": _binary("add"), "sub": _binary("sub"), "sub_": _binary("sub"),
    "mul": _binary("mul"), "mul_": _binary("mul"), "div": _binary("div"), "div_": _binary("div"),
    "pow": _binary("pow"), "maximum": _binary("maximum"), "minimum": _binary("minimum"),
    "max": _max("amax", "maximum"), "min": _max("amin", "minimum"),
    "amax": _reduce("amax"), "amin": _reduce("amin"),
    "matmul": _matmul, "bmm": _matmul, "mm": _matmul,
    "relu": _unary("relu"), "relu_": _unary("relu"), "sigmoid": _unary("sigmoid"),
    "sigmoid_": _unary("sigmoid"), "tanh": _unary("tanh"), "exp": _unary("exp"),
    "log": _unary("log"), "neg": _unary("neg"), "abs": _unary("abs"), "sqrt": _unary("sqrt"),
    "rsqrt": _unary("rsqrt"), "reciprocal": _unary("reciprocal"), "sin": _unary("sin"),
    "cos": _unary("cos"), "erf": _unary("erf"), "square": _square,
    "clamp": clamp, "clip": clamp, "clamp_": clamp,
    "masked_fill": _masked_fill, "masked_fill_": _masked_fill,
    "mean": _reduce("mean"), "sum": _reduce("sum"),
    "softmax": _softmax("softmax"), "log_softmax": _softmax("log_softmax"),
    "flatten": _flatten, "view": _view, "reshape": _view, "view_as": _view, "reshape_as": _view,
    "squeeze": _view, "unsqueeze": _view, "unflatten": _view,
    "contiguous": alias, "clone": alias, "detach": alias, "roll": _roll, "flip": _flip,
    "topk": _topk,
    "permute": _permute, "transpose": _transpose, "swapaxes": _transpose, "t": _t,
    "expand": _expand, "expand_as": _expand,
    "chunk": _chunk, "split": _split, "unbind": _unbind,
    "to": _cast, "type": _cast, "type_as": _cast, "float": _cast, "half": _cast,
    "bfloat16": _cast, "double": _cast, "long": _cast, "int": _cast, "bool": _cast,
}


# ---- what computes with sizes: positions, masks, comparisons ----
# Factories (fx_trace.py traces them as nodes) fold into weights unless
# their size is a symbolic dim (fx_symdims.py); then they map here.

def _arange(b, start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
            pin_memory=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step)):
        raise Unsupported("arange with non-integer start, end or step")
    attrs = {"end": end}
    if start:
        attrs["start"] = start
    if step != 1:
        attrs["step"] = step
    want = b.fx.meta["tensor_meta"].dtype
    if want != torch.int64:
        attrs["dtype"] = b.dtype_name(want)
    return b.op("arange", [], attrs)


def _fill(value):
    def h(b, *size, fill_value=None, out=None, dtype=None, layout=None, device=None,
          pin_memory=None, requires_grad=False):
        """ones / zeros / full: one value as a weight, expanded to the size."""
        v = fill_value if value is None else value
        if value is None and fill_value is None and len(size) == 2:
            size, v = size[0], size[1]
        if not _is_num(v):
            raise Unsupported("a fill value that is not a number")
        shape = _fxshape(b)
        cell = b.weight(f"{b.fx.name}.value", torch.full((1,) * len(shape), v,
                                                           dtype=b.fx.meta["tensor_meta"].dtype))
        return _expand(b, cell)
    return h


def _trilu(upper):
    def h(b, input, diagonal=0, *, out=None):
        return b.op("trilu", [input], {"upper": upper, "diagonal": int(diagonal)})
    return h


_MIRROR = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


def _compare(cmp):
    def h(b, input, other, *, out=None):
        if isinstance(input, Ten) and isinstance(other, Ten):
            return b.op("compare", [input, other], {"cmp": cmp})
        if isinstance(input, Ten) and _is_num(other):
            return b.op("compare", [input], {"cmp": cmp, "scalar": scalar(other)})
        if _is_num(input) and isinstance(other, Ten):
            return b.op("compare", [other], {"cmp": _MIRROR[cmp], "scalar": scalar(input)})
        raise Unsupported(f"{cmp} of {type(input).__name__} and {type(other).__name__}")
    return h


def _truth(b, x, suffix):
    """x as bool: itself, or x != 0."""
    if x.dtype == torch.bool:
        return x
    return b.op("compare", [x], {"cmp": "ne", "scalar": 0}, shape=x.shape, dtype=torch.bool,
                suffix=suffix)


def _logical_not(b, input, *, out=None):
    """not x: x == 0 (a bool is 0 or 1)."""
    return b.op("compare", [input], {"cmp": "eq", "scalar": 0})


def _bitwise_not(b, input, *, out=None):
    if input.dtype != torch.bool:
        raise Unsupported(f"bitwise not of a {input.dtype} tensor (mapped on bool only)")
    return _logical_not(b, input)


def _logical(kind, bitwise):
    """and / or / xor of bools: minimum, maximum, compare ne (a Python bool as the scalar);
    logical_* of other dtypes compare with 0 first, bitwise ones of them stay custom."""
    ours = {"and": "minimum", "or": "maximum", "xor": "compare"}[kind]

    def h(b, input, other, *, out=None):
        if not isinstance(input, Ten):
            input, other = other, input
        if not isinstance(input, Ten) or not (isinstance(other, Ten) or _is_num(other)):
            raise Unsupported(f"{kind} of {type(input).__name__} and {type(other).__name__}")
        if bitwise and (input.dtype != torch.bool or
                        (isinstance(other, Ten) and other.dtype != torch.bool) or
                        (not isinstance(other, Ten) and not isinstance(other, bool))):
            raise Unsupported(f"bitwise {kind} of integers (mapped on bools only)")
        attrs = {"cmp": "ne"} if kind == "xor" else {}
        a = _truth(b, input, "a")
        if isinstance(other, Ten):
            return b.op(ours, [a, _truth(b, other, "b")], attrs or None)
        return b.op(ours, [a], dict(attrs, scalar=int(bool(other))))
    return h


FUNCTIONS.update({
    operator.invert: _bitwise_not, torch.logical_not: _logical_not,
    torch.bitwise_not: _bitwise_not,
    operator.and_: _logical("and", True), operator.or_: _logical("or", True),
    operator.xor: _logical("xor", True),
    torch.bitwise_and: _logical("and", True), torch.bitwise_or: _logical("or", True),
    torch.bitwise_xor: _logical("xor", True),
    torch.logical_and: _logical("and", False), torch.logical_or: _logical("or", False),
    torch.logical_xor: _logical("xor", False),
})
METHODS.update({
    "logical_not": _logical_not, "bitwise_not": _bitwise_not, "__invert__": _bitwise_not,
    "logical_and": _logical("and", False), "logical_or": _logical("or", False),
    "logical_xor": _logical("xor", False), "bitwise_and": _logical("and", True),
    "bitwise_or": _logical("or", True), "bitwise_xor": _logical("xor", True),
    "__and__": _logical("and", True), "__or__": _logical("or", True),
    "__xor__": _logical("xor", True),
})

FUNCTIONS.update({
    torch.arange: _arange, torch.ones: _fill(1), torch.zeros: _fill(0), torch.full: _fill(None),
    torch.triu: _trilu(True), torch.tril: _trilu(False),
    operator.lt: _compare("lt"), operator.le: _compare("le"), operator.gt: _compare("gt"),
    operator.ge: _compare("ge"), operator.eq: _compare("eq"), operator.ne: _compare("ne"),
    torch.lt: _compare("lt"), torch.le: _compare("le"), torch.gt: _compare("gt"),
    torch.ge: _compare("ge"), torch.eq: _compare("eq"), torch.ne: _compare("ne"),
})
METHODS.update({
    "triu": _trilu(True), "tril": _trilu(False),
    "lt": _compare("lt"), "le": _compare("le"), "gt": _compare("gt"), "ge": _compare("ge"),
    "eq": _compare("eq"), "ne": _compare("ne"),
})
