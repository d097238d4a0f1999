#!/bin/sh
# snapshot.sh: write every deterministic output of the engine to a folder,
# so that a refactoring can be checked byte for byte (docs/testing.md):
#
#   sh tests/tools/snapshot.sh build/fuseeng /tmp/before      # old tree
#   sh tests/tools/snapshot.sh build/fuseeng /tmp/after       # new tree
#   diff -r /tmp/before /tmp/after
#
# For each example model and ../shared/models export, on each shipped
# machine, and each policy whose plan does not depend on measured times:
# the plan file (--plan-out, with the simulator's figures per group), the
# run's summary and its decision log (--explain --verbose). Then `check`,
# `sim` of the unfused plan, `ab` of all those policies, and
# `ops`. Policies that time kernels (benchmark_fusion, profile_lookup
# without a profile) are left out: their plans follow the host's timings.
set -u
FUSEENG=$(cd "$(dirname "${1:?usage: snapshot.sh FUSEENG OUTDIR}")" && pwd)/$(basename "$1")
OUT=${2:?usage: snapshot.sh FUSEENG OUTDIR}
SHARED=${SHARED:-../shared}
mkdir -p "$OUT"

models="examples/models/*.json"
[ -d "$SHARED/models" ] && models="$models $SHARED/models/*.json"
policies=""
for p in policies/*.lua; do
    n=$(basename "$p" .lua)
    case $n in benchmark_fusion | profile_lookup) continue ;; esac
    policies="$policies $n"
done

# run CMD... > FILE, keeping the exit status in the file's last line
snap() {
    f=$1; shift
    "$@" >"$OUT/$f" 2>&1
    echo "exit $?" >>"$OUT/$f"
}

"$FUSEENG" ops >"$OUT/ops.txt" 2>&1
for m in $models; do
    mn=$(basename "$m" .json)
    snap "$mn.check" "$FUSEENG" check "$m"
    for mach in gcu gcu_big; do
        for p in $policies; do
            snap "$mn.$mach.$p.run" "$FUSEENG" run "$m" --policy "$p" --machine "$mach" \
                --explain --verbose --plan-out "$OUT/$mn.$mach.$p.plan.json"
        done
    done
    (cd "$OUT" && "$FUSEENG" sim "$OLDPWD/$m" --plan "$mn.gcu.fuse_all.plan.json" --verbose \
        >"$mn.sim" 2>&1; echo "exit $?" >>"$mn.sim")
    # ab's last column is the planning time: the host's, not the engine's
    snap "$mn.ab" "$FUSEENG" ab "$m" $(for p in $policies; do printf ' --policy %s' "$p"; done)
    sed -i 's/ *[0-9.]*$//' "$OUT/$mn.ab"
done
# The reference run's outputs of the example models (small dims), byte for
# byte: the kernels' numbers. The plan's own are checked against them.
for m in examples/models/*.json; do
    mn=$(basename "$m" .json)
    dims=""
    case $mn in llama2_7b_layer) dims="--dim S=64" ;; esac
    for p in fuse_all gcu_tlf xla_priority; do
        "$FUSEENG" run "$m" --policy "$p" $dims --execute --no-timing \
            --save-outputs "$OUT/$mn.$p.out.safetensors" >/dev/null 2>&1
        echo "exit $?" >"$OUT/$mn.$p.execute"
    done
done
echo "snapshot: $(ls "$OUT" | wc -l) files in $OUT"
