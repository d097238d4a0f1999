# export_torch.sh: scripts/export_torch.py on small modules: what an
# unmappable call becomes (a custom node with a warning naming it), several
# inputs and outputs (names, only the weights used), the MultiheadAttention
# forms ViT does not use, and bad input (a module
# that is not one, missing or malformed shapes, a shape PyTorch refuses, a
# dtype fuseeng has no type for): exit 2, a message naming the fix, no
# file written. The real models are tests/cli/real_models.sh.
. tests/lib.sh
PY=/usr/bin/python3
X=scripts/export_torch.py

if ! "$PY" -c 'import torch' 2>/dev/null; then
    for c in "custom fallback" "two inputs and outputs" "MultiheadAttention variants match PyTorch" "int16 weight" "unknown module" "missing file" \
        "not a module" "missing input" "malformed shape" "unknown parameter" "shape PyTorch refuses" \
        "fx.wrap'ed function traced through, roll, interpolate, Conv1d/3d, flip, uneven adaptive pool, normalize match PyTorch" \
        "interpolate area is a custom node with a warning" \
        "logical ops, 3-D pools, bicubic, topk match PyTorch" "bitwise not of integers is a custom node" "item assignment into a computed tensor" \
        "item assignment of a computed value"; do
        skip "export_torch.py: $c" "no torch"
    done
    finish
    exit $?
fi

cat >"$T/mods.py" <<'EOF'
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F


class Odd(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cumsum(self.lin(x), dim=1)


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.unused = nn.Linear(8, 8)

    def forward(self, x, y):
        h = self.a(x) + y
        return h.relu(), h.sigmoid()


class Short(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("s", torch.ones(8, dtype=torch.int16))

    def forward(self, x):
        return x * self.s


class Attn(nn.Module):
    """MultiheadAttention beyond ViT's: [L,B,E] cross attention with a float
    mask and its weights used; batch_first self attention, boolean mask."""

    def __init__(self):
        super().__init__()
        self.cross = nn.MultiheadAttention(32, 4)
        self.self_ = nn.MultiheadAttention(32, 4, batch_first=True)
        self.register_buffer("fmask", torch.randn(6, 10))
        self.register_buffer("bmask", torch.ones(8, 8).triu(1).bool())

    def forward(self, q, kv, x):
        o, w = self.cross(q, kv, kv, attn_mask=self.fmask)
        return o, w, self.self_(x, x, x, attn_mask=self.bmask)[0]


def win(x, shift):
    """A library function kept whole by torch.fx.wrap, as torchvision's Swin does."""
    m = x.new_zeros((x.shape[1], x.shape[2]))
    m[:2, :] = 1
    m[2:, -shift:] = 2
    x = torch.roll(x, shifts=(-shift, shift), dims=(1, 2))
    return x + m.unsqueeze(0).unsqueeze(-1)


torch.fx.wrap("win")


class Wrapped(nn.Module):
    """Issue 37's imports: a wrapped function traced through (roll, a mask built by item
    assignment), interpolate / Upsample, Conv1d / Conv3d, 1-D and 3-D adaptive pooling."""

    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2)
        self.c1 = nn.Conv1d(3, 4, 3, stride=2, padding=1, groups=1)
        self.p1 = nn.MaxPool1d(2)
        self.c3 = nn.Conv3d(2, 4, (3, 3, 1), stride=(2, 1, 1), padding=(1, 0, 0))
        self.g3 = nn.AdaptiveAvgPool3d(1)
        self.ap = nn.AdaptiveAvgPool2d((3, 13))

    def forward(self, x, s, v):
        a = win(x, 2)
        b = F.interpolate(a.permute(0, 3, 1, 2), size=(7, 11), mode="bilinear", align_corners=False)
        return a, b, self.up(b), self.p1(self.c1(s)), self.g3(self.c3(v)), torch.flip(v, [1, 4]), \
            self.ap(b), F.normalize(a, dim=-1)


class Assign(nn.Module):
    def forward(self, x):
        y = x.clone()
        y[:, 0] = 0
        return y


class AssignValue(nn.Module):
    def forward(self, x):
        m = x.new_zeros(3)
        m[0] = x[0, 0]
        return x + m


class Area(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="area")


class Imports3(nn.Module):
    """Logical ops on masks, 3-D pools (max with dilation, average both count modes,
    ceil_mode, adaptive), bicubic interpolation both ways, topk (values and indices)."""

    def __init__(self):
        super().__init__()
        self.mp = nn.MaxPool3d((2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1), dilation=(1, 2, 1))
        self.ap = nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True)
        self.aa = nn.AdaptiveAvgPool3d((2, 3, 3))
        self.am = nn.AdaptiveMaxPool3d((1, 7, 3))

    def forward(self, x, v):
        m, n = x > 0, x < 0.5
        logic = torch.where(~m | (n & m) ^ torch.logical_not(n), x, -x)
        lg2 = torch.logical_and(m, n).float() + torch.logical_xor(m, x).float() + \
            torch.logical_or(m, n).float()
        pools = (self.mp(v), self.ap(v), F.avg_pool3d(v, 2, count_include_pad=False, padding=1),
                 F.max_pool3d(v, 2, ceil_mode=True), self.aa(v), self.am(v))
        cubic = (F.interpolate(x, scale_factor=2, mode="bicubic"),
                 F.interpolate(x, size=(4, 9), mode="bicubic", align_corners=True),
                 F.interpolate(x, scale_factor=(1.7, 0.6), mode="bicubic"))
        top = x.topk(2, dim=1, largest=False)
        v3, i3 = torch.topk(x, 3)
        return (logic, lg2) + pools + cubic + (top.values, top.indices, v3, i3)


class BitInt(nn.Module):
    def forward(self, x):
        return ~(x > 0).long()


def not_a_module():
    return 3
EOF

# An unmappable call: a custom node with its shape, FLOPs and a warning.
if "$PY" $X "$T/mods.py:Odd" -o "$T/odd.json" --input x=2x8 >"$T/out" 2>"$T/err" &&
    grep -q "warning: node cumsum (call_function torch.cumsum) has no fuseeng op" "$T/err" &&
    grep -q '"op": "custom".*"flops": 16' "$T/odd.json" &&
    "$FUSEENG" check "$T/odd.json" >/dev/null 2>&1; then
    ok "export_torch.py: custom fallback"
else
    not_ok "export_torch.py: custom fallback" "$(cat "$T/err")"
fi

# Two inputs, two outputs; an unused Linear writes no weight; executes.
if "$PY" $X "$T/mods.py:Two" -o "$T/two.json" --input x=4x8 --input y=4x8 >"$T/out" 2>"$T/err" &&
    grep -q '"outputs": \["output_0", "output_1"\]' "$T/two.json" &&
    grep -q '"y": {"shape": \[4, 8\], "dtype": "f32", "kind": "input"}' "$T/two.json" &&
    [ "$(grep -c '"kind": "weight"' "$T/two.json")" -eq 2 ] && ! grep -q unused "$T/two.json" &&
    [ -s "$T/two.safetensors" ] && ! grep -aq unused "$T/two.safetensors" &&
    "$FUSEENG" run "$T/two.json" --policy fuse_all --execute --budget 0.01 >/dev/null 2>&1; then
    ok "export_torch.py: two inputs and outputs"
else
    not_ok "export_torch.py: two inputs and outputs" "$(cat "$T/err")"
fi

# nn.MultiheadAttention decomposed, three outputs checked against PyTorch.
if "$PY" $X "$T/mods.py:Attn" -o "$T/attn.json" --input q=6x2x32 --input kv=10x2x32 \
    --input x=2x8x32 --inputs-out "$T/in.st" --expect-out "$T/out.st" >"$T/out" 2>"$T/err" &&
    "$FUSEENG" run "$T/attn.json" --policy gcu_tlf --execute --budget 0.01 --weights "$T/attn.safetensors" \
        --inputs "$T/in.st" --expect "$T/out.st" --expect-rtol 1e-4 >"$T/run" 2>>"$T/err" &&
    [ "$(sed -n '/^expected/,/^groups/p' "$T/run" | grep -c ' ok$')" -eq 6 ]; then
    ok "export_torch.py: MultiheadAttention variants match PyTorch"
else
    not_ok "export_torch.py: MultiheadAttention variants match PyTorch" "$(cat "$T/err")"
fi

# Issue 37: a torch.fx.wrap'ed function is traced through (its mask folded), the
# new mappings (roll, interpolate, Upsample, Conv1d/3d, pools, flip, adaptive average
# pooling with uneven windows, F.normalize) leave no custom node and the eight
# outputs match PyTorch.
if "$PY" $X "$T/mods.py:Wrapped" -o "$T/wrapped.json" --input x=1x5x6x3 --input s=2x3x9 \
    --input v=1x2x5x4x3 --inputs-out "$T/win.st" --expect-out "$T/wout.st" >"$T/out" 2>"$T/err" &&
    grep -q "(0 custom)" "$T/out" && ! grep -q '"op": "custom"' "$T/wrapped.json" &&
    "$FUSEENG" run "$T/wrapped.json" --policy fuse_all --execute --no-timing --weights "$T/wrapped.safetensors" \
        --inputs "$T/win.st" --expect "$T/wout.st" --expect-rtol 1e-5 >"$T/run" 2>>"$T/err" &&
    [ "$(sed -n '/^expected/,/^groups/p' "$T/run" | grep -c ' ok$')" -eq 16 ]; then
    ok "export_torch.py: fx.wrap'ed function traced through, roll, interpolate, Conv1d/3d, flip, uneven adaptive pool, normalize match PyTorch"
else
    not_ok "export_torch.py: fx.wrap'ed function traced through, roll, interpolate, Conv1d/3d, flip, uneven adaptive pool, normalize match PyTorch" \
        "$(cat "$T/out" "$T/err")" "$(sed -n '/^expected/,/^groups/p' "$T/run" 2>/dev/null)"
fi
# A mode the mapping does not take stays a custom node, with a warning naming it.
if "$PY" $X "$T/mods.py:Area" -o "$T/area.json" --input x=1x2x3x3 >"$T/out" 2>"$T/err" &&
    grep -q "warning: node interpolate (call_function torch.nn.functional.interpolate) has no fuseeng op (interpolate mode 'area'" "$T/err"; then
    ok "export_torch.py: interpolate area is a custom node with a warning"
else
    not_ok "export_torch.py: interpolate area is a custom node with a warning" "$(cat "$T/err")"
fi
# Issue 37's third round: ~, logical_*, &|^ on masks (compare, minimum, maximum), 3-D pools
# (separably on the 2-D pools), bicubic (resampling matmuls) leave no custom node but
# topk's two aten nodes (argsort, torch.gather); the 15 outputs match PyTorch.
if "$PY" $X "$T/mods.py:Imports3" -o "$T/i3.json" --input x=2x3x5x7 --input v=1x2x5x7x6 \
    --inputs-out "$T/i3in.st" --expect-out "$T/i3out.st" >"$T/out" 2>"$T/err" &&
    [ "$(grep -c '"op": "custom"' "$T/i3.json")" -eq 4 ] &&
    [ "$(grep -c '"aten": "argsort.stable"' "$T/i3.json")" -eq 2 ] &&
    "$FUSEENG" run "$T/i3.json" --policy fuse_all --execute --no-timing --weights "$T/i3.safetensors" \
        --inputs "$T/i3in.st" --expect "$T/i3out.st" --expect-rtol 1e-5 >"$T/run" 2>>"$T/err" &&
    [ "$(sed -n '/^expected/,/^groups/p' "$T/run" | grep -c ' ok$')" -eq 30 ]; then
    ok "export_torch.py: logical ops, 3-D pools, bicubic, topk match PyTorch"
else
    not_ok "export_torch.py: logical ops, 3-D pools, bicubic, topk match PyTorch" \
        "$(cat "$T/out" "$T/err")" "$(grep '"op": "custom"' "$T/i3.json")" \
        "$(sed -n '/^expected/,/^groups/p' "$T/run" 2>/dev/null)"
fi
if "$PY" $X "$T/mods.py:BitInt" -o "$T/bitint.json" --input x=2x3 >"$T/out" 2>"$T/err" &&
    grep -q "has no fuseeng op (bitwise not of a torch.int64 tensor" "$T/err"; then
    ok "export_torch.py: bitwise not of integers is a custom node"
else
    not_ok "export_torch.py: bitwise not of integers is a custom node" "$(cat "$T/err")"
fi

# Bad input: exit 2, the message says what to fix, nothing written.
nofile() {   # nofile NAME CODE REGEX ARGS...: expect_fail, and no model file
    name=$1 code=$2 re=$3; shift 3
    rm -f "$T/bad.json" "$T/bad.safetensors"
    expect_fail "export_torch.py: $name" "$code" "$re" "$PY" $X "$@" -o "$T/bad.json"
    if [ -e "$T/bad.json" ] || [ -e "$T/bad.safetensors" ]; then
        not_ok "$name leaves no file"
    fi
}
nofile "int16 weight" 2 "tensor s has dtype torch.int16, which fuseeng.model/1 has no type for" "$T/mods.py:Short" --input x=8
nofile "unknown module" 2 "no_such_pkg.resnet: not an importable dotted name" no_such_pkg.resnet --input x=8
nofile "missing file" 2 "no file .*nope.py" "$T/nope.py:Two" --input x=8
nofile "not a module" 2 "returned int, not a torch.nn.Module" "$T/mods.py:not_a_module"
nofile "missing input" 2 "no example shape for forward parameter\(s\) y: give --input" "$T/mods.py:Two" --input x=4x8
nofile "malformed shape" 2 "--input x=4xfoo: the shape must be positive integers" "$T/mods.py:Two" --input x=4xfoo
nofile "unknown parameter" 2 "forward has no parameter 'z' \(it takes x, y\)" "$T/mods.py:Two" --input z=4x8
nofile "item assignment into a computed tensor" 2 "node setitem: item assignment into a computed tensor" "$T/mods.py:Assign" --input x=2x3
nofile "item assignment of a computed value" 2 "node setitem: item assignment of a computed value into a tensor" "$T/mods.py:AssignValue" --input x=2x3
nofile "shape PyTorch refuses" 2 "PyTorch failed on it: mat1 and mat2 shapes cannot be multiplied" "$T/mods.py:Two" --input x=4x7 --input y=4x8
finish
