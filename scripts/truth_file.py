"""truth_file.py: the fuseeng.truth/1 file (docs/formats.md, "Truth files"), written.

inductor_truth.py and jax_truth.py build one from a compiler's kernels;
fuseeng ab --against reads it (core/api/api_ab_truth.c checks it again).
"""
import hashlib
import json
import os

FORMAT = "fuseeng.truth/1"


def truth_doc(model_file, model_text, compiler, version, kernels, device=None, command=None):
    """The truth file as a dict; kernels: [(name, kind, nodes, detail)]."""
    doc = {"format": FORMAT, "compiler": {"name": compiler, "version": version},
           "model": {"file": os.path.basename(model_file),
                     "sha256": hashlib.sha256(model_text.encode()).hexdigest()},
           "kernels": []}
    if device:
        doc["device"] = device
    if command:
        doc["command"] = command
    for name, kind, nodes, detail in kernels:
        k = {"name": name, "kind": kind, "nodes": list(nodes)}
        if detail:
            k["detail"] = detail
        doc["kernels"].append(k)
    return doc


def check_truth(doc, model):
    """Problems with a truth dict against its model dict (a list of strings)."""
    names = {n["name"] for n in model["nodes"]}
    bad = []
    if doc.get("format") != FORMAT:
        bad.append("format")
    for i, k in enumerate(doc.get("kernels", [])):
        if len(set(k["nodes"])) != len(k["nodes"]):
            bad.append(f"kernels[{i}]: a node twice")
        bad += [f"kernels[{i}]: {n} not in the model" for n in k["nodes"] if n not in names]
    return bad


def truth_json(doc):
    """One kernel a line: diffable, small (the side files too: their
    "kernels" one a line as well)."""
    head = {k: v for k, v in doc.items() if k != "kernels"}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    ks = doc["kernels"]
    lines.append(' "kernels": [')
    lines += [f"  {json.dumps(k)}{',' if i + 1 < len(ks) else ''}" for i, k in enumerate(ks)]
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def save_refiltered(path, doc, model, changed, script):
    """A truth re-derived by SCRIPT --refilter: checked against its model
    (ValueError naming the problems), its command saying so, written when
    changed kernels."""
    bad = check_truth(doc, model)
    if bad:
        raise ValueError("the refiltered truth does not fit the model: " + "; ".join(bad[:5]))
    if changed:
        if "--refilter" not in doc.get("command", ""):
            doc["command"] = doc.get("command", "") + f"; then {script} --refilter"
        write_atomic(path, truth_json(doc))
