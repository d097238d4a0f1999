# halide_micro.sh: scripts/halide_micro.py, the Halide side of bench_halide
# (make bench): each of the five workloads builds, runs and matches numpy in
# float64 at small dims; serving answers a request with its times; bad input
# (a model that is not one of the five, a missing file, a malformed --dim,
# no mode) exits 2 with a message and nothing on stdout.
. tests/lib.sh
PY=/usr/bin/python3
X=scripts/halide_micro.py
B=examples/bench

if ! "$PY" -c 'import halide' 2>/dev/null; then
    for c in swiglu add_rmsnorm gelu chain6 softmax serve "other model" "missing file" "bad dim" usage; do
        skip "halide_micro.py: $c" "no python3-halide (scripts/deps.sh installs it)"
    done
    finish
    exit $?
fi
export HL_NUM_THREADS=2

expect_ok "swiglu matches numpy" '^swiglu ok: max relative error' "$PY" $X $B/swiglu.json --dim T=16 --check
expect_ok "add_rmsnorm matches numpy (both outputs)" '^add_rmsnorm ok' "$PY" $X $B/add_rmsnorm.json --dim T=16 --check
expect_ok "gelu matches numpy" '^gelu ok' "$PY" $X $B/gelu.json --dim T=8 --check
expect_ok "chain6 matches numpy" '^chain6 ok' "$PY" $X $B/chain6.json --dim T=16 --check
expect_ok "softmax with its mask matches numpy" '^softmax ok' "$PY" $X $B/softmax.json --dim H=2 --dim Q=16 --check

printf '2\nq\n' | "$PY" $X $B/chain6.json --dim T=16 --serve >"$T/serve" 2>"$T/err"
if head -1 "$T/serve" | grep -Eq '^ready [0-9.e-]+ out: ' &&
    sed -n 2p "$T/serve" | grep -Eq '^[0-9.]+ [0-9.]+$' && [ "$(wc -l <"$T/serve")" -eq 2 ]; then
    ok "serve: ready line, then one line of two times per request"
else
    not_ok "serve: ready line, then one line of two times per request" "$(head -c 300 "$T/serve")" "$(head -c 300 "$T/err")"
fi

expect_fail "a model that is not a micro-workload" 2 'not one of the five micro-workloads' \
    "$PY" $X examples/models/gpt2_block.json --check
expect_fail "missing file" 2 'nope.json' "$PY" $X "$T/nope.json" --check
expect_fail "malformed --dim" 2 'want NAME=POSITIVE_INTEGER' "$PY" $X $B/gelu.json --dim T=zero --check
expect_fail "no mode" 2 'usage' "$PY" $X $B/gelu.json
finish
