"""fx_to_fuseeng.py: a traced torch.fx GraphModule as a fuseeng.model/1 graph.

The graph comes from fx_trace.py with node.meta filled (tensor_meta for every
tensor, const for what computes from parameters only, value for Python
results). Each FX node maps to zero or more of our nodes:

  placeholder            a graph input, under the FX name
  get_attr / constants   a weight under the parameter's qualified name
                         (layer1.0.conv1.weight); anything computed from
                         weights alone is folded into a weight named by the
                         FX node, as torch.onnx.export's constant folding does
  call_module            by the module's class (Conv2d, Linear, ...)
  call_function/method   by the function or method name (add, permute, ...)
  views of one tensor    Identity, Dropout, contiguous, same-shape reshapes:
                         no node, the FX name is an alias of its input

A handler takes the mapped arguments bound like the torch call's own (so
positional and keyword spellings both work) and returns the mapped result: a
Ten (one of our tensors), a Python value, or a tuple/list of those. What no
handler maps, or a handler refuses (Unsupported), becomes a `custom` node
whose outputs carry ShapeProp's shapes, with a FLOP and byte estimate and a
warning naming it. Every tensor an FX node produces is declared with
ShapeProp's shape and dtype, so `fuseeng check` compares our inference with
what PyTorch computed.
"""
import math
import torch

import fx_handlers as H
from torch.fx.passes.shape_prop import TensorMetadata

from fx_graph import Builder, ExportError, Ten, Unsupported, elem_size, leaves, numel, tree_map

def _bind_fx(b, node, env):
    """The FX node's args/kwargs with every FX node replaced by its mapped value."""
    def m(a):
        return env[a] if isinstance(a, torch.fx.Node) else a
    return tree_map(m, node.args), tree_map(m, node.kwargs)


def _leaves(v):
    return leaves(v, Ten)


def _metas(meta):
    """Flattened TensorMetadata of a node's result."""
    return leaves(meta, TensorMetadata)


def _describe(gm, node):
    if node.op == "call_module":
        return f"call_module {type(gm.get_submodule(node.target)).__name__} ({node.target})"
    if node.op == "call_method":
        return f"call_method {node.target}"
    t = node.target
    return f"call_function {getattr(t, '__module__', '') or ''}.{getattr(t, '__name__', t)}".replace("_operator.", "operator.")


def _json_arg(v, place):
    """A call argument as JSON: a tensor as {"input": k} (its place among the
    node's inputs), a number, string, bool or None as itself (inf and nan as
    strings, as the aten args do), a list as a list, anything else its str()."""
    if isinstance(v, Ten):
        return {"input": place[id(v)]}
    if isinstance(v, (list, tuple)):
        return [_json_arg(x, place) for x in v]
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _custom(b, node, args, kwargs, why):
    """An honest custom node for what we cannot map (see the note above).

    So that a kernel registered for it (docs/kernels.md) can compute it,
    attrs.call records the call's arguments, and a module kept whole takes
    its own parameters and buffers as inputs after the call's tensors
    (attrs.call.weights names them, relative to the module).
    """
    ins = list(_leaves((args, kwargs)))
    place = {id(t): k for k, t in enumerate(ins)}
    call = {"args": [_json_arg(a, place) for a in args],
            "kwargs": {k: _json_arg(v, place) for k, v in kwargs.items()}}
    if node.op == "call_module":
        mod = b.gm.get_submodule(node.target)
        own = list(mod.named_parameters()) + list(mod.named_buffers())
        call["weights"] = [n for n, _ in own]
        ins += [b.weight(f"{node.target}.{n}", t) for n, t in own]
    metas = _metas(node.meta.get("tensor_meta"))
    if not metas:
        raise ExportError(f"node {node.name} ({_describe(b.gm, node)}) returns no tensor and "
                          f"cannot be mapped: {why}")
    outs = [b.fresh(node.name if i == 0 else f"{node.name}.{i}") for i in range(len(metas))]
    nbytes = sum(numel(t.shape) * elem_size(t.dtype) for t in ins)
    nbytes += sum(numel(m.shape) * elem_size(m.dtype) for m in metas)
    flops, how = H.custom_flops(b, node, args, kwargs, ins, metas)
    attrs = {"pattern": "opaque", "flops": int(flops), "bytes": int(nbytes),
             "torch": _describe(b.gm, node), "call": call}
    b.nodes.append({"name": outs[0], "op": "custom", "inputs": [t.name for t in ins],
                    "outputs": outs, "attrs": attrs})
    tens = []
    for name, m in zip(outs, metas):
        b.declare(name, m.shape, m.dtype)
        tens.append(Ten(name, m.shape, m.dtype))
    b.customs += 1
    b.warn(f"node {node.name} ({_describe(b.gm, node)}) has no fuseeng op ({why}): "
           f"written as custom, flops {int(flops)} ({how}), bytes {int(nbytes)}")
    # Rebuild the result's structure with the custom outputs in place of tensors.
    it = iter(tens)
    def rebuild(meta):
        if hasattr(meta, "shape") and hasattr(meta, "dtype"):
            return next(it)
        if isinstance(meta, (list, tuple)):
            return type(meta)(rebuild(x) for x in meta)
        return meta
    return rebuild(node.meta.get("tensor_meta"))


def _handler(gm, node):
    if node.op == "call_module":
        mod = gm.get_submodule(node.target)
        for cls in type(mod).__mro__:
            h = H.MODULES.get(cls)
            if h:
                return lambda b, *a, **k: h(b, mod, *a, **k)
        return None
    if node.op == "call_method":
        return H.METHODS.get(node.target)
    return H.FUNCTIONS.get(node.target)


def convert(gm, name, source, root=None, params=None, origins=None):
    """(model dict, weights dict name -> tensor, warnings) for a traced, recorded gm of root.

    params maps placeholder names that stand for parameters or buffers (a
    dynamo graph lifts them into inputs) to (weight name, tensor): they
    become weights. origins, a dict, receives each of our node names -> the
    FX node it was made from (inductor_truth.py maps kernels through it).
    """
    b = Builder(gm)
    params = params or {}
    b.root = root if root is not None else gm
    env = {}
    inputs, outputs = [], []
    for node in gm.graph.nodes:
        b.fx = node
        if node.op == "placeholder" and node.name in params:
            wname, value = params[node.name]
            node.meta["const"] = value
            env[node] = b.weight(wname, value)
        elif node.op == "placeholder":
            meta = node.meta.get("tensor_meta")
            if meta is None:
                raise ExportError(f"forward parameter {node.name} is not a tensor")
            b.names.add(node.name)
            b.declare(node.name, meta.shape, meta.dtype, "input")
            env[node] = Ten(node.name, meta.shape, meta.dtype)
            inputs.append(node.name)
        elif node.op == "output":
            outputs = list(_leaves(_bind_fx(b, node, env)[0]))
        elif "const" in node.meta:
            env[node] = _const(b, node)
        else:
            args, kwargs = _bind_fx(b, node, env)
            h = _handler(gm, node)
            try:
                if h is None:
                    raise Unsupported("no mapping")
                env[node] = h(b, *args, **kwargs)
            except Unsupported as e:
                env[node] = _custom(b, node, args, kwargs, str(e))
            except TypeError as e:
                # A signature we did not expect: keep the node rather than guess.
                env[node] = _custom(b, node, args, kwargs, f"arguments not understood: {e}")
    made = [n["name"] for n in b.nodes]   # named after their FX node (Builder.op, _custom)
    out_names = _name_outputs(b, outputs, inputs)
    if origins is not None:
        for fx_name, n in zip(made, b.nodes):
            origins[n["name"]] = fx_name.split(".")[0]
    model = {"format": "fuseeng.model/1", "name": name, "source": source,
             "tensors": b.tensors, "nodes": b.nodes, "outputs": out_names}
    _drop_unused(b, model)
    return model, b.weights, b.warnings


def _const(b, node):
    """A folded constant: a weight (tensors) or the Python value itself."""
    v = node.meta["const"]
    if isinstance(v, torch.Tensor):
        if node.op != "get_attr":
            return b.weight(node.name, v)
        if node.target.startswith("_tensor_constant"):
            return b.weight(_buffer_named(b.root, v) or node.target, v)
        return b.weight(node.target, v)
    if isinstance(v, (list, tuple)):
        return type(v)(b.weight(f"{node.name}.{i}", x) if isinstance(x, torch.Tensor) else x
                       for i, x in enumerate(v))
    return v


def _buffer_named(root, t):
    """The parameter or buffer a traced tensor constant is an unchanged view of, if any.

    Slicing a buffer by a length folded from x.shape (self.cos[:s]) runs at
    trace time and reaches the graph as _tensor_constantN; when it covers
    the whole buffer, the buffer's own name says more.
    """
    for name, p in list(root.named_parameters()) + list(root.named_buffers()):
        if (p.shape == t.shape and p.dtype == t.dtype and p.stride() == t.stride()
                and p.data_ptr() == t.data_ptr()):
            return name
    return None


def _name_outputs(b, outputs, inputs):
    """Graph outputs are called output (one) or output_0, output_1, ... (several)."""
    if not outputs:
        raise ExportError("the module returns no tensor")
    names = ["output"] if len(outputs) == 1 else [f"output_{i}" for i in range(len(outputs))]
    produced = {o for n in b.nodes for o in n["outputs"]}
    rename, taken = {}, set()
    for t, want in zip(outputs, names):
        if want in b.names and want not in produced:
            raise ExportError(f"a weight or input is called {want!r}, the name of the graph output")
        if t.name in produced and t.name not in taken and t.name not in inputs:
            rename[t.name] = want
            taken.add(t.name)
        else:   # an input, a weight, or a tensor returned twice: copy it
            b.fx = type("N", (), {"name": want, "meta": {}})()
            b.nodes.append({"name": want, "op": "reshape", "inputs": [t.name],
                            "outputs": [want], "attrs": {"shape": list(t.shape)}})
            b.declare(want, t.shape, t.dtype)
    for n in b.nodes:
        n["inputs"] = [rename.get(x, x) for x in n["inputs"]]
        n["outputs"] = [rename.get(x, x) for x in n["outputs"]]
        if n["name"] in rename:
            n["name"] = rename[n["name"]]
    for old, new in rename.items():
        b.tensors[new] = b.tensors.pop(old)
    return names


def _drop_unused(b, model):
    """Keep only weights and declared activations some node or output uses."""
    used = set(model["outputs"])
    for n in model["nodes"]:
        used.update(n["inputs"])
        used.update(n["outputs"])
    for name in list(b.tensors):
        t = b.tensors[name]
        if t.get("kind") != "input" and name not in used:
            del b.tensors[name]
            b.weights.pop(name, None)
