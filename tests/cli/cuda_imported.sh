#!/bin/sh
# cuda_imported.sh: the imported torchvision models (examples/models/
# imported, graphs made by scripts/export_torch.py from models this suite
# did not write) on the GPU against the CPU reference under five policies.
# Apart from cuda.sh so that a GPU session can run the two in separate
# commands; without a GPU every case is skipped by name.
. tests/lib.sh
I=examples/models/imported

cuda_probe
gpu=$?

for f in "$I"/*.json; do
    b=$(basename "$f" .json)
    for p in fuse_all gcu_tlf tvm_fuseops xla_priority inductor_greedy no_fusion; do
        name="gpu: imported $b under $p agrees with the CPU reference"
        if [ "$gpu" -ne 0 ]; then
            skip "$name" "no CUDA GPU here ($(head -c 120 "$T/probe" | tr '\n' ' '))"
            continue
        fi
        check "$name" "$FUSEENG" run "$f" --policy $p --execute --no-timing --device cuda
    done
done
finish
