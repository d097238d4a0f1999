# policy_benchmark_fusion.sh: benchmark mode on graphs that repeat (every
# layer of a transformer offers the same candidates): ctx:bench's kernel
# cache measures each distinct group and each distinct op alone once, so
# adding identical layers adds no measurement; benchmark_fusion says in its
# reasons which decisions came from the cache; and a budget far too small
# still decides every candidate, the ones past it by the simulator, saying so.
. tests/lib.sh

# Small LLaMA-style decoders of 1, 2 and 3 identical layers.
for L in 1 2 3; do
    lua5.4 examples/gen_models.lua --layers $L --hidden 128 --heads 1 --mlp 256 --seq 16 \
        --out "$T/l$L.json" >/dev/null || not_ok "generate a $L-layer model"
done

# A policy that measures every candidate and fuses none (the candidates
# are the same pairs in every layer); its reasons say where each answer
# came from, or ctx:bench's kind of refusal and why.
cat >"$T/count.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "count", driver = "greedy",
  decide = function(self, group, ctx)
    local m, why, kind = ctx:bench(group)
    if not m then return false, kind .. ": " .. why end
    return false, m.cached and "cached" or "measured"
  end,
}
LUA
measured() {
    "$FUSEENG" run "$T/l$1.json" --policy "$T/count.lua" --stats | sed -n 's/^bench *\([0-9]*\) items measured, \([0-9]*\) answers.*/\1 \2/p'
}
one=$(measured 1) two=$(measured 2) three=$(measured 3)
set -- $one; m1=$1; set -- $two; m2=$1 c2=$2; set -- $three; m3=$1 c3=$2
if [ -n "$m1" ] && [ "$m1" -gt 0 ] && [ "$m1" = "$m2" ] && [ "$m2" = "$m3" ]; then
    ok "each distinct group and op is measured once: $m1 items for 1, 2 and 3 layers"
else
    not_ok "each distinct group and op is measured once" "items measured for 1, 2, 3 layers: '$m1' '$m2' '$m3'"
fi
if [ -n "$c3" ] && [ "$c3" -gt "$c2" ]; then
    ok "a third layer is answered from the kernel cache ($c2 -> $c3 answers)"
else
    not_ok "a third layer is answered from the kernel cache" "cached answers: '$c2' '$c3'"
fi

# benchmark_fusion's reasons name the cache.
expect_ok "benchmark_fusion decides later layers from the kernel cache" \
    'measured [0-9.]+x \(separate [0-9.]+ ms, fused [0-9.]+ ms, [a-z_]+\)( below [0-9.]+x)?; from the kernel cache' \
    "$FUSEENG" run "$T/l2.json" --policy benchmark_fusion --explain
expect_ok "benchmark_fusion reuses ops timed alone before" \
    'measured .*; [0-9]+ of [0-9]+ ops alone from the kernel cache' \
    "$FUSEENG" run "$T/l1.json" --policy benchmark_fusion --explain

# A tiny budget: every candidate is still decided, those past the budget
# by the simulator, and --stats counts them.
"$FUSEENG" run "$T/l2.json" --policy benchmark_fusion --bench-budget 1e-9 --explain --stats >"$T/tiny" 2>&1
total=$(sed -n 's/^decisions  \([0-9]*\) fuse, \([0-9]*\) do not fuse.*/\1 \2/p' "$T/tiny" | awk '{print $1 + $2}')
byreason=$(grep -Ec '^  (fuse|no) +\[.*\]  (measured|not measured \(budget spent\); simulator on gcu: apart [0-9.]+ [mu]?s, fused [0-9.]+ [mu]?s)' "$T/tiny")
fallbacks=$(grep -c 'not measured (budget spent); simulator on gcu' "$T/tiny")
if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$total" = "$byreason" ] && [ "$fallbacks" -gt 0 ]; then
    ok "a tiny budget decides all $total candidates, $fallbacks by the simulator"
else
    not_ok "a tiny budget decides every candidate" "decisions $total, measured or simulated $byreason, simulated $fallbacks" "$(head -c 800 "$T/tiny")"
fi
if grep -Eq '^bench +[0-9]+ items measured, [0-9]+ answers from the kernel cache, [1-9][0-9]* calls past the budget' "$T/tiny"; then
    ok "--stats counts the calls past the budget"
else
    not_ok "--stats counts the calls past the budget" "$(grep -A3 '^stats' "$T/tiny")"
fi

# ctx:bench's third result names the kind of refusal.
expect_ok "ctx:bench past the budget says \"budget\"" 'no +\[.*\] +budget: this run has spent its 1e-09 s measuring budget' \
    "$FUSEENG" run "$T/l1.json" --policy "$T/count.lua" --bench-budget 1e-9 --explain

# Inputs ctx:bench makes for an exported index.Tensor are in range of the
# dim they index (issue 16's random indices), through a reshape, with
# args.indices placing a None entry: x[i] on [1, 8] and x[:, i] on [8, 1].
for case in '1, 8|[true]' '8, 1|[null, true]'; do
    shape=${case%%|*} indices=${case#*|}
    cat >"$T/index.json" <<JSON
{"format": "fuseeng.model/1", "name": "index_in_range",
 "tensors": {"x": {"shape": [$shape], "dtype": "f32", "kind": "input"},
             "i": {"shape": [2, 2], "dtype": "i64", "kind": "input"},
             "y": {"shape": [$( [ "$shape" = "1, 8" ] && echo "4, 8" || echo "8, 4" )], "dtype": "f32", "kind": "activation"}},
 "nodes": [{"name": "flat", "op": "reshape", "inputs": ["i"], "outputs": ["j"], "attrs": {"shape": [4]}},
           {"name": "pick", "op": "custom", "inputs": ["x", "j"], "outputs": ["y"],
            "attrs": {"aten": "index.Tensor", "args": {"indices": $indices}, "pattern": "injective"}},
           {"name": "act", "op": "relu", "inputs": ["y"], "outputs": ["z"]}],
 "outputs": ["z"]}
JSON
    "$FUSEENG" run "$T/index.json" --policy "$T/count.lua" --explain >"$T/index.out" 2>&1
    if [ "$(grep -Ec '^  no +\[(flat, pick|pick, act)\] +measured$' "$T/index.out")" -eq 2 ]; then
        ok "index.Tensor inputs are made in range (x [$shape], indices $indices)"
    else
        not_ok "index.Tensor inputs are made in range (x [$shape], indices $indices)" "$(tail -4 "$T/index.out")"
    fi
done

finish
