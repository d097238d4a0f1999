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
instruction of the computations it calls, transitively, in text order
(but a reduce's region, and moves of what a fusion reads: _op_names):
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

# Data movement: inside a fusion, on a parameter, it moves a value another
# kernel computed (_op_names).
MOVES = {"bitcast", "copy", "slice", "reshape", "transpose", "broadcast", "dynamic-slice",
         "get-tuple-element", "bitcast-convert"}

# The jaxpr primitives that are data movement themselves: a move of a
# parameter named by one of them is that equation's own work.
JAX_MOVES = {"broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice",
             "dynamic_slice", "concatenate", "pad", "copy", "copy_p", "convert_element_type",
             "rev"}

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


def _called(rest, follow_apply=True):
    out = []
    for m in _CALLS.finditer(rest):
        if not follow_apply and m.group(0).startswith("to_apply"):
            continue
        v = m.group(1)
        names = v.strip("{}").split(",") if v.startswith("{") else [v]
        out += [n.strip().lstrip("%") for n in names if n.strip()]
    return out


def _operands(rest):
    """The instruction names among OPCODE(...)'s operands."""
    i = rest.find("(", rest.find(" ") if not rest.startswith("(") else 0)
    depth, j = 0, i
    for j in range(i, len(rest)):
        depth += (rest[j] == "(") - (rest[j] == ")")
        if depth == 0:
            break
    return re.findall(r"%?([\w.\-]+)(?=\s*(?:,|$))", rest[i + 1:j])


def _op_names(comps, rest, seen):
    """op_name of an instruction and of the computations it calls.

    Not followed: to_apply (a reduce's or scatter's region: XLA shares one
    region among reductions, and its add carries the first one's name).
    Not counted, inside a called computation: an instruction that only
    moves or renames what a parameter holds (a bitcast, copy, slice,
    reshape, transpose or broadcast of a parameter, or of such a value)
    under the op_name of an equation that computes (a dot, an add): it is
    a view of that equation's output, computed in another kernel (a dot's
    output bitcast where a fusion reads it). A move named by a movement
    equation (broadcast_in_dim of a bias) is that equation's work.
    """
    names = []
    m = _OPNAME.search(rest)
    if m:
        names.append(m.group(1))
    for c in _called(rest, follow_apply=False):
        if c in seen:
            continue
        if c not in comps:
            raise HloError(f"a call of computation {c}, which the module does not define")
        seen.add(c)
        of_param = set()
        for iname, op, r in comps[c]:
            if op == "parameter":
                of_param.add(iname)
                continue
            if op in MOVES and all(o in of_param for o in _operands(r)):
                of_param.add(iname)
                nm = _OPNAME.search(r)
                if not nm or nm.group(1).rsplit("/", 1)[-1] not in JAX_MOVES:
                    continue   # a view of a value some equation computed elsewhere
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
