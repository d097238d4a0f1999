# pattern_cones.sh: the patterns driver remembers an expression pattern's
# matches by the structure around the root (core/script/cone_memo.c): the
# groups and the log are those of matching at every root, which a pattern
# without a height (as a hand-made one) gets, and a block that differs
# inside the pattern's reach (another constant) is matched on its own.
. tests/lib.sh
M=${SHARED:-../shared}/models/gpt2-small-2l-eager.json
lua5.4 examples/gen_models.lua --layers 6 --compact --out "$T/l6.json" >/dev/null

# GELU's tanh form and SwiGLU, compiled; the same with the heights taken
# away, so every root is matched in Lua.
for form in compiled plain; do
cat >"$T/$form.lua" <<LUA
local fe = require "fuseeng"
local srcs = { "x * 0.5 * (1 + tanh(0.7978845608028654 * (x + 0.044715 * pow(x, 3))))",
               "silu(g) * u", "w * cast?(x * rsqrt(mean(x * x) + #eps))" }
local pats = {}
for i, s in ipairs(srcs) do
  pats[i] = fe.pattern(s)
  if "$form" == "plain" then pats[i].height = nil end
end
return fe.policy { name = "$form", driver = "patterns", patterns = pats,
  decide = function(self, group, ctx) return true, "pattern " .. ctx.pattern end }
LUA
done
for m in "$M" "$T/l6.json"; do
    if [ ! -f "$m" ]; then   # the shared models beside the checkout
        skip "$(basename "$m"): remembered matches make the decisions of matching everywhere" "no $m"
        skip "$(basename "$m"): matches were remembered" "no $m"
        continue
    fi
    "$FUSEENG" run "$m" --policy "$T/compiled.lua" --explain --stats >"$T/c.txt" 2>&1
    "$FUSEENG" run "$m" --policy "$T/plain.lua" --explain --stats >"$T/p.txt" 2>&1
    grep -E '^  (fuse|no|rejected) ' "$T/c.txt" >"$T/c.dec"
    grep -E '^  (fuse|no|rejected) ' "$T/p.txt" >"$T/p.dec"
    if [ -s "$T/c.dec" ] && cmp -s "$T/c.dec" "$T/p.dec"; then
        ok "$(basename "$m"): remembered matches make the decisions of matching everywhere"
    else
        not_ok "$(basename "$m"): remembered matches make the decisions of matching everywhere" \
            "$(diff "$T/c.dec" "$T/p.dec" | head -5)"
    fi
    expect_ok "$(basename "$m"): matches were remembered" "hook answers reused" cat "$T/c.txt"
done

# Two GELU blocks on two inputs, the second with 0.25 for 0.5: only the
# first is GELU.
cat >"$T/gelus.json" <<'JSON'
{"format": "fuseeng.model/1", "tensors": {"in": {"shape": [64], "dtype": "f32", "kind": "input"},
  "in2": {"shape": [64], "dtype": "f32", "kind": "input"}},
 "nodes": [
  {"name": "a_cube", "op": "pow", "inputs": ["in"], "outputs": ["a3"], "attrs": {"scalar": 3.0}},
  {"name": "a_c", "op": "mul", "inputs": ["a3"], "outputs": ["ac"], "attrs": {"scalar": 0.044715}},
  {"name": "a_in", "op": "add", "inputs": ["in", "ac"], "outputs": ["ai"]},
  {"name": "a_s", "op": "mul", "inputs": ["ai"], "outputs": ["as"], "attrs": {"scalar": 0.7978845608028654}},
  {"name": "a_t", "op": "tanh", "inputs": ["as"], "outputs": ["at"]},
  {"name": "a_1", "op": "add", "inputs": ["at"], "outputs": ["a1"], "attrs": {"scalar": 1.0}},
  {"name": "a_h", "op": "mul", "inputs": ["in"], "outputs": ["ah"], "attrs": {"scalar": 0.5}},
  {"name": "a_y", "op": "mul", "inputs": ["ah", "a1"], "outputs": ["ay"]},
  {"name": "b_cube", "op": "pow", "inputs": ["in2"], "outputs": ["b3"], "attrs": {"scalar": 3.0}},
  {"name": "b_c", "op": "mul", "inputs": ["b3"], "outputs": ["bc"], "attrs": {"scalar": 0.044715}},
  {"name": "b_in", "op": "add", "inputs": ["in2", "bc"], "outputs": ["bi"]},
  {"name": "b_s", "op": "mul", "inputs": ["bi"], "outputs": ["bs"], "attrs": {"scalar": 0.7978845608028654}},
  {"name": "b_t", "op": "tanh", "inputs": ["bs"], "outputs": ["bt"]},
  {"name": "b_1", "op": "add", "inputs": ["bt"], "outputs": ["b1"], "attrs": {"scalar": 1.0}},
  {"name": "b_h", "op": "mul", "inputs": ["in2"], "outputs": ["bh"], "attrs": {"scalar": 0.25}},
  {"name": "b_y", "op": "mul", "inputs": ["bh", "b1"], "outputs": ["by"]}
 ], "outputs": ["ay", "by"]}
JSON
"$FUSEENG" run "$T/gelus.json" --policy "$T/compiled.lua" --explain >"$T/g.txt" 2>&1
expect_ok "the 0.5 block is GELU" "^  fuse +\[a_cube, a_c, a_in, a_s, a_t, a_1, a_h, a_y\] +pattern 1$" cat "$T/g.txt"
if grep -E "^  fuse .*b_y" "$T/g.txt" >/dev/null; then
    not_ok "the 0.25 block is not" "$(grep b_y "$T/g.txt")"
else
    ok "the 0.25 block is not"
fi

finish
