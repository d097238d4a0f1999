"""model_json.py: a fuseeng.model/1 dict as the text the exporters write.

export_torch.py, inductor_truth.py and jax_truth.py write models through
it: one tensor or node a line, so that two exports diff line by line.
"""
import json


def model_json(model):
    """The model as JSON, one tensor or node per line (diffable, still small)."""
    def dump(v):
        return json.dumps(v, allow_nan=False)
    lines = ["{", f' "format": {dump(model["format"])},', f' "name": {dump(model["name"])},',
             f' "source": {dump(model["source"])},', ' "tensors": {']
    ts = list(model["tensors"].items())
    lines += [f"  {dump(k)}: {dump(v)}{',' if i + 1 < len(ts) else ''}" for i, (k, v) in enumerate(ts)]
    lines += [" },", ' "nodes": [']
    if "dims" in model:   # symbolic dims (export_torch.py --dim), after "source"
        lines.insert(4, f' "dims": {dump(model["dims"])},')
    ns = model["nodes"]
    lines += [f"  {dump(n)}{',' if i + 1 < len(ns) else ''}" for i, n in enumerate(ns)]
    lines += [" ],", f' "outputs": {dump(model["outputs"])}', "}"]
    return "\n".join(lines) + "\n"
