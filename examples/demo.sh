#!/bin/sh
# demo.sh: the main job on a bundled model: validate the LLaMA-2-7B decoder
# layer, plan it with gcu_tlf (seed 004's AFE + TLF on the simulated GCU),
# then compare with the unfused baseline and AFE alone.
set -e
FUSEENG=${1:-build/fuseeng}
MODEL=examples/models/llama2_7b_layer.json

echo "== fuseeng check $MODEL"
"$FUSEENG" check "$MODEL"
echo
echo "== fuseeng run $MODEL --policy gcu_tlf"
"$FUSEENG" run "$MODEL" --policy gcu_tlf
for p in no_fusion gcu_afe; do
    echo
    echo "== fuseeng run $MODEL --policy $p"
    "$FUSEENG" run "$MODEL" --policy "$p"
done
