#!/usr/bin/python3
"""halide_micro.py: the five fused micro-workloads in Halide, hand-scheduled.

The rival of bench_halide (tests/bench/bench_halide.c): for the workload a
fuseeng model file describes (examples/bench/{swiglu,add_rmsnorm,gelu,
chain6,softmax}.json, at that file's dims or --dim overrides), it builds the
same computation as a Halide 14 pipeline with a schedule written by hand as
Halide's own apps write them (rows in parallel, columns in native vectors,
a row's reductions computed at the row so its data is read from cache),
JIT-compiles it for this host, checks its output against numpy in float64,
and then times it.

    halide_micro.py MODEL.json [--dim T=64] --check      check and exit
    halide_micro.py MODEL.json --serve                   check, then serve

Serving is how the benchmark interleaves Halide with fuseeng in one run: the
script prints "ready <max relative error> <schedule>" and then answers each
line "N" on stdin with N wall times in milliseconds (one realize each, into
buffers allocated once), until "q" or end of input. Threads: HL_NUM_THREADS
(the benchmark sets it to fuseeng's thread count).

Exit 2 with a message for a model this script does not know or a missing
Halide (Debian: apt install python3-halide).
"""
import json
import sys
import time

import numpy as np

try:
    import halide as hl
except ImportError:
    sys.stderr.write("halide_micro.py: python3-halide is not installed "
                     "(Debian: apt install python3-halide)\n")
    sys.exit(2)


def die(msg):
    sys.stderr.write("halide_micro.py: %s\n" % msg)
    sys.exit(2)


def shape_of(model, dims, name):
    t = model["tensors"].get(name)
    if t is None:
        die("%s: no tensor '%s' (not a micro-workload model?)" % (model.get("name"), name))
    out = []
    for d in t["shape"]:
        if isinstance(d, str):
            if d not in dims:
                die("%s: dim '%s' of tensor '%s' has no value" % (model["name"], d, name))
            d = dims[d]
        out.append(int(d))
    return out


def hbuf(a):
    """A Halide buffer over numpy array a (C order) whose dim 0 is a's last
    axis: Halide's innermost dimension must be the unit-stride one."""
    return hl.Buffer(a.T)


def rows_reduce(f, ncols, vec, name, init, combine):
    """combine over c of f(c, *rest), as a Func of the rest: partial results
    in vec lanes (vectorizable), then the lanes combined. ncols % vec == 0.
    Returns the Func, its partial Func and the partial's lane Var."""
    ci = hl.Var(name + "_ci")
    rest = [hl.Var(name + "_r%d" % i) for i in range(f.dimensions() - 1)]
    part = hl.Func(name + "_part")
    rv = hl.RDom([(0, ncols // vec)])
    part[[ci] + rest] = hl.f32(init)
    part[[ci] + rest] = combine(part[[ci] + rest], f[[rv.x * vec + ci] + rest])
    total = hl.Func(name)
    rl = hl.RDom([(0, vec)])
    total[rest] = hl.f32(init)
    total[rest] = combine(total[rest], part[[rl.x] + rest])
    return total, part, ci


def rows_sum(f, ncols, vec, name):
    return rows_reduce(f, ncols, vec, name, 0, lambda a, b: a + b)


def rows_max(f, ncols, vec, name):
    return rows_reduce(f, ncols, vec, name, -np.inf, hl.max)


def tanh(x):
    """tanh through Halide's vectorized exp. Halide 14's hl.tanh calls the
    C library's tanhf per lane (a hundred times slower in these pipelines),
    so a hand-written Halide pipeline spells it this way."""
    return 1 - 2 / (hl.exp(2 * x) + 1)


def gelu_tanh(x):
    k0, k1 = hl.f32(0.7978845608028654), hl.f32(0.044715)
    return 0.5 * x * (1 + tanh(k0 * (x + k1 * x * x * x)))


class Workload:
    """inputs: numpy arrays; outs: numpy arrays written by realize; run():
    one realize; ref(): float64 numpy results in the order of outs."""

    def __init__(self, model, dims, seed=1):
        self.rng = np.random.default_rng(seed)
        self.vec = hl.get_jit_target_from_environment().natural_vector_size(hl.Float(32))
        kind = model.get("name")
        build = getattr(self, "build_" + str(kind), None)
        if build is None:
            die("%s: not one of the five micro-workloads (swiglu, add_rmsnorm, gelu, "
                "chain6, softmax)" % kind)
        self.kind = kind
        build(model, dims)
        self.pipe.compile_jit(hl.get_jit_target_from_environment())

    def rand(self, shape, lo=-2.0, hi=2.0):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)

    def run(self):
        self.pipe.realize(self.targets)

    def check(self):
        """Largest error against numpy in float64, on 64 rows
        spread over the output (a float64 copy of a whole 134M-element
        softmax would take gigabytes)."""
        self.run()
        nrows = self.outs[0].size // self.outs[0].shape[-1]
        rows = np.unique(np.linspace(0, nrows - 1, 64).astype(np.int64))
        worst = 0.0
        for got, want in zip(self.outs, self.ref(rows)):
            got = got.reshape(-1, got.shape[-1])[rows]
            # fuseeng's own scale (core/exec/compare.c): the difference
            # against the reference's RMS plus the element's magnitude.
            rms = np.sqrt(np.mean(want * want))
            err = np.abs(got.astype(np.float64) - want) / (rms + np.abs(want))
            worst = max(worst, float(err.max()))
        return worst

    def rowwise(self, out, t, c, vec):
        """The schedule every row-parallel workload uses: rows split into
        chunks for the threads, columns in vectors of 2 native widths."""
        out.vectorize(c, 2 * vec).parallel(t, 4)

    def build_swiglu(self, model, dims):
        T, C = shape_of(model, dims, "g")
        self.g, self.u = self.rand((T, C)), self.rand((T, C))
        self.outs = [np.empty((T, C), np.float32)]
        g, u = hbuf(self.g), hbuf(self.u)
        c, t = hl.Var("c"), hl.Var("t")
        out = hl.Func("out")
        gv = g[c, t]
        out[c, t] = gv / (1 + hl.exp(-gv)) * u[c, t]
        self.rowwise(out, t, c, self.vec)
        self.schedule = "out: vectorize(c, %d).parallel(t, 4)" % (2 * self.vec)
        self.pipe = hl.Pipeline(out)
        self.targets = hbuf(self.outs[0])

    def ref_swiglu(self, rows):
        g = self.g[rows].astype(np.float64)
        return [g / (1 + np.exp(-g)) * self.u[rows]]

    def build_add_rmsnorm(self, model, dims):
        T, C = shape_of(model, dims, "x")
        if C % self.vec:
            die("add_rmsnorm: %d columns are not a multiple of the vector width" % C)
        self.x, self.r, self.w = self.rand((T, C)), self.rand((T, C)), self.rand((C,))
        self.eps = 1e-6
        self.outs = [np.empty((T, C), np.float32), np.empty((T, C), np.float32)]
        x, r, w = hbuf(self.x), hbuf(self.r), hl.Buffer(self.w)
        c, t = hl.Var("c"), hl.Var("t")
        h = hl.Func("h")
        h[c, t] = x[c, t] + r[c, t]
        sq = hl.Func("sq")
        sq[c, t] = h[c, t] * h[c, t]
        ss, part, ci = rows_sum(sq, C, self.vec, "ss")
        # Both results leave as one Tuple: one pass writes h and y, the
        # row's sum of squares computed first at the row (x and r then
        # come from cache, not memory, for the second read).
        out = hl.Func("out")
        scale = hl.Func("scale")
        scale[t] = 1 / hl.sqrt(ss[t] / C + hl.f32(self.eps))
        hv = h[c, t]
        out[c, t] = (hv, hv * scale[t] * w[c])
        self.rowwise(out, t, c, self.vec)
        scale.compute_at(out, t)
        ss.compute_at(out, t)
        part.compute_at(out, t).vectorize(part.args()[0])
        part.update().vectorize(ci)
        self.schedule = ("out=(h, y): vectorize(c, %d).parallel(t, 4); the row's sum of "
                         "squares at t in %d lanes" % (2 * self.vec, self.vec))
        self.pipe = hl.Pipeline(out)
        self.targets = [hbuf(o) for o in self.outs]

    def ref_add_rmsnorm(self, rows):
        h = self.x[rows].astype(np.float64) + self.r[rows]
        s = 1 / np.sqrt((h * h).mean(axis=1, keepdims=True) + self.eps)
        return [h, h * s * self.w]

    def build_gelu(self, model, dims):
        T, C = shape_of(model, dims, "x")
        self.x = self.rand((T, C), -4, 4)
        self.outs = [np.empty((T, C), np.float32)]
        x = hbuf(self.x)
        c, t = hl.Var("c"), hl.Var("t")
        out = hl.Func("out")
        out[c, t] = gelu_tanh(x[c, t])
        self.rowwise(out, t, c, self.vec)
        self.schedule = "out: vectorize(c, %d).parallel(t, 4)" % (2 * self.vec)
        self.pipe = hl.Pipeline(out)
        self.targets = hbuf(self.outs[0])

    def ref_gelu(self, rows):
        x = self.x[rows].astype(np.float64)
        return [0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))]

    def build_chain6(self, model, dims):
        T, C = shape_of(model, dims, "x")
        self.x = self.rand((T, C))
        self.a, self.b, self.c = self.rand((C,)), self.rand((C,)), self.rand((C,))
        self.outs = [np.empty((T, C), np.float32)]
        x = hbuf(self.x)
        a, b, cw = hl.Buffer(self.a), hl.Buffer(self.b), hl.Buffer(self.c)
        c, t = hl.Var("c"), hl.Var("t")
        out = hl.Func("out")
        xv = x[c, t]
        out[c, t] = tanh(hl.max(xv * a[c] + b[c], 0) * cw[c]) + xv
        self.rowwise(out, t, c, self.vec)
        self.schedule = "out: vectorize(c, %d).parallel(t, 4)" % (2 * self.vec)
        self.pipe = hl.Pipeline(out)
        self.targets = hbuf(self.outs[0])

    def ref_chain6(self, rows):
        x = self.x[rows].astype(np.float64)
        return [np.tanh(np.maximum(x * self.a + self.b, 0) * self.c) + x]

    def build_softmax(self, model, dims):
        H, Q, K = shape_of(model, dims, "x")
        if K % self.vec:
            die("softmax: %d keys are not a multiple of the vector width" % K)
        self.x, self.mask = self.rand((H, Q, K), -8, 8), self.rand((Q, K), -4, 0)
        self.outs = [np.empty((H, Q, K), np.float32)]
        x, mask = hbuf(self.x), hbuf(self.mask)
        k, q, h = hl.Var("k"), hl.Var("q"), hl.Var("h")
        m = hl.Func("m")
        m[k, q, h] = x[k, q, h] * 0.125 + mask[k, q]
        mx, mpart, mci = rows_max(m, K, self.vec, "mx")
        e = hl.Func("e")
        e[k, q, h] = hl.exp(m[k, q, h] - mx[q, h])
        s, spart, sci = rows_sum(e, K, self.vec, "s")
        out = hl.Func("out")
        out[k, q, h] = e[k, q, h] / s[q, h]
        # One row (h, q) at a time per thread: its max and its exponentials
        # (kept in a row buffer, not recomputed) and their sum, then the
        # division. Queries in parallel, the heads of a query inside, so
        # the query's mask row stays in cache across heads.
        out.reorder(k, h, q).vectorize(k, 2 * self.vec).parallel(q)
        for f, part, ci in ((mx, mpart, mci), (s, spart, sci)):
            f.compute_at(out, h)
            part.compute_at(out, h).vectorize(part.args()[0])
            part.update().vectorize(ci)
        e.compute_at(out, h).vectorize(e.args()[0], 2 * self.vec)
        self.schedule = ("out: reorder(k, h, q).vectorize(k, %d).parallel(q); row max, exp "
                         "row and row sum at the row" % (2 * self.vec))
        self.pipe = hl.Pipeline(out)
        self.targets = hbuf(self.outs[0])

    def ref_softmax(self, rows):
        x = self.x.reshape(-1, self.x.shape[-1])
        m = x[rows].astype(np.float64) * 0.125 + self.mask[rows % self.mask.shape[0]]
        e = np.exp(m - m.max(axis=-1, keepdims=True))
        return [e / e.sum(axis=-1, keepdims=True)]

    def ref(self, rows):
        return getattr(self, "ref_" + self.kind)(rows)


def main(argv):
    args, dims, mode = [], {}, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--dim" and i + 1 < len(argv):
            k, _, v = argv[i + 1].partition("=")
            if not v.isdigit() or int(v) < 1:
                die("--dim %s: want NAME=POSITIVE_INTEGER" % argv[i + 1])
            dims[k] = int(v)
            i += 2
            continue
        if a in ("--check", "--serve"):
            mode = a[2:]
        elif a.startswith("-"):
            die("unknown option %s (usage: halide_micro.py MODEL.json [--dim K=V] "
                "--check|--serve)" % a)
        else:
            args.append(a)
        i += 1
    if len(args) != 1 or mode is None:
        die("usage: halide_micro.py MODEL.json [--dim K=V] --check|--serve")
    try:
        with open(args[0]) as f:
            model = json.load(f)
    except (OSError, ValueError) as e:
        die("%s: %s" % (args[0], e))
    all_dims = dict(model.get("dims", {}))
    all_dims.update(dims)
    w = Workload(model, all_dims)
    err = w.check()
    if err > 1e-4:
        die("%s: Halide's result differs from numpy by %.3g (relative): the pipeline "
            "is wrong" % (w.kind, err))
    if mode == "check":
        print("%s ok: max relative error %.3g; schedule %s" % (w.kind, err, w.schedule))
        return 0
    print("ready %.3g %s" % (err, w.schedule), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if line == "q":
            break
        n = int(line)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            w.run()
            times.append((time.perf_counter() - t0) * 1e3)
        print(" ".join("%.4f" % t for t in times), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
