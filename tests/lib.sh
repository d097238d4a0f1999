# lib.sh: TAP helpers for the CLI tests in tests/cli (sourced, not run).
#
#   expect_fail NAME CODE 'regex' CMD...   CMD exits CODE and stderr matches regex,
#                                          with nothing on stdout (no partial output)
#   expect_ok NAME 'regex' CMD...          CMD exits 0 and stdout matches regex
#   check NAME CMD...                      CMD exits 0
#   no_kernel_model FILE                   write a model whose op no kernel runs
#   now; since T0                          a clock, and seconds since T0 (one decimal)
#   max_err FILE                           a run --execute --expect report's largest plan
#                                          errors, "A abs R rel"
#   skip_model_checks WHY MODEL...         skip, with WHY, every check the script's own
#                                          checks MODEL PATH names, on the fx and onnx paths
FUSEENG=${FUSEENG:-build/fuseeng}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
failures=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)); failures=$((failures + 1)); echo "not ok $n - $1"
    shift
    for line in "$@"; do echo "# $line"; done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

expect_fail() {
    name=$1 code=$2 re=$3; shift 3
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -ne "$code" ]; then
        not_ok "$name" "exit $rc, expected $code" "stderr: $(head -c 600 "$T/err")"
    elif ! grep -Eq -- "$re" "$T/err"; then
        not_ok "$name" "stderr does not match /$re/" "stderr: $(head -c 600 "$T/err")"
    elif [ -s "$T/out" ]; then
        not_ok "$name" "printed to stdout on failure: $(head -c 200 "$T/out")"
    else
        ok "$name"
    fi
}

expect_ok() {
    name=$1 re=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        not_ok "$name" "exit $rc" "stderr: $(head -c 600 "$T/err")"
    elif ! grep -Eq -- "$re" "$T/out"; then
        not_ok "$name" "stdout does not match /$re/" "stdout: $(head -c 600 "$T/out")"
    else
        ok "$name"
    fi
}

check() {
    name=$1; shift
    if "$@" >"$T/out" 2>"$T/err"; then ok "$name"; else not_ok "$name" "exit $?" "stderr: $(head -c 600 "$T/err")"; fi
}

# Does this machine run CUDA kernels? cuda_probe runs a one-op model
# ($T/tiny.json, kept for later use) on --device cuda, its output in
# $T/probe; its status is 0 where a GPU (or the emulation) answers.
cuda_probe() {
    cat >"$T/tiny.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "tiny",
 "tensors": {"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"},
             "y": {"shape": [4, 8], "dtype": "f32"}},
 "nodes": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
    "$FUSEENG" run "$T/tiny.json" --policy no_fusion --execute --no-timing --device cuda >"$T/probe" 2>&1
}

# A model whose one node is a custom op no kernel runs (aten
# special_bessel_j0), written to FILE: commands that execute refuse it.
no_kernel_model() {
    cat >"$1" <<'JSON'
{"format": "fuseeng.model/1", "name": "mystery",
 "tensors": {"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"},
             "y": {"shape": [4, 8], "dtype": "f32", "kind": "activation"}},
 "nodes": [{"name": "odd", "op": "custom", "inputs": ["x"], "outputs": ["y"],
            "attrs": {"aten": "aten::special_bessel_j0", "pattern": "elemwise"}}],
 "outputs": ["y"]}
JSON
}

finish() {
    echo "1..$n"
    [ "$failures" -eq 0 ]
}

# The ONNX test models of tests/tools/onnx_cases.py (Debian's python3-onnx,
# for /usr/bin/python3) made in $C = $T/cases. Without onnx, torch or numpy
# the test WHAT is skipped, and a failing generator fails it: either way
# the script ends here.
onnx_cases() {
    C="$T/cases"
    if ! /usr/bin/python3 -c "import onnx, torch, numpy" 2>/dev/null; then
        skip "$1" "no onnx/torch for /usr/bin/python3"
        finish
        exit $?
    fi
    mkdir -p "$C"
    if ! /usr/bin/python3 tests/tools/onnx_cases.py "$C" >"$T/gen.log" 2>&1; then
        not_ok "tests/tools/onnx_cases.py makes the test models" "$(tail -5 "$T/gen.log")"
        finish
        exit $?
    fi
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

max_err() {
    awk '/^expected/ { on = 1; next }
         on && !/^ / { exit }
         on && $1 == "plan" { if ($(NF-4) + 0 > a) a = $(NF-4) + 0; if ($(NF-3) + 0 > r) r = $(NF-3) + 0 }
         END { printf "%.2g abs %.2g rel", a, r }' "$1"
}

skip_model_checks() {
    why=$1
    shift
    for m in "$@"; do
        for path in fx onnx; do
            checks "$m" "$path" >"$T/names"
            while read -r c; do skip "$c" "$why"; done <"$T/names"
        done
    done
}
