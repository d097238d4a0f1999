#!/usr/bin/python3
"""export_torch.py: a torch.nn.Module as a fuseeng model (JSON + safetensors).

    /usr/bin/python3 scripts/export_torch.py MODULE -o model.json
        [--input NAME=SHAPE[:DTYPE] ...] [--dtype f32|f16|bf16] [--weights-out W]
        [--inputs-out in.safetensors] [--expect-out out.safetensors] [--seed N]
        [--leaf CLASS ...] [--name NAME]

MODULE is a dotted callable (torchvision.models.resnet50) or path/file.py:Name;
either a class or a function returning an nn.Module, called without
arguments (torch seeded with --seed first, so random weights repeat). The
module runs in eval mode under torch.no_grad.

The module is traced by torch.fx on example inputs of the given shapes
(fx_trace.py: shapes fold to ints, ShapeProp records every tensor's shape
and dtype), mapped to our op set (fx_to_fuseeng.py, fx_handlers.py,
fx_attention.py) and written as model.json plus model.safetensors (every
tensor of kind weight the graph uses, nothing else). Inputs keep the forward
parameters' names; outputs are called output (output_0, output_1, ... when
several). --inputs-out / --expect-out write seeded random inputs and the
module's own PyTorch outputs under those names, for
`fuseeng run --execute --weights W --inputs I --expect O`.

Exit status 2 for bad input (module, shapes, a dtype fuseeng has no type
for), with a message naming what to fix; nothing is written then.
docs/import-torch.md has the mapping table.
"""
import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys
import tempfile
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fx_handlers  # noqa: E402
import fx_symdims  # noqa: E402
import fx_trace  # noqa: E402
import st_write  # noqa: E402
from fx_graph import DTYPES, ExportError, leaves  # noqa: E402
from fx_to_fuseeng import convert  # noqa: E402
from model_json import model_json as _json  # noqa: E402

NAMES = {v: k for k, v in DTYPES.items()}


def load_module(spec, seed):
    """The nn.Module that MODULE names, built after seeding torch."""
    if ":" in spec:
        path, attr = spec.rsplit(":", 1)
        if not os.path.isfile(path):
            raise ExportError(f"{spec}: no file {path}")
        name = os.path.splitext(os.path.basename(path))[0]
        s = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(s)
        sys.modules[name] = mod
        s.loader.exec_module(mod)
        if not hasattr(mod, attr):
            raise ExportError(f"{spec}: {path} defines no {attr}")
        obj = getattr(mod, attr)
    else:
        parts = spec.split(".")
        obj = None
        for i in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:]:
                if not hasattr(obj, p):
                    raise ExportError(f"{spec}: {'.'.join(parts[:i])} has no {p}")
                obj = getattr(obj, p)
            break
        if obj is None:
            raise ExportError(f"{spec}: not an importable dotted name (use module.Name or file.py:Name)")
    torch.manual_seed(seed)
    if not isinstance(obj, torch.nn.Module):
        if not callable(obj):
            raise ExportError(f"{spec} is neither an nn.Module nor callable")
        obj = obj()
    if not isinstance(obj, torch.nn.Module):
        raise ExportError(f"{spec}() returned {type(obj).__name__}, not a torch.nn.Module")
    return obj


def parse_input(text, dims=None):
    """NAME=SHAPE[:DTYPE] or SHAPE[:DTYPE] -> (name or None, shape, dtype or None).

    A size may name a dim of dims (--dim S=128): the shape then holds the name.
    """
    name, _, rest = text.rpartition("=")
    shape_s, _, dt = rest.partition(":")
    dims = dims or {}
    shape = []
    for d in (d for d in shape_s.replace(",", "x").split("x") if d != ""):
        if d.isidentifier():
            if d not in dims:
                raise ExportError(f"--input {text}: the shape must be positive integers or dims "
                                  f"given with --dim; {d} is neither (give its value with --dim {d}=N)")
            shape.append(d)
            continue
        try:
            shape.append(int(d))
        except ValueError:
            shape = []
            break
    if not shape or any(isinstance(d, int) and d <= 0 for d in shape):
        raise ExportError(f"--input {text}: the shape must be positive integers or dim names "
                          f"such as 1x3x224x224 or 1xS (with --dim S=128)")
    if dt and dt not in NAMES:
        raise ExportError(f"--input {text}: dtype {dt} is not one of {', '.join(NAMES)}")
    return name or None, shape, NAMES.get(dt)


def parse_dims(texts):
    """--dim NAME=V ... -> {name: value} in the order given."""
    dims = {}
    for text in texts:
        name, _, v = text.partition("=")
        if not name.isidentifier() or not v.isdigit() or int(v) < 1:
            raise ExportError(f"--dim {text}: expected NAME=VALUE with a positive integer, "
                              f"such as S=128")
        if name in dims:
            raise ExportError(f"--dim {text}: {name} is given twice")
        dims[name] = int(v)
    return dims


def example_inputs(module, specs, dtype, seed, dims=None):
    """dict forward parameter -> example tensor, and the parameters left at their defaults.

    Sizes that name a dim take its value in dims.
    """
    dims = dims or {}
    params = [p for p in inspect.signature(module.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = [p.name for p in params]
    g = torch.Generator().manual_seed(seed)
    given = {}
    if not specs and hasattr(module, "example_inputs"):
        ex = module.example_inputs()
        ex = ex if isinstance(ex, dict) else dict(zip(names, ex))
        # Shapes and integer dtypes from the example; floats take --dtype.
        specs_t = {k: (list(v.shape), None if v.is_floating_point() else v.dtype)
                   for k, v in ex.items()}
    else:
        specs_t = {}
        for text in specs:
            name, shape, dt = parse_input(text, dims)
            if name is None:
                if len(specs) != 1 or not names:
                    raise ExportError(f"--input {text}: name the parameter (one of {', '.join(names)})")
                name = names[0]
            if name not in names:
                raise ExportError(f"--input {text}: forward has no parameter {name!r} "
                                  f"(it takes {', '.join(names) or 'none'})")
            specs_t[name] = (shape, dt)
    unused = [d for d in dims if not any(d in shape for shape, _ in specs_t.values())]
    if unused:
        raise ExportError(f"--dim {unused[0]}: no --input names it (write it in a shape: "
                          f"--input x=1x{unused[0]}x64)")
    for name, (shape, dt) in specs_t.items():
        shape = [dims.get(d, d) for d in shape]
        dt = dt or dtype
        if dt.is_floating_point:
            given[name] = torch.randn(shape, generator=g).to(dt)
        elif dt == torch.bool:
            given[name] = torch.randint(0, 2, shape, generator=g).bool()
        else:   # integers index things: keep them small, as fuseeng's own random inputs do
            given[name] = torch.randint(0, 16, shape, generator=g).to(dt)
    missing = [p.name for p in params if p.name not in given and p.default is p.empty]
    if missing:
        raise ExportError(f"no example shape for forward parameter(s) {', '.join(missing)}: "
                          f"give --input NAME=SHAPE for each (e.g. --input {missing[0]}=1x3x224x224)")
    defaults = {p.name: p.default for p in params if p.name not in given}
    return given, defaults


def export(module, inputs, out_json, weights_out=None, inputs_out=None, expect_out=None,
           name=None, source=None, defaults=None, leaf_types=(), check=True, dims=None,
           inputs_at=None):
    """Trace module on inputs (dict name -> tensor) and write the files; returns a summary dict.

    check runs the traced graph once more (torch.fx ShapeProp) and warns when
    it does not reproduce the module's outputs. dims ({name: value}) are kept
    symbolic (fx_symdims.py): inputs_at(dims) gives the inputs at other values.
    """
    module.eval()
    t0 = time.time()

    def run_trace(ins):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            # fx.wrap'ed functions with a mapping stay one node; the others are traced through.
            return fx_trace.trace(module, ins, defaults or None, leaf_types, bool(dims),
                                  keep_wrapped=fx_handlers.FUNCTIONS)
    gm, outputs = run_trace(inputs)
    ph = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    early = []
    alts = {}
    for d, v in (dims or {}).items():
        failed = []
        for v2 in fx_symdims.other_values(v):
            try:
                alts[d] = (v, v2, run_trace(inputs_at({**dims, d: v2}))[0])
                break
            except (RuntimeError, TypeError, ValueError, torch.fx.proxy.TraceError) as e:
                msg = str(e).strip().splitlines()
                failed.append(f"{d}={v2}: {msg[-1] if msg else type(e).__name__}")
        else:
            early.append(f"--dim {d}: the module fails at other values ({'; '.join(failed)}): "
                         f"{d} is not kept symbolic and the model holds at {d}={v} only")
    fx_symdims.unfold(gm, alts, early.append)
    t1 = time.time()
    title = name or type(module).__name__.lower()
    src = source or f"export_torch.py: torch.fx trace of {type(module).__name__} (torch {torch.__version__})"
    model, weights, warns = convert(gm, title, src, module)
    warns[:0] = early
    if alts:
        mapped = {d: (v, v2) + convert(g, title, src, module)[:2] for d, (v, v2, g) in alts.items()}
        fx_symdims.merge(model, weights, mapped, warns.append)
    t2 = time.time()
    if check:
        why = fx_trace.verify(gm, [inputs[p] for p in ph], outputs)
        if why:
            warns.append(f"{why} on the example inputs (data-dependent control flow?)")
    outs = dict(zip(model["outputs"], leaves(outputs, torch.Tensor)))
    t3 = time.time()
    d = os.path.dirname(os.path.abspath(out_json))
    weights_out = weights_out or os.path.splitext(out_json)[0] + ".safetensors"
    tmps = []
    try:
        fd, tmp = tempfile.mkstemp(prefix=".model-", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(_json(model))
        st_write.readable(tmp)
        tmps.append((tmp, out_json))
        tmps.append((st_write.write_tmp(weights_out, weights, {"format": "pt"}), weights_out))
        if inputs_out:
            tmps.append((st_write.write_tmp(inputs_out, {p: inputs[p] for p in ph}), inputs_out))
        if expect_out:
            tmps.append((st_write.write_tmp(expect_out, outs), expect_out))
        for tmp, dst in tmps:
            os.replace(tmp, dst)
    except BaseException:
        for tmp, _ in tmps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    customs = sum(1 for n in model["nodes"] if n["op"] == "custom")
    return {"inputs": ph, "outputs": model["outputs"], "nodes": len(model["nodes"]),
            "fx_nodes": sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output", "get_attr")),
            "customs": customs, "weights": len(weights),
            "weight_bytes": sum(t.numel() * t.element_size() for t in weights.values()),
            "warnings": warns, "trace_s": t1 - t0, "map_s": t2 - t1, "write_s": time.time() - t3,
            "weights_out": weights_out}


def _leaf_types(names):
    out = []
    for n in names:
        mod, _, cls = n.rpartition(".")
        try:
            out.append(getattr(importlib.import_module(mod), cls))
        except (ImportError, AttributeError, ValueError):
            raise ExportError(f"--leaf {n}: not an importable class (module.Class)")
    return tuple(out)


def main(argv):
    ap = argparse.ArgumentParser(prog="export_torch.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("module", metavar="MODULE")
    ap.add_argument("-o", dest="out", required=True, metavar="model.json")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=SHAPE[:DTYPE]")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=V",
                    help="a size the --input shapes name (1xS), kept symbolic in the model")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--weights-out", metavar="W")
    ap.add_argument("--inputs-out", metavar="in.safetensors")
    ap.add_argument("--expect-out", metavar="out.safetensors")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--leaf", action="append", default=[], metavar="module.Class",
                    help="keep calls of this module class as one node (a custom op)")
    ap.add_argument("--name")
    a = ap.parse_args(argv)
    try:
        dtype = NAMES[a.dtype]
        module = load_module(a.module, a.seed).eval().to(dtype)
        dims = parse_dims(a.dim)
        inputs, defaults = example_inputs(module, a.input, dtype, a.seed, dims)
        info = export(module, inputs, a.out, a.weights_out, a.inputs_out, a.expect_out,
                      a.name, f"export_torch.py {a.module} (torch.fx, torch {torch.__version__})",
                      defaults, _leaf_types(a.leaf), dims=dims,
                      # other values from another seed, so that a size computed from
                      # the data changes too and is told from the dim (fx_symdims.py)
                      inputs_at=lambda ds: example_inputs(module, a.input, dtype, a.seed + 1, ds)[0])
    except ExportError as e:
        print(f"export_torch.py: {a.module}: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, TypeError, ValueError, torch.fx.proxy.TraceError) as e:
        # PyTorch refusing the module on these inputs (wrong shape, untraceable code).
        msg = str(e).strip().splitlines()
        print(f"export_torch.py: {a.module}: PyTorch failed on it: {msg[-1] if msg else e}\n"
              "  check the --input shapes and dtypes; code torch.fx cannot trace can be kept whole "
              "with --leaf", file=sys.stderr)
        return 2
    for w in info["warnings"]:
        print(f"export_torch.py: warning: {w}", file=sys.stderr)
    print(f"{a.out}: {info['nodes']} nodes ({info['customs']} custom) from {info['fx_nodes']} FX calls; "
          f"inputs {', '.join(info['inputs'])}; outputs {', '.join(info['outputs'])}")
    print(f"{info['weights_out']}: {info['weights']} weights, {info['weight_bytes'] / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
