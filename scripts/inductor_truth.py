#!/usr/bin/python3
"""inductor_truth.py: which of a model's nodes each Inductor kernel computes (a truth file).

    python3 scripts/inductor_truth.py MODEL... -o DIR [--device cuda] [--keep-views]
    python3 scripts/inductor_truth.py --all -o DIR
    python3 scripts/inductor_truth.py --list
    python3 scripts/inductor_truth.py --selftest [--device cuda]

MODEL is a name from --list (torchvision CNNs and ViT, transformer blocks, and
`transformers` models built from a config when that package is installed) or
a dotted callable / file.py:Name as export_torch.py takes, with --input
NAME=SHAPE. For each model it writes DIR/NAME.json (the fuseeng model) and
DIR/NAME.truth.json (fuseeng.truth/1, docs/formats.md), for
`fuseeng ab DIR/NAME.json --policy ... --against DIR/NAME.truth.json`, and
DIR/NAME.kernels.txt (each kernel's aten origins and where they led: what
to read when a mapping looks wrong).

One trace gives both files. torch.compile(fullgraph=True) calls our backend
with dynamo's FX graph; the backend converts that very graph with
fx_to_fuseeng.py (so node names are dynamo's, as export_torch.py's are
torch.fx's) and then hands it to Inductor's compile_fx with default options
(caches off, so that the scheduler runs). A hook on Inductor's Scheduler
reads its nodes once fusion is done: each is one kernel (a Triton kernel,
an extern call such as a cuBLAS mm; no-op nodes and MultiOutput are none),
with `origins`, the post-AOTAutograd aten FX nodes it computes (an inlined
pointwise producer counts in each kernel that recomputes it). An aten node
leads back to the dynamo node it was traced from through
node.meta["from_node"] (NodeSource chains; the deepest name in dynamo's
graph wins), else meta["source_fn_stack"]. Only origins that compute
count: a view origin (reshape, permute, clone ...: VIEW_ATEN) names a
tensor the kernel reads, and an extern kernel with a library call among
its origins (mm, bmm, convolution ...: LIBRARY_ATEN) counts those alone,
since its other origins are what Inductor inlined into its input; a
generated kernel leaves out the origins of a kernel whose stored buffer it
reads (read_origins). A dynamo
node that became several of our nodes (F.linear: matmul + add) gives an
extern kernel its library node (matmul, conv2d, sdpa) and a generated
kernel the rest. DIR/NAME.origins.json keeps each kernel's origins, so
`--refilter DIR/NAME.truth.json` re-derives the truth by these rules on
any machine (docs/formats.md). View
nodes (reshape, transpose, expand, slice) are left out of the kernels
unless --keep-views: Inductor folds them into index math, and fuseeng
launches nothing for them; a kernel left with no node (a copy Inductor
materialises for a view) stays in the file with an empty list.

Exit status 2 for bad input or a model Inductor or the converter refuses
(the message names the model and what failed), 1 when --selftest fails.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_file import check_truth, save_refiltered, truth_doc, truth_json, write_atomic  # noqa: E402

LIBRARY = {"matmul", "conv2d", "sdpa"}          # fe.ops[op].library: extern kernels
VIEWS = {"reshape", "transpose", "expand", "slice"}   # fe.ops[op].view
SKIP_KERNELS = {"NopKernelSchedulerNode"}
SKIP_EXTERN = {"MultiOutput"}                    # indexes a tuple: launches nothing


class TruthError(Exception):
    """Bad input or a refusal, said in one line."""


class Skipped(Exception):
    """A model this machine cannot build (a package missing): said, not an error."""


# ---- pure parts (no dynamo needed; tests/cli/inductor_truth.sh runs them) ----

def _field(src, key):
    if isinstance(src, dict):
        return src.get(key)
    if isinstance(src, (tuple, list)):   # older torch: (name, target)
        return src[0] if key == "name" and src else None
    return getattr(src, key, None)


def source_names(meta, graph_id=None):
    """Candidate dynamo node names for an aten node's meta, best first.

    from_node is a list of NodeSource (name, graph_id, from_node ...): walked
    breadth first, the deepest names are nearest the user's graph, so they
    come first; with graph_id, names recorded for that graph come before
    all others. source_fn_stack's innermost name comes last.
    """
    levels, frontier = [], list(meta.get("from_node") or [])
    while frontier:
        levels.append(frontier)
        nxt = []
        for s in frontier:
            nxt.extend(_field(s, "from_node") or [])
        frontier = nxt
    ordered = [s for level in reversed(levels) for s in level]
    names = []
    if graph_id is not None:
        names += [_field(s, "name") for s in ordered if _field(s, "graph_id") == graph_id]
    names += [_field(s, "name") for s in ordered]
    stack = meta.get("source_fn_stack") or []
    if stack:
        names.append(_field(stack[-1], "name"))
    out = []
    for n in names:
        if n and n not in out:
            out.append(n)
    return out


def nodes_of_kernel(kind, dyn_names, by_fx, ops, keep_views=False):
    """Our nodes a kernel computes, given the dynamo nodes its origins lead to.

    by_fx: dynamo name -> our node names (model order); ops: our name -> op.
    An extern kernel takes the library ops its origins lead to, and its
    other ops only when none is a library op (an aten fallback): a
    convolution's origins also name the batch norm and ReLU that made its
    input, which a generated kernel before it computed. A generated kernel
    takes the other ops only: one whose origins are all library ops copies
    their inputs (channels_last for a convolution) and computes none of ours.
    """
    out = []
    any_lib = any(ops[n] in LIBRARY for d in dyn_names for n in by_fx.get(d, []))
    for d in dyn_names:
        mine = by_fx.get(d, [])
        lib = [n for n in mine if ops[n] in LIBRARY]
        rest = [n for n in mine if ops[n] not in LIBRARY]
        pick = (lib if any_lib else rest) if kind == "extern" else rest
        for n in pick:
            if (keep_views or ops[n] not in VIEWS) and n not in out:
                out.append(n)
    return out


# Aten ops that move or relabel data and compute none of the model's values.
# An origin with one of these targets is index math (or a layout copy) that
# Inductor folded into a kernel reading the tensor: the reshape of the
# previous bmm's output is an origin of the next bmm, and leads back to the
# previous matmul, which that kernel does not compute.
VIEW_ATEN = {"view", "reshape", "_unsafe_view", "_reshape_alias", "permute", "transpose", "t",
             "expand", "expand_as", "view_as", "clone", "contiguous", "split", "split_with_sizes",
             "unbind", "chunk", "slice", "select", "narrow", "squeeze", "unsqueeze", "flatten",
             "unflatten", "movedim", "as_strided", "alias", "detach", "diagonal", "view_of",
             "lift_fresh_copy"}


# Aten ops an extern kernel calls a library for. An extern kernel's origins
# also hold the pointwise ops inlined into its input (a bias add: F.linear's
# add, whose dynamo node also made the previous matmul); when some origin is
# one of these, they alone say which library node the call computes.
LIBRARY_ATEN = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "_int_mm", "_scaled_mm",
                "convolution", "_convolution", "cudnn_convolution", "convolution_overrideable",
                "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                "_scaled_dot_product_fused_attention_overrideable", "_flash_attention_forward",
                "_efficient_attention_forward"}


def aten_op(target):
    """aten.reshape.default -> reshape; prims.view_of.default -> view_of; add -> add."""
    parts = str(target).split(".")
    if len(parts) >= 3 and parts[0] in ("aten", "prims", "torch", "inductor"):
        return parts[1]
    if len(parts) == 2 and parts[0] in ("aten", "prims"):
        return parts[1]
    return parts[-1]


def is_view_target(target):
    """True when an aten origin only moves data (VIEW_ATEN)."""
    return aten_op(target) in VIEW_ATEN


def kernel_nodes(kind, origins, by_fx, ops, keep_views=False):
    """Our nodes a kernel computes, from its origins [(aten target, dynamo
    name or None[, position in the aten graph])].

    Only origins whose target computes (not is_view_target) lead to nodes:
    a view origin names the node whose output the kernel reads, not one it
    computes. An extern kernel is one library call: with library calls
    among its origins (LIBRARY_ATEN) it takes the last of them in the aten
    graph (its other origins, earlier calls among them, are the producers
    Inductor inlined into its input: a concat of two convolutions before a
    third); without positions, all of them. A kernel whose origins are all
    views (a copy Inductor makes for a layout) takes them all, so a copy
    node of ours is still found. Then nodes_of_kernel splits library and
    other ops.
    """
    origins = [(o[0], o[1], o[2] if len(o) > 2 else None) for o in origins]   # args (o[3]) unused yet
    compute = [d for t, d, _ in origins if d is not None and not is_view_target(t)]
    lib = [(p, d) for t, d, p in origins if d is not None and aten_op(t) in LIBRARY_ATEN]
    if kind == "extern" and lib:
        if all(p is not None for p, _ in lib):
            last = max(p for p, _ in lib)
            lib = [(p, d) for p, d in lib if p == last]
        compute = [d for _, d in lib]
    elif not compute and all(is_view_target(t) for t, _, _ in origins):
        compute = [d for _, d, _ in origins if d is not None]
    dnames = []
    for d in compute:
        if d not in dnames:
            dnames.append(d)
    return nodes_of_kernel(kind, dnames, by_fx, ops, keep_views)


# ---- the models ----

def _blocks():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class GPTBlock(nn.Module):
        """GPT-2's block: pre-LN, causal softmax attention, tanh-GELU MLP."""

        def __init__(self, d=768, h=12, s=128):
            super().__init__()
            self.h = h
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("mask", torch.tril(torch.ones(s, s)).view(1, 1, s, s))

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, s, self.h, d // self.h).transpose(1, 2)
            k = k.view(b, s, self.h, d // self.h).transpose(1, 2)
            v = v.view(b, s, self.h, d // self.h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.h))
            att = att.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
            y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LlamaBlock(nn.Module):
        """LLaMA's block: RMSNorm, SDPA (causal), SwiGLU MLP."""

        def __init__(self, d=1024, h=16, f=2816):
            super().__init__()
            self.h = h
            self.w1, self.w2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
            self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.gate, self.up = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
            self.down = nn.Linear(f, d, bias=False)

        def rms(self, x, w):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.rms(x, self.w1)).split(d, dim=2)
            q, k, v = (t.view(b, s, self.h, d // self.h).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(y.transpose(1, 2).reshape(b, s, d))
            y = self.rms(x, self.w2)
            return x + self.down(F.silu(self.gate(y)) * self.up(y))

    class BertBlock(nn.Module):
        """BERT's encoder layer: SDPA (no mask), post-LN, erf GELU."""

        def __init__(self, d=768, h=12, f=3072):
            super().__init__()
            self.h = h
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
            self.fc1, self.fc2 = nn.Linear(d, f), nn.Linear(f, d)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q, k, v = (t.view(b, s, self.h, d // self.h).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v)
            x = self.ln1(x + self.o(y.transpose(1, 2).reshape(b, s, d)))
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    return GPTBlock, LlamaBlock, BertBlock


def zoo():
    """name -> (what it is, builder returning (module, [inputs])); torch is imported by the builders."""

    def tv(name, size=224):
        def build():
            import torch
            import torchvision
            m = getattr(torchvision.models, name)(weights=None)
            return m, [torch.randn(1, 3, size, size)]
        return f"torchvision.models.{name}, 1x3x{size}x{size}", build

    def block(i, d):
        def build():
            import torch
            return _blocks()[i](), [torch.randn(1, 128, d)]
        return build

    def hf(kind):
        def build():
            import torch
            try:
                import transformers
            except ImportError:
                raise Skipped("transformers is not installed for this Python")
            if kind == "gpt2":
                cfg = transformers.GPT2Config(n_layer=2, n_positions=128)
                m = transformers.GPT2Model(cfg)
            elif kind == "bert":
                cfg = transformers.BertConfig(num_hidden_layers=2)
                m = transformers.BertModel(cfg)
            else:
                cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=1024, num_attention_heads=16,
                                               num_key_value_heads=16, intermediate_size=2816,
                                               vocab_size=32000)
                m = transformers.LlamaModel(cfg)
            m.config.use_cache = False
            m.config.return_dict = False
            return m, [torch.randint(0, 1000, (1, 128))]
        return build

    z = {n: tv(n) for n in ("resnet18", "resnet50", "mobilenet_v3_small", "mobilenet_v2", "efficientnet_b0",
                            "convnext_tiny", "regnet_y_400mf", "densenet121", "squeezenet1_1",
                            "shufflenet_v2_x1_0", "mnasnet0_5", "vgg11", "vit_b_16")}
    z["gpt_block"] = ("GPT-2-style block written here (d 768, 12 heads, S 128)", block(0, 768))
    z["llama_block"] = ("LLaMA-style block written here (d 1024, 16 heads, S 128)", block(1, 1024))
    z["bert_block"] = ("BERT-style block written here (post-LN, SDPA, erf GELU; d 768, S 128)", block(2, 768))
    z["hf_gpt2_2l"] = ("transformers GPT2Model from GPT2Config(n_layer=2), S 128", hf("gpt2"))
    z["hf_bert_2l"] = ("transformers BertModel from BertConfig(num_hidden_layers=2), S 128", hf("bert"))
    z["hf_llama_2l"] = ("transformers LlamaModel, 2 layers of d 1024, S 128", hf("llama"))
    return z


# ---- the dynamo side ----

class _State:
    def __init__(self):
        self.graphs = []      # (id of dynamo's graph, its node names, convert_dynamo's result)
        self.kernels = []     # per Scheduler: [(kind, name, detail, [aten origin info])]
        self.hooked = False


STATE = _State()


def _position(o, cache):
    """o's index in its aten graph (origins of one kernel share the graph)."""
    g = getattr(o, "graph", None)
    if g is None:
        return None
    if id(g) not in cache:
        cache[id(g)] = {n: i for i, n in enumerate(g.nodes)}
    return cache[id(g)].get(o)


def _origin_info(o, cache):
    return {"name": o.name, "target": str(o.target), "pos": _position(o, cache),
            "args": [i.name for i in getattr(o, "all_input_nodes", ())], "meta": {
        "from_node": o.meta.get("from_node"), "source_fn_stack": o.meta.get("source_fn_stack")}}


def _kernels_of(sched, device_kind):
    out, cache = [], {}
    for i, sn in enumerate(sched.nodes):
        cls = type(sn).__name__
        if cls in SKIP_KERNELS:
            continue
        ir = getattr(sn, "node", None)
        if cls == "ExternKernelSchedulerNode":
            if type(ir).__name__ in SKIP_EXTERN:
                continue
            kind = "extern"
            detail = getattr(ir, "python_kernel_name", None) or type(ir).__name__
        elif cls == "ForeachKernelSchedulerNode":
            kind, detail = "combo", cls
        else:
            tmpl = getattr(sn, "is_template", None)
            kind = "template" if callable(tmpl) and tmpl() else device_kind
            detail = cls
        members = sn.get_nodes() if hasattr(sn, "get_nodes") else [sn]
        origins = []
        for m in members:
            for o in getattr(getattr(m, "node", None), "origins", None) or ():
                if getattr(o, "op", None) == "call_function" and o not in origins:
                    origins.append(o)
        name = sn.get_name() if hasattr(sn, "get_name") else f"node{i}"
        out.append((kind, f"{kind}{len(out)}:{name}", detail,
                    [_origin_info(o, cache) for o in sorted(origins, key=lambda o: o.name)],
                    _buffers(sn)))
    return out


def _buffers(sn):
    """{"reads": [...], "writes": [...]}: the buffers a scheduler node loads and stores."""
    rw = getattr(sn, "read_writes", None)
    reads = sorted({d.name for d in getattr(rw, "reads", ()) or () if getattr(d, "name", None)})
    get = getattr(sn, "get_buffer_names", None)
    writes = sorted(get()) if callable(get) else \
        sorted({d.name for d in getattr(rw, "writes", ()) or () if getattr(d, "name", None)})
    return {"reads": reads, "writes": [w for w in writes if w not in reads]}


def hook_scheduler(device_kind):
    """Record every Scheduler's kernels once its __init__ (where fusion happens) returns."""
    if STATE.hooked:
        return
    from torch._inductor import scheduler as S
    cls = getattr(S, "Scheduler", None)
    if cls is None or not hasattr(cls, "__init__"):
        raise TruthError("torch._inductor.scheduler has no Scheduler class to hook in this torch")
    orig = cls.__init__

    def init(self, *a, **k):
        orig(self, *a, **k)
        STATE.kernels.append(_kernels_of(self, device_kind))

    cls.__init__ = init
    STATE.hooked = True


def _real(t):
    """A real tensor for a fake example input (values only feed shapes here)."""
    import torch
    try:
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError:
        return t
    if not isinstance(t, FakeTensor):
        return t
    if t.dtype.is_floating_point:
        return torch.randn(tuple(t.shape), dtype=t.dtype, device=t.device.type)
    return torch.zeros(tuple(t.shape), dtype=t.dtype, device=t.device.type)


def _weight_name(placeholder):
    """l_self_modules_conv1_parameters_weight_ -> conv1.weight (a readable guess)."""
    s = "_" + placeholder.lower().strip("_") + "_"
    for p in ("_l_self_", "_l__self___", "_l_"):
        if s.startswith(p):
            s = "_" + s[len(p):]
            break
    for a in ("_modules_", "_parameters_", "_buffers_"):
        s = s.replace(a, ".")
    return s.strip("_.") or placeholder


def record_meta(gm, args, params):
    """Fill node.meta as fx_trace does (tensor_meta, value, const) by running gm on args."""
    import torch
    import torch.fx
    from fx_trace import _extract_tensor_metadata, _holds_tensor, _map_tensors

    class Rec(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            meta = _map_tensors(v, _extract_tensor_metadata)
            if meta is not v or isinstance(v, torch.Tensor):
                n.meta["tensor_meta"] = meta
            if not _holds_tensor(v):
                n.meta["value"] = v
            ins = n.all_input_nodes
            if n.op == "get_attr" or (n.op == "placeholder" and n.name in params) or \
                    (n.op not in ("placeholder", "output") and ins and all("const" in i.meta for i in ins)):
                n.meta["const"] = v
            return v

    with torch.no_grad():
        Rec(gm).run(*args)


def convert_dynamo(gm, example_inputs, module, name, source):
    """(model dict, our node -> dynamo node name, warnings) from dynamo's graph."""
    import torch
    from fx_to_fuseeng import convert
    ids = {}
    for qn, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        ids.setdefault(id(t), qn)
    args = [_real(t) for t in example_inputs]
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(phs) != len(args):
        raise TruthError(f"dynamo's graph has {len(phs)} inputs but {len(args)} example inputs came")
    params = {}
    for n, t, a in zip(phs, example_inputs, args):
        if id(t) in ids:
            params[n.name] = (ids[id(t)], a.detach())
        elif isinstance(t, torch.nn.Parameter) or "_parameters_" in n.name or "_buffers_" in n.name:
            params[n.name] = (_weight_name(n.name), a.detach())
    record_meta(gm, args, params)
    origins = {}
    model, _weights, warns = convert(gm, name, source, gm, params=params, origins=origins)
    return model, origins, warns


def compile_and_map(name, module, inputs, device, keep_views, out_dir, command):
    """Compile module with Inductor, export the model from dynamo's graph, write the files."""
    import torch
    import torch._dynamo
    from torch._inductor.compile_fx import compile_fx
    import torch._inductor.config as icfg
    from model_json import model_json as _json

    for k in ("force_disable_caches", ):
        if hasattr(icfg, k):
            setattr(icfg, k, True)
    if hasattr(icfg, "fx_graph_cache"):
        icfg.fx_graph_cache = False
    hook_scheduler("triton" if device == "cuda" else "cpp")
    STATE.graphs.clear()
    STATE.kernels.clear()

    source = f"inductor_truth.py {name} (dynamo graph, torch {torch.__version__})"

    def backend(gm, example_inputs):
        # Converted before compile_fx: its pre-grad passes may rewrite gm in place.
        converted = convert_dynamo(gm, example_inputs, module, name, source)
        STATE.graphs.append((id(gm.graph), {n.name for n in gm.graph.nodes}, converted))
        return compile_fx(gm, example_inputs)

    torch._dynamo.reset()
    module = module.eval().to(device)
    inputs = [t.to(device) for t in inputs]
    opt = torch.compile(module, backend=backend, fullgraph=True, dynamic=False)
    with torch.no_grad():
        opt(*inputs)
    if len(STATE.graphs) != 1:
        raise TruthError(f"{len(STATE.graphs)} dynamo graphs (one expected: fullgraph=True)")
    if not STATE.kernels:
        raise TruthError("Inductor's Scheduler never ran (a cache answered? set "
                         "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1)")
    graph_id, dyn, (model, origin_of, warns) = STATE.graphs[0]
    ops = {n["name"]: n["op"] for n in model["nodes"]}
    by_fx = {}
    for n in model["nodes"]:
        by_fx.setdefault(origin_of.get(n["name"]), []).append(n["name"])
    records, log, unmapped = [], [], 0
    for ks in STATE.kernels:
        for kind, kname, detail, origins, bufs in ks:
            mapped = []
            log.append(f"{kname} ({kind}, {detail})")
            for o in origins:
                cands = source_names(o["meta"], graph_id)
                d = next((c for c in cands if c in dyn), None)
                log.append(f"    {o['name']} {o['target']} -> {d or 'NOTHING (' + ', '.join(cands) + ')'}"
                           f" -> {', '.join(by_fx.get(d, [])) or '-'}")
                unmapped += d is None
                mapped.append([o["name"], o["target"], d, o["pos"], o["args"]])
            records.append({"name": kname, "kind": kind, "detail": detail, "origins": mapped,
                            "reads": bufs["reads"], "writes": bufs["writes"]})
    side = origins_doc(name + ".truth.json", keep_views, by_fx, records)
    kernels = kernels_from_origins(side, model)
    os.makedirs(out_dir, exist_ok=True)
    mpath = os.path.join(out_dir, name + ".json")
    text = _json(model)
    write_atomic(mpath, text)
    dev = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    doc = truth_doc(mpath, text, "inductor", f"torch {torch.__version__}", kernels, dev, command)
    bad = check_truth(doc, model)
    if bad:
        raise TruthError("the truth does not fit the model: " + "; ".join(bad[:5]))
    write_atomic(os.path.join(out_dir, name + ".truth.json"), truth_json(doc))
    write_atomic(os.path.join(out_dir, name + ".kernels.txt"), "\n".join(log) + "\n")
    write_atomic(os.path.join(out_dir, name + ".origins.json"), truth_json(side))
    return {"nodes": len(model["nodes"]), "kernels": len(kernels),
            "extern": sum(1 for k in kernels if k[1] == "extern"),
            "covered": len({n for k in kernels for n in k[2]}), "unmapped": unmapped,
            "customs": sum(1 for n in model["nodes"] if n["op"] == "custom"), "warnings": warns}


ORIGINS_FORMAT = "fuseeng.truth-origins/1"


def origins_doc(truth_file, keep_views, by_fx, records):
    """The side file NAME.origins.json (docs/formats.md): each kernel's aten
    origins [aten name, target, dynamo node or null] and which of our nodes
    each dynamo node became, so --refilter re-derives the truth without a GPU."""
    return {"format": ORIGINS_FORMAT, "truth": truth_file, "keep_views": bool(keep_views),
            "by_fx": {k: v for k, v in by_fx.items() if k is not None}, "kernels": records}


def read_origins(kernels):
    """Per kernel, the aten origins of the kernels that wrote a buffer it reads.

    Inductor gives a node the origins of the unrealized producers it was
    lowered from (gather_origins) even when a producer is realized later
    into a kernel of its own: a max pool after a concat names the concat and
    the ReLUs before it, which a kernel before it computed and stored. A
    kernel that reads that stored buffer does not compute them again (one
    that recomputes a producer reads the producer's inputs instead).
    Kernels recorded without reads and writes give empty sets.
    """
    writer = {}
    for i, k in enumerate(kernels):
        for b in k.get("writes", ()):
            writer[b] = i
    out = []
    for i, k in enumerate(kernels):
        got = set()
        for b in k.get("reads", ()):
            j = writer.get(b)
            if j is not None and j != i:
                got |= {o[0] for o in kernels[j]["origins"]}
        out.append(got)
    return out


def kernels_from_origins(side, model):
    """[(name, kind, nodes in model order, detail)] by kernel_nodes' rules."""
    if side.get("format") != ORIGINS_FORMAT:
        raise ValueError(f"format is {side.get('format')!r}, not {ORIGINS_FORMAT}")
    ops = {n["name"]: n["op"] for n in model["nodes"]}
    order = {n["name"]: i for i, n in enumerate(model["nodes"])}
    by_fx = side["by_fx"]
    for d, ours in by_fx.items():
        for n in ours:
            if n not in ops:
                raise ValueError(f"by_fx[{d!r}]: {n} is not a node of the model")
    out = []
    for k, read in zip(side["kernels"], read_origins(side["kernels"])):
        origins = [tuple(o[1:]) for o in k["origins"] if k["kind"] == "extern" or o[0] not in read]
        nodes = kernel_nodes(k["kind"], origins, by_fx, ops, side.get("keep_views", False))
        detail = k["detail"] + ("" if nodes or not k["origins"] else "; computes no node of ours")
        out.append((k["name"], k["kind"], sorted(nodes, key=order.get), detail))
    return out


def refilter(truth_path):
    """Re-derive a truth file's kernels by this script's current rules,
    without a GPU. With NAME.origins.json beside it, from the recorded
    origins (kernel_nodes); without (a file written before the side file),
    the extern rule alone: an extern kernel that holds a library op keeps
    its library ops only. Returns the kernels changed."""
    doc = json.load(open(truth_path))
    model = json.load(open(os.path.join(os.path.dirname(truth_path), doc["model"]["file"])))
    ops = {n["name"]: n["op"] for n in model["nodes"]}
    side_path = truth_path[:-len(".truth.json")] + ".origins.json" \
        if truth_path.endswith(".truth.json") else None
    changed = 0
    if side_path and os.path.exists(side_path):
        side = json.load(open(side_path))
        new = kernels_from_origins(side, model)
        if [k["name"] for k in doc["kernels"]] != [k[0] for k in new]:
            raise ValueError(f"{side_path} lists other kernels than {truth_path}")
        for k, (_, _, nodes, detail) in zip(doc["kernels"], new):
            if k["nodes"] != nodes:
                k["nodes"], changed = nodes, changed + 1
            k["detail"] = detail
    else:
        for k in doc["kernels"]:
            if k["kind"] == "extern" and any(ops[n] in LIBRARY for n in k["nodes"]):
                lib = [n for n in k["nodes"] if ops[n] in LIBRARY]
                if lib != k["nodes"]:
                    k["nodes"], changed = lib, changed + 1
    save_refiltered(truth_path, doc, model, changed, "inductor_truth.py")
    return changed


def _check_torch():
    try:
        import torch
    except ImportError:
        raise TruthError(f"torch is not installed for {sys.executable} (the GPU machine's python3 has it)")
    major = int(torch.__version__.split(".")[0])
    if major < 2:
        raise TruthError(f"torch {torch.__version__} has no torch.compile (Inductor needs torch >= 2)")


def run_one(name, build, a, command):
    import torch
    torch.manual_seed(a.seed)
    t0 = time.time()
    module, inputs = build()
    info = compile_and_map(name, module, inputs, a.device, a.keep_views, a.out, command)
    print(f"{name}: {info['nodes']} nodes ({info['customs']} custom), {info['kernels']} kernels "
          f"({info['extern']} extern), {info['covered']} nodes in some kernel, "
          f"{info['unmapped']} aten origins mapped to no dynamo node, {time.time() - t0:.0f} s", flush=True)
    for w in info["warnings"]:
        print(f"inductor_truth.py: {name}: warning: {w}", file=sys.stderr)
    return info


def selftest(a):
    """A small MLP with a softmax, through the whole path; checks what must hold."""
    import tempfile
    import torch
    import torch.nn as nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(256, 512), nn.Linear(512, 256)

        def forward(self, x):
            return torch.softmax(self.fc2(torch.relu(self.fc1(x))) * 0.5, dim=-1)

    a.out = a.out or tempfile.mkdtemp(prefix="inductor_truth.")
    info = run_one("selftest_mlp", lambda: (MLP(), [torch.randn(64, 256)]), a, "inductor_truth.py --selftest")
    doc = json.load(open(os.path.join(a.out, "selftest_mlp.truth.json")))
    model = json.load(open(os.path.join(a.out, "selftest_mlp.json")))
    kinds = {k["kind"] for k in doc["kernels"]}
    ext = [k for k in doc["kernels"] if k["kind"] == "extern"]
    problems = check_truth(doc, model)
    if "extern" not in kinds:
        problems.append("no extern kernel (the two matmuls)")
    if any(not k["nodes"] for k in ext):
        problems.append("an extern kernel maps to no node")
    if info["unmapped"] * 2 > sum(len(k["nodes"]) for k in doc["kernels"]):
        # Nodes a post-grad pattern made (amax_default) carry no provenance;
        # most must have some.
        problems.append(f"{info['unmapped']} aten origins mapped to no dynamo node (see selftest_mlp.kernels.txt)")
    if not any(len(k["nodes"]) > 1 for k in doc["kernels"]):
        problems.append("no kernel holds two nodes (Inductor fuses the bias, relu, scale and softmax)")
    print(f"selftest: files in {a.out}; kernels: "
          + "; ".join(f"{k['kind']} {k['nodes']}" for k in doc["kernels"]))
    for p in problems:
        print(f"selftest: FAILED: {p}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    ap = argparse.ArgumentParser(prog="inductor_truth.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", metavar="MODEL")
    ap.add_argument("-o", dest="out", metavar="DIR")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--input", action="append", default=[], metavar="NAME=SHAPE[:DTYPE]")
    ap.add_argument("--keep-views", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--all", action="store_true", help="every model --list names")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--refilter", nargs="+", metavar="TRUTH",
                    help="apply the extern rule to truth files written before it (no GPU)")
    a = ap.parse_args(argv)
    command = "inductor_truth.py " + " ".join(argv)
    if a.refilter:
        for t in a.refilter:
            try:
                print(f"{t}: {refilter(t)} kernels changed")
            except (OSError, ValueError, KeyError) as e:
                print(f"inductor_truth.py: {t}: {e}", file=sys.stderr)
                return 2
        return 0
    if a.list:
        for n, (what, _) in zoo().items():
            print(f"{n:20s} {what}")
        return 0
    try:
        _check_torch()
        import torch
        if a.device == "cuda" and not torch.cuda.is_available():
            raise TruthError("no CUDA device: run on the GPU machine, or give --device cpu")
        if a.selftest:
            return selftest(a)
        if a.all:
            a.models = list(a.models) + [m for m in zoo() if m not in a.models]
        if not a.models or not a.out:
            raise TruthError("give MODEL... (or --all) and -o DIR (or --list, --selftest)")
    except TruthError as e:
        print(f"inductor_truth.py: {e}", file=sys.stderr)
        return 2
    z, rc, tally = zoo(), 0, {"written": 0, "skipped": 0, "failed": 0}
    for m in a.models:
        try:
            if m in z:
                build = z[m][1]
                name = m
            else:
                from export_torch import example_inputs, load_module
                mod = load_module(m, a.seed)
                ins = example_inputs(mod, a.input, torch.float32, a.seed)[0]
                name = m.rsplit(":", 1)[-1].rsplit(".", 1)[-1].lower()
                build = (lambda mod=mod, ins=ins: (mod, list(ins.values())))
            run_one(name, build, a, command)
            tally["written"] += 1
        except Skipped as e:
            print(f"{m}: skipped: {e}", flush=True)
            tally["skipped"] += 1
        except TruthError as e:
            print(f"{m}: failed: {e}", flush=True)
            tally["failed"] += 1
            rc = 2
        except Exception as e:   # Inductor, dynamo or the converter refused it: say so, go on
            # dynamo wraps the cause (BackendCompilerFailed: "backend raised:"
            # on its first line): say the innermost one
            inner = e
            while inner.__cause__ is not None or getattr(inner, "inner_exception", None) is not None:
                inner = inner.__cause__ or inner.inner_exception
            lines = [x for x in str(inner).strip().splitlines() if x.strip()]
            why = f"{type(inner).__name__}: {lines[0][:300] if lines else ''}"
            if inner is not e:
                why = f"{type(e).__name__} from {why}"
            print(f"{m}: failed: {why}", flush=True)
            if os.environ.get("INDUCTOR_TRUTH_DEBUG"):
                traceback.print_exc()
            tally["failed"] += 1
            rc = 2
    if len(a.models) > 1:
        print(f"inductor_truth.py: {tally['written']} models written to {a.out}, {tally['skipped']} skipped, "
              f"{tally['failed']} failed")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
