# solo_ops.sh: a greedy policy's solo_ops (core/script/driver_greedy.c): the
# nodes of those ops are in no candidate, never reach score or decide, and
# are logged once each as staying alone; bad values are load errors.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

# A decide that fails on any group holding a matmul: with solo_ops it is
# never shown one, and the plan equals the one the refusals made.
cat >"$T/strict.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "strict", driver = "greedy", solo_ops = { "matmul", "sdpa" },
  decide = function(self, g, ctx)
    for _, n in ipairs(g.nodes) do
      if n.op == "matmul" or n.op == "sdpa" then error("decide saw " .. n.op .. " '" .. n.name .. "'") end
    end
    return true, "fused"
  end }
LUA
cat >"$T/refuse.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "refuse", driver = "greedy",
  decide = function(self, g, ctx)
    for _, n in ipairs(g.nodes) do
      if n.op == "matmul" or n.op == "sdpa" then return false, "holds " .. n.op end
    end
    return true, "fused"
  end }
LUA
expect_ok "decide never sees a solo op" '^kernels +[0-9]+ -> [0-9]+' "$FUSEENG" run $M --policy "$T/strict.lua" --explain
grep -Eq "^  no +\[q_proj\] +alone: matmul is one of the policy's solo_ops" "$T/out" &&
    ok "each solo node is logged once as alone" || not_ok "each solo node is logged once as alone" "$(grep alone "$T/out" | head -3)"
"$FUSEENG" run $M --policy "$T/strict.lua" --json | grep -v '"policy"\|"reason"\|"by"' >"$T/a.json"
"$FUSEENG" run $M --policy "$T/refuse.lua" --json | grep -v '"policy"\|"reason"\|"by"' >"$T/b.json"
ga=$(grep -c '"nodes": \[' "$T/a.json"); gb=$(grep -c '"nodes": \[' "$T/b.json")
"$FUSEENG" run $M --policy "$T/strict.lua" --stats >"$T/sa" 2>&1
"$FUSEENG" run $M --policy "$T/refuse.lua" --stats >"$T/sb" 2>&1
ha=$(sed -n 's/^ *\([0-9]*\) Lua hook calls.*/\1/p' "$T/sa"); hb=$(sed -n 's/^ *\([0-9]*\) Lua hook calls.*/\1/p' "$T/sb")
[ "$ga" -gt 0 ] && [ "$ga" -eq "$gb" ] && ok "the same groups as refusing them in decide ($ga)" ||
    not_ok "the same groups as refusing them in decide" "$ga vs $gb"
[ -n "$ha" ] && [ -n "$hb" ] && [ "$ha" -lt "$hb" ] && ok "with fewer hook calls ($ha < $hb)" ||
    not_ok "with fewer hook calls" "$ha vs $hb"

# Bad values: load errors naming the policy and the field, exit 2.
bad() {
    printf 'local fe = require "fuseeng"\nreturn fe.policy { name = "b", driver = "%s", solo_ops = %s,\n  decide = function() return true end }\n' "$1" "$2" >"$T/bad.lua"
}
bad greedy '{ "matmull" }'
expect_fail "an unknown op in solo_ops" 2 "bad\.lua.*policy 'b': solo_ops\[1\] is 'matmull', not an op name" \
    "$FUSEENG" run $M --policy "$T/bad.lua"
bad greedy '{ matmul = true }'
expect_fail "solo_ops that is not a list" 2 "policy 'b': solo_ops must be a list of op names" \
    "$FUSEENG" run $M --policy "$T/bad.lua"
bad greedy '"matmul"'
expect_fail "solo_ops that is a string" 2 "policy 'b': 'solo_ops' is a string; expected a table" \
    "$FUSEENG" run $M --policy "$T/bad.lua"
printf 'local fe = require "fuseeng"\nreturn fe.policy { name = "b", driver = "patterns", patterns = { "silu mul" }, solo_ops = { "matmul" } }\n' >"$T/bad.lua"
expect_fail "solo_ops on another driver" 2 "policy 'b': solo_ops is read by the greedy driver only, not by patterns" \
    "$FUSEENG" run $M --policy "$T/bad.lua"
# A table changed after fe.policy checked it is checked again by the driver.
printf 'local fe = require "fuseeng"\nlocal p = fe.policy { name = "b", driver = "greedy", solo_ops = { "matmul" } }\np.solo_ops = { "nope" }\nreturn p\n' >"$T/bad.lua"
expect_fail "solo_ops changed after fe.policy" 2 "policy 'b': solo_ops\[1\] is not an op name" \
    "$FUSEENG" run $M --policy "$T/bad.lua"
finish
