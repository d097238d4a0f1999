# ab_keeps.sh: fuseeng ab --measure keeps its work (issue 37). A model
# that cannot run fails its own cells, shown with the error in every
# format (text, JSON, Markdown, CSV, HTML), and the rest of the report is
# printed, the exit status 1; a suite gives each model its own weights and
# inputs, and a model given another's is bad input (exit 2) before any row
# runs, naming the file.
. tests/lib.sh
PY=$(command -v python3)
A=examples/models/resnet50_bottleneck.json
B=examples/models/opu_convnet.json
no_kernel_model "$T/mystery.json"
if [ -z "$PY" ]; then
    for c in "text" "JSON" "Markdown" "CSV" "HTML" "own weights" "another model's weights"; do
        skip "ab --measure keeps its work: $c" "no python3 to write safetensors files"
    done
    finish
    exit $?
fi
gen() { "$PY" tests/tools/st_gen.py "$@"; }
gen $A weight "$T/a_w.st" --seed 1 && gen $A input "$T/a_i.st" --seed 2 &&
    gen $B weight "$T/b_w.st" --seed 3 && gen $B input "$T/b_i.st" --seed 4 ||
    not_ok "st_gen.py writes the files"

cat >"$T/suite.json" <<EOF
{"models": [{"file": "$A", "weights": "$T/a_w.st", "inputs": "$T/a_i.st"},
            "$T/mystery.json",
            {"file": "$B", "weights": "$T/b_w.st", "inputs": "$T/b_i.st"}],
 "policies": ["no_fusion", "fuse_all"]}
EOF
M="--measure --reps 3 --budget 0.01"

# text: the mystery model's cells FAILED with why; both others measured
"$FUSEENG" ab --suite "$T/suite.json" $M >"$T/out" 2>"$T/err"
rc=$?
nmeas=$(grep -c "measured on this CPU" "$T/out")
nfail=$(grep -c "FAILED: --measure: .*special_bessel_j0" "$T/out")
if [ $rc -eq 1 ] && [ "$nmeas" -eq 2 ] && [ "$nfail" -eq 2 ] && grep -q "^summary over 3 rows" "$T/out" &&
    grep -q "2 cells failed" "$T/err"; then
    ok "ab --measure keeps its work: text (a failed model fails its cells, exit 1, the rest measured)"
else
    not_ok "ab --measure keeps its work: text (a failed model fails its cells, exit 1, the rest measured)" \
        "exit $rc, $nmeas measured, $nfail failed" "$(head -c 600 "$T/err")" "$(head -c 1500 "$T/out")"
fi

# the same cells in the other formats, each with the error and the measured rows
fmt_check() {   # fmt_check NAME OPTION... : output in $T/f, error text and measured figures
    name=$1; shift
    "$FUSEENG" ab --suite "$T/suite.json" $M "$@" >"$T/f" 2>"$T/err"
    rc=$?
    [ -s "$T/f.html" ] && cp "$T/f.html" "$T/f"
    if [ $rc -eq 1 ] && grep -q "special_bessel_j0" "$T/f" && grep -q "resnet50" "$T/f" &&
        grep -Eq "cpu_ms|cpu ms|measured" "$T/f"; then
        ok "ab --measure keeps its work: $name"
    else
        not_ok "ab --measure keeps its work: $name" "exit $rc" "$(head -c 400 "$T/err")" \
            "$(head -c 800 "$T/f")"
    fi
}
fmt_check JSON --json
"$PY" -c "
import json, sys
d = json.load(open('$T/f'))
rows = d['rows']
assert len(rows) == 3, len(rows)
assert all('error' in c and '--measure' in c['error'] for c in rows[1]['policies']), rows[1]
assert all('cpu_ms' in c for r in (rows[0], rows[2]) for c in r['policies']), rows[0]
assert rows[0]['weights'] == '$T/a_w.st' and rows[0]['inputs'] == '$T/a_i.st', rows[0]
assert rows[2]['weights'] == '$T/b_w.st', rows[2]
" 2>"$T/pyerr" && ok "ab --measure keeps its work: own weights (each JSON row names its data files)" ||
    not_ok "ab --measure keeps its work: own weights (each JSON row names its data files)" "$(tail -3 "$T/pyerr")"
fmt_check Markdown --md
fmt_check CSV --csv
rm -f "$T/f.html"
fmt_check HTML --html "$T/f.html"

# A model given another model's weights is bad input, said before any row
# runs (not minutes into a sweep), naming the model and the file.
sed "s#$T/a_w.st#$T/b_w.st#" "$T/suite.json" >"$T/swap.json"
expect_fail "ab --measure keeps its work: another model's weights are bad input, before any row runs" 2 \
    "resnet50_bottleneck.json: --measure: .*b_w.st" "$FUSEENG" ab --suite "$T/swap.json" $M

# bad suite entries are still caught before anything runs: exit 2
printf '{"models": [{"file": "%s", "weights": "%s/none.st"}], "policies": ["no_fusion", "fuse_all"]}\n' \
    "$A" "$T" >"$T/bad.json"
expect_fail "a suite's missing weights file is bad input" 2 'models\[0\]\.weights.*no file' \
    "$FUSEENG" ab --suite "$T/bad.json"
printf '{"models": [{"file": "%s", "weights": 3}], "policies": ["no_fusion", "fuse_all"]}\n' \
    "$A" >"$T/bad.json"
expect_fail "a suite's weights entry that is no path is bad input" 2 'models\[0\]\.weights.*path' \
    "$FUSEENG" ab --suite "$T/bad.json"
finish
