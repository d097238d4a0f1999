# import_atomic.sh: `fuseeng import` replaces the model file and its
# weights file together or not at all (docs/import.md, "Both files or
# neither"): a SIGINT, SIGTERM or SIGHUP while the files are written leaves
# the old pair as it was and no temporary file; one that comes between the
# two renames waits until both are done; a SIGKILL there (the one thing no
# process can stop) leaves new weights beside the old model, which the
# model's weights stamp tells apart: run --weights refuses the pair. An
# import that fails after writing its weights leaves nothing either.
#
# The import is stopped at those moments by a test hook
# (FUSEENG_TEST_IMPORT_PAUSE, core/import/import.c; not a documented
# feature).
. tests/lib.sh
PY=/usr/bin/python3

onnx_cases "import atomicity"
# conv2.onnx: conv.onnx with other weights (the same names and shapes).
$PY - "$C/conv.onnx" "$C/conv2.onnx" <<'EOF'
import sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
for t in m.graph.initializer:
    t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) * 2, t.name))
onnx.save(m, sys.argv[2])
EOF

D="$T/d"
# fresh: the old pair in $D (conv.json, conv.safetensors, from conv.onnx), kept in $T/old.*
fresh() {
    rm -rf "$D" && mkdir -p "$D"
    "$FUSEENG" import "$C/conv.onnx" -o "$D/conv.json" 2>/dev/null
    cp "$D/conv.json" "$T/old.json" && cp "$D/conv.safetensors" "$T/old.safetensors"
}
# only_pair: $D holds conv.json and conv.safetensors and nothing else
only_pair() { [ "$(ls -A "$D" | tr '\n' ' ')" = "conv.json conv.safetensors " ]; }
same_as_old() { cmp -s "$D/conv.json" "$T/old.json" && cmp -s "$D/conv.safetensors" "$T/old.safetensors"; }
# paused_import WHERE [default-SIGINT]: start importing conv2.onnx over the
# pair, stopped at WHERE; sets $pid once the import says it is there
paused_import() {
    rm -f "$T/perr"
    if [ "${2:-}" = dfl ]; then
        # A background job of sh ignores SIGINT; give the import the default back.
        FUSEENG_TEST_IMPORT_PAUSE=$1 $PY -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$FUSEENG" import "$C/conv2.onnx" -o "$D/conv.json" \
            2>"$T/perr" &
    else
        FUSEENG_TEST_IMPORT_PAUSE=$1 "$FUSEENG" import "$C/conv2.onnx" -o "$D/conv.json" 2>"$T/perr" &
    fi
    pid=$!
    i=0
    while ! grep -q "test pause $1" "$T/perr" 2>/dev/null && [ $i -lt 200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
}

# ---- a signal while the files are written: the old pair, no temporary file ----
for sig in TERM INT HUP; do
    fresh
    paused_import written dfl
    tmps=$(ls -A "$D" | grep -c '\.tmp')
    kill -$sig "$pid"
    wait "$pid"
    rc=$?
    if [ "$tmps" -eq 2 ] && [ "$rc" -gt 128 ] && only_pair && same_as_old; then
        ok "SIG$sig while writing: the old model and weights stay, both temporary files go"
    else
        not_ok "SIG$sig while writing: the old model and weights stay, both temporary files go" \
            "temporary files while paused: $tmps (expected 2); exit $rc" "left: $(ls -A "$D")" \
            "$(cat "$T/perr")"
    fi
done

# ---- a signal between the renames waits: both files are new ----
fresh
"$FUSEENG" import "$C/conv2.onnx" -o "$T/new.json" 2>/dev/null
paused_import renames
kill -TERM "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 143 ] && only_pair && cmp -s "$D/conv.safetensors" "$T/new.safetensors" &&
    grep -q "\"weights_stamp\": \"$(sed -n 's/.*"weights_stamp": "\([0-9a-f]*\)".*/\1/p' "$T/new.json")\"" \
        "$D/conv.json"; then
    ok "SIGTERM between the renames: it waits, and both files are the new ones"
else
    not_ok "SIGTERM between the renames: it waits, and both files are the new ones" "exit $rc" \
        "left: $(ls -A "$D")" "$(cat "$T/perr")"
fi

# ---- SIGKILL between the renames: new weights beside the old model, refused ----
fresh
paused_import renames
kill -KILL "$pid"
wait "$pid"
if cmp -s "$D/conv.json" "$T/old.json" && cmp -s "$D/conv.safetensors" "$T/new.safetensors"; then
    ok "SIGKILL between the renames leaves the new weights beside the old model"
else
    not_ok "SIGKILL between the renames leaves the new weights beside the old model" "left: $(ls -A "$D")"
fi
expect_fail "... and run --weights refuses that pair by the weights stamp" 2 \
    "conv\.safetensors: these weights were written by another import than .*conv\.json's .*import the model again" \
    "$FUSEENG" run "$D/conv.json" --policy fuse_all --execute --weights "$D/conv.safetensors" \
    --inputs "$C/conv.in.safetensors"
check "... and importing again mends it" "$FUSEENG" import "$C/conv2.onnx" -o "$D/conv.json"
check "... so that run --weights takes the pair" "$FUSEENG" run "$D/conv.json" --policy fuse_all \
    --execute --weights "$D/conv.safetensors" --inputs "$C/conv.in.safetensors"

# ---- the stamp: a pair from two imports is refused, weights made elsewhere are not ----
fresh
expect_fail "weights of another import with the same tensors are refused" 2 \
    "new\.safetensors: these weights were written by another import" \
    "$FUSEENG" run "$D/conv.json" --policy fuse_all --execute --weights "$T/new.safetensors" \
    --inputs "$C/conv.in.safetensors"
if $PY tests/tools/st_gen.py "$D/conv.json" weight "$T/other.safetensors" 2>"$T/err"; then
    check "weights without a stamp (made elsewhere) are matched by their tensors" \
        "$FUSEENG" run "$D/conv.json" --policy fuse_all --execute --weights "$T/other.safetensors" \
        --inputs "$C/conv.in.safetensors"
else
    not_ok "st_gen.py writes weights for the model" "$(cat "$T/err")"
fi

# ---- an import that fails after its weights are written leaves nothing ----
fresh
expect_fail "the model cannot be written: exit 2" 2 "nodir/conv\.json: cannot write the model" \
    "$FUSEENG" import "$C/conv2.onnx" -o "$D/nodir/conv.json" --weights-out "$D/conv.safetensors"
only_pair && same_as_old && ok "... and the old weights stay, with no temporary file" ||
    not_ok "... and the old weights stay, with no temporary file" "left: $(ls -A "$D")"
finish
