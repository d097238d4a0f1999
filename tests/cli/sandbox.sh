# sandbox.sh: the sandbox's limits from the command line: the time limit
# (--max-seconds on every command that runs Lua), the watchdog for a script
# stuck in one C call, and finalizers refused in policies and machine files.
# Every case must end with exit 2 and the script's file named, never hang.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

# policy NAME BODY: a greedy policy whose decide runs BODY (line 4).
policy() {
    cat >"$T/$1.lua" <<LUA
local fe = require "fuseeng"
return fe.policy {
  name = "$1", driver = "greedy", decide = function(self, group, ctx)
    $2
  end,
}
LUA
}

# A loop of big C calls uses few instructions: only the clock stops it.
policy slowc 'while true do local s = string.rep("x", 1 << 24) end'
expect_fail "run --max-seconds stops a loop of slow C calls" 2 \
    "slowc\.lua:4: time limit of 1 s exceeded .*\(in decide of policy 'slowc'\)" \
    "$FUSEENG" run "$M" --policy "$T/slowc.lua" --max-seconds 1
policy pcallerr 'for i = 1, 1e12 do pcall(error, "x") end'
expect_fail "... and a loop of pcalls, which the budget would take a minute to stop" 2 \
    "pcallerr\.lua:4: time limit of 1 s exceeded" "$FUSEENG" run "$M" --policy "$T/pcallerr.lua" --max-seconds 1
# ab: the policy's cell fails, the table completes, the status is 1.
"$FUSEENG" ab "$M" --policy fuse_all --policy "$T/pcallerr.lua" --max-seconds 1 >"$T/ab.out" 2>"$T/ab.err"
rc=$?
if [ $rc -eq 1 ] && grep -Eq "FAILED: .*pcallerr\.lua:4: time limit of 1 s exceeded" "$T/ab.out" &&
   grep -q "1 cell failed" "$T/ab.err"; then ok "ab --max-seconds fails the policy's cell"
else not_ok "ab --max-seconds fails the policy's cell" "exit $rc" "$(head -c 400 "$T/ab.out")" "$(cat "$T/ab.err")"; fi
expect_fail "bench --max-seconds" 2 "pcallerr\.lua:4: time limit of 1 s exceeded" \
    "$FUSEENG" bench "$M" --policy "$T/pcallerr.lua" --max-seconds 1
expect_fail "profile --max-seconds" 2 "pcallerr\.lua:4: time limit of 1 s exceeded" \
    "$FUSEENG" profile "$M" --policy "$T/pcallerr.lua" -o "$T/prof.json" --max-seconds 1
printf 'for i = 1, 1e12 do pcall(error, "x") end\n' >"$T/slowscript.lua"
expect_fail "script --max-seconds" 2 "slowscript\.lua:1: time limit of 1 s exceeded" \
    "$FUSEENG" script --max-seconds 1 "$T/slowscript.lua"
printf 'for i = 1, 1e12 do pcall(error, "x") end\nreturn {}\n' >"$T/slowmachine.lua"
"$FUSEENG" run "$M" --policy fuse_all --plan-out "$T/plan.json" >/dev/null 2>&1
expect_fail "sim --max-seconds covers the machine file" 2 "slowmachine\.lua:1: time limit of 1 s exceeded" \
    "$FUSEENG" sim "$M" --plan "$T/plan.json" --machine "$T/slowmachine.lua" --max-seconds 1
expect_fail "--max-seconds needs a positive number" 2 "--max-seconds needs a positive number of seconds" \
    "$FUSEENG" run "$M" --policy fuse_all --max-seconds 0

# One C call the hook cannot interrupt: the watchdog ends the process a
# grace period (1 s here) after the limit.
policy strfind 'string.find(string.rep("a", 40), string.rep("a*", 40) .. "b")'
start=$(date +%s)
expect_fail "the watchdog ends a script stuck in a string pattern" 2 \
    "^fuseeng: .*strfind\.lua: still inside a C call 1 s past the time limit \(a string pattern\?\); stopping$" \
    "$FUSEENG" run "$M" --policy "$T/strfind.lua" --max-seconds 1
if [ $(($(date +%s) - start)) -le 10 ]; then ok "... promptly"; else not_ok "... promptly" "took $(($(date +%s) - start)) s"; fi
printf 'string.find(string.rep("a", 40), string.rep("a*", 40) .. "b")\n' >"$T/strfind_top.lua"
expect_fail "... also in fuseeng script" 2 "strfind_top\.lua: still inside a C call" \
    "$FUSEENG" script --max-seconds 1 "$T/strfind_top.lua"
# The watchdog's timer fires 2 s after the run began; a run that ended long
# before must not trip it while --execute keeps the process busy.
start=$(date +%s)
expect_ok "the watchdog ignores work after the run" '^kernels +[0-9]+ -> ' \
    "$FUSEENG" run examples/models/gpt2_block.json --policy fuse_all --max-seconds 1 --execute --budget 1.5
if [ $(($(date +%s) - start)) -lt 3 ]; then skip "... which outlived the timer" "finished within 3 s"; else ok "... which outlived the timer"; fi

# Finalizers run with hooks off, so they are refused wherever scripts run.
policy gc 'setmetatable({}, {__gc = function() while true do end end})'
expect_fail "no __gc in decide" 2 "gc\.lua:4: setmetatable: metatables with __gc are not allowed" \
    "$FUSEENG" run "$M" --policy "$T/gc.lua"
printf 'local fe = require "fuseeng"\nlocal keep = setmetatable({}, {__gc = function() while true do end end})\nreturn fe.policy{name = "gctop", driver = "greedy"}\n' >"$T/gctop.lua"
expect_fail "no __gc at a policy's top level" 2 "gctop\.lua:2: setmetatable: metatables with __gc are not allowed" \
    "$FUSEENG" run "$M" --policy "$T/gctop.lua"
printf 'local keep = setmetatable({}, {__gc = function() while true do end end})\nreturn {}\n' >"$T/gcmachine.lua"
expect_fail "no __gc in a machine file" 2 "gcmachine\.lua:1: setmetatable: metatables with __gc are not allowed" \
    "$FUSEENG" run "$M" --policy fuse_all --machine "$T/gcmachine.lua"
printf 'local mt = {}\nlocal t = setmetatable({}, mt)\nmt.__gc = function() while true do end end\nt = nil\nreturn 0\n' >"$T/gclate.lua"
check "__gc added after setmetatable never runs (Lua 5.4 marks objects at setmetatable)" \
    "$FUSEENG" script "$T/gclate.lua"
finish
