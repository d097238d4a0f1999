#!/usr/bin/python3
"""jax_truth.py: which of a JAX model's nodes each XLA kernel computes (a truth file).

    python3 scripts/jax_truth.py MODEL... -o DIR [--keep-views]
    python3 scripts/jax_truth.py --list
    python3 scripts/jax_truth.py --selftest
    python3 scripts/jax_truth.py --refilter DIR/NAME.truth.json...   (no JAX needed)

MODEL is a name from jax_models.py (--list). For each it writes DIR/NAME.json
(the fuseeng model, from the jaxpr), DIR/NAME.truth.json (fuseeng.truth/1,
docs/formats.md), and beside them DIR/NAME.hlo.txt (the optimized HLO) and
DIR/NAME.kernels.txt (each kernel's op_names and where they led).
--refilter re-derives truth files from the NAME.hlo.txt beside them by the
current rules, without JAX (after a change to hlo_fusions.py).

How the two sides meet: jax.make_jaxpr(f) gives the jaxpr; calls in it
(pjit, custom_jvp_call, ...) are inlined, and equation i of the flat list
becomes our nodes fe_<i>_<primitive> (jaxpr_fuseeng.py). The function
compiled is that flat list re-bound equation by equation, each under
jax.named_scope("fe_<i>"): the same computation, whose every HLO
instruction then carries the scope in its metadata op_name
("jit(run)/jit(main)/fe_12/add"). A name scope survives XLA's passes where
a source line would not tell apart two equations of one line
(x @ w + b). jax.jit(run).lower(...).compile().as_text() is the optimized
module; hlo_fusions.py lists its kernels (fusions, custom calls, unfused
ops) with the op_names inside each, and the fe_<i> scopes name the
equations, so the nodes. View nodes (reshape, transpose, expand, slice)
are left out of the kernels unless --keep-views (XLA makes most of them
bitcasts or index math in a fusion; fuseeng launches nothing for them).
A cuBLAS call that took a bias as its epilogue names only the dot: the add
is then in no kernel, and ab leaves it out.

Exit status 2 for bad input or a model JAX or the mapping refuses, 1 when
--selftest fails.
"""
import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_fusions  # noqa: E402
from jaxpr_fuseeng import ConvertError, Eqn, Lit, convert, equation_nodes  # noqa: E402
from truth_file import check_truth, save_refiltered, truth_doc, truth_json, write_atomic  # noqa: E402

VIEWS = {"reshape", "transpose", "expand", "slice"}
CALLS = {"pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
         "custom_vjp_call_jaxpr", "remat", "remat2", "checkpoint", "custom_lin"}


class TruthError(Exception):
    """Bad input or a refusal, said in one line."""


def _inner(e):
    for k in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        j = e.params.get(k)
        if j is not None:
            return j
    return None


def flatten(closed, names):
    """(inputs, eqns, outputs, prims, consts) of a ClosedJaxpr with calls inlined.

    names: one per jaxpr input, with its kind: [(name, "weight"|"input")].
    prims[i] is equation i's primitive object, consts {var: value} the
    constants (weights to us).
    """
    import numpy as np
    count = itertools.count()
    inputs, eqns, prims, consts = [], [], [], {}

    def const(c):
        key = f"const{next(count)}"
        a = np.asarray(c)
        inputs.append((key, a.shape, str(a.dtype), "weight"))
        consts[key] = c
        return key

    def read(env, x):
        if type(x).__name__ == "Literal":
            a = np.asarray(x.val)
            if a.ndim:
                return const(x.val)
            lit = Lit(a.item(), (), str(a.dtype))
            lit.raw = x.val
            return lit
        return env[x]

    def walk(jaxpr, env):
        for e in jaxpr.eqns:
            ins = [read(env, x) for x in e.invars]
            inner = _inner(e) if e.primitive.name in CALLS else None
            if inner is not None:
                ij = getattr(inner, "jaxpr", inner)
                ienv = {v: const(c) for v, c in zip(ij.constvars, getattr(inner, "consts", ()))}
                ienv.update(zip(ij.invars, ins))
                walk(ij, ienv)
                for v, o in zip(e.outvars, ij.outvars):
                    env[v] = read(ienv, o)
                continue
            outs = []
            for v in e.outvars:
                key = f"v{next(count)}"
                env[v] = key
                outs.append((key, tuple(v.aval.shape), str(v.aval.dtype)))
            eqns.append(Eqn(e.primitive.name, dict(e.params), ins, outs))
            prims.append(e.primitive)

    j = closed.jaxpr
    env = {v: const(c) for v, c in zip(j.constvars, closed.consts)}
    if len(names) != len(j.invars):
        raise TruthError(f"{len(j.invars)} jaxpr inputs but {len(names)} names")
    for v, (n, kind) in zip(j.invars, names):
        inputs.append((n, tuple(v.aval.shape), str(v.aval.dtype), kind))
        env[v] = n
    walk(j, env)
    outputs = [read(env, o) for o in j.outvars]
    return inputs, eqns, outputs, prims, consts


def named_run(inputs, eqns, outputs, prims, consts):
    """The flat equations as a function of the non-constant inputs, equation i under scope fe_<i>."""
    import jax
    import jax.numpy as jnp
    args = [n for n, _, _, _ in inputs if n not in consts]

    def run(*vals):
        env = dict(zip(args, vals))
        env.update({k: jnp.asarray(v) for k, v in consts.items()})
        for i, (e, p) in enumerate(zip(eqns, prims)):
            xs = [x.raw if isinstance(x, Lit) else env[x] for x in e.ins]
            with jax.named_scope(f"fe_{i}"):
                r = p.bind(*xs, **e.params)
            for (key, _, _), v in zip(e.outs, r if p.multiple_results else [r]):
                env[key] = v
        return [env[o] for o in outputs]
    return run, args


def kernels_to_nodes(kernels, nodes_of, ops, keep_views=False):
    """[(name, kind, nodes, detail)] and a log, from hlo_fusions kernels."""
    out, log = [], []
    for k in kernels:
        eqs = hlo_fusions.equations(k.op_names)
        nodes = []
        for i in eqs:
            nodes += [n for n in nodes_of.get(i, []) if (keep_views or ops[n] not in VIEWS) and n not in nodes]
        detail = k.detail + ("" if nodes or not eqs else "; views only")
        out.append((k.name, k.kind, nodes, detail.strip("; ")))
        log.append(f"{k.name} ({k.kind} {k.detail}): equations {eqs} -> {', '.join(nodes) or '-'}")
        log += [f"    {n}" for n in k.op_names]
    return out, log


def refilter(truth_path, keep_views=False):
    """Re-derive a truth file's kernels from NAME.hlo.txt beside it by this
    script's current rules (hlo_fusions.py), without JAX or a GPU, the
    model's nodes found by equation (jaxpr_fuseeng.equation_nodes).
    Returns the kernels changed."""
    import json
    hlo_path = truth_path[:-len(".truth.json")] + ".hlo.txt"
    if not truth_path.endswith(".truth.json") or not os.path.exists(hlo_path):
        raise TruthError(f"{truth_path}: no {os.path.basename(hlo_path)} beside it to re-derive from")
    doc = json.load(open(truth_path))
    model = json.load(open(os.path.join(os.path.dirname(truth_path), doc["model"]["file"])))
    ops = {n["name"]: n["op"] for n in model["nodes"]}
    nodes_of = equation_nodes(model)
    new, _ = kernels_to_nodes(hlo_fusions.kernels(open(hlo_path).read()), nodes_of, ops, keep_views)
    if [k["name"] for k in doc["kernels"]] != [k[0] for k in new]:
        raise TruthError(f"{hlo_path} lists other kernels than {truth_path}")
    changed = 0
    for k, (_, _, nodes, detail) in zip(doc["kernels"], new):
        if k["nodes"] != nodes:
            k["nodes"], changed = nodes, changed + 1
        if detail:
            k["detail"] = detail
        else:
            k.pop("detail", None)
    save_refiltered(truth_path, doc, model, changed, "jax_truth.py")
    return changed


def truth_of(name, make, out_dir, keep_views, command, seed=0):
    import jax
    import numpy as np
    from model_json import model_json
    f, weights, xs = make(seed)
    leaves, _ = jax.tree_util.tree_flatten_with_path((weights, *xs))
    names = []
    for path, _ in leaves:
        first = getattr(path[0], "idx", 0)
        label = ".".join(str(getattr(p, "key", getattr(p, "idx", p))) for p in path[1:]) or f"x{first}"
        names.append((label if first == 0 else ("x" if len(xs) == 1 else f"x{first - 1}"),
                      "weight" if first == 0 else "input"))
    closed = jax.make_jaxpr(f)(weights, *xs)
    inputs, eqns, outputs, prims, consts = flatten(closed, names)
    model, nodes_of, warns = convert(name, f"jax_truth.py {name} (jaxpr, jax {jax.__version__})",
                                     inputs, eqns, outputs)
    run, args = named_run(inputs, eqns, outputs, prims, consts)
    by_name = dict(zip([n for n, _ in names], [np.asarray(v) for _, v in leaves]))
    hlo = jax.jit(run).lower(*[by_name[a] for a in args]).compile().as_text()
    ks = hlo_fusions.kernels(hlo)
    if not any(hlo_fusions.equations(k.op_names) for k in ks):
        raise TruthError("no HLO instruction's op_name carries an fe_<i> scope (did XLA drop the "
                         "metadata?): see the .hlo.txt written beside")
    ops = {n["name"]: n["op"] for n in model["nodes"]}
    kernels, log = kernels_to_nodes(ks, nodes_of, ops, keep_views)
    os.makedirs(out_dir, exist_ok=True)
    mpath = os.path.join(out_dir, name + ".json")
    text = model_json(model)
    write_atomic(mpath, text)
    write_atomic(os.path.join(out_dir, name + ".hlo.txt"), hlo)
    write_atomic(os.path.join(out_dir, name + ".kernels.txt"), "\n".join(log) + "\n")
    import jaxlib
    dev = jax.devices()[0]
    doc = truth_doc(mpath, text, "xla", f"jax {jax.__version__}, jaxlib {jaxlib.__version__}", kernels,
                    f"{dev.platform} {getattr(dev, 'device_kind', '')}".strip(), command)
    bad = check_truth(doc, model)
    if bad:
        raise TruthError("the truth does not fit the model: " + "; ".join(bad[:5]))
    write_atomic(os.path.join(out_dir, name + ".truth.json"), truth_json(doc))
    return {"nodes": len(model["nodes"]), "kernels": len(kernels),
            "covered": len({n for k in kernels for n in k[2]}), "warnings": warns,
            "platform": dev.platform}


def main(argv):
    ap = argparse.ArgumentParser(prog="jax_truth.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("-o", dest="out", metavar="DIR")
    ap.add_argument("--keep-views", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--refilter", nargs="+", metavar="TRUTH")
    a = ap.parse_args(argv)
    if a.refilter:
        rc = 0
        for t in a.refilter:
            try:
                print(f"{t}: {refilter(t, a.keep_views)} kernels changed")
            except (TruthError, hlo_fusions.HloError, OSError, ValueError, KeyError) as e:
                print(f"jax_truth.py: {t}: {e}", file=sys.stderr)
                rc = 2
        return rc
    from jax_models import MODELS
    if a.list:
        for n, (what, _) in MODELS.items():
            print(f"{n:18s} {what}")
        return 0
    try:
        import jax
        # The models are float32; a JAX that widens Python floats to float64
        # (x64 on) would compile f64 arithmetic XLA fuses otherwise. What f64
        # is left is written as f32 with a note (jaxpr_fuseeng.py).
        jax.config.update("jax_enable_x64", False)
    except ImportError:
        print("jax_truth.py: JAX is not installed for this Python (pip install jax[cuda] on the GPU "
              "machine)", file=sys.stderr)
        return 2
    command = "jax_truth.py " + " ".join(argv)
    if a.selftest:
        import tempfile
        from jax_models import mlp
        d = a.out or tempfile.mkdtemp(prefix="jax_truth.")
        try:
            info = truth_of("selftest_mlp", lambda s: mlp(s, n=32, d=64, h=128), d, False, command)
        except (TruthError, ConvertError, hlo_fusions.HloError) as e:
            print(f"jax_truth.py: selftest: FAILED: {e}", file=sys.stderr)
            return 1
        problems = []
        if info["covered"] < info["nodes"] // 2:
            problems.append(f"only {info['covered']} of {info['nodes']} nodes in some kernel "
                            "(see selftest_mlp.kernels.txt)")
        if info["warnings"]:
            problems.append("; ".join(info["warnings"]))
        print(f"selftest: {info['platform']}: {info['nodes']} nodes, {info['kernels']} kernels, "
              f"{info['covered']} nodes in some kernel; files in {d}")
        for p in problems:
            print(f"jax_truth.py: selftest: FAILED: {p}", file=sys.stderr)
        return 1 if problems else 0
    if not a.models or not a.out:
        print("jax_truth.py: give MODEL... and -o DIR (or --list, --selftest)", file=sys.stderr)
        return 2
    rc = 0
    for m in a.models:
        if m not in MODELS:
            print(f"jax_truth.py: {m}: no such model (--list names them)", file=sys.stderr)
            rc = 2
            continue
        try:
            info = truth_of(m, MODELS[m][1], a.out, a.keep_views, command, a.seed)
        except (TruthError, ConvertError, hlo_fusions.HloError) as e:
            print(f"jax_truth.py: {m}: {e}", file=sys.stderr)
            rc = 2
            continue
        except Exception as e:   # JAX or XLA refused it
            msg = str(e).strip().splitlines()
            print(f"jax_truth.py: {m}: failed: {type(e).__name__}: {msg[0] if msg else ''}",
                  file=sys.stderr)
            rc = 2
            continue
        for w in info["warnings"]:
            print(f"jax_truth.py: {m}: warning: {w}", file=sys.stderr)
        if info["platform"] != "gpu" and info["platform"] != "cuda":
            print(f"jax_truth.py: {m}: warning: compiled for {info['platform']}, not a GPU", file=sys.stderr)
        print(f"{m}: {info['nodes']} nodes, {info['kernels']} kernels, {info['covered']} nodes in some kernel")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
