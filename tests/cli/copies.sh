# copies.sh: layout copies (plan.h's fe_copy): a policy's copies hook asks
# for them, plan files carry them ("copies"), reports count them among the
# generated kernels, the simulator prices them and the CPU executor skips
# them; bad answers and bad plan files are refused naming the place.
. tests/lib.sh

cat >"$T/conv.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "conv", "tensors": {
 "x": {"shape": [1, 3, 8, 8], "dtype": "f32", "kind": "input"},
 "w1": {"shape": [4, 3, 3, 3], "dtype": "f32", "kind": "weight"},
 "w2": {"shape": [4, 4, 1, 1], "dtype": "f32", "kind": "weight"}},
 "nodes": [
 {"name": "c1", "op": "conv2d", "inputs": ["x", "w1"], "outputs": ["a"], "attrs": {"stride": 1, "padding": 1}},
 {"name": "r1", "op": "relu", "inputs": ["a"], "outputs": ["b"]},
 {"name": "c2", "op": "conv2d", "inputs": ["b", "w2"], "outputs": ["c"], "attrs": {"stride": 1, "padding": 0}}],
 "outputs": ["c"]}
JSON
# policy NAME 'ANSWER': a policy whose copies hook returns ANSWER (Lua).
policy() {
    printf 'local fe = require "fuseeng"\nreturn fe.policy {\n  name = "%s",\n  driver = "greedy",\n  copies = function(self, graph, ctx)\n    return %s\n  end,\n}\n' \
        "$1" "$2" >"$T/$1.lua"
}
run() { p=$1; shift; "$FUSEENG" run "$T/conv.json" --policy "$T/$p.lua" "$@"; }

policy good '{ graph:tensor("x"), { tensor = "w1", reason = "channels_last for conv2d c1" } }'
expect_ok "copies count among the generated kernels and are named" \
    '^kernels +3 -> 3 \(\+1 extern; .*; 2 layout copies\)$' run good
expect_ok "... each with its reason" '^           w1: channels_last for conv2d c1$' run good
expect_ok "the comparison table counts them" '^layout copies +0 +2 +\+2$' run good
expect_ok "the group table prices a copy before its first reader: a launch, the bytes read and written" \
    '^ +copy x +0 +1 +[0-9.]+ +1\.5 KiB .*layout copy$' run good --verbose
run good --json >"$T/good.json"
expect_ok "the plan file lists them" '^  \{"tensor": "w1", "reason": "channels_last for conv2d c1"\}$' cat "$T/good.json"
expect_ok "... and its summary counts them" '^  "copies": 2,$' cat "$T/good.json"
expect_ok "a saved plan keeps them" '^layout copies +0 +2 +\+2$' \
    "$FUSEENG" sim "$T/conv.json" --plan "$T/good.json"
expect_ok "run --execute still matches the reference (the CPU kernels skip copies)" \
    '^ +c +0 +0 +1e-04 +0 +ok$' run good --execute --budget 0.01
policy none 'nil'
expect_ok "a hook that returns nil asks for none" '^kernels +3 -> 1 \(\+1 extern; 1 fused group holding 2 nodes; largest 2 nodes\)$' run none

# Bad answers are the policy's fault: file and line, exit 2.
for case in 'notlist|42|copies returned 42; it must return a list of tensors' \
            'unknown|{ "nope" }|copies: item 1 is .nope.; it must be a tensor of the model' \
            'produced|{ "a" }|copies: item 1: tensor .a. is produced by a node' \
            'twice|{ "x", graph:tensor("x") }|copies: item 2: tensor .x. is copied twice' \
            'reason|{ { tensor = "x", reason = 3 } }|copies: item 1: reason is 3; it must be a string'; do
    name=${case%%|*}; rest=${case#*|}; answer=${rest%%|*}; msg=${rest#*|}
    policy "$name" "$answer"
    expect_fail "copies hook: $name is refused with the policy's place" 2 \
        "$name\.lua:[0-9]+: $msg" run "$name"
done

# fallback_on_error = "unfused": a bad answer drops the policy's plan.
sed 's/^  driver = "greedy",/  driver = "greedy", fallback_on_error = "unfused",/' "$T/produced.lua" >"$T/fallback.lua"
expect_ok "with fallback_on_error = unfused a bad answer gives the unfused plan, no copies" \
    '^kernels +3 -> 1 \(\+2 extern; 0 fused groups' run fallback
expect_ok "... and says why" '^fallback .*fallback\.lua:[0-9]+: copies: item 1: tensor .a. is produced' run fallback

# Bad plan files: exit 2 naming the file and the copy.
awk '/^ "copies": \[/ { print " \"copies\": [],"; skip = 1; next } skip && /^ \],/ { skip = 0; next } !skip' \
    "$T/good.json" >"$T/empty.plan"
check "an empty list of copies is read" "$FUSEENG" sim "$T/conv.json" --plan "$T/empty.plan"
for case in 'notlist|{}|"copies" must be a list' \
            'unknown|[{"tensor": "nope"}]|copy 0 names tensor .nope., which model .conv. does not have' \
            'twice|[{"tensor": "x"}, {"tensor": "x"}]|copy 1: tensor .x. is copied twice' \
            'produced|[{"tensor": "b"}]|copy 0: tensor .b. is produced by a node' \
            'reason|[{"tensor": "x", "reason": 1}]|copy 0 must be \{"tensor": name'; do
    name=${case%%|*}; rest=${case#*|}; value=${rest%%|*}; msg=${rest#*|}
    sed "s/^ \"copies\": \[\]/ \"copies\": $value/" "$T/empty.plan" >"$T/$name.plan"
    expect_fail "plan file: copies $name is refused" 2 "$name\.plan: $msg" \
        "$FUSEENG" sim "$T/conv.json" --plan "$T/$name.plan"
done
finish
