#!/bin/sh
# machine_stability.sh A.lua B.lua [MODEL...]: how much a policy verdict
# depends on which of two calibrations of one device simulated it (two runs
# of `fuseeng calibrate` on the same machine). Every model is planned with
# every shipped policy but the measuring ones on both machine files (one
# `fuseeng ab`, simulation only); per model, Spearman's rank correlation of
# the policies' simulated times under A against under B, and whether both
# name the same best policy; then the mean, the count, and the median and
# largest relative difference of a plan's simulated time. Run from the
# repository root after `make`; models default to the example models, the
# shared real exports and the imported ones. docs/fidelity.md has one run.
set -eu
FUSEENG=${FUSEENG:-build/fuseeng}
SHARED=${SHARED:-../shared}
[ $# -ge 2 ] || { echo "usage: machine_stability.sh A.lua B.lua [MODEL...]" >&2; exit 2; }
A=$1 B=$2
shift 2
[ $# -gt 0 ] || set -- examples/models/*.json "$SHARED"/models/*.json examples/models/imported/*.json
pols=""
for p in $("$FUSEENG" policies | awk '{print $1}'); do
    case $p in benchmark_fusion|profile_lookup|spill_tolerant|spill_veto) ;; *) pols="$pols --policy $p" ;; esac
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
"$FUSEENG" ab "$@" --machine "$A" --machine "$B" $pols --json --out "$out"
/usr/bin/python3 - "$out" <<'PY'
import json, sys

def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r, i = [0.0] * len(v), 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r

def pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sa = sum((x - ma) ** 2 for x in a) ** 0.5
    sb = sum((y - mb) ** 2 for y in b) ** 0.5
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / (sa * sb) if sa and sb else None

rows = {}
for r in json.load(open(sys.argv[1]))["rows"]:
    rows.setdefault((r["file"], r["dims"]), []).append(r)
rhos, same, diffs = [], 0, []
for (f, dims), pair in rows.items():
    a, b = pair
    ta = [c["sim_ms"] for c in a["policies"]]
    tb = [c["sim_ms"] for c in b["policies"]]
    rho = pearson(ranks(ta), ranks(tb))
    if rho is not None:
        rhos.append(rho)
    same += a["winner"] == b["winner"]
    diffs += [abs(x - y) / y for x, y in zip(ta, tb) if y > 0]
    print("%-40s rho %s  best %s / %s" % (f.split("/")[-1] + (" " + dims if dims else ""),
          "%.3f" % rho if rho is not None else "n/a", a["winner"], b["winner"]))
diffs.sort()
print("mean rank correlation %.3f over %d models; the same best policy on %d of %d; "
      "simulated times differ by %.1f%% (median), %.1f%% (largest)"
      % (sum(rhos) / len(rhos), len(rhos), same, len(rows), 100 * diffs[len(diffs) // 2],
         100 * diffs[-1]))
PY
