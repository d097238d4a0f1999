# policy_spill.sh: spill_veto and spill_tolerant (seed 003, "speedup_by_fusion"
# 4.2 and 6) on hub_conflict, the article's HubConflictRoundOpt. On the
# default gcu machine the veto fuses fewer nodes into more kernels and runs
# slower, the article's finding; a sweep of the machine's register budget
# (--machine gcu:registers=R) finds where the two meet: from the budget at
# which no candidate spills, the veto never fires and the plans agree. Every
# figure is read from the engine, none is written down here.
. tests/lib.sh
M=examples/models/hub_conflict.json
D="--dim M=256 --dim N=256"

# figures POLICY [ARGS...]: "KERNELS FUSIONS SIM_US" of its plan (fusions:
# the candidates it fused).
figures() {
    p=$1; shift
    "$FUSEENG" run "$M" --policy "$p" $D "$@" --json >"$T/f.json" || return 1
    k=$(sed -n 's/^  "kernels": \([0-9]*\),$/\1/p' "$T/f.json")
    fn=$(sed -n 's/.*"decisions": {"fuse": \([0-9]*\),.*/\1/p' "$T/f.json")
    us=$(sed -n 's/^  "sim_us": \([0-9.]*\),$/\1/p' "$T/f.json" | head -1)
    echo "$k $fn $us"
}
# gt NAME A B: A > B (numbers).
gt() {
    if awk -v a="$2" -v b="$3" 'BEGIN { exit !(a != "" && b != "" && a + 0 > b + 0) }'; then
        ok "$1 ($2 > $3)"
    else
        not_ok "$1" "expected $2 > $3"
    fi
}

set -- $(figures spill_veto) $(figures spill_tolerant)
gt "the veto leaves more kernels" "$1" "$4"
gt "... makes fewer fusions" "$5" "$2"
gt "... and is slower" "$3" "$6"
expect_ok "the veto's reason is Inductor's" \
    "no +\[.*\] +cannot fuse \{.* with \{.*: register spilling of the fused kernel \([0-9]+ regs > 255\)" \
    "$FUSEENG" run "$M" --policy spill_veto $D --explain
expect_ok "the tolerant policy fuses a kernel that spills, and says by how much it wins" \
    "fuse +\[.*\] +can fuse \(benchmark\): fusing .* cause [0-9]+\.[0-9]{3}x speedup" \
    "$FUSEENG" run "$M" --policy spill_tolerant $D --explain
expect_ok "... and the plan spills" '^register spill +0 B +[0-9.]+ [KMG]iB' \
    "$FUSEENG" run "$M" --policy spill_tolerant $D
expect_ok "benchmark mode logs a slowdown too" "cannot fuse \(benchmark\): fusing .* cause [0-9]+\.[0-9]{3}x slowdown \(simulated" \
    "$FUSEENG" run "$M" --policy spill_tolerant --explain

# The sweep: budgets in rising order; the crossing is the smallest budget
# from which both plans take the same time at every larger budget.
cross=""
for r in 128 160 192 224 255 288 320 384 448 512 640 768 1024; do
    set -- $(figures spill_veto --machine gcu:registers=$r) $(figures spill_tolerant --machine gcu:registers=$r)
    if [ "$3" = "$6" ]; then
        cross=${cross:-$r}
    else
        cross=""
    fi
    last=$r
done
if [ -n "$cross" ] && [ "$cross" -gt 255 ] && [ "$cross" -lt "$last" ]; then
    ok "the two meet at $cross registers, above the default 255"
else
    not_ok "the two meet above the default 255 registers and below $last" "crossing: '${cross}'"
fi
if [ -n "$cross" ]; then
    "$FUSEENG" run "$M" --policy spill_veto $D --machine gcu:registers=$cross --explain >"$T/x.txt"
    if grep -q "register spilling" "$T/x.txt"; then
        not_ok "at $cross registers the veto never fires" "$(grep 'register spilling' "$T/x.txt" | head -2)"
    else
        ok "at $cross registers the veto never fires"
    fi
fi

# Machine overrides are checked like the machine file's own fields.
expect_ok "an override names the machine" '^machine gcu:registers=128: ' \
    "$FUSEENG" run "$M" --policy spill_veto $D --machine gcu:registers=128
expect_fail "an override of an unknown field" 2 "machine 'gcu:registrs=1' \(with its overrides\): .*unknown field 'registrs' \(did you mean 'registers'\?\)" \
    "$FUSEENG" run "$M" --policy spill_veto --machine gcu:registrs=1
expect_fail "an override out of range" 2 "field 'registers' must be positive, got 0" \
    "$FUSEENG" run "$M" --policy spill_veto --machine gcu:registers=0
expect_fail "an override that is not a number" 2 "machine 'gcu:registers=many': override registers=many: the value must be a number, true or false" \
    "$FUSEENG" run "$M" --policy spill_veto --machine gcu:registers=many
expect_fail "an override without a value" 2 "override 'registers=1,launch_us' is not FIELD=VALUE|override 'launch_us' is not FIELD=VALUE" \
    "$FUSEENG" run "$M" --policy spill_veto --machine gcu:registers=1,launch_us
expect_fail "the name cannot be overridden" 2 "override name: only numbers and true/false fields" \
    "$FUSEENG" run "$M" --policy spill_veto --machine gcu:name=7
"$FUSEENG" run "$M" --policy spill_veto $D --machine gcu:registers=128 --plan-out "$T/p.json" >/dev/null
expect_ok "a plan made on an overridden machine reads back on it" '^machine +gcu:registers=128, as the plan records' \
    "$FUSEENG" sim "$M" --plan "$T/p.json"
finish
