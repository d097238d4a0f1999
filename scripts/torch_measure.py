"""torch_measure.py: time a model's run function, eager or under torch.compile.

torch_eager.py builds the model as a Python function of its tensors; this
module owns everything about running that function for a figure:

  * where: the CPU, or an NVIDIA GPU through CUDA (check_device);
  * how: eager, or torch.compile with Inductor, mode "default" (Triton
    kernels launched one by one) or "reduce-overhead" (the same kernels
    replayed as CUDA graphs), called here none, default and cudagraphs
    (check_compile, compiled);
  * the figure (measure): warm-up runs first (for a compiled function the
    first ones compile, and their wall time is compile_s), then timed runs
    for a budget of seconds, each run timed alone: on the CPU with the wall
    clock, on the GPU with CUDA events recorded around it and waited for,
    so a run's time includes its launches, never an overlap with the next
    run; the median and the quartiles;
  * the kernels of one run (count_kernels), under torch.profiler: on CUDA
    every device kernel the run launches (Triton kernels and extern calls
    such as cuBLAS alike: the trace's events of category "kernel", CUDA
    graph replays included), memcpy and memset not counted (reported
    apart as "copies"); on the CPU, which launches nothing, the aten ops
    that compute (views left out) the run calls at its top level, as the
    profiler nests them: a rough figure (PyTorch 1.13's profiler nests
    very short events unreliably, a few either way on a model), and none
    for a compiled run, whose C++ kernels the profiler does not name.

Errors: Unavailable, for what this PyTorch or this machine lacks (no
torch.compile, no CUDA, no Triton); the caller turns it into exit 2.
"""
import importlib.util
import json
import os
import statistics
import tempfile
import time

import torch

MODES = {"none": None, "default": "default", "cudagraphs": "reduce-overhead"}
MARK = "torch_eager.run"   # the profiler range around one run on the CPU
# aten ops that make a view or an empty tensor, computing nothing
VIEWS = {"as_strided", "slice", "reshape", "view", "_reshape_alias", "_unsafe_view", "permute",
         "transpose", "expand", "expand_as", "t", "select", "squeeze", "unsqueeze", "detach",
         "alias", "empty", "empty_strided", "contiguous", "resize_", "to", "_to_copy", "unbind",
         "split", "chunk", "narrow", "view_as", "lift_fresh"}


class Unavailable(Exception):
    """Something this PyTorch or this machine does not have."""


def check_device(name):
    """The torch.device for --device NAME, or Unavailable naming what is missing."""
    if name == "cpu":
        return torch.device("cpu")
    if name != "cuda":
        raise Unavailable("--device %s: write cpu or cuda" % name)
    if not torch.version.cuda:
        raise Unavailable("--device cuda: PyTorch %s was built without CUDA (a CPU-only build)"
                          % torch.__version__)
    if not torch.cuda.is_available():
        raise Unavailable("--device cuda: PyTorch %s (CUDA %s) sees no CUDA device: no NVIDIA "
                          "GPU or driver here (CUDA_VISIBLE_DEVICES=%s)"
                          % (torch.__version__, torch.version.cuda,
                             os.environ.get("CUDA_VISIBLE_DEVICES", "unset")))
    return torch.device("cuda", torch.cuda.current_device())


def check_compile(modes, device):
    """Unavailable if a mode other than none needs what this PyTorch lacks."""
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise Unavailable("--compile %s: write none, default or cudagraphs (comma-separated "
                          "for several)" % bad[0])
    wanted = [m for m in modes if m != "none"]
    if not wanted:
        return
    if not hasattr(torch, "compile"):
        raise Unavailable("--compile %s: torch.compile is missing in PyTorch %s (it came "
                          "with PyTorch 2.0)" % (wanted[0], torch.__version__))
    if "cudagraphs" in wanted and device.type != "cuda":
        raise Unavailable("--compile cudagraphs: CUDA graphs need --device cuda")
    if device.type == "cuda" and importlib.util.find_spec("triton") is None:
        raise Unavailable("--compile %s: Inductor needs Triton for CUDA and the triton package "
                          "is not installed for PyTorch %s" % (wanted[0], torch.__version__))


def describe_device(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "CPU"


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def compiled(fn, mode):
    """fn under torch.compile in that mode, on a fresh Dynamo state (the
    counters then describe this compile only)."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    return torch.compile(fn, mode=MODES[mode], dynamic=False)


def compile_report():
    """What Dynamo and Inductor counted since compiled(): graphs, graph
    breaks with their reasons, CUDA-graph skips."""
    c = torch._dynamo.utils.counters
    breaks = dict(c.get("graph_break", {}))
    skips = c.get("inductor", {}).get("cudagraph_skips", 0)
    return {"graphs": c.get("stats", {}).get("unique_graphs", 0),
            "graph_breaks": sum(breaks.values()), "break_reasons": sorted(breaks),
            "cudagraph_skips": skips}


def _call(fn, data, mode):
    if mode == "cudagraphs":
        # A new step for the CUDA-graph trees: the previous run's outputs
        # may be overwritten (we never keep them).
        mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
        if mark:
            mark()
    fn(data)


def time_runs(fn, data, mode, device, budget, min_runs=3, max_runs=1000):
    """Milliseconds of each timed run, for budget seconds (at least min_runs)."""
    times, end = [], time.perf_counter() + budget
    cuda = device.type == "cuda"
    while len(times) < min_runs or (time.perf_counter() < end and len(times) < max_runs):
        if cuda:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            _call(fn, data, mode)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t0 = time.perf_counter()
            _call(fn, data, mode)
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def summary(times):
    q = statistics.quantiles(times, n=4) if len(times) >= 4 else [min(times), 0, max(times)]
    return {"ms": statistics.median(times), "runs": len(times), "q1_ms": q[0], "q3_ms": q[2]}


def _profile(fn, data, mode, device):
    from torch.profiler import ProfilerActivity, profile, record_function
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    sync(device)
    with profile(activities=acts) as prof:
        with record_function(MARK):
            _call(fn, data, mode)
        sync(device)
    return prof


def count_kernels(fn, data, mode, device):
    """{"kernels": N, "kernels_what": ..., ...} for one run under torch.profiler."""
    if device.type != "cuda":
        if mode != "none":
            return {"kernels": None, "kernels_what": "not counted: a compiled CPU run's kernels "
                    "are C++ functions the profiler does not name"}
        _profile(fn, data, mode, device)   # a process's first profile counts some ops twice
        prof = _profile(fn, data, mode, device)
        top = [e for e in prof.events() if e.name == MARK]
        ops = [c for e in top for c in e.cpu_children
               if c.name.startswith("aten::") and c.name[6:] not in VIEWS]
        return {"kernels": len(ops), "kernels_what": "aten ops that compute (no views) a run "
                "calls at its top level, as the profiler nests them (the CPU launches no kernels)"}
    prof = _profile(fn, data, mode, device)
    fd, path = tempfile.mkstemp(suffix=".json", prefix="torch_eager_trace.")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    cats = {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X":
            cats[e.get("cat")] = cats.get(e.get("cat"), 0) + 1
    r = {"kernels": cats.get("kernel", 0),
         "copies": cats.get("gpu_memcpy", 0) + cats.get("gpu_memset", 0),
         "kernels_what": "CUDA kernels a run launches (Triton and extern calls such as cuBLAS "
                         "alike; memcpy and memset not counted, see copies)"}
    if r["kernels"] == 0 and mode == "cudagraphs":
        r["kernels"] = None
        r["kernels_what"] = ("none reported: this profiler did not see the kernels inside the "
                             "CUDA-graph replay")
    return r


def measure(fn, data, mode, device, budget, do_time, do_kernels, warmup):
    """Run fn(data) in a mode and return the figures (see the module note).
    fn is the eager function; mode none uses it as is. warmup: untimed runs
    before the timed ones (compiled modes: at least 3, which compile, warm
    the CUDA-graph trees and record the graph)."""
    r = {"compile": mode}
    if mode != "none":
        fn = compiled(fn, mode)
        warmup = max(warmup, 3)
    t0 = time.perf_counter()
    for _ in range(warmup):
        _call(fn, data, mode)
    sync(device)
    if mode != "none":
        r["compile_s"] = time.perf_counter() - t0
        r["warmup_runs"] = warmup
        r.update(compile_report())
    if do_time:
        r.update(summary(time_runs(fn, data, mode, device, budget)))
    if do_kernels:
        r.update(count_kernels(fn, data, mode, device))
    return r
