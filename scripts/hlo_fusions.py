"""hlo_fusions.py: the kernels of an optimized HLO module, from its text (no JAX needed).

    kernels(text) -> [Kernel(name, kind, detail, op_names)]

`jax.jit(f).lower(...).compile().as_text()` prints the module XLA will run:
an ENTRY computation whose instructions run in order, and the computations
they call (a fusion's fused computation, a reduce's region). Each ENTRY
instruction that does work is one kernel: a `fusion` (kind "fusion", detail
its fusion kind, kLoop / kInput / kOutput / kCustom), a `custom-call`
(kind "extern", detail its target: a cuBLAS gemm, a cuDNN convolution), or
any other opcode left unfused (kind the opcode: copy, transpose, reduce ...).
Instructions that only name or regroup values (parameter, constant,
get-tuple-element, tuple, bitcast, ...) are none.

A kernel's op_names are the metadata op_name of the instruction and of every
instruction of the computations it calls, transitively, in text order:
`metadata={op_name="jit(run)/jit(main)/fe_12/add" source_file=... }`.
equations(op_names) reads back the jaxpr equation each came from, by the
fe_<index> name scope jax_truth.py binds every equation under.

The text's syntax (HLO's printer): `HloModule NAME, ...`; a computation is
`[ENTRY] [%]NAME (PARAMS) -> TYPE {` ... `}`; an instruction is
`[ROOT] [%]NAME = TYPE OPCODE(OPERANDS), attr=value, ...`, TYPE a shape such
as f32[128,512]{1,0} or a tuple (f32[2], s32[]). Names with or without the
leading % are both read (XLA versions differ), and the tables newer XLA
prints before the computations (FileNames, FunctionNames, FileLocations,
StackFrames: a title line, then rows that start with a number) are
skipped. A fusion's detail adds its backend kind when backend_config names
one (kCustom __triton_nested_gemm_fusion: a dot with the producers XLA's
Triton GEMM took in).
"""
import re
from collections import namedtuple

Kernel = namedtuple("Kernel", "name kind detail op_names")

NO_KERNEL = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all",
             "partition-id", "replica-id", "opt-barrier", "optimization-barrier",
             "add-dependency", "domain"}

_HEADER = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_CALLS = re.compile(r"\b(?:calls|to_apply|body|condition|branch_computations)=(\{[^}]*\}|%?[\w.\-]+)")
_KIND = re.compile(r"\bkind=(k\w+)")
_TARGET = re.compile(r'\bcustom_call_target="([^"]*)"')
_OPNAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_BACKEND_KIND = re.compile(r'"kind":"([^"]+)"')
_TABLE = re.compile(r"^(?:[A-Z]\w*|\d+\s.*)$")   # FileNames, StackFrames ... and their rows
_EQ = re.compile(r"(?:^|/)fe_(\d+)(?=/|$)")


class HloError(Exception):
    """Text that is not an HLO module as the printer writes it."""


def _opcode(rest, lineno):
    """OPCODE of 'TYPE OPCODE(...)...' (TYPE may be a tuple with spaces)."""
    i = 0
    if rest.startswith("("):
        depth = 0
        for i, c in enumerate(rest):
            depth += (c == "(") - (c == ")")
            if depth == 0:
                break
        i += 1
    else:
        while i < len(rest) and not rest[i].isspace():
            i += 1
    m = re.match(r"\s*([a-z][\w\-]*)\(", rest[i:])
    if not m:
        raise HloError(f"line {lineno}: no opcode after the result type in {rest[:80]!r}")
    return m.group(1)


def parse(text):
    """{computation: [(name, opcode, rest of line)]}, and the ENTRY computation's name."""
    comps, entry, cur = {}, None, None
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("HloModule") or s.startswith("//"):
            continue
        if cur is None:
            m = _HEADER.match(line)
            if not m and _TABLE.match(s):
                continue
            if not m:
                raise HloError(f"line {lineno}: expected a computation header "
                               f"'[ENTRY] NAME (PARAMS) -> TYPE {{', got {s[:80]!r}")
            cur = m.group(2)
            comps[cur] = []
            if m.group(1):
                if entry:
                    raise HloError(f"line {lineno}: a second ENTRY computation ({cur})")
                entry = cur
            continue
        if s == "}":
            cur = None
            continue
        m = _INSTR.match(line)
        if not m:
            raise HloError(f"line {lineno}: expected an instruction 'NAME = TYPE OPCODE(...)', "
                           f"got {s[:80]!r}")
        comps[cur].append((m.group(1), _opcode(m.group(2), lineno), m.group(2)))
    if cur is not None:
        raise HloError(f"computation {cur} is not closed by '}}'")
    if entry is None:
        raise HloError("no ENTRY computation")
    return comps, entry


def _called(rest):
    out = []
    for m in _CALLS.finditer(rest):
        v = m.group(1)
        names = v.strip("{}").split(",") if v.startswith("{") else [v]
        out += [n.strip().lstrip("%") for n in names if n.strip()]
    return out


def _op_names(comps, rest, seen):
    names = []
    m = _OPNAME.search(rest)
    if m:
        names.append(m.group(1))
    for c in _called(rest):
        if c in seen:
            continue
        if c not in comps:
            raise HloError(f"a call of computation {c}, which the module does not define")
        seen.add(c)
        for _, _, r in comps[c]:
            names += _op_names(comps, r, seen)
    return names


def kernels(text):
    """The ENTRY computation's kernels, in order (see the note above)."""
    comps, entry = parse(text)
    out = []
    for name, opcode, rest in comps[entry]:
        if opcode in NO_KERNEL:
            continue
        if opcode == "fusion":
            m, b = _KIND.search(rest), _BACKEND_KIND.search(rest)
            kind, detail = "fusion", " ".join(x.group(1) for x in (m, b) if x)
        elif opcode == "custom-call":
            m = _TARGET.search(rest)
            kind, detail = "extern", m.group(1) if m else ""
        else:
            kind, detail = opcode, ""
        ops = []
        for n in _op_names(comps, rest, set()):
            if n not in ops:
                ops.append(n)
        out.append(Kernel(name, kind, detail, ops))
    return out


def equations(op_names):
    """The fe_<index> equation indices op_names name (innermost scope of each), sorted."""
    out = set()
    for n in op_names:
        found = _EQ.findall(n)
        if found:
            out.add(int(found[-1]))
    return sorted(out)
