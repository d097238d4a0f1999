#!/bin/sh
# bundle.sh: scripts/bundle.sh makes a fuseeng that runs from any folder
# with only the C library of the system: its own libraries, Lua files and
# policies travel with it (the way to a GPU node without a registry,
# docs/cuda.md). The test bundles this build's binary (make bundle bundles
# the PORTABLE=1 one, the same way).
. tests/lib.sh
B="$T/b/fuseeng"
if sh scripts/bundle.sh "$FUSEENG" "$B" >"$T/out" 2>&1; then
    ok "scripts/bundle.sh makes a bundle"
else
    not_ok "scripts/bundle.sh makes a bundle" "$(head -c 600 "$T/out")"
fi

# Every library the binary needs resolves inside the bundle, except the C
# library's own.
LD_LIBRARY_PATH="$B/lib" ldd "$B/bin/fuseeng.bin" >"$T/ldd" 2>&1
outside=$(awk '$3 ~ /^\// {print $3}' "$T/ldd" | grep -v "^$B/lib/" |
          grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' || true)
missing=$(grep -c "not found" "$T/ldd")
if [ -z "$outside" ] && [ "$missing" -eq 0 ]; then
    ok "the bundle holds every library but the C library's"
else
    not_ok "the bundle holds every library but the C library's" "outside: $outside" "$(cat "$T/ldd")"
fi

# It runs from elsewhere, with an empty environment, and finds its policies.
mkdir -p "$T/elsewhere"
cp examples/models/gpt2_block.json "$T/elsewhere/m.json"
if (cd "$T/elsewhere" && env -i PATH=/usr/bin:/bin "$B/bin/fuseeng" run m.json --policy fuse_all \
        --execute --no-timing >"$T/run" 2>&1) && grep -q "out .* ok" "$T/run"; then
    ok "the bundle runs a plan from another folder with an empty environment"
else
    not_ok "the bundle runs a plan from another folder with an empty environment" "$(tail -c 600 "$T/run")"
fi
# The MILP solver travels too (scripts/bundle.sh takes it from ldd's list):
# the optimal plan runs from the bundle.
if ls "$B/lib" | grep -q '^libglpk\.so' &&
   (cd "$T/elsewhere" && env -i PATH=/usr/bin:/bin "$B/bin/fuseeng" run m.json --policy optimal \
        >"$T/run" 2>&1) && grep -q "speedup" "$T/run"; then
    ok "the bundle carries GLPK and plans with the optimal policy"
else
    not_ok "the bundle carries GLPK and plans with the optimal policy" "$(ls "$B/lib")" "$(tail -c 600 "$T/run")"
fi
# A moved bundle still works: nothing in it names where it was made.
mv "$T/b" "$T/moved"
expect_ok "a moved bundle lists its shipped policies" "gcu_tlf" \
    env -i PATH=/usr/bin:/bin "$T/moved/fuseeng/bin/fuseeng" policies
expect_fail "bundle.sh refuses what is not an executable" 2 "is not an executable" \
    sh scripts/bundle.sh "$T/nothing" "$T/b2"

[ "$failures" -eq 0 ]
