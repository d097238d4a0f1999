#!/bin/sh
# run.sh: run every benchmark program in $BUILD/bench; each prints its figures.
BUILD=${BUILD:-build}
status=0
for b in "$BUILD"/bench/*; do
    case $b in *.d) continue ;; esac
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
