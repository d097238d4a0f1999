# fuzz_replay.sh: every input a fuzz target ever failed on (tests/fuzz/
# regress/TARGET/) and every seed (tests/fuzz/seeds.sh) goes through that
# target's harness again, built with the project's compiler and
# tests/fuzz/replay.c ($BUILD/fuzz-replay/fuzz_TARGET, `make test` builds
# them; under SANITIZE=1 with ASan and UBSan). One test per target.
. tests/lib.sh
export OMP_NUM_THREADS=1
FUSEENG="$FUSEENG" sh tests/fuzz/seeds.sh "$T/seeds" 2>"$T/seeds.err" ||
    not_ok "seeds" "$(cat "$T/seeds.err")"
for h in "$BUILD"/fuzz-replay/fuzz_*; do
    [ -x "$h" ] || continue
    t=${h##*/fuzz_}
    if "$h" tests/fuzz/regress/"$t" "$T/seeds/$t" >"$T/out" 2>"$T/err"; then
        if grep -q '^0 inputs' "$T/out"; then
            not_ok "fuzz target $t: no inputs to replay"
        else
            ok "fuzz target $t replays $(cat "$T/out")"
        fi
    else
        not_ok "fuzz target $t: an input fails" "$(grep '^replay: ' "$T/err" | tail -n 1)" \
            "$(grep -v '^replay: ' "$T/err" | head -n 20)"
    fi
done
[ "$n" -gt 0 ] || not_ok "no fuzz replay programs in $BUILD/fuzz-replay (make test builds them)"
finish
