"""fx_trace.py: torch.fx tracing with concrete values, for export_torch.py.

symbolic_trace alone fails on the first `n, c, h, w = x.shape` (torchvision's
ViT does exactly that): a Proxy has no shape. ConcreteTracer runs the module
on the real example inputs while it traces, so every Proxy also carries the
value it stands for. Shapes, sizes, dtypes, len() and iteration then answer
from that value and become plain Python ints in the graph (folded, as an
export for one input shape wants them); a tensor used as a Python bool
(data-dependent control flow) is specialised to the example and warned about.

Modules torch.fx treats as leaves (those of torch.nn) stay single call_module
nodes; export_torch.py maps them (nn.MultiheadAttention it decomposes).
Functions a library marked with torch.fx.wrap (torchvision's
shifted_window_attention, _patch_merging_pad, ...) are traced through, as
dynamo inlines them, unless the caller keeps them whole (keep_wrapped: those
the mapping has a rule for). Item assignment into a tensor computed from
constants and shapes (Swin's attention mask: new_zeros, then
mask[a:b, c:d] = k) runs at trace time and stays a folded constant;
assignment into anything else is refused, as the graph has no in-place ops.

While it traces, the tracer records what the mapping needs on each node,
as ShapeProp would: meta['tensor_meta'] (shapes and dtypes of the result),
meta['const'] (the value, for nodes that compute from parameters and
constants only: folded into weights) and meta['value'] (a non-tensor
result). Its final values are the module's own outputs on the example
inputs, so one forward pass serves tracing, shapes and the reference
outputs. verify() interprets the GraphModule with torch.fx's ShapeProp and
compares its outputs with those: the graph we map reproduces the module.
"""
import operator
import warnings

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp, _extract_tensor_metadata

from fx_graph import ExportError, leaves, tree_map

_MISSING = object()
# Tensor attributes that answer from the example value instead of a graph node.
_CONCRETE_ATTRS = {"shape", "dtype", "ndim", "device", "is_cuda", "layout",
                   "requires_grad", "is_sparse", "is_quantized"}
# Methods whose result depends on self's dtype and device only, not its values.
_FACTORY_METHODS = {"new_zeros", "new_ones", "new_full"}


def _leaf_value(a):
    if isinstance(a, ConcreteAttribute):
        return getattr(_value_of(a.root), a.attr)
    if isinstance(a, ConcreteProxy):
        v = a.__dict__.get("_value", _MISSING)
        if v is _MISSING:
            raise RuntimeError(f"no example value for {a.node.format_node()}")
        return v
    return a


def _value_of(a):
    """The concrete value behind a traced argument (Proxy, attribute, nesting)."""
    return tree_map(_leaf_value, a)


class ConcreteProxy(torch.fx.Proxy):
    """A Proxy that knows its example value: shape queries fold to ints."""

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        v = self.__dict__.get("_value", _MISSING)
        if k in _CONCRETE_ATTRS and isinstance(v, torch.Tensor):
            return getattr(v, k)
        return ConcreteAttribute(self, k)

    def size(self, dim=None):
        v = _value_of(self)
        return v.size() if dim is None else v.size(dim)

    def dim(self):
        return _value_of(self).dim()

    def numel(self):
        return _value_of(self).numel()

    nelement = numel

    def __len__(self):
        return len(_value_of(self))

    def __iter__(self):
        return (self[i] for i in range(len(_value_of(self))))

    def __bool__(self):
        v = _value_of(self)
        if isinstance(v, torch.Tensor):
            warnings.warn(f"{self.node.name}: a tensor decides control flow; "
                          "the export follows the example input's branch")
        return bool(v)

    def __int__(self):
        return int(_value_of(self))

    def __index__(self):
        return int(_value_of(self))

    def __float__(self):
        return float(_value_of(self))

    def __setitem__(self, idx, value):
        # torch 1.13's Proxy has no __setitem__; later ones record operator.setitem.
        self.tracer.create_proxy("call_function", operator.setitem, (self, idx, value), {})


class ConcreteAttribute(torch.fx.proxy.Attribute, ConcreteProxy):
    """x.attr before we know whether it is called (a method) or used (x.T)."""

    def __init__(self, root, attr):
        torch.fx.proxy.Attribute.__init__(self, root, attr)

    @property
    def node(self):
        if self._node is None:
            p = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {})
            self._node = p.node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ConcreteTracer(torch.fx.Tracer):
    """torch.fx.Tracer whose proxies carry the example values (see the note above)."""

    def __init__(self, inputs, leaf_types=(), keep_wrapped=()):
        super().__init__()
        self.inputs = inputs            # placeholder name -> example value
        self.leaf_types = tuple(leaf_types)
        self.keep_wrapped = set(keep_wrapped)
        self._computing = 0             # > 0 while running a leaf on real values
        self._leaf_forward = None
        self._arg_depth, self._arg_value = 0, None
        self.outputs = None             # the module's outputs on the example inputs

    def proxy(self, node):
        return ConcreteProxy(node, self)

    def is_leaf_module(self, m, qualname):
        return isinstance(m, self.leaf_types) or super().is_leaf_module(m, qualname)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self._computing:
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def call_module(self, m, forward, args, kwargs):
        if self._computing:
            return forward(*args, **kwargs)
        self._leaf_forward = forward
        return super().call_module(m, forward, args, kwargs)

    def trace(self, root, concrete_args=None):
        # torch.fx patches every fx.wrap'ed function into a leaf while it
        # traces; leave out those not kept so that their bodies are traced.
        st = torch.fx._symbolic_trace
        saved = list(st._wrapped_fns_to_patch)
        st._wrapped_fns_to_patch[:] = [(d, n) for d, n in saved if d.get(n) in self.keep_wrapped]
        try:
            return super().trace(root, concrete_args)
        finally:
            st._wrapped_fns_to_patch[:] = saved

    def to_bool(self, obj):
        return ConcreteProxy.__bool__(obj)

    def iter(self, obj):
        return ConcreteProxy.__iter__(obj)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        rv = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        if not isinstance(rv, ConcreteProxy):
            return rv
        if kind == "placeholder":
            if target not in self.inputs:
                raise RuntimeError(f"forward parameter {target!r} has no example input")
            rv._value = self.inputs[target]
            self._record(rv.node, rv._value)
            return rv
        self._computing += 1
        try:
            a, kw = _value_of(args), _value_of(kwargs)
            if kind == "call_function":
                rv._value = target(*a, **kw)
            elif kind == "call_method":
                rv._value = getattr(a[0], target)(*a[1:], **kw)
            elif kind == "call_module":
                rv._value = self._leaf_forward(*a, **kw)
            elif kind == "get_attr":
                rv._value = self._attr(target)
        finally:
            self._computing -= 1
        self._record(rv.node, rv._value)
        return rv

    def _attr(self, target):
        """The root's attribute at a dotted path, bypassing the tracer's own getattr."""
        self._computing += 1
        try:
            v = self.root
            for atom in target.split("."):
                v = getattr(v, atom)
            return v
        finally:
            self._computing -= 1

    def _record(self, node, v):
        """Fill node.meta as ShapeProp would (see the note above)."""
        meta = _map_tensors(v, _extract_tensor_metadata)
        if meta is not v or isinstance(v, torch.Tensor):
            node.meta["tensor_meta"] = meta
        if not _holds_tensor(v):
            node.meta["value"] = v
        ins = node.all_input_nodes
        if (node.op == "get_attr" or (ins and all("const" in i.meta for i in ins))
                or (not ins and node.op == "call_function" and isinstance(v, torch.Tensor))):
            node.meta["const"] = v
        elif node.op == "call_method" and node.target in _FACTORY_METHODS and \
                all("const" in i.meta for i in ins[1:]):
            node.meta["const"] = v
        elif node.target is operator.setitem and "const" in ins[0].meta:
            # The assignment changed the constant in place; a value that is not
            # constant would need an in-place op the graph does not have.
            if not all("const" in i.meta for i in ins[1:]):
                raise ExportError(f"node {node.name}: item assignment of a computed value into a "
                                  "tensor (an in-place write the graph cannot express); write it "
                                  "with torch.where or torch.cat")
            node.meta["const"] = v

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        if kind == "get_attr" and "const" not in node.meta:
            # Tensors create_arg turns into get_attr (buffers, constants) skip create_proxy.
            self._record(node, self._attr(target))
        if kind == "output":
            self.outputs = self._arg_value
        return node

    def create_arg(self, a):
        # The last top-level argument converted before the output node is
        # the module's result: keep its value (its proxies die right after).
        self._arg_depth += 1
        try:
            r = super().create_arg(a)
        finally:
            self._arg_depth -= 1
        if self._arg_depth == 0:
            self._arg_value = _value_of(a)
        return r


# Factories called with plain ints (torch.arange(s), torch.ones(s, s)) run
# eagerly and reach the graph as nameless tensor constants; in a symbolic
# trace they are nodes, which fold like any constant unless their size is
# a symbolic dim (fx_symdims.py).
_FACTORIES = ("arange", "ones", "zeros", "full")


class _Factories:
    """torch's factory functions patched to record call_function nodes while tracing."""

    def __init__(self, tracer):
        self.tracer, self.saved = tracer, {}

    def _wrap(self, orig):
        tracer = self.tracer

        def wrapper(*args, **kwargs):
            if tracer._computing or kwargs.get("out") is not None:
                return orig(*args, **kwargs)
            return tracer.create_proxy("call_function", orig, args, kwargs)
        return wrapper

    def __enter__(self):
        for name in _FACTORIES:
            self.saved[name] = getattr(torch, name)
            setattr(torch, name, self._wrap(self.saved[name]))

    def __exit__(self, *exc):
        for name, orig in self.saved.items():
            setattr(torch, name, orig)


class _Nothing:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


def trace(module, inputs, concrete_args=None, leaf_types=(), symbolic=False, keep_wrapped=()):
    """(GraphModule of module traced on inputs (dict name -> tensor), its outputs there).

    symbolic (an export with --dim) records what may compute with a size as
    nodes: factory calls and buffer reads (self.cos[:s]), which otherwise run
    eagerly and reach the graph as tensor constants. keep_wrapped: the
    torch.fx.wrap'ed functions to keep as single call nodes.
    """
    tracer = ConcreteTracer(inputs, leaf_types, keep_wrapped)
    tracer.proxy_buffer_attributes = symbolic
    before = set(vars(module))
    with torch.no_grad(), (_Factories(tracer) if symbolic else _Nothing()):
        graph = tracer.trace(module, concrete_args)
    name = module.__class__.__name__
    gm = torch.fx.GraphModule(tracer.root, graph, name)
    # The tensor constants torch.fx stored on the module now live in gm;
    # left on the module, a second trace would number its own differently.
    for k in set(vars(module)) - before:
        if k.startswith("_tensor_constant"):
            delattr(module, k)
    return gm, tracer.outputs


def _holds_tensor(v):
    return bool(leaves(v, torch.Tensor))


def _map_tensors(v, f):
    return tree_map(lambda x: f(x) if isinstance(x, torch.Tensor) else x, v) if _holds_tensor(v) else v


def verify(gm, args, outputs):
    """None if ShapeProp's run of gm on args gives outputs, else what differs."""
    with torch.no_grad():
        got = ShapeProp(gm).propagate(*args)
    for i, (a, b) in enumerate(zip(leaves(got, torch.Tensor), leaves(outputs, torch.Tensor))):
        if a.shape != b.shape or not torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
            return f"output {i} of the traced graph differs from the module's"
    return None
