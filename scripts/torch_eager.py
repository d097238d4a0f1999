#!/usr/bin/python3
"""torch_eager.py: run a fuseeng model file in PyTorch, eager or compiled.

    /usr/bin/python3 scripts/torch_eager.py MODEL.json [options]

The model a user would run instead of fuseeng's plan: every node of the
model file becomes the PyTorch call that computes it (docs/formats.md gives
each op's semantics; custom nodes call the aten op their `attrs.aten`
names), in the model's own dtypes, on the CPU or on an NVIDIA GPU, eager
or under torch.compile. Three uses:

  * a second implementation of every op, independent of fuseeng's kernels:
    --save-outputs writes what PyTorch computes, and
    `fuseeng run --execute --weights W --inputs I --expect OUT` checks the
    plan against it (tests/cli/torch_eager.sh);
  * the PyTorch-eager column of `make bench` (--time: median wall time of
    whole-model runs with the same threads as fuseeng);
  * PyTorch on the card beside fuseeng's CUDA plans (--device cuda,
    --compile, --kernels; tests/bench/gpu_compare.py, docs/cuda.md).

Options:
  --dim NAME=V          override a model dim (repeatable)
  --weights FILE        weights from a safetensors file (default: random)
  --inputs FILE         graph inputs from a safetensors file (default: random)
  --seed N              seed of the random data (default 1)
  --save-weights FILE   write the weights used (safetensors)
  --save-inputs FILE    write the inputs used
  --save-outputs FILE   write the graph outputs (of the eager run)
  --time                time whole-model runs: warm-up, then repetitions for
                        --budget seconds; prints the median and the spread
  --budget S            seconds of timed runs (default 1.0)
  --threads N           torch threads (default: OMP_NUM_THREADS, else all CPUs);
                        workers wait passively (OMP_WAIT_POLICY), as fuseeng's do
  --device cpu|cuda     where weights, inputs and every op live (default cpu);
                        on cuda a run is timed by CUDA events around it, after
                        3 warm-up runs, and f32 stays f32 (no TF32) unless --tf32
  --compile MODES       none (eager, the default), default (torch.compile with
                        Inductor) or cudagraphs (mode "reduce-overhead": the
                        Inductor kernels replayed as CUDA graphs; weights and
                        inputs marked static, so nothing is copied into the
                        graph); comma-separated for several in one process, one
                        result line each. The warm-up runs compile (at least 3:
                        compile, CUDA-graph warm-up, recording) and their wall
                        time is reported as compile_s
  --kernels             run once more under torch.profiler and report the
                        kernels of one run: on cuda every CUDA kernel event
                        (Triton kernels and extern calls such as cuBLAS; memcpy
                        and memset not counted, reported as copies), on the
                        CPU the aten ops the run calls at its top level
  --tf32                let cuda matmuls and convolutions round to TF32
  --json                print the result as one JSON object (a line per mode)

Random data follows the executor's rules in spirit (not bit for bit):
floats uniform in [-1, 1], matmul and conv weights scaled by 1/sqrt(fan_in),
batch-norm variances in [0.5, 1.5], integers in range of the axis they
index, bools true with probability 3/4; made on the CPU with --seed, then
moved to the device, so a seed gives the same data on both. Exit 2 with a
message naming the file and node when the model cannot be run here, and
naming what is missing when --device cuda or --compile asks for what this
PyTorch or machine lacks (CUDA, torch.compile, Triton). Compiled runs
trace the whole model as one graph; where Dynamo cannot, it breaks the
graph and runs that part eager, and stderr names each break.
"""
import json
import math
import os
import struct
import sys

# Sleeping OpenMP workers, as the fuseeng command runs its own
# (core/cli/main.c): on a shared machine spinning ones stall for scheduler
# ticks, and the two would not be compared alike. Set it to override.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.stderr.write("torch_eager: PyTorch is not installed for %s "
                     "(Debian: apt-get install python3-torch; run with /usr/bin/python3)\n"
                     % sys.executable)
    sys.exit(2)

import st_write   # noqa: E402 (scripts/, beside this file; needs torch)
import torch_measure   # noqa: E402 (likewise: devices, torch.compile, timing, kernel counts)


class Bad(Exception):
    """An input problem: printed as one line, exit 2."""


DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i64": torch.int64, "i32": torch.int32, "i8": torch.int8, "bool": torch.bool}
TORCH_NAMES = {"float32": "f32", "float": "f32", "float16": "f16", "half": "f16",
               "bfloat16": "bf16", "int64": "i64", "long": "i64", "int32": "i32",
               "int": "i32", "int8": "i8", "bool": "bool"}
ST_NAMES = {"f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32",
            "i8": "I8", "bool": "BOOL"}
ST_DTYPES = {v: DTYPES[k] for k, v in ST_NAMES.items()}
ST_DTYPES.update({"F64": torch.float64, "I16": torch.int16, "U8": torch.uint8})
INF = 3.4028235e38   # how exports spell infinity


def dtype_of(name):
    """A torch dtype from fuseeng's or torch's spelling."""
    if name is None:
        return None
    s = name[6:] if name.startswith("torch.") else name
    s = TORCH_NAMES.get(s, s)
    if s not in DTYPES:
        raise Bad("dtype '%s' is not one of %s" % (name, " ".join(DTYPES)))
    return DTYPES[s]


# ---- safetensors (https://github.com/huggingface/safetensors: 8-byte LE
# header length, JSON header, then the data); the exporter's writer
# (st_write.py) writes them ----

def st_read(path):
    """name -> tensor of a safetensors file."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise Bad("%s: %s" % (path, e.strerror))
    if len(blob) < 8:
        raise Bad("%s: not a safetensors file (shorter than its 8-byte header length)" % path)
    n = struct.unpack("<Q", blob[:8])[0]
    if n > len(blob) - 8:
        raise Bad("%s: header length %d runs past the end of the file" % (path, n))
    try:
        header = json.loads(blob[8:8 + n])
    except ValueError as e:
        raise Bad("%s: header is not JSON: %s" % (path, e))
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        if h.get("dtype") not in ST_DTYPES:
            raise Bad("%s: tensor '%s' has dtype %s, which this script does not read"
                      % (path, name, h.get("dtype")))
        b, e = h["data_offsets"]
        if not 0 <= b <= e <= len(data):
            raise Bad("%s: tensor '%s' has data_offsets %s outside the data" % (path, name, [b, e]))
        dt = ST_DTYPES[h["dtype"]]
        t = torch.frombuffer(bytearray(data[b:e]), dtype=dt) if e > b else torch.empty(0, dtype=dt)
        out[name] = t.reshape(h["shape"])
    return out


# ---- the model ----

class Model:
    def __init__(self, path, dim_overrides):
        self.path = path
        try:
            with open(path) as f:
                m = json.load(f)
        except OSError as e:
            raise Bad("%s: %s" % (path, e.strerror))
        except ValueError as e:
            raise Bad("%s: not JSON: %s (check it with `fuseeng check`)" % (path, e))
        if m.get("format") != "fuseeng.model/1":
            raise Bad("%s: not a fuseeng.model/1 file" % path)
        self.dims = dict(m.get("dims") or {})
        for k, v in dim_overrides.items():
            if k not in self.dims:
                raise Bad("%s: --dim %s: the model has no dim %s (it has: %s)"
                          % (path, k, k, " ".join(self.dims) or "none"))
            self.dims[k] = v
        self.tensors = m.get("tensors") or {}
        self.nodes = m["nodes"]
        self.outputs = m["outputs"]
        self.name = m.get("name", os.path.basename(path))
        self.consumers = {}
        for n in self.nodes:
            for i, t in enumerate(n.get("inputs", [])):
                self.consumers.setdefault(t, []).append((n, i))

    def shape(self, items):
        return [self.dims[s] if isinstance(s, str) else int(s) for s in items]

    def kind(self, name):
        return self.tensors.get(name, {}).get("kind", "activation")


def index_bound(model, name, depth=0):
    """The size of the axis integer tensor `name` indexes, or None: its
    consumers, followed through the ops that pass values on unchanged."""
    for n, i in model.consumers.get(name, []):
        op, a = n["op"], n.get("attrs") or {}
        if op == "embedding" and i == 1:
            return model.shape(model.tensors[n["inputs"][0]]["shape"])[0]
        if op == "gather" and i == 1:
            d = model.shape(model.tensors[n["inputs"][0]]["shape"])
            return d[a.get("axis", 0) % len(d)]
        if op == "custom" and i > 0 and "index" in (a.get("aten") or ""):
            src = model.tensors.get(n["inputs"][0])
            if src:
                return model.shape(src["shape"])[i - 1]
        if op in ("reshape", "cast", "expand", "transpose", "slice", "concat") and depth < 8:
            for o in n["outputs"]:
                b = index_bound(model, o, depth + 1)
                if b:
                    return b
    return None


def fan_in(model, name):
    """fan-in of a matmul or conv weight, as PyTorch's default init uses it."""
    for n, i in model.consumers.get(name, []):
        a = n.get("attrs") or {}
        shape = model.shape(model.tensors[name]["shape"])
        if n["op"] == "matmul" and i == 1 and len(shape) >= 2:
            return shape[-1] if a.get("transpose_b") else shape[-2]
        if n["op"] == "conv2d" and i == 1:
            return math.prod(shape[1:])
    return None


def random_tensor(model, name, gen):
    t = model.tensors[name]
    shape, dt = model.shape(t["shape"]), dtype_of(t.get("dtype", "f32"))
    if dt == torch.bool:
        return torch.rand(shape, generator=gen) < 0.75
    if not dt.is_floating_point:
        return torch.randint(0, index_bound(model, name) or 16, shape, generator=gen, dtype=dt)
    x = torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1
    fi = fan_in(model, name)
    if fi:
        x /= math.sqrt(fi)
    if any(n["op"] == "batch_norm" and i == 4 for n, i in model.consumers.get(name, [])):
        x = x * 0.5 + 1.0   # running variances in [0.5, 1.5]
    return x.to(dt)


def take_data(model, given, path, kind):
    """Check a safetensors file against the model's tensors of `kind`."""
    want = {n for n in model.tensors if model.kind(n) == kind}
    for name, t in given.items():
        if name not in want:
            raise Bad("%s: tensor '%s' is not a %s of %s" % (path, name, kind, model.path))
        decl = model.tensors[name]
        shape, dt = model.shape(decl["shape"]), dtype_of(decl.get("dtype", "f32"))
        if list(t.shape) != shape or t.dtype != dt:
            raise Bad("%s: tensor '%s' is %s %s; %s declares %s %s" % (
                path, name, t.dtype, list(t.shape), model.path, dt, shape))
    missing = sorted(want - set(given))
    if missing:
        raise Bad("%s: no tensor '%s' (a %s of %s)" % (path, missing[0], kind, model.path))
    return given


# ---- ops ----

def ints(v, n=2):
    return [v] * n if isinstance(v, int) else list(v)


def scalar_of(v):
    if isinstance(v, float) and abs(v) >= INF:
        return math.copysign(math.inf, v)
    if v in ("inf", "+inf"):
        return math.inf
    if v == "-inf":
        return -math.inf
    if v == "nan":
        return math.nan
    return v


SCALAR_OPS = ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "where")


def scalar_dtype(dt, v):
    """torch.result_type(tensor of dtype dt, Python number v), in Python (a
    compiled run then decides nothing at run time): a number of a higher
    category (bool < int < float) takes that category's default dtype."""
    cat = 0 if isinstance(v, bool) else 1 if isinstance(v, int) else 2
    have = 0 if dt == torch.bool else 2 if dt.is_floating_point else 1
    if cat > have:
        return torch.float32 if cat == 2 else torch.int64
    return dt


def as_tensor(v, like):
    if isinstance(v, torch.Tensor):
        return v
    return torch.tensor(v, dtype=scalar_dtype(like.dtype, v), device=like.device)


def axes_of(a, rank):
    ax = a.get("axes")
    return list(range(rank)) if ax is None else [d % rank for d in ax]


def norm_dims(a, x, nw):
    ns = a.get("normalized_shape")
    k = len(ns) if ns else max(nw, 1)
    return list(range(x.dim() - k, x.dim()))


def matmul(x, a):
    p, q = x
    if a.get("transpose_a") and p.dim() >= 2:
        p = p.transpose(-1, -2)
    if a.get("transpose_b") and q.dim() >= 2:
        q = q.transpose(-1, -2)
    return torch.matmul(p, q)


def pool_args(a):
    k = ints(a["kernel"])
    return k, ints(a.get("stride") or k), ints(a.get("padding", 0))


def gather(data, idx, axis):
    axis %= data.dim()
    idx = torch.where(idx < 0, idx + data.shape[axis], idx).long()
    out = torch.index_select(data, axis, idx.reshape(-1))
    return out.reshape(list(data.shape[:axis]) + list(idx.shape) + list(data.shape[axis + 1:]))


def pad(x, a):
    mode = a.get("mode", "constant")
    pads = list(a["pads"])
    if mode == "constant":
        return F.pad(x, pads, value=scalar_of(a.get("value", 0)))
    # reflect/replicate: torch pads only the trailing 1-3 dims of a batched input
    shape = list(x.shape)
    k = len(pads) // 2
    y = x.reshape([-1] + shape[len(shape) - k:]).unsqueeze(0)
    y = F.pad(y, pads, mode=mode).squeeze(0)
    return y.reshape(shape[:len(shape) - k] + list(y.shape[1:]))


def reduce(fn):
    def run(x, a):
        return fn(x[0], axes_of(a, x[0].dim()), a.get("keepdim", False))
    return run


ALL_REDUCE = {"sum": lambda x, w: x * w, "avg": lambda x, w: x, "mean": lambda x, w: x,
              "max": lambda x, w: x, "min": lambda x, w: x}

OPS = {
    "relu": lambda x, a: torch.relu(x[0]),
    "gelu": lambda x, a: F.gelu(x[0], approximate=a.get("approximate") or "none"),
    "silu": lambda x, a: F.silu(x[0]),
    "sigmoid": lambda x, a: torch.sigmoid(x[0]),
    "tanh": lambda x, a: torch.tanh(x[0]),
    "exp": lambda x, a: torch.exp(x[0]),
    "log": lambda x, a: torch.log(x[0]),
    "neg": lambda x, a: torch.neg(x[0]),
    "abs": lambda x, a: torch.abs(x[0]),
    "sqrt": lambda x, a: torch.sqrt(x[0]),
    "rsqrt": lambda x, a: torch.rsqrt(x[0]),
    "reciprocal": lambda x, a: torch.reciprocal(x[0]),
    "sin": lambda x, a: torch.sin(x[0]),
    "cos": lambda x, a: torch.cos(x[0]),
    "erf": lambda x, a: torch.erf(x[0]),
    "hardsigmoid": lambda x, a: F.hardsigmoid(x[0]),
    "hardswish": lambda x, a: F.hardswish(x[0]),
    "cast": lambda x, a: x[0].to(dtype_of(a["dtype"])),
    "add": lambda x, a: torch.add(*x),
    "sub": lambda x, a: torch.sub(as_tensor(x[0], x[1]), x[1]),
    "mul": lambda x, a: torch.mul(*x),
    "div": lambda x, a: torch.div(as_tensor(x[0], x[1]), x[1]),
    "maximum": lambda x, a: torch.maximum(as_tensor(x[0], x[1]), as_tensor(x[1], x[0])),
    "minimum": lambda x, a: torch.minimum(as_tensor(x[0], x[1]), as_tensor(x[1], x[0])),
    "pow": lambda x, a: torch.pow(*x),
    "where": lambda x, a: torch.where(as_tensor(x[0], x[1]).bool(), *x[1:]),
    "sum": reduce(lambda x, d, k: torch.sum(x, d, keepdim=k)),
    "mean": reduce(lambda x, d, k: torch.mean(x, d, keepdim=k)),
    "amax": reduce(lambda x, d, k: torch.amax(x, d, keepdim=k)),
    "amin": reduce(lambda x, d, k: torch.amin(x, d, keepdim=k)),
    "softmax": lambda x, a: torch.softmax(x[0], a.get("axis", -1)),
    "log_softmax": lambda x, a: torch.log_softmax(x[0], a.get("axis", -1)),
    "matmul": matmul,
    "conv2d": lambda x, a: F.conv2d(x[0], x[1], x[2] if len(x) > 2 else None,
                                    ints(a.get("stride", 1)), ints(a.get("padding", 0)),
                                    ints(a.get("dilation", 1)), a.get("groups", 1)),
    "max_pool2d": lambda x, a: F.max_pool2d(x[0], *pool_args(a), ints(a.get("dilation", 1)),
                                            ceil_mode=bool(a.get("ceil_mode"))),
    "avg_pool2d": lambda x, a: F.avg_pool2d(x[0], *pool_args(a),
                                            ceil_mode=bool(a.get("ceil_mode")),
                                            count_include_pad=a.get("count_include_pad", True)),
    "batch_norm": lambda x, a: F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0,
                                            a.get("eps", 1e-5)),
    "transpose": lambda x, a: x[0].permute(a.get("perm") or list(range(x[0].dim()))[::-1]),
    "concat": lambda x, a: torch.cat(x, a.get("axis", 0)),
    "pad": lambda x, a: pad(x[0], a),
    "gather": lambda x, a: gather(x[0], x[1], a.get("axis", 0)),
    "embedding": lambda x, a: gather(x[0], x[1], 0),
    "all_reduce": lambda x, a: ALL_REDUCE[a.get("reduce", "sum")](x[0], a["world_size"]),
}


def rms_norm(x, a):
    d = norm_dims(a, x[0], x[1].dim() if len(x) > 1 else 1)
    v = x[0].float()
    y = v * torch.rsqrt(v.pow(2).mean(d, keepdim=True) + a.get("eps", 1e-6))
    if len(x) > 1:
        y = y * x[1].float()
    return y.to(x[0].dtype)


def layer_norm(x, a):
    d = norm_dims(a, x[0], x[1].dim() if len(x) > 1 else 1)
    shape = list(x[0].shape[d[0]:])
    w = x[1].reshape(shape) if len(x) > 1 else None
    b = x[2].reshape(shape) if len(x) > 2 else None
    return F.layer_norm(x[0], shape, w, b, a.get("eps", 1e-5))


def slice_op(x, a):
    t = x[0]
    axis = a.get("axis", 0) % t.dim()
    idx = [slice(None)] * t.dim()
    idx[axis] = slice(a.get("start", 0), a.get("end"), a.get("step", 1))
    return t[tuple(idx)]


def sdpa(x, a):
    q, k, v = x[:3]
    scale = a.get("scale") or 1.0 / math.sqrt(q.shape[-1])
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if a.get("causal"):
        L, S = s.shape[-2:]
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool, device=s.device).tril(), -math.inf)
    if len(x) > 3:
        s = s.masked_fill(~x[3], -math.inf) if x[3].dtype == torch.bool else s + x[3]
    return torch.matmul(torch.softmax(s.float(), -1).to(v.dtype), v)


OPS.update({"rms_norm": rms_norm, "layer_norm": layer_norm, "slice": slice_op, "sdpa": sdpa})


FACTORIES = ("ones", "zeros", "full", "new_ones", "new_zeros", "new_full", "ones_like",
             "zeros_like", "full_like", "scalar_tensor")


class Runner:
    """The model as PyTorch calls. Every node is bound once (bind) to a
    function of its input tensors, with its attributes, dims and the aten
    schema of a custom node resolved in Python beforehand: what remains per
    run is torch calls in a fixed order, with no Python decision on a
    tensor's values, so the whole run traces under torch.compile's Dynamo
    as one graph (program)."""

    def __init__(self, model, device=None):
        self.m = model
        self.device = device or torch.device("cpu")
        self.upcast_nodes = set()
        self.bound = {}

    def shape_arg(self, items):
        """A reshape/expand shape: ints, dim names, -1."""
        return [self.m.dims[s] if isinstance(s, str) else s for s in items]

    def bind_custom(self, n):
        """An exported aten op, called as torch.ops.aten.NAME.OVERLOAD."""
        a = n.get("attrs") or {}
        aten = a.get("aten")
        if not aten:
            raise Bad("node '%s' is a custom op without attrs.aten: PyTorch cannot run it"
                      % n["name"])
        name = aten.replace("aten::", "").replace("aten.", "")
        base, _, overload = name.partition(".")
        # placement hints change no value; None is the argument's default
        args = {k: v for k, v in (a.get("args") or {}).items() if v is not None and k not in
                ("layout", "device", "pin_memory", "memory_format", "non_blocking")}
        out = self.m.tensors.get(n["outputs"][0], {})
        dev = self.device
        if base in FACTORIES:
            kind = base.replace("new_", "").replace("_like", "")
            value = scalar_of({"ones": 1, "zeros": 0}.get(kind, args.get("fill_value",
                                                                       args.get("s"))))
            shape, dt = self.m.shape(out["shape"]), dtype_of(out.get("dtype", "f32"))
            return lambda x: torch.full(shape, value, dtype=dt, device=dev)
        if "dtype" in args:
            args["dtype"] = dtype_of(args["dtype"])
        if base == "index":
            spec = args.get("indices")
            if spec:
                where = []   # per index position: the input that fills it, or None (all)
                k = 1
                for s in spec:
                    where.append(k if s is not None else None)
                    k += s is not None
                return lambda x: x[0][tuple([x[i] if i is not None else slice(None)
                                             for i in where])]
            return lambda x: x[0][tuple(x[1:])]
        if base == "arange":
            start, end, step = args.get("start", 0), args["end"], args.get("step", 1)
            dt = args.get("dtype")
            return lambda x: torch.arange(start, end, step, dtype=dt, device=dev)
        if "other" in args:
            args["other"] = scalar_of(args["other"])
        packet = getattr(torch.ops.aten, base, None)
        op = packet and getattr(packet, overload or "default", None)
        if op is None:
            raise Bad("node '%s': PyTorch has no aten op '%s'" % (n["name"], aten))
        # The node's tensors fill the schema's tensor arguments that args
        # does not give, in order (diff's second input is its `prepend`).
        rest = list(range(len(n.get("inputs", []))))
        call = [rest.pop(0)] if rest else []
        named = {}
        for arg in op._schema.arguments[len(call):]:
            if arg.name in args or not rest or "Tensor" not in str(arg.type):
                continue
            named[arg.name] = rest.pop(0)
        call += rest
        if not call and dev.type != "cpu" and any(
                arg.name == "device" for arg in op._schema.arguments):
            args["device"] = dev   # a factory: made where the data is
        # torch's Python functions take keyword arguments with their
        # defaults reliably; the raw overload is the fallback
        fn = getattr(torch, base, None) or getattr(torch.Tensor, base, None) or op

        def run(x):
            kw = dict(args)
            for k, i in named.items():
                kw[k] = x[i]
            return fn(*[x[i] for i in call], **kw)
        return run

    def bind(self, n):
        """Node n as a function of the list of its input tensors."""
        if n["name"] in self.bound:
            return self.bound[n["name"]]
        op, a = n["op"], n.get("attrs") or {}
        if op == "custom":
            f = self.bind_custom(n)
        elif op in ("reshape", "expand"):
            shape = self.shape_arg(a["shape"])
            f = ((lambda x: x[0].reshape(shape)) if op == "reshape"
                 else (lambda x: x[0].expand(shape)))
        elif op not in OPS:
            raise Bad("node '%s': op '%s' has no PyTorch equivalent here" % (n["name"], op))
        elif op in SCALAR_OPS and a.get("scalar") is not None:
            # the scalar placed at scalar_index among the tensors
            v, k = scalar_of(a["scalar"]), a.get("scalar_index", 2 if op == "where" else 1)
            f = (lambda g: lambda x: g(x[:k] + [v] + x[k:], a))(OPS[op])
        else:
            f = (lambda g: lambda x: g(x, a))(OPS[op])
        self.bound[n["name"]] = f
        return f

    def order(self):
        """The nodes in an order where every input is ready (files may list
        them in any order)."""
        ready = {t for t in self.m.tensors if self.m.kind(t) in ("input", "weight")}
        todo, out = list(self.m.nodes), []
        while todo:
            rest = [n for n in todo if not all(t in ready for t in n.get("inputs", []))]
            done = [n for n in todo if all(t in ready for t in n.get("inputs", []))]
            if not done:
                raise Bad("%s: node '%s' waits for inputs nobody produces (check the model "
                          "with `fuseeng check`)" % (self.m.path, rest[0]["name"]))
            for n in done:
                out.append(n)
                ready.update(n["outputs"])
            todo = rest
        return out

    def upcast(self, n, x):
        """Run n in f32 and round back: PyTorch's CPU build has no f16
        kernel for some ops (matmul in 1.13), so a user would do this."""
        self.upcast_nodes.add(n["name"])
        return upcast_call(self.bind(n), x)

    def casts(self, n):
        """The dtype each output of n is declared with (None: as computed)."""
        decl = [self.m.tensors.get(o) or {} for o in n["outputs"]]
        return tuple(dtype_of(d["dtype"]) if "dtype" in d else None for d in decl)

    def run(self, data, order):
        """One eager run, each node's failure named (and an f16 node that
        PyTorch has no kernel for run in f32, remembered for program)."""
        env = dict(data)
        for n in order:
            x = [env[t] for t in n.get("inputs", [])]
            try:
                if n["name"] in self.upcast_nodes:
                    y = self.upcast(n, x)
                else:
                    try:
                        y = self.bind(n)(x)
                    except RuntimeError as e:
                        if "for 'Half'" not in str(e):
                            raise
                        y = self.upcast(n, x)
            except Bad:
                raise
            except Exception as e:   # torch's own message, with the node named
                raise Bad("%s: node '%s' (%s): PyTorch failed: %s"
                          % (self.m.path, n["name"], n["op"], str(e).splitlines()[0]))
            ys = y if isinstance(y, (tuple, list)) else (y,)
            for name, v, dt in zip(n["outputs"], ys, self.casts(n)):
                env[name] = v if dt is None or v.dtype == dt else v.to(dt)
        return {o: env[o] for o in self.m.outputs}

    def program(self, order):
        """The run as one function of the data dict for torch.compile,
        after run() has found the nodes to upcast: a straight line of the
        bound nodes, no exception handling, nothing decided on values."""
        steps = []
        for n in order:
            f = self.bind(n)
            if n["name"] in self.upcast_nodes:
                f = (lambda g: lambda x: upcast_call(g, x))(f)
            steps.append((f, tuple(n.get("inputs", [])), tuple(n["outputs"]), self.casts(n)))
        outputs = tuple(self.m.outputs)

        def forward(data):
            env = dict(data)
            for f, ins, outs, casts in steps:
                y = f([env[t] for t in ins])
                ys = y if isinstance(y, (tuple, list)) else (y,)
                for name, v, dt in zip(outs, ys, casts):
                    env[name] = v if dt is None or v.dtype == dt else v.to(dt)
            return {o: env[o] for o in outputs}
        return forward


def upcast_call(f, x):
    y = f([v.float() if isinstance(v, torch.Tensor) and v.dtype == torch.float16 else v
           for v in x])
    return y.half() if y.is_floating_point() else y


def parse_args(argv):
    o = {"dims": {}, "seed": 1, "budget": 1.0, "time": False, "json": False, "threads": None,
         "kernels": False, "tf32": False, "device": "cpu", "compile": ["none"]}
    files = ("--weights", "--inputs", "--save-weights", "--save-inputs", "--save-outputs")
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if a in ("--time", "--json", "--kernels", "--tf32"):
            o[a[2:]] = True
        elif a in files + ("--dim", "--seed", "--budget", "--threads", "--device", "--compile"):
            if i + 1 >= len(argv):
                raise Bad("%s needs a value" % a)
            v = argv[i + 1]
            i += 1
            if a == "--dim":
                k, _, val = v.partition("=")
                if not val.isdigit():
                    raise Bad("--dim %s: write NAME=V with V a positive integer" % v)
                o["dims"][k] = int(val)
            elif a in ("--seed", "--threads"):
                o[a[2:]] = int(v)
            elif a == "--budget":
                o["budget"] = float(v)
            elif a == "--compile":
                o["compile"] = [m for m in v.split(",") if m]
            else:
                o[a[2:].replace("-", "_")] = v
        elif a.startswith("-"):
            raise Bad("unknown option %s (see --help)" % a)
        elif "model" in o:
            raise Bad("one model file, please (got %s and %s)" % (o["model"], a))
        else:
            o["model"] = a
        i += 1
    if "model" not in o:
        raise Bad("usage: torch_eager.py MODEL.json [options] (see --help)")
    return o


def text_line(m, r, threads):
    """The --time line of one mode."""
    how = "eager" if r["compile"] == "none" else "torch.compile %s" % r["compile"]
    where = "%d threads" % threads if r["device"] == "cpu" else r["gpu"]
    s = "%s: PyTorch %s %s, %s" % (m.name, torch.__version__, how, where)
    if "ms" in r:
        s += ": %.3f ms median of %d runs (quartiles %.3f-%.3f)" % (
            r["ms"], r["runs"], r["q1_ms"], r["q3_ms"])
    if "compile_s" in r:
        s += "; compile %.1f s (%d warm-up runs)" % (r["compile_s"], r["warmup_runs"])
    if "kernels" in r:
        s += "; %s kernels a run" % ("?" if r["kernels"] is None else r["kernels"])
    return s


def compile_notes(r):
    """What Dynamo and Inductor did not do as asked, for stderr."""
    notes = []
    if r.get("graph_breaks"):
        notes.append("%d graph break(s): the code around each runs eager, the rest compiled "
                     "(%s)" % (r["graph_breaks"], "; ".join(r["break_reasons"])[:600]))
    if r.get("cudagraph_skips"):
        notes.append("Inductor skipped CUDA graphs %d time(s): those parts run as with "
                     "--compile default (TORCH_LOGS=perf_hints says why)" % r["cudagraph_skips"])
    return notes


def main(argv):
    o = parse_args(argv)
    try:
        device = torch_measure.check_device(o["device"])
        torch_measure.check_compile(o["compile"], device)
    except torch_measure.Unavailable as e:
        raise Bad(str(e))
    threads = o["threads"] or int(os.environ.get("OMP_NUM_THREADS") or 0) or os.cpu_count()
    torch.set_num_threads(threads)
    if device.type == "cuda":
        # f32 as f32 (fuseeng's kernels and cuBLAS calls do not round to
        # TF32); --tf32 lets matmuls and convolutions use it
        torch.backends.cuda.matmul.allow_tf32 = o["tf32"]
        torch.backends.cudnn.allow_tf32 = o["tf32"]
    m = Model(o["model"], o["dims"])
    gen = torch.Generator().manual_seed(o["seed"])
    data = {}
    for kind, key in (("weight", "weights"), ("input", "inputs")):
        if o.get(key):
            data.update(take_data(m, st_read(o[key]), o[key], kind))
        else:
            data.update({t: random_tensor(m, t, gen) for t in m.tensors if m.kind(t) == kind})
    r = Runner(m, device)
    order = r.order()
    dev_data = {k: v.to(device) for k, v in data.items()} if device.type != "cpu" else data
    with torch.inference_mode():
        out = r.run(dev_data, order)   # the reference run: finds the nodes to upcast
    base = {"model": m.name, "threads": threads, "torch": torch.__version__,
            "upcast_nodes": len(r.upcast_nodes), "device": device.type}
    if device.type == "cuda":
        base.update({"gpu": torch_measure.describe_device(device), "cuda": torch.version.cuda,
                     "tf32": o["tf32"]})
    results = []
    measuring = o["time"] or o["kernels"]
    for mode in o["compile"]:
        fn = (lambda d: r.run(d, order)) if mode == "none" else r.program(order)
        if mode == "cudagraphs":
            for t in dev_data.values():   # the same tensors every run: no copy into the graph
                torch._dynamo.mark_static_address(t)
        if mode == "none" and not measuring:
            res = {"compile": "none"}
        else:
            ctx = torch.inference_mode() if mode == "none" else torch.no_grad()
            try:
                with ctx:
                    res = torch_measure.measure(fn, dev_data, mode, device, o["budget"],
                                                o["time"], o["kernels"],
                                                1 if device.type == "cpu" else 3)
            except Bad:
                raise
            except Exception as e:
                raise Bad("%s: %s on %s failed: %s: %s" % (
                    m.path, "eager" if mode == "none" else "torch.compile " + mode,
                    device.type, type(e).__name__, (str(e).strip().splitlines() or [""])[0]))
        res = dict(base, **res)
        for note in compile_notes(res):
            sys.stderr.write("torch_eager: %s: --compile %s: %s\n" % (m.name, mode, note))
        results.append(res)
        if o["json"]:
            print(json.dumps(res), flush=True)
        elif measuring:
            print(text_line(m, res, threads), flush=True)
    for key, kind in (("save_weights", "weight"), ("save_inputs", "input")):
        if o.get(key):
            st_write.write(o[key], {t: v for t, v in data.items() if m.kind(t) == kind})
    if o.get("save_outputs"):
        st_write.write(o["save_outputs"], out)
    if r.upcast_nodes and not o["json"]:
        print("%d f16 nodes ran in f32 (PyTorch %s has no f16 %s kernel for them), e.g. %s"
              % (len(r.upcast_nodes), torch.__version__, device.type.upper(),
                 sorted(r.upcast_nodes)[0]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Bad as e:
        sys.stderr.write("torch_eager: %s\n" % e)
        sys.exit(2)
