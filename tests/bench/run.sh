#!/bin/sh
# run.sh: run every benchmark program in $BUILD/bench; each prints its figures.
BUILD=${BUILD:-build}
# The benchmarks measure what the kernels can do on a quiet machine, so
# OpenMP's workers keep their default waits (spinning briefly between
# parallel regions); the fuseeng command runs them passive (core/cli/main.c),
# which costs in-cache microbenchmarks like the compute ceilings dearly.
status=0
for b in "$BUILD"/bench/*; do
    case $b in *.d) continue ;; esac
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
