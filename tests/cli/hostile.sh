#!/bin/sh
# hostile.sh: input as a careful attacker writes it (issue 17): control
# characters in names and script text, FIFOs where files belong, files in the
# current directory named like shipped policies and machines, outputs that
# name an input, machines at the edges of their documented ranges, and the
# small messages that used to mislead (a float split, a node listed twice, a
# usage error over two lines).
. tests/lib.sh
E=$PWD/examples/models
M=$E/hub_conflict.json
ESC=$(printf '\033')

# No C0 control byte but newline and tab, no DEL, no UTF-8 C1 (U+0080..U+009F).
clean() {
    ! LC_ALL=C tr -d '\n\t' <"$1" | LC_ALL=C grep -q '[[:cntrl:]]' &&
        ! LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$1"
}
# expect_clean NAME CODE 'regex' CMD...: CMD exits CODE (as expect_fail, or
# check for 0), and then: stderr matches regex (if given), a failure is one
# line, and neither stream carries a control character.
expect_clean() {
    name=$1 code=$2 re=$3; shift 3
    if [ "$code" -eq 0 ]; then check "$name" "$@"; else expect_fail "$name" "$code" "$re" "$@"; fi
    if [ -n "$re" ] && ! grep -Eq -- "$re" "$T/err"; then
        not_ok "$name: stderr" "does not match /$re/" "stderr: $(head -c 600 "$T/err")"
    elif [ "$code" -ne 0 ] && [ "$(wc -l <"$T/err")" -ne 1 ]; then
        not_ok "$name: one line" "the error spans $(wc -l <"$T/err") lines" "$(head -c 600 "$T/err")"
    elif ! clean "$T/out" || ! clean "$T/err"; then
        not_ok "$name: escaped" "a control character reached the terminal" "$(od -c "$T/err" | head -5)"
    else
        ok "$name: one line, nothing raw"
    fi
}

# ---- control characters ----
model() {   # model NAME-JSON NODE-JSON: a one-node model with those names
    cat <<EOF
{"format": "fuseeng.model/1", "name": $1,
 "tensors": {"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"}},
 "nodes": [{"name": $2, "op": "relu", "inputs": ["x"], "outputs": ["y"]}],
 "outputs": ["y"]}
EOF
}
model '"m\u001b[31mred\nline2"' '"r"' >"$T/name.json"
expect_clean "a model name with ESC and a newline is refused, escaped" 2 \
    "model's name 'm\\\\x1b\[31mred\\\\x0aline2' has control character 0x1b" "$FUSEENG" check "$T/name.json"
model '"m"' '"r\u009b2J"' >"$T/c1.json"
expect_clean "a node name with a C1 control is refused, escaped" 2 "node name 'r\\\\xc2\\\\x9b2J'" \
    "$FUSEENG" check "$T/c1.json"
model '"m"' '"r\u0007"' >"$T/bel.json"
expect_clean "run names the bad node name too" 2 "m?bel\.json:[0-9]+: a node name 'r\\\\x07'" \
    "$FUSEENG" run "$T/bel.json" --policy fuse_all

cat >"$T/noisy.lua" <<'EOF'
-- A policy whose every string carries terminal escapes and newlines.
local fe = require "fuseeng"
return fe.policy {
  name = "noisy\27[31m", description = "two\nlines\27]0;title\7",
  driver = "greedy",
  decide = function(self, group, ctx)
    print("print\27[2J\tkeeps tabs\nand lines")
    return true, "reason\nwith\27[1mescapes\194\155"
  end,
}
EOF
expect_clean "a policy's name, reasons and prints reach no terminal raw" 0 "print\\\\x1b\[2J" \
    "$FUSEENG" run "$M" --policy "$T/noisy.lua" --explain
if grep -q 'reason\\x0awith\\x1b\[1mescapes\\xc2\\x9b' "$T/out" && grep -q 'noisy\\x1b\[31m' "$T/out"; then
    ok "the reason and the name are shown escaped, on one line"
else
    not_ok "the reason and the name are shown escaped, on one line" "$(grep -m2 'reason\|noisy' "$T/out")"
fi
expect_clean "a plan file keeps the escaped text" 0 "" \
    "$FUSEENG" run "$M" --policy "$T/noisy.lua" --plan-out "$T/noisy.plan.json"
expect_clean "sim of that plan prints it escaped" 0 "" "$FUSEENG" sim "$M" --plan "$T/noisy.plan.json"
cat >"$T/throws.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "throws", driver = "greedy",
  decide = function() error("bad\27[2Jthing\nsecond line") end }
EOF
expect_clean "a Lua error with escapes and a newline is one escaped line" 2 \
    "bad\\\\x1b\[2Jthing\\\\x0asecond line" "$FUSEENG" run "$M" --policy "$T/throws.lua"
expect_clean "a usage error shows the argument escaped, on one line" 2 \
    "unknown option '--x\\\\x1b\[31m'" "$FUSEENG" run "$M" --policy fuse_all "--x$ESC[31m"
expect_clean "a policy name with escapes on the command line" 2 "policy 'p\\\\x1b\[2J' not found" \
    "$FUSEENG" run "$M" --policy "p$ESC[2J"
expect_clean "a usage error is one line" 2 "^fuseeng run: missing MODEL .*\(see 'fuseeng help run'\)$" \
    "$FUSEENG" run

# ---- FIFOs are refused, never waited on ----
if mkfifo "$T/fifo" 2>/dev/null; then
    "$FUSEENG" run "$M" --policy fuse_all --plan-out "$T/plan.json" >/dev/null
    for c in "check $T/fifo" "run $T/fifo --policy fuse_all" "sim $M --plan $T/fifo" \
             "run $M --policy fuse_all --profile $T/fifo" "run $M --policy $T/fifo" \
             "run $M --policy fuse_all --machine $T/fifo" "script $T/fifo"; do
        # shellcheck disable=SC2086
        expect_fail "a FIFO is refused: ${c%% *}" 2 "fifo: the .* must be a regular file, and this is a FIFO" \
            timeout 20 "$FUSEENG" $c
    done
else
    skip "FIFOs are refused" "mkfifo failed"
fi

# ---- shipped names before files in the current directory ----
mkdir -p "$T/cwd/gcu_tlf" && printf 'return 1\n' >"$T/cwd/gcu" && printf 'return {}\n' >"$T/cwd/gcu_tlf.lua"
cp policies/fuse_all.lua "$T/cwd/mine.lua"
F=$(cd "$(dirname "$FUSEENG")" && pwd)/$(basename "$FUSEENG")
(cd "$T/cwd" && "$F" run "$M" --policy gcu_tlf --machine gcu >"$T/out" 2>"$T/err")
if [ $? -eq 0 ] && grep -q "^policy  *gcu_tlf" "$T/out" &&
   grep -q "note: policy 'gcu_tlf' is the shipped one" "$T/err" &&
   grep -q "note: machine 'gcu' is the shipped one" "$T/err"; then
    ok "a folder or file named like a shipped policy or machine does not shadow it"
else
    not_ok "a folder or file named like a shipped policy or machine does not shadow it" "$(cat "$T/err")"
fi
(cd "$T/cwd" && "$F" run "$M" --policy gcu_tlf.lua >"$T/out" 2>"$T/err")
if [ $? -eq 0 ] && grep -q "write ./gcu_tlf.lua" "$T/err"; then
    ok "gcu_tlf.lua is the shipped policy even beside a file of that name"
else
    not_ok "gcu_tlf.lua is the shipped policy even beside a file of that name" "$(cat "$T/err")"
fi
(cd "$T/cwd" && expect_fail "./gcu_tlf.lua is the file" 2 "^fuseeng: \./gcu_tlf\.lua: a policy file must return" \
    "$F" run "$M" --policy ./gcu_tlf.lua)
(cd "$T/cwd" && expect_ok "a bare name that is not shipped is the file here" "^policy  *fuse_all" \
    "$F" run "$M" --policy mine.lua)
(cd / && expect_ok "the documented --policy gcu_tlf.lua works from any directory" "^policy  *gcu_tlf" \
    "$F" run "$M" --policy gcu_tlf.lua)

# ---- an output never overwrites an input ----
cp "$M" "$T/in.json"
cp policies/fuse_all.lua "$T/pol.lua"
"$FUSEENG" run "$T/in.json" --policy fuse_all --plan-out "$T/in.plan.json" >/dev/null
expect_fail "--plan-out the model is refused" 2 "--plan-out .*in\.json is also the model" \
    "$FUSEENG" run "$T/in.json" --policy fuse_all --plan-out "$T/in.json"
if cmp -s "$M" "$T/in.json"; then ok "the model is untouched"; else not_ok "the model is untouched"; fi
expect_fail "the same file through another path" 2 "is also the model" \
    "$FUSEENG" run "$T/in.json" --policy fuse_all --plan-out "$T/../$(basename "$T")/in.json"
expect_fail "--trace the policy file is refused" 2 "--trace .* is also --policy" \
    "$FUSEENG" run "$T/in.json" --policy "$T/pol.lua" --trace "$T/pol.lua"
expect_fail "two outputs to one file are refused" 2 "--plan-out and --trace both name" \
    "$FUSEENG" run "$T/in.json" --policy fuse_all --plan-out "$T/o.json" --trace "$T/o.json"
expect_fail "sim --trace the plan is refused" 2 "--trace .* is also --plan" \
    "$FUSEENG" sim "$T/in.json" --plan "$T/in.plan.json" --trace "$T/in.plan.json"
expect_fail "profile -o the model is refused" 2 "-o .* is also the model" \
    "$FUSEENG" profile "$T/in.json" -o "$T/in.json"
expect_fail "ab --svg a model is refused" 2 "--svg .* is also a model" \
    "$FUSEENG" ab "$T/in.json" --policy fuse_all --policy no_fusion --svg "$T/in.json"

# ---- machines at the edges of the documented ranges ----
# Every field at its minimum and its maximum (docs/simulator.md), other
# fields adjusted only where a cross-field rule requires it: every shipped
# policy plans with each (benchmark_fusion measures the CPU, not the machine).
edge() {   # edge NAME 'sed program'
    sed -e "s/name = \"gcu\"/name = \"$1\"/" -e "$2" lua/machines/gcu.lua >"$T/m_$1.lua"
}
TiB=1099511627776
edge l2min 's/l2_bytes = 16 \* MiB/l2_bytes = 1/'
edge l2max "s/l2_bytes = 16 \* MiB/l2_bytes = $TiB/; s/memory_bytes = 32 \* GiB/memory_bytes = 1024 * $TiB/"
edge bwmin 's/l2_bandwidth = 1e12/l2_bandwidth = 1e3/; s/l3_bandwidth = 100e9/l3_bandwidth = 1e3/; s/local_bandwidth = 200e9/local_bandwidth = 1e3/; s/link_bandwidth = 50e9/link_bandwidth = 1e3/'
edge bwmax 's/l2_bandwidth = 1e12/l2_bandwidth = 1e16/; s/l3_bandwidth = 100e9/l3_bandwidth = 1e16/; s/local_bandwidth = 200e9/local_bandwidth = 1e16/; s/link_bandwidth = 50e9/link_bandwidth = 1e16/'
edge usmin 's/launch_us = 10/launch_us = 0/; s/tile_us = 1 /tile_us = 0 /; s/link_latency_us = 5/link_latency_us = 0/'
edge usmax 's/launch_us = 10/launch_us = 1e6/; s/tile_us = 1 /tile_us = 1e6 /; s/link_latency_us = 5/link_latency_us = 1e6/'
edge flmin 's/matrix_flops = {[^}]*}/matrix_flops = { f32 = 1e3, f16 = 1e3 }/; s/vector_flops = {[^}]*}/vector_flops = { f32 = 1e3 }/'
edge flmax 's/matrix_flops = {[^}]*}/matrix_flops = { f32 = 1e18, f16 = 1e18, bf16 = 1e18, i8 = 1e18 }/; s/vector_flops = {[^}]*}/vector_flops = { f32 = 1e18, f16 = 1e18, bf16 = 1e18 }/'
edge regmin 's/registers = 255, /registers = 1, /; s/reserved_registers = 24/reserved_registers = 0/; s/elements_per_thread = 8/elements_per_thread = 1/'
edge regmax 's/registers = 255, /registers = 65536, /; s/reserved_registers = 24/reserved_registers = 65535/; s/elements_per_thread = 8/elements_per_thread = 65536/'
failed=""
for m in "$T"/m_*.lua; do
    for p in policies/*.lua; do
        case $p in */benchmark_fusion.lua) continue ;; esac
        for model in "$M" "$E/opu_convnet.json" "$E/allreduce_epilogue.json"; do
            "$FUSEENG" run "$model" --policy "$p" --machine "$m" >/dev/null 2>"$T/err" ||
                failed="$failed $(basename "$m") $(basename "$p") $(basename "$model"): $(head -c 300 "$T/err")"
        done
    done
done
if [ -z "$failed" ]; then ok "every shipped policy plans on machines at the range edges"
else not_ok "every shipped policy plans on machines at the range edges" "$failed"; fi
edge l2big "s/l2_bytes = 16 \* MiB/l2_bytes = 64 * GiB/"
expect_fail "an inconsistent machine names its fields" 2 "l2_bytes .* is larger than memory_bytes" \
    "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/m_l2big.lua"
expect_ok "gcu_tlf on a 1-byte L2 says no tile fits" "no tile fits: .*more tiles than a plan allows" \
    "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/m_l2min.lua" --explain

# ---- small messages ----
cat >"$T/float_split.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "float_split", driver = "greedy",
  decide = function(self, group, ctx) return ctx:simulate(group, { split = 2^24 }).split == 2^24 end,
  split = function() return 2.0^3 end }
EOF
expect_ok "a split of 2^24 (a Lua float with an integer value) is taken" "split 8" \
    "$FUSEENG" run "$M" --policy "$T/float_split.lua" --verbose
sed 's/return 2.0^3/return 2.5/' "$T/float_split.lua" >"$T/frac_split.lua"
expect_fail "a fractional split is refused" 2 "split returned 2\.5; it must return an integer" \
    "$FUSEENG" run "$M" --policy "$T/frac_split.lua"
"$FUSEENG" run "$E/opu_convnet.json" --policy fuse_all --plan-out "$T/opu.plan.json" >/dev/null
sed 's/"nodes": \["add_pre", "mul_pre"/"nodes": ["add_pre", "add_pre", "mul_pre"/' "$T/opu.plan.json" >"$T/twice.plan.json"
expect_fail "a node listed twice in one group says so" 2 "group 0 lists node 'add_pre' twice" \
    "$FUSEENG" sim "$E/opu_convnet.json" --plan "$T/twice.plan.json"

finish
