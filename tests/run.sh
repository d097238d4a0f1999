#!/bin/sh
# run.sh: run every test and print one summary line "N passed, N failed[, N skipped]".
#
# Every test program speaks TAP on stdout: "ok N - name", "not ok N - name",
# and "... # SKIP reason" for skips. C tests are cmocka programs (TAP through
# CMOCKA_MESSAGE_OUTPUT), CLI tests are tests/cli/*.sh, Lua tests are
# tests/lua/*.lua run inside the engine. A program that crashes or exits
# non-zero without reporting a failure counts as one failure.
BUILD=${BUILD:-build}
export BUILD SHARED="${SHARED:-../shared}" FUSEENG="$BUILD/fuseeng"
export CMOCKA_MESSAGE_OUTPUT=TAP
# Sleeping OpenMP workers, as the fuseeng command itself uses (core/cli/main.c):
# spinning ones stall for scheduler ticks when the machine's cores are shared.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {   # run NAME CMD...: run one test program and tally its TAP lines
    name=$1; shift
    "$@" >"$log" 2>&1
    rc=$?
    p=$(grep -c '^ok ' "$log")
    s=$(grep -c '^\(not \)\{0,1\}ok .*# SKIP' "$log")
    f=$(grep '^not ok ' "$log" | grep -vc '# SKIP')
    p=$((p - $(grep '^ok ' "$log" | grep -c '# SKIP')))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $name exited with status $rc" >>"$log"
    fi
    pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
    if [ "$f" -gt 0 ]; then
        echo "FAIL $name ($p passed, $f failed)"
        sed 's/^/    /' "$log" | tail -n 60
    else
        echo "ok   $name ($p passed${s:+, $s skipped})" | sed 's/, 0 skipped//'
    fi
}

for t in "$BUILD"/tests/test_*; do
    case $t in *.d) continue ;; esac
    [ -x "$t" ] && run "$(basename "$t")" "$t"
done
for t in tests/cli/*.sh; do
    [ -f "$t" ] && run "$(basename "$t")" sh "$t"
done
for t in tests/lua/test_*.lua; do
    [ -f "$t" ] && run "$(basename "$t")" "$FUSEENG" script "$t"
done

if [ "$skip" -gt 0 ]; then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
