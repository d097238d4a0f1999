#!/bin/sh
# run.sh: run every benchmark program in $BUILD/bench; each prints its figures.
BUILD=${BUILD:-build}
# Sleeping OpenMP workers, as the fuseeng command uses (see core/cli/main.c).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
status=0
for b in "$BUILD"/bench/*; do
    case $b in *.d) continue ;; esac
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
