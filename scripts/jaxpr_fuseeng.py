"""jaxpr_fuseeng.py: a flattened jaxpr as a fuseeng.model/1 graph (no JAX needed).

    convert(name, source, inputs, eqns, outputs) -> (model, nodes_of_eq, warnings)

jax_truth.py flattens a jaxpr (calls such as pjit and custom_jvp_call
inlined) into plain records, so this mapping runs and is tested anywhere:
  inputs   [(var, shape, dtype, kind)]   kind "input" or "weight"
  eqns     [Eqn(prim, params, ins, outs)] ins: var names or Lit(value);
           outs: [(var, shape, dtype)]
  outputs  [var]
Equation i becomes nodes named fe_<i>_<primitive> (a second node of it gets
a suffix: fe_3_broadcast_in_dim.r), the name jax_truth.py also gives its
name scope, so that the optimized HLO's op_names lead back to them
(hlo_fusions.equations); nodes_of_eq[i] lists them. An equation that
computes nothing (a copy, a convert to the same type, a reshape to the same
shape) is an alias: no node. A literal operand of a binary op is its
`scalar` attribute; one elsewhere, and every constvar, is a weight.
A reduction read only by a reshape that puts its reduced axes back as 1s
(jnp.mean's and a norm's broadcast_in_dim) is one reduction with keepdim:
the reshape node goes (XLA makes it a bitcast), so a kernel around the
reduction holds no data movement. A reshape that only puts 1s in front of a
shape (a weight [768] broadcast as [1, 768]) and is read only by
broadcasting elementwise ops of at least its rank is no node either: the
readers broadcast the tensor itself the same way. Primitives with no
fuseeng op become `custom` nodes (opaque), with a
warning: honest, and still comparable. A float64 value (a jaxpr made with
x64 on, or a Python float JAX widened) is written as f32 with a note, as
the ONNX importer does; a convert between f64 and f32 is then an alias.
"""
import re
from collections import namedtuple

Eqn = namedtuple("Eqn", "prim params ins outs")


class Lit:
    """A literal operand."""

    def __init__(self, value, shape=(), dtype="f32"):
        self.value, self.shape, self.dtype = value, tuple(shape), dtype


DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "int64": "i64",
          "int8": "i8", "bool": "bool", "f32": "f32", "f16": "f16", "bf16": "bf16", "i32": "i32",
          "i64": "i64", "i8": "i8", "float64": "f32", "f64": "f32"}
NARROWED = {"float64", "f64"}   # no f64 in fuseeng: written as f32 with a note (as the ONNX importer does)
UNARY = {"exp": "exp", "log": "log", "neg": "neg", "abs": "abs", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "tanh": "tanh", "logistic": "sigmoid", "sin": "sin", "cos": "cos", "erf": "erf"}
BINARY = {"add": "add", "add_any": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "maximum",
          "min": "minimum", "pow": "pow"}
REDUCE = {"reduce_sum": "sum", "reduce_max": "amax", "reduce_min": "amin"}
ALIASES = {"copy", "copy_p", "reduce_precision"}


class ConvertError(Exception):
    """A jaxpr this mapping cannot write (the message names the equation)."""


def dtype_name(d):
    s = str(d)
    if s not in DTYPES:
        raise ConvertError(f"dtype {s} has no fuseeng type ({', '.join(sorted(set(DTYPES.values())))})")
    return DTYPES[s]


class _B:
    def __init__(self):
        self.tensors, self.nodes, self.warnings = {}, [], []
        self.env = {}            # var -> (tensor name, shape, dtype)
        self.nconst = 0

    def declare(self, name, shape, dtype, kind=None):
        t = {"shape": [int(d) for d in shape], "dtype": dtype_name(dtype)}
        if str(dtype) in NARROWED:
            self.warnings.append(f"note: {name} is {dtype}; written as f32 (fuseeng has no f64)")
        if kind and kind != "activation":
            t["kind"] = kind
        self.tensors[name] = t

    def val(self, x):
        """(name, shape, dtype) of an operand; a literal becomes a weight."""
        if isinstance(x, Lit):
            name = f"const_{self.nconst}"
            self.nconst += 1
            self.declare(name, x.shape, x.dtype, "weight")
            return name, tuple(x.shape), x.dtype
        if x not in self.env:
            raise ConvertError(f"operand {x} is used before it is defined")
        return self.env[x]


def equation_nodes(model):
    """nodes_of_eq read back from a model convert wrote, by its node names
    (fe_<i>_<primitive>): {i: [node names]}, in model order."""
    out = {}
    for n in model["nodes"]:
        m = re.match(r"fe_(\d+)_", n["name"])
        if m:
            out.setdefault(int(m.group(1)), []).append(n["name"])
    return out


def _node(b, i, e, op, ins, attrs, shape, dtype, suffix=None):
    name = f"fe_{i}_{e.prim}" + (f".{suffix}" if suffix else "")
    n = {"name": name, "op": op, "inputs": list(ins), "outputs": [name]}
    if attrs:
        n["attrs"] = attrs
    b.nodes.append(n)
    b.declare(name, shape, dtype)
    return name


def _bcast_in_dim(b, i, e, src, out):
    name, shape, dtype = src
    target = tuple(out[1])
    dims = e.params.get("broadcast_dimensions", ())
    r = [1] * len(target)
    for k, d in enumerate(dims):
        r[d] = shape[k]
    cur = name
    if tuple(r) != tuple(shape):
        cur = _node(b, i, e, "reshape", [cur], {"shape": r}, r, dtype, None if tuple(r) == target else "r")
    if tuple(r) != target:
        cur = _node(b, i, e, "expand", [cur], {"shape": list(target)}, target, dtype)
    return cur


def _dot(b, i, e, a, w, out):
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lc, rc, lb, rb = list(lc), list(rc), list(lb), list(rb)
    la, lw, nb = len(a[1]), len(w[1]), len(lb)
    attrs = {}
    ok = len(lc) == 1 and len(rc) == 1 and lb == list(range(nb)) and rb == list(range(nb))
    if ok and nb == 0 and lw == 2:          # [..., M, K] @ [K, N]: torch.matmul's broadcasting
        ok = lc[0] == la - 1 or (la == 2 and lc[0] == 0)
        if la == 2 and lc[0] == 0:
            attrs["transpose_a"] = True
        if rc[0] == 1:
            attrs["transpose_b"] = True
    elif ok and nb > 0 and la == nb + 2 and lw == nb + 2:
        if lc[0] == nb:
            attrs["transpose_a"] = True
        if rc[0] == nb + 1:
            attrs["transpose_b"] = True
    else:
        ok = False
    if not ok:
        return None
    return _node(b, i, e, "matmul", [a[0], w[0]], attrs, out[1], out[2])


def _conv(b, i, e, x, w, out):
    p = e.params
    dn = p.get("dimension_numbers")
    specs = [tuple(getattr(dn, k, ())) for k in ("lhs_spec", "rhs_spec", "out_spec")]
    pads = [tuple(q) for q in p.get("padding", ())]
    if (any(s != (0, 1, 2, 3) for s in specs) or any(d != 1 for d in p.get("lhs_dilation", (1, 1)))
            or p.get("batch_group_count", 1) != 1 or len(pads) != 2 or any(lo != hi for lo, hi in pads)):
        return None
    attrs = {"stride": list(p["window_strides"]), "padding": [lo for lo, _ in pads],
             "dilation": list(p.get("rhs_dilation", (1, 1))), "groups": int(p.get("feature_group_count", 1))}
    return _node(b, i, e, "conv2d", [x[0], w[0]], attrs, out[1], out[2])


def _custom(b, i, e, ins, outs):
    names = [f"fe_{i}_{e.prim}" if k == 0 else f"fe_{i}_{e.prim}.{k}" for k in range(len(outs))]
    b.nodes.append({"name": names[0], "op": "custom", "inputs": [x[0] for x in ins], "outputs": names,
                    "attrs": {"pattern": "opaque", "jax": e.prim}})
    for n, o in zip(names, outs):
        b.declare(n, o[1], o[2])
    b.warnings.append(f"equation {i} ({e.prim}) has no fuseeng op: written as custom")
    return names


def _one(b, i, e):
    """Our tensor name(s) for equation e's outputs, adding its nodes."""
    prim, out = e.prim, e.outs[0]
    lits = [k for k, x in enumerate(e.ins) if isinstance(x, Lit)]
    if prim in BINARY and len(e.ins) == 2 and len(lits) == 1 and not e.ins[lits[0]].shape:
        k = lits[0]
        t = b.val(e.ins[1 - k])
        return [_node(b, i, e, BINARY[prim], [t[0]], {"scalar": float(e.ins[k].value), "scalar_index": k},
                      out[1], out[2])]
    ins = [b.val(x) for x in e.ins]
    if prim in ALIASES or (prim == "convert_element_type" and dtype_name(ins[0][2]) == dtype_name(out[2])) \
            or (prim in ("reshape", "squeeze", "expand_dims") and tuple(ins[0][1]) == tuple(out[1])):
        return [ins[0][0]]
    if prim in UNARY:
        return [_node(b, i, e, UNARY[prim], [ins[0][0]], None, out[1], out[2])]
    if prim in BINARY:
        return [_node(b, i, e, BINARY[prim], [x[0] for x in ins], None, out[1], out[2])]
    if prim in REDUCE:
        return [_node(b, i, e, REDUCE[prim], [ins[0][0]], {"axes": [int(a) for a in e.params["axes"]],
                                                           "keepdim": False}, out[1], out[2])]
    if prim == "integer_pow":
        y = int(e.params["y"])
        if y == 2:
            return [_node(b, i, e, "mul", [ins[0][0], ins[0][0]], None, out[1], out[2])]
        return [_node(b, i, e, "pow", [ins[0][0]], {"scalar": float(y)}, out[1], out[2])]
    if prim == "square":
        return [_node(b, i, e, "mul", [ins[0][0], ins[0][0]], None, out[1], out[2])]
    if prim == "convert_element_type":
        return [_node(b, i, e, "cast", [ins[0][0]], {"dtype": dtype_name(out[2])}, out[1], out[2])]
    if prim in ("reshape", "squeeze", "expand_dims"):
        return [_node(b, i, e, "reshape", [ins[0][0]], {"shape": list(out[1])}, out[1], out[2])]
    if prim == "broadcast_in_dim":
        return [_bcast_in_dim(b, i, e, ins[0], out)]
    if prim == "transpose":
        return [_node(b, i, e, "transpose", [ins[0][0]], {"perm": list(e.params["permutation"])},
                      out[1], out[2])]
    if prim == "select_n" and len(ins) == 3:   # which ? cases[1] : cases[0]
        return [_node(b, i, e, "where", [ins[0][0], ins[2][0], ins[1][0]], None, out[1], out[2])]
    if prim == "concatenate":
        return [_node(b, i, e, "concat", [x[0] for x in ins], {"axis": int(e.params["dimension"])},
                      out[1], out[2])]
    if prim == "slice" and not any(s not in (None, 1) for s in (e.params.get("strides") or ())):
        cur, shape = ins[0][0], list(ins[0][1])
        axes = [(a, s, l) for a, (s, l) in enumerate(zip(e.params["start_indices"], e.params["limit_indices"]))
                if s != 0 or l != shape[a]]
        for k, (a, s, l) in enumerate(axes):
            shape[a] = l - s
            cur = _node(b, i, e, "slice", [cur], {"axis": a, "start": int(s), "end": int(l)}, list(shape),
                        out[2], None if k == len(axes) - 1 else f"a{a}")
        return [cur]
    if prim == "dot_general":
        n = _dot(b, i, e, ins[0], ins[1], out)
        if n:
            return [n]
    if prim == "conv_general_dilated":
        n = _conv(b, i, e, ins[0], ins[1], out)
        if n:
            return [n]
    return _custom(b, i, e, ins, e.outs)


def _readers(b):
    """{tensor name: [nodes reading it]}."""
    out = {}
    for n in b.nodes:
        for x in n["inputs"]:
            out.setdefault(x, []).append(n)
    return out


def _remove(b, gone, rename):
    """Drop the nodes named in gone; their readers read rename[t] for t."""
    if gone:
        b.nodes = [n for n in b.nodes if n["name"] not in gone]
        for n in b.nodes:
            n["inputs"] = [rename.get(x, x) for x in n["inputs"]]


def _fold_keepdims(b, outs):
    """Reductions read only by a reshape back to their kept shape take
    keepdim and the reshape goes (see the note); returns the names gone and
    outs with the reshapes' outputs renamed."""
    readers = _readers(b)
    gone, rename = set(), {}
    for n in b.nodes:
        if n["op"] not in REDUCE.values() or n["attrs"].get("keepdim"):
            continue
        out, rs = n["outputs"][0], readers.get(n["outputs"][0], [])
        if out in outs or len(rs) != 1 or rs[0]["op"] != "reshape":
            continue
        src = b.tensors[n["inputs"][0]]["shape"]
        axes = {a % len(src) for a in n["attrs"]["axes"]}
        kept = [1 if a in axes else d for a, d in enumerate(src)]
        if rs[0]["attrs"]["shape"] != kept:
            continue
        n["attrs"]["keepdim"] = True
        b.tensors[out]["shape"] = kept
        gone.add(rs[0]["name"])
        rename[rs[0]["outputs"][0]] = out
    _remove(b, gone, rename)
    return gone, [rename.get(o, o) for o in outs]


def _drop_leading_ones(b, outs):
    """Reshapes that only put 1s in front, read only by broadcasting
    elementwise ops of at least their rank, go (see the note); returns the
    names gone."""
    rank_of = {n["outputs"][0]: len(b.tensors[n["outputs"][0]]["shape"]) for n in b.nodes}
    readers = _readers(b)
    elementwise = set(BINARY.values()) | {"where"}
    gone, rename = set(), {}
    for n in b.nodes:
        if n["op"] != "reshape" or n["outputs"][0] in outs:
            continue
        src, dst = b.tensors[n["inputs"][0]]["shape"], n["attrs"]["shape"]
        lead = len(dst) - len(src)
        if lead <= 0 or dst[lead:] != src or any(d != 1 for d in dst[:lead]):
            continue
        rs = readers.get(n["outputs"][0], [])
        if rs and all(r["op"] in elementwise and rank_of[r["outputs"][0]] >= len(dst) for r in rs):
            gone.add(n["name"])
            rename[n["outputs"][0]] = n["inputs"][0]
    _remove(b, gone, rename)
    return gone


def convert(name, source, inputs, eqns, outputs):
    """(model dict, {equation index: [our node names]}, warnings); see the note above."""
    b = _B()
    for var, shape, dtype, kind in inputs:
        tname = str(var)
        b.declare(tname, shape, dtype, kind)
        b.env[var] = (tname, tuple(shape), dtype)
    nodes_of = {}
    for i, e in enumerate(eqns):
        before = len(b.nodes)
        try:
            names = _one(b, i, e)
        except ConvertError as x:
            raise ConvertError(f"equation {i} ({e.prim}): {x}")
        except (KeyError, TypeError, ValueError, IndexError) as x:
            raise ConvertError(f"equation {i} ({e.prim}): params not understood: {x!r}")
        for (var, shape, dtype), tname in zip(e.outs, names):
            b.env[var] = (tname, tuple(shape), dtype)
        nodes_of[i] = [n["name"] for n in b.nodes[before:]]
    outs = []
    for v in outputs:
        t = b.val(v)[0]
        if t in outs or t not in {o for n in b.nodes for o in n["outputs"]}:
            raise ConvertError(f"output {v} is an input, a weight or returned twice: not a graph output "
                               "fuseeng can name; return computed values once")
        outs.append(t)
    gone, outs = _fold_keepdims(b, outs)
    gone |= _drop_leading_ones(b, outs)
    nodes_of = {i: [x for x in names if x not in gone] for i, names in nodes_of.items()}
    used = {x for n in b.nodes for x in n["inputs"]} | set(outs)
    tensors = {k: v for k, v in b.tensors.items() if k in used or v.get("kind") == "input"
               or any(k in n["outputs"] for n in b.nodes)}
    model = {"format": "fuseeng.model/1", "name": name, "source": source, "tensors": tensors,
             "nodes": b.nodes, "outputs": outs}
    return model, nodes_of, b.warnings
