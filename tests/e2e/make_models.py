"""make_models.py: the real models of tests/cli/real_models.sh, made in one Python process.

    /usr/bin/python3 tests/e2e/make_models.py OUTDIR [NAME ...]

For each model (ResNet-50, MobileNetV3-small, ViT-B/16, ConvNeXt-tiny,
EfficientNet-B0, RegNetY-400MF from torchvision with random weights, batch 1, 224x224, and
the LLaMA-style block of llama_block.py; or one of ZOO, the torchvision models of
tests/cli/torchvision_zoo.sh, at the small input ZOO gives) it writes into OUTDIR/NAME/:

    fx.json, fx.safetensors    the torch.fx path (scripts/export_torch.py)
    model.onnx                 torch.onnx.export (opset 14) of the same module,
                               input and output names equal to the FX ones
    in.safetensors             seeded random inputs, under those names
    out.safetensors            the module's PyTorch outputs (eval, no grad)

and one line per model to OUTDIR/models.tsv: name, FX nodes, custom nodes,
seconds spent tracing + mapping, writing, and exporting to ONNX.

Random initialisation leaves parts of these models constant (batch-norm
running statistics 0 and 1, layer-norm weights 1 and biases 0, ConvNeXt's
layer scale 1e-6, ViT's class token 0 and its classifier head all zeros,
which makes its output 0 whatever the rest computes), where a mapping that
mixed up, say, the mean and the variance would still pass. perturb() draws
every constant tensor at random, so the comparison with PyTorch tests every
input.
"""
import os
import sys
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)
import export_torch  # noqa: E402
import llama_block  # noqa: E402

VISION = ["resnet50", "mobilenet_v3_small", "vit_b_16", "convnext_tiny", "efficientnet_b0",
          "regnet_y_400mf"]
MODELS = VISION + ["llama_block"]
# torchvision_zoo.sh's models and inputs: the smallest that keep every
# stage's feature map at least as large as its windows and kernels (Swin's
# 7x7 windows are padded up to; Inception needs 75x75; AlexNet and VGG's
# adaptive pools must divide, which 64x64 does not make them).
ZOO = {
    "swin_t": [1, 3, 64, 64], "densenet121": [1, 3, 64, 64], "shufflenet_v2_x0_5": [1, 3, 64, 64],
    "squeezenet1_0": [1, 3, 64, 64], "mnasnet0_5": [1, 3, 64, 64], "googlenet": [1, 3, 64, 64],
    "inception_v3": [1, 3, 75, 75], "resnext50_32x4d": [1, 3, 64, 64],
    "wide_resnet50_2": [1, 3, 64, 64], "mobilenet_v2": [1, 3, 64, 64],
    "regnet_x_400mf": [1, 3, 64, 64], "efficientnet_v2_s": [1, 3, 64, 64],
    "mobilenet_v3_large": [1, 3, 64, 64], "resnet18": [1, 3, 64, 64],
    # segmentation: bilinear upsampling (F.interpolate, ONNX Resize)
    "lraspp_mobilenet_v3_large": [1, 3, 64, 64], "deeplabv3_mobilenet_v3_large": [1, 3, 64, 64],
    # video: Conv3d (as 2-D convolutions per kernel frame), BatchNorm3d, a global 3-D pool
    "r3d_18": [1, 3, 4, 32, 32], "r2plus1d_18": [1, 3, 4, 32, 32],
}


# A ZOO model at another input: NAME_SIZE (torchvision_zoo.sh's Swin-T at
# 224, where its shifted windows' mask has 64 x 49 x 49 elements, past what
# the ONNX importer folds, so the mask's Equal and Not run as nodes).
SIZED = {"swin_t_224": ("swin_t", [1, 3, 224, 224])}


class SegmentationOut(torch.nn.Module):
    """A torchvision segmentation model's "out" (it returns a dict)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def perturb(module, g):
    """Draw every constant parameter and statistic at random (see the note above)."""
    with torch.no_grad():
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if not t.is_floating_point() or t.numel() < 2 or bool((t != t.flatten()[0]).any()):
                continue
            if name.rsplit(".", 1)[-1] == "layer_scale":
                t.copy_(torch.rand(t.shape, generator=g) * 0.2 + 0.1)
            elif float(t.flatten()[0]) > 0:      # variances, norm weights
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:                                # biases, means, tokens, a zeroed head
                t.copy_(torch.randn(t.shape, generator=g) * 0.05)


def build(name, seed):
    torch.manual_seed(seed)
    if name == "llama_block":
        m = llama_block.LlamaBlock()
        shape = [1, m.max_seq, m.dim]
    elif name in ZOO or name in SIZED:
        import torchvision
        name, shape = SIZED.get(name, (name, ZOO.get(name)))
        # googlenet and inception_v3 without their training-only auxiliary heads
        kw = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
        seg = getattr(torchvision.models.segmentation, name, None)
        video = getattr(torchvision.models.video, name, None)
        m = (SegmentationOut(seg(weights_backbone=None)) if seg else video() if video
             else getattr(torchvision.models, name)(**kw))
    else:
        import torchvision
        m = getattr(torchvision.models, name)()
        shape = [1, 3, 224, 224]
    m.eval()
    perturb(m, torch.Generator().manual_seed(seed + 1))
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed + 2))
    return m, {"x": x}


def make(outdir, name, seed=0):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    m, inputs = build(name, seed)
    info = export_torch.export(m, inputs, os.path.join(d, "fx.json"),
                               inputs_out=os.path.join(d, "in.safetensors"),
                               expect_out=os.path.join(d, "out.safetensors"),
                               name=name, source=f"tests/e2e/make_models.py: {name} (torch.fx)",
                               check=False)   # the test compares the outputs anyway
    t1 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, tuple(inputs[k] for k in info["inputs"]), os.path.join(d, "model.onnx"),
                          input_names=info["inputs"], output_names=info["outputs"], opset_version=14)
    t2 = time.time()
    for w in info["warnings"]:
        print(f"make_models.py: {name}: warning: {w}", file=sys.stderr)
    return (f"{name}\t{info['nodes']}\t{info['customs']}\t{info['trace_s'] + info['map_s']:.2f}\t"
            f"{info['write_s']:.2f}\t{t2 - t1:.2f}")


def main(argv):
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    outdir, names = argv[0], argv[1:] or MODELS
    torch.set_num_threads(2)
    lines = [make(outdir, n) for n in names]
    with open(os.path.join(outdir, "models.tsv"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
