# policy_infinicore.sh: policies/infinicore.lua, seed 000's whole should_fuse
# (static_rules, then profile_lookup, through fe.chain) and the dispatch's
# fallback_on_error: each rule of the seed's table failing and passing, each
# profile path (exact key over compat key, compat key alone, the margin
# boundary, profile_fallback fuse and no_fuse), and a decide that raises.
. tests/lib.sh
P=infinicore

# model NAME NODES: a model on two f32 [N] inputs a and b (N = 4096 by
# default) whose nodes are given as JSON; every node output is inferred.
model() {
    cat >"$T/$1.json" <<JSON
{"format": "fuseeng.model/1", "name": "$1", "dims": {"N": 4096},
 "tensors": {"a": {"shape": ["N"], "dtype": "f32", "kind": "input"},
             "b": {"shape": ["N"], "dtype": "f32", "kind": "input"}},
 "nodes": [$2], "outputs": ["out"]}
JSON
}
node() { printf '{"name": "%s", "op": "%s", "inputs": [%s], "outputs": ["%s"]}' "$1" "$2" "$3" "$1"; }
model swiglu "$(node s silu '"a"'), $(node out mul '"s", "b"')"
model gelu "$(node out gelu '"a"')"
model unsupported "$(node e exp '"a"'), $(node out mul '"e", "b"')"
# chainK: K alternating adds and muls, each taking b.
chain() {
    prev=a nodes=""
    i=1
    while [ "$i" -le "$1" ]; do
        op=add; [ $((i % 2)) -eq 0 ] && op=mul
        name=t$i; [ "$i" -eq "$1" ] && name=out
        nodes="$nodes${nodes:+, }$(node "$name" $op "\"$prev\", \"b\"")"
        prev=$name i=$((i + 1))
    done
    model "chain$1" "$nodes"
}
chain 10
chain 11
r() { m=$1; shift; "$FUSEENG" run "$T/$m.json" --policy $P --explain "$@"; }

# Stage 1, the seed's rule table. A failing rule ends the chain: the
# profile is not asked.
expect_ok "rule0 fails: enable_fusion = false" \
    '^  no +\[s, out\] +chain -> no; static_rules: no \(rule0: fusion is disabled \(enable_fusion = false\)\)$' \
    r swiglu --param enable_fusion=false
expect_ok "rule0 passes: fusion enabled by default" \
    '^  fuse +\[s, out\] +chain -> yes; static_rules: no opinion \(static rules passed \(rules 0-4\)\); profile_lookup: yes' \
    r swiglu
# The patterns driver proposes groups of two nodes or more (a lone gelu is
# never a candidate), so rule1 is shown failing with min_nodes = 3.
expect_ok "rule1 fails: 2 nodes < min_nodes 3" \
    '^  no +\[s, out\] +chain -> no; static_rules: no \(rule1: 2 nodes < min_nodes 3\)$' \
    r swiglu --param min_nodes=3
expect_ok "rule1 passes: 2 nodes" '^kernels +2 -> 1 ' r swiglu
T11='"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "out"'
expect_ok "rule2 fails: 11 nodes > max_graph_size 10" \
    "\\{\"group\": \\[$T11\\], \"fuse\": false, \"by\": \"infinicore\", \"reason\": \"chain -> no; static_rules: no \\(rule2: 11 nodes > max_graph_size 10\\)\"" \
    r chain11 --json
expect_ok "rule2 passes: 10 nodes, the next match of the 11-chain" \
    '"nodes": \["t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "out"\], "class": "pointwise"' \
    r chain11 --json
expect_ok "rule2 passes: a 10-chain is one kernel" '^kernels +10 -> 1 ' r chain10
expect_ok "rule2 follows max_graph_size" 'rule2: 10 nodes > max_graph_size 9' r chain10 --param max_graph_size=9
expect_ok "rule3 fails: an input of 1023 elements" \
    "static_rules: no \(rule3: input 1 \(f32\[1023\]\) has 1023 elements < min_tensor_elements 1024\)" r swiglu --dim N=1023
expect_ok "rule3 passes: 1024 elements, the boundary" '^kernels +2 -> 1 ' r swiglu --dim N=1024
expect_ok "rule4 fails: exp is not in the V1 set" \
    "static_rules: no \(rule4: op 'exp' is not in the supported set\)" r unsupported
expect_ok "rule4 passes: exp added to the supported set" '^kernels +2 -> 1 ' \
    r unsupported --param supported=exp,mul

profile() { printf '{"single": {"silu": 0.5, "mul": 0.25}, "fused": {%s}}' "$2" >"$T/$1"; }
# Stage 2. The exact key of [s, out] is in the reason when it is missing.
profile nofused.json '"gelu": 0.1'
key=$(r swiglu --profile "$T/nofused.json" | sed -n 's/.*no fused time for silu+mul (exact key \([0-9a-f]*\)).*/\1/p')
if [ ${#key} -eq 16 ]; then ok "the exact key is named when the profile lacks it"; else not_ok "exact key" "got '$key'"; fi
profile both.json "\"silu+mul\": 0.5, \"$key\": 1.0"
expect_ok "the exact key wins over the compat key" \
    '^  no +\[s, out\].*profile_lookup: no \(separate 0\.7500 ms <= fused 1\.0000 ms x \(1 \+ 0\.00\) \(exact key\)\)$' \
    r swiglu --profile "$T/both.json"
profile compat.json '"silu+mul": 0.5'
expect_ok "the compat key when the exact key is missing" \
    'profile_lookup: yes \(separate 0\.7500 ms > fused 0\.5000 ms x \(1 \+ 0\.00\) \(compat key\)\)$' \
    r swiglu --profile "$T/compat.json"
expect_ok "margin boundary: separate == fused x (1 + margin) does not fuse" \
    '^  no .*separate 0\.7500 ms <= fused 0\.5000 ms x \(1 \+ 0\.50\) \(compat key\)\)$' \
    r swiglu --profile "$T/compat.json" --param margin=0.5
expect_ok "margin boundary: a hair above fuses" \
    '^  fuse .*separate 0\.7500 ms > fused 0\.5000 ms x \(1 \+ 0\.50\) \(compat key\)\)$' \
    r swiglu --profile "$T/compat.json" --param margin=0.4999999
expect_ok "missing fused time, profile_fallback = fuse (the default)" \
    "^  fuse .*profile_lookup: yes \(no fused time for silu\+mul \(exact key $key\); profile_fallback = fuse\)\$" \
    r swiglu --profile "$T/nofused.json"
expect_ok "missing fused time, profile_fallback = no_fuse" \
    "^  no .*profile_lookup: no \(no fused time for silu\+mul \(exact key $key\); profile_fallback = no_fuse\)\$" \
    r swiglu --profile "$T/nofused.json" --param profile_fallback=no_fuse
printf '{"single": {"silu": 0.5}, "fused": {"silu+mul": 0.1}}' >"$T/nosingle.json"
expect_ok "missing single time, profile_fallback = no_fuse" \
    "profile_lookup: no \(no single time for op 'mul'; profile_fallback = no_fuse\)\$" \
    r swiglu --profile "$T/nosingle.json" --param profile_fallback=no_fuse
expect_ok "missing single time, profile_fallback = fuse" \
    "profile_lookup: yes \(no single time for op 'mul'; profile_fallback = fuse\)\$" \
    r swiglu --profile "$T/nosingle.json"

# The dispatch's fallback_on_error: a decide that raises falls back to the
# unfused plan with a warning (the seed's fallback_on_error=True) ...
expect_ok "a decide that raises: unfused, said in the summary" \
    '^fallback +.*profile_lookup\.lua:[0-9]+: param profile_fallback must be "fuse" or "no_fuse", not "maybe"; the policy.s fusions were dropped' \
    r swiglu --param profile_fallback=maybe
if grep -q 'warning: .*profile_lookup\.lua:[0-9]*: param profile_fallback must be' "$T/err" &&
   grep -Eq '^kernels +2 -> 2 ' "$T/out" &&
   grep -Eq '^  no +\[s, out\] +error in decide: .*profile_lookup\.lua:[0-9]+: param profile_fallback must be .*; fallback_on_error = "unfused": the policy.s fusions are dropped$' "$T/out"; then
    ok "and warned on stderr, logged in the decisions, every node unfused"
else
    not_ok "fallback warning" "$(cat "$T/err")"
fi
# ... and with fallback_on_error = "stop" (the seed's False) the run stops.
cat >"$T/strict.lua" <<'LUA'
local p = require "policies.infinicore"
local strict = require("fuseeng").with(p, {})
strict.fallback_on_error = "stop"
return strict
LUA
expect_fail "fallback_on_error = stop: the error stops the run" 2 \
    'profile_lookup\.lua:[0-9]+: param profile_fallback must be "fuse" or "no_fuse", not "maybe"' \
    "$FUSEENG" run "$T/swiglu.json" --policy "$T/strict.lua" --param profile_fallback=maybe
printf 'local p = require "policies.no_such_policy"\nreturn p\n' >"$T/missing.lua"
expect_fail "require of a policy that is not shipped" 2 \
    "missing\.lua:1: module 'policies\.no_such_policy' not found" \
    "$FUSEENG" run "$T/swiglu.json" --policy "$T/missing.lua"
finish
