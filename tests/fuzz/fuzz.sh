#!/bin/sh
# fuzz.sh SECONDS TARGET...: run each libFuzzer harness $FUZZ_DIR/fuzz_TARGET
# (built by `make fuzz`) for SECONDS, one after another at lower priority
# (the machine is shared), and print per target the executions done and
# whether it found anything. Seeds are made afresh (seeds.sh); the corpus
# each run grows is kept in $FUZZ_DIR/corpus/TARGET for the next run; the
# kept regression inputs tests/fuzz/regress/TARGET are read too. An input
# that fails is left in $FUZZ_DIR/found/TARGET/: fix the bug, then keep the
# input in tests/fuzz/regress/TARGET/ so that `make test` replays it.
# Exit status 1 if any target found something.
secs=${1:-60}
shift
FUZZ_DIR=${FUZZ_DIR:-build/fuzz}
export FUSEENG=${FUSEENG:-build/fuseeng}
# One thread per kernel: the harnesses are about inputs, not speed.
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

rm -rf "$FUZZ_DIR/seeds"
sh tests/fuzz/seeds.sh "$FUZZ_DIR/seeds" || exit 1
total=0 bad=0
for t in "$@"; do
    corpus=$FUZZ_DIR/corpus/$t found=$FUZZ_DIR/found/$t log=$FUZZ_DIR/log/$t.log
    mkdir -p "$corpus" "$found" "$FUZZ_DIR/log"
    regress=tests/fuzz/regress/$t
    [ -d "$regress" ] || regress=
    # The Lua state frees on its own schedule, so libFuzzer's leak check
    # after every input would run on most of them and halve the speed: the
    # targets that run Lua are checked for leaks once, at exit, after the
    # engine is freed (a leak then names no input: replay the corpus).
    opts=
    case $t in model | plan | machine | policy | pattern) opts=-detect_leaks=0 ;; esac
    [ -f "$FUZZ_DIR/seeds/$t.dict" ] && opts="$opts -dict=$FUZZ_DIR/seeds/$t.dict"
    nice -n 5 "$FUZZ_DIR/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$found/" $opts \
        "$corpus" "$FUZZ_DIR/seeds/$t" $regress >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    execs=${execs:-0}
    total=$((total + execs))
    inputs=$(ls "$corpus" | wc -l)
    if [ "$rc" -eq 0 ]; then
        printf '%-8s %10d execs in %s s, corpus %d: nothing found\n' "$t" "$execs" "$secs" "$inputs"
    else
        bad=1
        what=$(grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log")
        art=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
        printf '%-8s %10d execs: FOUND %s\n         input %s, log %s\n' "$t" "$execs" \
            "${what:-exit status $rc}" "${art:-?}" "$log"
    fi
done
echo "total $total execs"
exit $bad
