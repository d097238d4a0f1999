#!/usr/bin/python3
"""gpu_compare.py: fuseeng's plans against PyTorch on the same card, one table.

    python3 tests/bench/gpu_compare.py [MODEL.json ...] [options]

Run it with the python3 that has PyTorch (on the GPU machine the plain
python3, whose /usr/bin/python3 has no torch; here /usr/bin/python3):
torch_eager.py runs under the same interpreter.

Note on the method. For each model, in this order:

  1. data: scripts/torch_eager.py writes random weights and inputs once
     (--seed), on the CPU, as safetensors files; every run below reads
     them, so fuseeng and PyTorch compute on identical data;
  2. fuseeng: `$FUSEENG bench MODEL --policy P --device D --weights W
     --inputs I --json --budget S` for each policy: the plan and the
     unfused plan end to end in interleaved rounds (totals.plan,
     totals.unfused, their paired speedup) and, where the plan could be
     captured, the same replayed as a CUDA graph (totals.plan_graph,
     totals.unfused_graph); the best policy is the one whose plan has the
     lowest median;
  3. the plan's kernels: from the bench report's groups (each group's
     `how`: a fused CUDA kernel is one launch, a group of steps launches
     its kernels and cuBLAS calls, a view none; host steps counted apart),
     or where its groups do not say, from `$FUSEENG run MODEL --policy P
     --show-kernels --device cuda`; on the CPU, its groups that are not
     views;
  4. PyTorch: torch_eager.py on the same files, eager (with --kernels),
     then torch.compile default and cudagraphs ("reduce-overhead") in a
     second process, so a compile that fails or runs out of time costs the
     eager figures nothing.

Then one table, the geomeans and the targets. Beside each speedup, its
ceiling: the best policy's ops timed one by one (bench's `ops`) over
those of them that are library calls either way (matmul, conv2d, sdpa,
all_reduce), the speedup fusion would give if every other op cost
nothing (Amdahl); and the speedup of the plan over the unfused plan both
replayed as CUDA graphs ("sp graph"). A step that fails or runs
out of time is a cell that says so and a note under the table, never the
end of the run. The time limit (--max-seconds) is shared out as the run
goes: each model gets an equal part of what is left, and each step of a
model a part of the model's (by weight: data 1, each policy 1, eager 1,
compile 3), what a step leaves going to the steps after it, but never less
than the step's floor (data 30 s, a policy 15 s, eager 20 s, compile 60 s:
starting Python with PyTorch and the card alone takes seconds) while the
run has that much left: a limit too short for every model then runs the
first ones whole and says the rest were not run, rather than cutting every
model's steps short (on the H200, 450 s over 12 models had given the data
step 5 s and lost 7 of them). A step that outlasts its part is killed,
with the processes it started.

Options:
  --policy P            a policy (repeatable; default: no_fusion fuse_all
                        inductor_greedy xla_priority gcu_tlf)
  --device cuda|cpu     where both run (default cuda; cpu to try the driver
                        on a machine without a GPU: fuseeng's bench then
                        runs on this CPU as it does today)
  --budget S            fuseeng bench --budget: seconds a timed item (0.02)
  --torch-budget S      seconds of timed PyTorch runs a mode (0.5)
  --modes LIST          PyTorch modes, of none,default,cudagraphs (default
                        all three; those this PyTorch or device cannot run
                        are skipped with a note)
  --dim NAME=V          a dim for every model that has it (repeatable)
  --seed N              random data (default 1)
  --max-seconds S       the whole run's time limit (default 480)
  --json OUT            write every figure, error and note to OUT
  --merge A.json ...    print the table of earlier --json files together
                        (a run split over several commands), running nothing
  --keep DIR            keep the data files in DIR (default: a temporary
                        folder, removed at the end)

Environment: FUSEENG, the fuseeng binary (default build/fuseeng);
SHARED, the shared folder whose models/*.json are default models
(default ../shared beside the repository).

Exit status 0 when the table was printed (whatever the targets), 2 for
bad options.
"""
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EAGER = os.path.join(ROOT, "scripts", "torch_eager.py")
POLICIES = ["no_fusion", "fuse_all", "inductor_greedy", "xla_priority", "gcu_tlf"]
MODES = ["none", "default", "cudagraphs"]
WEIGHTS = {"data": 1, "policy": 1, "eager": 1, "compile": 3}
LIBRARY_OPS = ("matmul", "conv2d", "sdpa", "all_reduce")
FLOORS = {"data": 30.0, "policy": 15.0, "eager": 20.0, "compile": 60.0}
RESERVE_S = 3.0   # kept back for the table


class Bad(Exception):
    """A bad option: one line, exit 2."""


# ---- running things within a time limit ----

def run_cmd(cmd, timeout, env=None):
    """(rc, stdout, stderr) of cmd, or rc None when it outlasted timeout (the
    process and every process it started are killed)."""
    if timeout < 1:
        return None, "", "no time left"
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, env=env)
    except OSError as e:
        return 127, "", "%s: %s" % (cmd[0], e.strerror)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return None, out, err


def last_line(text):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no message"


def why(rc, err, timeout):
    if rc is None:
        return "timeout after %.0f s" % timeout
    return "exit %d: %s" % (rc, last_line(err))


class Clock:
    """The run's deadline, shared out between models and their steps."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds - RESERVE_S

    def left(self):
        return self.end - time.monotonic()

    def model_share(self, models_left):
        return max(0.0, self.left()) / max(models_left, 1)


class Steps:
    """A model's time, shared between its steps by weight, each at least its
    floor while the run (clock) has that much left."""

    def __init__(self, seconds, kinds, clock):
        self.end = time.monotonic() + seconds
        self.kinds = list(kinds)
        self.clock = clock

    def next(self):
        """Seconds for the next step."""
        k = self.kinds.pop(0)
        w = WEIGHTS[k]
        left = self.end - time.monotonic()
        share = max(0.0, left * w / (w + sum(WEIGHTS[x] for x in self.kinds)))
        t = min(max(share, FLOORS[k]), max(0.0, self.clock.left()))
        self.end = max(self.end, time.monotonic() + t)   # a floor borrows from later models
        return t


# ---- fuseeng ----

def kernels_from_how(hows, device):
    """(launches, host steps) of a plan from its groups' `how` lines, or None
    when they are not CUDA descriptions on a cuda run."""
    k = host = 0
    for how in hows:
        if how.startswith("view:"):
            continue
        if device != "cuda":
            k += 1
        elif how.startswith("cuda_fused"):
            k += 1
        elif how.startswith("cuda_steps"):
            m = re.search(r"\((\d+) kernels?, (\d+) cuBLAS, (\d+) on the host\)", how)
            if not m:
                return None
            k += int(m.group(1)) + int(m.group(2))
            host += int(m.group(3))
        else:
            return None
    return k, host


def show_kernels(fuseeng, model, dims, policy, timeout):
    """(launches, host steps) from `run --show-kernels --device cuda`, or an error string."""
    rc, out, err = run_cmd([fuseeng, "run", model, "--policy", policy, "--show-kernels",
                            "--device", "cuda"] + dims, timeout)
    if rc != 0:
        return why(rc, err, timeout)
    hows = [ln.strip() for ln in out.splitlines()
            if re.match(r"^  (cuda_fused|cuda_steps|view):", ln)]
    r = kernels_from_how(hows, "cuda")
    return r if r else "its --show-kernels lines do not parse"


def bench(fuseeng, model, dims, policy, device, w, i, budget, timeout):
    """One policy's figures from `fuseeng bench --json`."""
    cmd = [fuseeng, "bench", model, "--policy", policy, "--weights", w, "--inputs", i,
           "--json", "--budget", str(budget)] + dims
    if device == "cuda":   # the CPU is bench's default (and only device before --device)
        cmd[3:3] = ["--device", "cuda"]
    t0 = time.monotonic()
    rc, out, err = run_cmd(cmd, timeout)
    r = {"policy": policy, "seconds": round(time.monotonic() - t0, 2)}
    if rc != 0:
        r["error"] = why(rc, err, timeout)
        return r
    try:
        b = json.loads(out)
        tot = b["totals"]
        r.update({"plan_ms": tot["plan"]["median_ms"], "unfused_ms": tot["unfused"]["median_ms"],
                  "speedup": tot.get("speedup"), "speedup_interval": tot.get("speedup_interval")})
    except (ValueError, KeyError, TypeError) as e:
        r["error"] = "bench JSON without totals: %s" % e
        return r
    for key in ("plan_graph", "unfused_graph"):
        if isinstance(tot.get(key), dict) and "median_ms" in tot[key]:
            r[key + "_ms"] = tot[key]["median_ms"]
    # Amdahl's ceiling for fusion: the ops timed one by one, against those
    # of them that are library calls either way (GEMMs, convolutions,
    # attention, collectives), as if every other op were free
    ops = [o for o in b.get("ops") or [] if isinstance(o.get("median_ms"), (int, float))]
    lib = sum(o["median_ms"] for o in ops if o.get("op") in LIBRARY_OPS)
    if ops and lib > 0:
        r["ceiling"] = sum(o["median_ms"] for o in ops) / lib
    groups = b.get("groups") or []
    r["groups"] = len(groups)
    kh = kernels_from_how([g.get("how", "") for g in groups], device)
    if kh:
        r["kernels"], r["host_steps"] = kh
    return r


# ---- PyTorch ----

def probe(python):
    """What the PyTorch of python offers: version, CUDA, GPU, torch.compile, Triton."""
    code = ("import json, importlib.util, torch; c = torch.cuda.is_available(); "
            "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, "
            "'cuda_available': c, 'gpu': torch.cuda.get_device_name() if c else None, "
            "'compile': hasattr(torch, 'compile'), "
            "'triton': importlib.util.find_spec('triton') is not None}))")
    rc, out, err = run_cmd([python, "-c", code], 120)
    if rc != 0:
        return {"error": why(rc, err, 120)}
    return json.loads(out)


def torch_modes(wanted, device, pt):
    """(modes to run, {mode: why it is skipped})."""
    run, skipped = [], {}
    for m in wanted:
        if device == "cuda" and not pt["cuda_available"]:
            skipped[m] = "PyTorch %s sees no CUDA device" % pt["torch"]
        elif m != "none" and not pt["compile"]:
            skipped[m] = "torch.compile is missing in PyTorch %s" % pt["torch"]
        elif m == "cudagraphs" and device != "cuda":
            skipped[m] = "CUDA graphs need --device cuda"
        elif m != "none" and device == "cuda" and not pt["triton"]:
            skipped[m] = "Triton is not installed"
        else:
            run.append(m)
    return run, skipped


def torch_run(python, model, dims, device, modes, w, i, budget, timeout):
    """{mode: figures or {"error"}} from one torch_eager.py process."""
    cmd = [python, EAGER, model, "--weights", w, "--inputs", i, "--device", device,
           "--compile", ",".join(modes), "--time", "--budget", str(budget), "--kernels",
           "--json"] + dims
    rc, out, err = run_cmd(cmd, timeout)
    res = {}
    for line in out.splitlines():
        try:
            d = json.loads(line)
            res[d["compile"]] = d
        except (ValueError, KeyError, TypeError):
            continue
    notes = [ln[len("torch_eager: "):] for ln in err.splitlines()
             if ln.startswith("torch_eager: ") and "--compile" in ln]
    for m in modes:
        if m not in res:
            res[m] = {"error": why(rc, err, timeout) if rc != 0 else "printed no result"}
    return res, notes


# ---- one model ----

def model_dims(path, given):
    """--dim arguments for the dims of this model among given."""
    try:
        with open(path) as f:
            dims = json.load(f).get("dims") or {}
    except (OSError, ValueError):
        return []
    out = []
    for k, v in given:
        if k in dims:
            out += ["--dim", "%s=%d" % (k, v)]
    return out


def one_model(o, path, seconds, pt, modes, skipped, work, clock):
    name = os.path.splitext(os.path.basename(path))[0]
    dims = model_dims(path, o["dims"])
    r = {"model": name, "file": os.path.relpath(path, ROOT) if path.startswith(ROOT) else path,
         "dims": dims[1::2], "policies": {}, "torch": {}, "notes": []}
    t0 = time.monotonic()
    steps = Steps(seconds, ["data"] + ["policy"] * len(o["policies"])
                  + ["eager"] * ("none" in modes) + ["compile"] * any(m != "none" for m in modes),
                  clock)
    w, i = os.path.join(work, name + ".weights.safetensors"), \
        os.path.join(work, name + ".inputs.safetensors")
    t = steps.next()
    # made on the CPU by the seed whatever the device; the one run that
    # writing them costs goes to the card when there is one (a 7B layer in
    # f16 is slow on a CPU)
    dev = "cuda" if o["device"] == "cuda" and pt.get("cuda_available") else "cpu"
    rc, _, err = run_cmd([o["python"], EAGER, path, "--seed", str(o["seed"]), "--device", dev,
                          "--save-weights", w, "--save-inputs", i] + dims, t)
    if rc != 0:
        r["error"] = "data: " + why(rc, err, t)
        r["seconds"] = round(time.monotonic() - t0, 1)
        return r
    for p in o["policies"]:
        t = steps.next()
        r["policies"][p] = bench(o["fuseeng"], path, dims, p, o["device"], w, i, o["budget"], t)
    ok = [b for b in r["policies"].values() if "plan_ms" in b]
    if ok:
        best = min(ok, key=lambda b: b["plan_ms"])
        r["best"] = best["policy"]
        if o["device"] == "cuda" and "kernels" not in best:
            kh = show_kernels(o["fuseeng"], path, dims, best["policy"], min(60, steps.end -
                                                                              time.monotonic()))
            if isinstance(kh, tuple):
                best["kernels"], best["host_steps"] = kh
            else:
                r["notes"].append("plan kernels of %s: %s" % (best["policy"], kh))
    for m, reason in skipped.items():
        r["torch"][m] = {"skipped": reason}
    if "none" in modes:
        t = steps.next()
        res, notes = torch_run(o["python"], path, dims, o["device"], ["none"], w, i,
                               o["torch_budget"], t)
        r["torch"].update(res)
        r["notes"] += notes
    compiled = [m for m in modes if m != "none"]
    if compiled:
        t = steps.next()
        res, notes = torch_run(o["python"], path, dims, o["device"], compiled, w, i,
                               o["torch_budget"], t)
        r["torch"].update(res)
        r["notes"] += notes
    for f in (w, i):
        if not o["keep"] and os.path.exists(f):
            os.unlink(f)
    r["seconds"] = round(time.monotonic() - t0, 1)
    return r


# ---- the table ----

def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def figures(r):
    """The table's numbers of one model result (None where unknown)."""
    b = r["policies"].get(r.get("best")) or {}
    tm = {m: (r["torch"].get(m) or {}).get("ms") for m in MODES}
    tk = {m: (r["torch"].get(m) or {}).get("kernels") for m in MODES}
    best = b.get("plan_ms")
    f = {"best": r.get("best"), "best_ms": best, "unfused_ms": b.get("unfused_ms"),
         "speedup": b.get("speedup") or (b["unfused_ms"] / best if best and b.get("unfused_ms")
                                         else None),
         "graph_ms": b.get("plan_graph_ms"), "eager_ms": tm["none"], "compile_ms": tm["default"],
         "cudagraphs_ms": tm["cudagraphs"], "kernels": b.get("kernels"),
         "host_steps": b.get("host_steps"), "eager_kernels": tk["none"],
         "compile_kernels": tk["default"], "cudagraphs_kernels": tk["cudagraphs"],
         "ceiling": b.get("ceiling"),
         "speedup_graph": (b["unfused_graph_ms"] / b["plan_graph_ms"]
                           if b.get("unfused_graph_ms") and b.get("plan_graph_ms") else None)}
    f["vs_eager"] = best / f["eager_ms"] if best and f["eager_ms"] else None
    f["vs_compile"] = best / f["compile_ms"] if best and f["compile_ms"] else None
    return f


def summary(results):
    fs = [figures(r) for r in results]
    n = len(fs)
    sp = [f["speedup"] for f in fs if f["speedup"]]
    ve = [f["vs_eager"] for f in fs if f["vs_eager"]]
    vc = [f["vs_compile"] for f in fs if f["vs_compile"]]
    s = {"models": n, "geomean_speedup": geomean(sp), "geomean_vs_eager": geomean(ve),
         "geomean_vs_compile": geomean(vc),
         "geomean_speedup_graph": geomean([f["speedup_graph"] for f in fs]),
         "geomean_ceiling": geomean([f["ceiling"] for f in fs]), "targets": []}

    def target(name, met, figure, over):
        s["targets"].append({"target": name, "met": met if over else None, "figure": figure,
                             "over": "%d of %d models" % (over, n)})
    g = s["geomean_speedup"]
    target("best plan >= 1.5x unfused (geomean)", g is not None and g >= 1.5,
           "%.2fx" % g if g else "no figure", len(sp))
    slower = [results[k]["model"] for k in range(n) if fs[k]["vs_eager"] and fs[k]["vs_eager"] >= 1]
    unknown = n - len(ve)
    target("faster than PyTorch eager on every model", not slower and not unknown,
           "faster on %d of %d%s%s" % (len(ve) - len(slower), len(ve),
                                      "; slower: " + ", ".join(slower) if slower else "",
                                      "; %d without both figures" % unknown if unknown else ""),
           len(ve))
    g = s["geomean_vs_compile"]
    target("within 1.2x of torch.compile (geomean of best/compile)",
           g is not None and g <= 1.2, "%.2fx" % g if g else "no figure", len(vc))
    faster = sum(1 for x in vc if x < 1)
    target("faster than torch.compile on >= 1/3 of models", faster * 3 >= len(vc),
           "%d of %d" % (faster, len(vc)), len(vc))
    return s


def cell(v, fmt="%.3f"):
    return "-" if v is None else fmt % v


def table(results, s, out=sys.stdout):
    cols = [("model", 20, "<"), ("best policy", 15, "<"), ("best ms", 9, ">"),
            ("unfused", 9, ">"), ("speedup", 7, ">"), ("ceiling", 7, ">"), ("sp graph", 8, ">"),
            ("eager", 9, ">"), ("compile", 9, ">"),
            ("c+graphs", 9, ">"), ("fe graph", 9, ">"), ("fe/eager", 8, ">"),
            ("fe/comp", 7, ">"), ("k fe", 7, ">"), ("k eager", 7, ">"), ("k comp", 7, ">"),
            ("k c+g", 6, ">")]
    def row(vals):
        return " ".join(v.ljust(w) if a == "<" else v.rjust(w)
                        for v, (_, w, a) in zip(vals, cols)).rstrip()
    print(row([h for h, _, _ in cols]), file=out)
    notes = []
    for r in results:
        f = figures(r)
        k = f["kernels"]
        kfe = "-" if k is None else "%d%s" % (k, "+%dh" % f["host_steps"] if f["host_steps"]
                                              else "")
        vals = [r["model"][:20], (f["best"] or "failed")[:15], cell(f["best_ms"]),
                cell(f["unfused_ms"]), cell(f["speedup"], "%.2fx"), cell(f["ceiling"], "%.2fx"),
                cell(f["speedup_graph"], "%.2fx"), cell(f["eager_ms"]),
                cell(f["compile_ms"]), cell(f["cudagraphs_ms"]), cell(f["graph_ms"]),
                cell(f["vs_eager"], "%.2f"), cell(f["vs_compile"], "%.2f"), kfe,
                cell(f["eager_kernels"], "%d"), cell(f["compile_kernels"], "%d"),
                cell(f["cudagraphs_kernels"], "%d")]
        print(row(vals), file=out)
        if r.get("error"):
            notes.append("%s: %s" % (r["model"], r["error"]))
        for p, b in r["policies"].items():
            if "error" in b:
                notes.append("%s: fuseeng %s: %s" % (r["model"], p, b["error"]))
        for m in MODES:
            t = r["torch"].get(m) or {}
            label = {"none": "eager", "default": "compile", "cudagraphs": "compile+cudagraphs"}[m]
            if "error" in t:
                notes.append("%s: PyTorch %s: %s" % (r["model"], label, t["error"]))
            elif "compile_s" in t:
                notes.append("%s: PyTorch %s: compile %.1f s, %d graph(s), %d break(s)"
                             % (r["model"], label, t["compile_s"], t.get("graphs", 0),
                                t.get("graph_breaks", 0)))
        notes += ["%s: %s" % (r["model"], n) for n in r.get("notes", [])]
    skipped = {}
    for r in results:
        for m, t in r["torch"].items():
            if "skipped" in t:
                skipped[m] = t["skipped"]
    for m, reason in sorted(skipped.items()):
        notes.insert(0, "PyTorch --compile %s skipped: %s" % (m, reason))
    print("", file=out)
    print("geomean: speedup over unfused %s (as CUDA graphs %s; ceiling %s), best/eager %s, "
          "best/compile %s" % (
        cell(s["geomean_speedup"], "%.2fx"), cell(s["geomean_speedup_graph"], "%.2fx"),
        cell(s["geomean_ceiling"], "%.2fx"), cell(s["geomean_vs_eager"], "%.2f"),
        cell(s["geomean_vs_compile"], "%.2f")), file=out)
    for t in s["targets"]:
        status = {True: "met", False: "missed", None: "n/a"}[t["met"]]
        print("target: %-56s %-6s %s (%s)" % (t["target"], status, t["figure"], t["over"]),
              file=out)
    if notes:
        print("", file=out)
        for n in notes:
            print("note: " + n, file=out)


# ---- options ----

def parse_args(argv):
    o = {"models": [], "policies": [], "device": "cuda", "budget": 0.02, "torch_budget": 0.5,
         "modes": list(MODES), "dims": [], "seed": 1, "max_seconds": 480.0, "json": None,
         "merge": None, "keep": None, "python": sys.executable,
         "fuseeng": os.environ.get("FUSEENG") or os.path.join(ROOT, "build", "fuseeng")}
    i = 0
    valued = ("--policy", "--device", "--budget", "--torch-budget", "--modes", "--dim",
              "--seed", "--max-seconds", "--json", "--keep")
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if a == "--merge":
            o["merge"] = argv[i + 1:]
            break
        if a in valued:
            if i + 1 >= len(argv):
                raise Bad("%s needs a value" % a)
            v = argv[i + 1]
            i += 1
            try:
                if a == "--policy":
                    o["policies"].append(v)
                elif a == "--device":
                    if v not in ("cuda", "cpu"):
                        raise Bad("--device %s: write cuda or cpu" % v)
                    o["device"] = v
                elif a in ("--budget", "--torch-budget", "--max-seconds"):
                    o[a[2:].replace("-", "_")] = float(v)
                elif a == "--seed":
                    o["seed"] = int(v)
                elif a == "--modes":
                    o["modes"] = [m for m in v.split(",") if m]
                    bad = [m for m in o["modes"] if m not in MODES]
                    if bad:
                        raise Bad("--modes %s: each of none, default, cudagraphs" % v)
                elif a == "--dim":
                    k, _, n = v.partition("=")
                    if not k or not n.isdigit():
                        raise Bad("--dim %s: write NAME=V" % v)
                    o["dims"].append((k, int(n)))
                else:
                    o[a[2:]] = v
            except ValueError:
                raise Bad("%s %s: not a number" % (a, v))
        elif a.startswith("-"):
            raise Bad("unknown option %s (see --help)" % a)
        else:
            if not os.path.isfile(a):
                raise Bad("%s: no such model file" % a)
            o["models"].append(os.path.abspath(a))
        i += 1
    o["policies"] = o["policies"] or list(POLICIES)
    if not o["models"] and o["merge"] is None:
        shared = os.environ.get("SHARED") or os.path.join(os.path.dirname(ROOT), "shared")
        for pat in (os.path.join(ROOT, "examples", "models", "*.json"),
                    os.path.join(shared, "models", "*.json"),
                    os.path.join(ROOT, "examples", "models", "imported", "*.json")):
            o["models"] += sorted(glob.glob(pat))
    return o


def main(argv):
    o = parse_args(argv)
    if o["merge"] is not None:
        results = []
        for path in o["merge"]:
            try:
                with open(path) as f:
                    results += json.load(f)["models"]
            except (OSError, ValueError, KeyError) as e:
                raise Bad("--merge %s: not a gpu_compare JSON file (%s)" % (path, e))
        table(results, summary(results))
        return 0
    if not o["models"]:
        raise Bad("no models (give MODEL.json files)")
    clock = Clock(o["max_seconds"])
    pt = probe(o["python"])
    if "error" in pt:   # the data files are PyTorch's to write: nothing can run
        raise Bad("PyTorch does not load in %s (%s): run this script with the python3 that has "
                  "torch, e.g. `python3 %s`" % (o["python"], pt["error"],
                                                os.path.relpath(__file__, os.getcwd())))
    modes, skipped = torch_modes(o["modes"], o["device"], pt)
    if not os.access(o["fuseeng"], os.X_OK):
        sys.stderr.write("gpu_compare: FUSEENG=%s is not an executable: every fuseeng step "
                         "will fail (build it, or set FUSEENG)\n" % o["fuseeng"])
    work = o["keep"] or tempfile.mkdtemp(prefix="gpu_compare.")
    os.makedirs(work, exist_ok=True)
    n = len(o["models"])
    on = " on " + pt["gpu"] if pt.get("gpu") and o["device"] == "cuda" else ""
    print("gpu_compare: %d model%s, policies %s, device %s, PyTorch %s%s, limit %.0f s"
          % (n, "" if n == 1 else "s", " ".join(o["policies"]), o["device"], pt["torch"], on,
             o["max_seconds"]), flush=True)
    results = []
    try:
        for k, path in enumerate(o["models"]):
            share = clock.model_share(len(o["models"]) - k)
            if clock.left() < FLOORS["data"] + FLOORS["policy"]:
                name = os.path.splitext(os.path.basename(path))[0]
                results.append({"model": name, "file": path, "policies": {}, "torch": {},
                                "error": "not run: the time limit was reached", "notes": []})
                continue
            r = one_model(o, path, share, pt, modes, skipped, work, clock)
            results.append(r)
            f = figures(r)
            print("  %-24s %5.1f s  best %s %s ms, eager %s ms, compile %s ms" % (
                r["model"], r["seconds"], f["best"] or "-", cell(f["best_ms"]),
                cell(f["eager_ms"]), cell(f["compile_ms"])), flush=True)
    finally:
        if not o["keep"]:
            shutil.rmtree(work, ignore_errors=True)
    s = summary(results)
    if o["json"]:
        doc = {"format": "fuseeng.gpu_compare/1", "device": o["device"], "pytorch": pt,
               "fuseeng": o["fuseeng"], "policies": o["policies"], "budget": o["budget"],
               "torch_budget": o["torch_budget"], "seed": o["seed"], "models": results,
               "summary": s}
        tmp = o["json"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, o["json"])
    print("", flush=True)
    table(results, s)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Bad as e:
        sys.stderr.write("gpu_compare: %s\n" % e)
        sys.exit(2)
