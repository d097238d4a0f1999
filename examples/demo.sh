#!/bin/sh
# demo.sh: the main job on a bundled model: validate the LLaMA-2-7B decoder
# layer, then plan it with the shipped policies and compare them.
set -e
FUSEENG=${1:-build/fuseeng}
MODEL=examples/models/llama2_7b_layer.json

echo "== fuseeng check $MODEL"
"$FUSEENG" check "$MODEL"
for p in no_fusion static_rules fuse_all; do
    echo
    echo "== fuseeng run $MODEL --policy $p"
    "$FUSEENG" run "$MODEL" --policy "$p"
done
