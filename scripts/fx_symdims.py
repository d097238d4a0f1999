"""fx_symdims.py: symbolic dims through the FX export (export_torch.py --dim).

The tracer (fx_trace.py) runs the module on example inputs, so sizes reach
the graph as plain ints: S=16 everywhere S was. To know which ints are S,
the module is traced once more per dim with only that dim changed (16 to
15, or the next of 17, 14, 18 that the module takes): an int that is the dim's value in both traces is the dim, and is
written as its name wherever the model format takes a dim name (tensor
shapes, reshape and expand shapes, slice bounds, arange's start and end).

Constants computed from a size (torch.arange(s), torch.full((s, s),
-inf).triu(1), self.cos[:s]) would be folded into weights of the export's
size; the ones whose value changes with the dim are traced as computations
instead (unfold), which the handlers map to arange, trilu, compare, slice.

What changes with a dim but is not the dim itself (s // 2, 2 * s, a length
computed from the data) cannot be written with a name: it keeps the
export's value, with a warning naming the node, so the model holds at the
export's value only there. A reshape keeps such a size as its one -1, and
an activation's declared shape is left out (our inference derives it).
"""
import torch

_NAMED = {("reshape", "shape"), ("expand", "shape"), ("slice", "start"), ("slice", "end"),
          ("arange", "start"), ("arange", "end")}


def other_values(v):
    """The second trace's values to try for a dim exported at v, in order."""
    return [w for w in (v - 1, v + 1, v - 2, v + 2) if w > 1]


def _same(a, c):
    if isinstance(a, torch.Tensor) or isinstance(c, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(c, torch.Tensor)):
            return False
        if a.shape != c.shape or a.dtype != c.dtype:
            return False
        if a.is_floating_point():
            return bool(((a == c) | (a.isnan() & c.isnan())).all())
        return torch.equal(a, c)
    if isinstance(a, (list, tuple)) and isinstance(c, (list, tuple)):
        return len(a) == len(c) and all(_same(x, y) for x, y in zip(a, c))
    return type(a) is type(c) and a == c


def _structure(gm):
    return [(n.name, n.op, str(n.target)) for n in gm.graph.nodes]


def unfold(gm, alts, warn):
    """Drop meta['const'] where a folded value changes with a dim (see the note above).

    alts maps dim -> (value, other value, GraphModule traced at the other
    value); a dim whose trace has another structure is removed from alts,
    with a warning. Every GraphModule is changed alike.
    """
    mine = _structure(gm)
    for d in list(alts):
        v, v2, gm2 = alts[d]
        if _structure(gm2) != mine:
            first = next((f"{a[0]} against {b[0]}" for a, b in zip(mine, _structure(gm2)) if a != b),
                         "a different number of nodes")
            warn(f"--dim {d}: the module traced at {d}={v2} runs other code than at {d}={v} "
                 f"({first}): {d} is not kept symbolic and the model holds at {d}={v} only")
            del alts[d]
    others = [{n.name: n for n in g.graph.nodes} for _, _, g in alts.values()]
    for n in gm.graph.nodes:
        if "const" not in n.meta:
            continue
        moved = [d for d, o in zip(alts, others) if not _same(n.meta["const"], o[n.name].meta.get("const"))]
        if not moved:
            continue
        if n.op == "get_attr":
            d = moved[0]
            warn(f"node {n.name} (a tensor constant) changes with {d} but holds no computation "
                 f"fuseeng can repeat: folded to its value at {d}={alts[d][0]}; the model holds at "
                 f"{d}={alts[d][0]} only there")
            continue
        n.meta.pop("const")
        for o in others:
            o[n.name].meta.pop("const", None)


def _leaves_walk(a, cs, path, f):
    """a with f(path, a, [c, ...]) at every number leaf, cs the same spot in the other models."""
    if isinstance(a, list):
        if not all(isinstance(c, list) and len(c) == len(a) for c in cs):
            return f(path, a, cs)
        return [_leaves_walk(x, [c[i] for c in cs], path + (i,), f) for i, x in enumerate(a)]
    if isinstance(a, dict):
        return {k: _leaves_walk(x, [c.get(k) for c in cs], path + (k,), f) for k, x in a.items()}
    return f(path, a, cs)


def _structure_of(model):
    return [(n["name"], n["op"], n["inputs"], n["outputs"], sorted(n.get("attrs", {})))
            for n in model["nodes"]]


def merge(model, weights, alts, warn):
    """Write the dims into model (see the note above); alts: dim -> (v, v2, model2, weights2)."""
    mine = _structure_of(model)
    for d in list(alts):
        v, v2, m2, _ = alts[d]
        if _structure_of(m2) != mine or m2["outputs"] != model["outputs"]:
            warn(f"--dim {d}: the graph mapped at {d}={v2} has other nodes than at {d}={v}: "
                 f"{d} is not kept symbolic and the model holds at {d}={v} only")
            del alts[d]
    if not alts:
        return
    dims = list(alts)

    def changes(a, cs):
        return [(d, c) for d, c in zip(dims, cs) if c != a]

    def named(a, ch):
        """The dim name for a number that changed as ch says, or None."""
        if len(ch) == 1 and isinstance(a, int) and not isinstance(a, bool):
            d, c = ch[0]
            if a == alts[d][0] and c == alts[d][1]:
                return d
        return None

    def says(ch, a):
        return " and ".join(f"{c} at {d}={alts[d][1]}" for d, c in ch) + f" (it is {a} at " + \
            ", ".join(f"{d}={alts[d][0]}" for d, _ in ch) + ")"

    # Nodes: their attributes.
    alt_nodes = [alts[d][2]["nodes"] for d in dims]
    for i, n in enumerate(model["nodes"]):
        for key in list(n.get("attrs", {})):
            can_name = (n["op"], key) in _NAMED
            loose = []

            def leaf(path, a, cs, n=n, key=key, can_name=can_name, loose=loose):
                ch = changes(a, cs)
                if not ch:
                    return a
                d = named(a, ch) if can_name else None
                if d:
                    return d
                loose.append((path, a, ch))
                return a
            n["attrs"][key] = _leaves_walk(n["attrs"][key], [an[i].get("attrs", {}).get(key)
                                                             for an in alt_nodes], (), leaf)
            if n["op"] == "reshape" and key == "shape" and len(loose) == 1 \
                    and -1 not in n["attrs"][key] and len(loose[0][0]) == 1:
                n["attrs"][key][loose[0][0][0]] = -1   # the one size no name says
                continue
            for path, a, ch in loose:
                spot = "".join(f"[{p}]" for p in path)
                ds = ", ".join(f"{d}={alts[d][0]}" for d, _ in ch)
                warn(f"node {n['name']} ({n['op']}): attrs.{key}{spot} changes with "
                     f"{' and '.join(d for d, _ in ch)} but is not a dim: it is {says(ch, a)}; "
                     f"folded to the export's value {a}, so the model holds at {ds} only there")
    # Tensors: declared shapes; weights must not change.
    producer = {o: n for n in model["nodes"] for o in n["outputs"]}
    for name, t in list(model["tensors"].items()):
        others = [alts[d][2]["tensors"].get(name) for d in dims]
        shape, bad = [], False
        for k, a in enumerate(t["shape"]):
            cs = [o["shape"][k] if o and len(o["shape"]) == len(t["shape"]) else None for o in others]
            ch = changes(a, cs)
            d = named(a, ch) if ch else None
            shape.append(a if not ch else d)
            bad |= bool(ch) and d is None
        if t.get("kind") == "weight":
            moved = [d for d, (_, _, _, w2) in alts.items() if not _same(weights[name], w2.get(name))]
            if moved:
                warn(f"weight {name} changes with {', '.join(moved)} but was folded: it holds its "
                     f"value at {', '.join(f'{d}={alts[d][0]}' for d in moved)}, and the model "
                     f"holds only there")
            continue
        if not bad:
            t["shape"] = shape
        elif t.get("kind") != "input" and producer.get(name, {}).get("op") != "custom":
            del model["tensors"][name]   # a size no dim names: inference derives it
        else:
            warn(f"tensor {name}: its shape changes with the dims but not as a dim; it keeps the "
                 f"export's shape {t['shape']}")
    model["dims"] = {d: alts[d][0] for d in dims}
