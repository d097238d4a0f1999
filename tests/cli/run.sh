# run.sh: `fuseeng run` and `fuseeng policies` from the command line: the
# shipped policies on every model, outputs, options, and every policy fault
# giving exit 2 with the script's file and line.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

expect_ok "policies lists the shipped ones" 'static_rules +patterns' "$FUSEENG" policies
expect_ok "help run prints the usage" 'usage: fuseeng run MODEL --policy P' "$FUSEENG" help run
expect_ok "--version" '^fuseeng [0-9]+\.[0-9]+' "$FUSEENG" --version
expect_ok "ops lists the registry" '^rms_norm +reduction +1-2 ' "$FUSEENG" ops
# No pair to try (one node): the greedy driver's round is empty.
for p in fuse_all inductor_greedy spill_veto; do
    expect_ok "$p plans a model of one node" '^kernels +1 -> 1 ' \
        "$FUSEENG" run examples/bench/gelu.json --policy $p
done
expect_fail "ops of an unknown op" 2 "no op 'frob'; known ops are: relu" "$FUSEENG" ops frob

for p in no_fusion fuse_all static_rules; do
    for m in examples/models/*.json "$SHARED"/models/*.json; do
        [ -f "$m" ] || continue
        expect_ok "$p plans $(basename "$m")" '^kernels +[0-9]+ -> [0-9]+' "$FUSEENG" run "$m" --policy "$p"
    done
done
expect_ok "static_rules on LLaMA: SwiGLU and Add+RMSNorm" 'silu\+mul \(2\)' "$FUSEENG" run "$M" --policy static_rules
expect_ok "no_fusion keeps every kernel" 'kernels +40 -> 19 \(\+9 extern; 12 view groups launch nothing; 0 fused' "$FUSEENG" run "$M" --policy no_fusion
expect_ok "--explain lists decisions" '^  fuse +\[gate_silu, swiglu\] +static rules passed' \
    "$FUSEENG" run "$M" --policy static_rules --explain
expect_ok "--json prints the plan" '"format": "fuseeng.plan/1"' "$FUSEENG" run "$M" --policy fuse_all --json
check "--plan-out and --dot write files" "$FUSEENG" run "$M" --policy fuse_all --plan-out "$T/plan.json" --dot "$T/plan.dot"
if grep -q '"decisions"' "$T/plan.json" && grep -q 'subgraph cluster_' "$T/plan.dot"; then
    ok "the plan file has decisions, the dot file clusters"
else
    not_ok "the plan file has decisions, the dot file clusters"
fi
expect_ok "--param overrides by name" 'policy +static_rules\{max_graph_size=1\}' \
    "$FUSEENG" run "$M" --policy static_rules --param max_graph_size=1
expect_ok "--combine all of two policies" 'policy +all\(fuse_all,static_rules\)' \
    "$FUSEENG" run "$M" --policy fuse_all --policy static_rules --combine all
expect_ok "--stats prints hook calls" 'Lua hook calls' "$FUSEENG" run "$M" --policy static_rules --stats

expect_fail "--param of an unknown name" 2 "has no param 'margin'; its params are: enable_fusion" \
    "$FUSEENG" run "$M" --policy static_rules --param margin=1
expect_fail "--param of the wrong type" 2 "param 'min_nodes' of policy 'static_rules' is a number; 'many' is not" \
    "$FUSEENG" run "$M" --policy static_rules --param min_nodes=many
expect_fail "--param without =" 2 "--param expects KEY=VALUE" "$FUSEENG" run "$M" --policy fuse_all --param x
expect_fail "two policies without --combine" 2 "say how to combine them with --combine" \
    "$FUSEENG" run "$M" --policy fuse_all --policy static_rules
expect_fail "an unknown combinator" 2 "--combine most: expected all, any, chain or vote" \
    "$FUSEENG" run "$M" --policy fuse_all --policy static_rules --combine most
expect_fail "an unknown policy" 2 "policy 'nope' not found" "$FUSEENG" run "$M" --policy nope
expect_fail "no policy" 2 "missing --policy" "$FUSEENG" run "$M"
expect_fail "a bad model before any policy runs" 2 "nosuch.json: cannot open" \
    "$FUSEENG" run "$T/nosuch.json" --policy fuse_all

# policy NAME BODY [FALLBACK]: a greedy policy whose decide runs BODY.
policy() {
    cat >"$T/$1.lua" <<LUA
local fe = require "fuseeng"
return fe.policy {
  name = "$1", driver = "greedy", fallback_on_error = "${3:-stop}",
  decide = function(self, group, ctx)
    $2
  end,
}
LUA
}
printf 'local fe = require "fuseeng"\nreturn fe.policy {\n  name = "bad",\n  decide = function( end }\n' >"$T/syntax.lua"
expect_fail "a policy with a syntax error" 2 "syntax\.lua:4: <name> or '\.\.\.' expected near 'end'" \
    "$FUSEENG" run "$M" --policy "$T/syntax.lua"
policy runtime 'local t = nil; return t.x'
expect_fail "a runtime error in decide" 2 "runtime\.lua:5: attempt to index a nil value \(local 't'\) \(in decide of policy 'runtime'\)" \
    "$FUSEENG" run "$M" --policy "$T/runtime.lua"
policy wrongtype 'return "yes"'
expect_fail "decide returning the wrong type" 2 "wrongtype\.lua:4: decide returned a string; it must return true, false or nil" \
    "$FUSEENG" run "$M" --policy "$T/wrongtype.lua"
policy loop 'while true do end'
expect_fail "an infinite loop" 2 "loop\.lua:5: instruction budget of 10000000 exceeded" \
    "$FUSEENG" run "$M" --policy "$T/loop.lua" --max-instructions 10000000
policy bomb 'local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(100) .. i end'
expect_fail "a memory bomb" 2 "bomb\.lua:5: memory cap of 32 MiB exceeded" \
    "$FUSEENG" run "$M" --policy "$T/bomb.lua" --max-memory 32
# The collector may let the heap grow to 4x what a script keeps, up to
# the cap: a policy keeping 40% of it while making garbage runs.
policy keeper 'if not ctx.state.keep then local k = {} for i = 1, 120000 do k[i] = ("k"):rep(100) .. i end ctx.state.keep = k end
    for i = 1, 20000 do local g = ("g"):rep(200) .. i end
    return false, "kept"'
expect_ok "a policy keeping 40% of the memory cap while making garbage" '^kernels ' \
    "$FUSEENG" run "$M" --policy "$T/keeper.lua" --max-memory 48
# The cap counts what a script keeps: an allocation that would pass it
# first makes Lua collect in full and try again, so garbage never stops a
# policy keeping 70% of the cap.
policy keeper70 'if not ctx.state.keep then local k = {} for i = 1, 210000 do k[i] = ("k"):rep(100) .. i end ctx.state.keep = k end
    for i = 1, 20000 do local g = ("g"):rep(200) .. i end
    return false, "kept"'
expect_ok "a policy keeping 70% of the memory cap while making garbage" '^kernels ' \
    "$FUSEENG" run "$M" --policy "$T/keeper70.lua" --max-memory 48
policy forbidden 'os.remove("/tmp/x")'
expect_fail "a forbidden call" 2 "forbidden\.lua:5: undefined global 'os'" \
    "$FUSEENG" run "$M" --policy "$T/forbidden.lua"
printf 'return 7\n' >"$T/notpolicy.lua"
expect_fail "a file that returns no policy" 2 "notpolicy\.lua: a policy file must return fe.policy" \
    "$FUSEENG" run "$M" --policy "$T/notpolicy.lua"
policy fallback 'error("out of ideas")' unfused
expect_ok "fallback_on_error = unfused keeps going, unfused" 'kernels +40 -> 19 \(\+9 extern; 12 view groups launch nothing; 0 fused' \
    "$FUSEENG" run "$M" --policy "$T/fallback.lua"
if grep -Eq '^fuseeng: warning: .*fallback\.lua:5: out of ideas; continuing without its fusions \(fallback_on_error = unfused\)$' "$T/err" &&
    [ "$(wc -l <"$T/err")" -eq 1 ]; then
    ok "... with one warning line on stderr"
else
    not_ok "... with one warning line on stderr" "stderr: $(head -c 600 "$T/err")"
fi
expect_ok "... and the fault in the summary" '^fallback +.*fallback\.lua:5: out of ideas; the policy.s fusions were dropped' \
    "$FUSEENG" run "$M" --policy "$T/fallback.lua"
expect_ok "... and the decision log says why" 'fallback\.lua:5: out of ideas.*fallback_on_error = "unfused"' \
    "$FUSEENG" run "$M" --policy "$T/fallback.lua" --explain
expect_ok "a policy that does not fault has no fallback line" '^decisions ' "$FUSEENG" run "$M" --policy fuse_all
if grep -q '^fallback' "$T/out" || [ -s "$T/err" ]; then not_ok "... and no warning" "$(cat "$T/out" "$T/err" | grep -m2 'fallback\|warning')"; else ok "... and no warning"; fi
printf 'local fe = require "fuseeng"\nreturn fe.policy {\n  name = "badsplit", driver = "greedy", fallback_on_error = "unfused",\n  split = function() error("split broke") end,\n}\n' >"$T/badsplit.lua"
expect_ok "a split hook's fault under unfused drops the fusions already decided" 'kernels +40 -> 19 \(\+9 extern; 12 view groups launch nothing; 0 fused' \
    "$FUSEENG" run "$M" --policy "$T/badsplit.lua"
grep -q 'badsplit\.lua:4: split broke' "$T/err" && ok "... with the warning" || not_ok "... with the warning" "$(cat "$T/err")"

expect_fail "--plan-out into a missing directory says why" 2 "/nonexistent/plan\.json: cannot write the plan: No such file or directory" \
    "$FUSEENG" run "$M" --policy fuse_all --plan-out /nonexistent/plan.json
expect_fail "--dot into a missing directory says why" 2 "/nonexistent/plan\.dot: cannot write the dot file: No such file or directory" \
    "$FUSEENG" run "$M" --policy fuse_all --dot /nonexistent/plan.dot
finish
