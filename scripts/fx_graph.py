"""fx_graph.py: the graph export_torch.py builds: tensors, nodes, weights.

Ten is one of our tensors as the FX mapping sees it (name, shape, torch
dtype); Builder collects the nodes, declares every tensor with its shape and
dtype (so `fuseeng check` compares our inference with PyTorch's) and keeps
the weights the nodes use. Handlers raise Unsupported to turn a call into a
custom node, ExportError for input the export must refuse.
"""
import math

import torch

INF = 3.4028235e38     # how fuseeng.model/1 writes an infinite scalar

DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.int64: "i64", torch.int32: "i32", torch.int8: "i8", torch.bool: "bool"}


class ExportError(Exception):
    """Bad input: the message names the FX node and what to change."""


class Unsupported(Exception):
    """A handler cannot map this call; it becomes a custom node."""


class Ten:
    """One of our tensors: its name, shape (tuple of ints) and torch dtype."""

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        return f"Ten({self.name}, {list(self.shape)}, {self.dtype})"


def scalar(v):
    """A Python number as a JSON scalar attribute (infinities as fuseeng writes them)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v):
            raise Unsupported("a NaN scalar")
        if math.isinf(v):
            return INF if v > 0 else -INF
    return v


class Builder:
    """Our graph under construction: nodes, declared tensors, weights used."""

    def __init__(self, gm):
        self.gm = gm
        self.nodes = []
        self.tensors = {}        # name -> {"shape", "dtype", "kind"}
        self.weights = {}        # name -> torch.Tensor (kind weight)
        self._sources = {}       # name -> the tensor object it was made from
        self.names = set()
        self.warnings = []
        self.fx = None           # the FX node being mapped (names derive from it)
        self.customs = 0

    def fresh(self, base):
        name, i = base, 1
        while name in self.names:
            i += 1
            name = f"{base}.{i}"
        self.names.add(name)
        return name

    def declare(self, name, shape, dtype, kind=None):
        if dtype not in DTYPES:
            raise ExportError(f"node {self.fx.name if self.fx else name}: tensor {name} has dtype "
                              f"{dtype}, which fuseeng.model/1 has no type for "
                              f"({', '.join(DTYPES.values())}); cast it in the module")
        if any(d == 0 for d in shape):
            raise ExportError(f"node {self.fx.name if self.fx else name}: tensor {name} has "
                              f"shape {list(shape)} with no elements; fuseeng tensors are non-empty")
        t = {"shape": [int(d) for d in shape], "dtype": DTYPES[dtype]}
        if kind:
            t["kind"] = kind
        self.tensors[name] = t

    def dtype_name(self, dtype):
        if dtype not in DTYPES:
            raise ExportError(f"node {self.fx.name}: dtype {dtype} has no fuseeng type "
                              f"({', '.join(DTYPES.values())})")
        return DTYPES[dtype]

    def weight(self, name, value):
        """A weight tensor holding value, named name (or name.2 ... when taken)."""
        if name in self.weights and self._sources.get(name) is value:
            return Ten(name, value.shape, value.dtype)
        name = self.fresh(name)
        self._sources[name] = value
        self.declare(name, value.shape, value.dtype, "weight")
        self.weights[name] = value.detach()
        return Ten(name, value.shape, value.dtype)

    def op(self, op, inputs, attrs=None, shape=None, dtype=None, suffix=None, declare=True):
        """Add node op(inputs) and return its output; shape/dtype default to the FX node's."""
        meta = self.fx.meta.get("tensor_meta")
        if shape is None:
            shape = meta.shape
        if dtype is None:
            dtype = meta.dtype if meta is not None and hasattr(meta, "dtype") else inputs[0].dtype
        base = self.fx.name if suffix is None else f"{self.fx.name}.{suffix}"
        name = self.fresh(base)
        node = {"name": name, "op": op, "inputs": [t.name for t in inputs], "outputs": [name]}
        if attrs:
            node["attrs"] = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(node)
        if declare:
            self.declare(name, shape, dtype)
        return Ten(name, shape, dtype)

    def warn(self, msg):
        self.warnings.append(msg)




def numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def elem_size(dtype):
    return torch.empty((), dtype=dtype).element_size()


def tree_map(f, v):
    """v with f applied to every leaf of its lists, tuples, dicts and slices."""
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(tree_map(f, x) for x in v)
    if isinstance(v, dict):
        return {k: tree_map(f, x) for k, x in v.items()}
    if isinstance(v, slice):
        return slice(tree_map(f, v.start), tree_map(f, v.stop), tree_map(f, v.step))
    return f(v)


def leaves(v, kind):
    """The leaves of v (nested lists, tuples, dicts) that are instances of kind, in order."""
    if isinstance(v, kind):
        return [v]
    if isinstance(v, (list, tuple)):
        return [x for e in v for x in leaves(e, kind)]
    if isinstance(v, dict):
        return [x for e in v.values() for x in leaves(e, kind)]
    return []
