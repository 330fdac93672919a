#!/usr/bin/python3
"""Exports torchvision CNNs with random (seeded) weights to ONNX, plus a fixed
input and PyTorch's output for it, so ucudnn can be checked against PyTorch.

For each model NAME it writes, under --out:
  NAME.onnx          opset --opset (13), input "input", output "output",
                     batch axis dynamic and named "batch"; BatchNormalization
                     nodes kept (unless --fold-bn) so ucudnn's folding runs
  NAME.input.pb      a seeded float32 input of batch --batch (2), TensorProto
  NAME.output.pb     PyTorch's eager output for that input, TensorProto

Weights: torch.manual_seed(seed) before construction (torchvision's own init),
then every BatchNorm's running mean/var and affine parameters are randomised
with a seeded generator -- with fresh init they are 0/1/1/0, which would make
BatchNorm folding an identity and hide mistakes in it.

Work already done is skipped: a model is re-exported only when one of its three
files is missing or older than this script (or with --force).

Run with the system python (/usr/bin/python3: torch 1.13, torchvision 0.14,
onnx 1.12); the legacy TorchScript-based exporter is used.
"""
import argparse
import os
import sys
import time
import warnings

# The plain networks the optimizer was first measured on, then the efficient architectures of
# issue 13 (depthwise, squeeze-excitation, SiLU/HardSwish, dense connectivity, grouped convolutions; MobileNetV2,
# depthwise with ReLU6, is issue 40's CPU training benchmark), and
# ConvNeXt (7×7 depthwise convolutions, LayerNorm, GELU, Linear layers on channels-last activations), and
# the transformers: ViT, Swin (shifted windows: Range, ScatterND, Mod in their masks) and MaxViT (Einsum).
MODELS = ("alexnet", "resnet18", "resnet50", "vgg16", "resnet101", "wide_resnet50_2", "mobilenet_v2",
          "mobilenet_v3_large", "mobilenet_v3_small", "efficientnet_b0", "efficientnet_b1", "densenet121",
          "densenet169", "regnet_y_800mf", "mnasnet1_0", "shufflenet_v2_x1_0", "resnext50_32x4d", "convnext_tiny",
          "vit_b_16", "swin_t", "maxvit_t")
# Semantic segmentation (torchvision.models.segmentation, 21 classes, no auxiliary head): dilated backbones
# and bilinear up-sampling (Resize). Their output is the "out" entry of the model's dict.
SEGMENTATION_MODELS = ("lraspp_mobilenet_v3_large", "fcn_resnet50", "deeplabv3_mobilenet_v3_large")
# Video classification (torchvision.models.video): 3-D convolutions and pools over clips [N, 3, T, H, W].
VIDEO_MODELS = ("r3d_18", "mc3_18", "r2plus1d_18")
ALL_MODELS = MODELS + SEGMENTATION_MODELS + VIDEO_MODELS
IMAGE_SIZE = 224
CLIP_FRAMES, CLIP_SIZE = 8, 112


def build_model(name, seed=0):
    """The torchvision model `name` in eval mode with seeded random weights and
    randomised BatchNorm statistics; a Linear layer initialised to zeros (ViT's head) gets small random
    weights, so the output depends on the input. Same seed -> bit-identical weights."""
    import torch
    import torchvision

    if name not in ALL_MODELS:
        raise ValueError(f"unknown model '{name}' (known: {', '.join(ALL_MODELS)})")
    torch.manual_seed(seed)
    if name in SEGMENTATION_MODELS:
        model = _segmentation_model(name)
    elif name in VIDEO_MODELS:
        model = getattr(torchvision.models.video, name)(weights=None)
    else:
        model = getattr(torchvision.models, name)(weights=None)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                n = module.num_features
                module.running_mean.copy_(0.1 * torch.randn(n, generator=generator))
                module.running_var.copy_(0.5 + torch.rand(n, generator=generator))
                module.weight.copy_(0.5 + torch.rand(n, generator=generator))
                module.bias.copy_(0.1 * torch.randn(n, generator=generator))
            elif isinstance(module, torch.nn.Linear) and not module.weight.any():
                module.weight.copy_(0.02 * torch.randn(module.weight.shape, generator=generator))
    return model.eval()


def _segmentation_model(name):
    """torchvision's segmentation model `name`, returning its "out" tensor (the export needs a tensor,
    not the model's dict)."""
    import torch
    import torchvision

    class SegmentationOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None)

        def forward(self, x):
            return self.model(x)["out"]

    return SegmentationOutput()


def make_input(batch, seed=0, name=None):
    """A seeded float32 NCHW image batch, or for a video model a batch of clips [N, 3, T, H, W]."""
    import torch

    generator = torch.Generator().manual_seed(seed + 2)
    if name in VIDEO_MODELS:
        return torch.randn(batch, 3, CLIP_FRAMES, CLIP_SIZE, CLIP_SIZE, generator=generator)
    return torch.randn(batch, 3, IMAGE_SIZE, IMAGE_SIZE, generator=generator)


def model_paths(out_dir, name):
    return {kind: os.path.join(out_dir, f"{name}{suffix}")
            for kind, suffix in (("model", ".onnx"), ("input", ".input.pb"), ("output", ".output.pb"))}


def is_up_to_date(paths):
    script_mtime = os.path.getmtime(os.path.abspath(__file__))
    return all(os.path.exists(p) and os.path.getmtime(p) > script_mtime for p in paths.values())


def save_tensor_pb(path, array, name):
    """Writes `array` as an ONNX TensorProto (via a temp file, then rename)."""
    from onnx import numpy_helper

    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())
    os.replace(tmp, path)


def _export(model, x, path, opset, fold_bn):
    import inspect

    import torch

    # torch >= 2.9 exports with the dynamo-based exporter by default; this script is
    # written for the TorchScript one (dynamic_axes, TrainingMode), so ask for it.
    # torch 1.13 has no `dynamo` argument and only the TorchScript exporter.
    extra = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        extra["dynamo"] = False
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      do_constant_folding=True,
                      # PRESERVE (the model is in eval mode) keeps BatchNormalization nodes; EVAL would
                      # let the exporter fold them into the convolutions, leaving ucudnn's pass idle.
                      training=torch.onnx.TrainingMode.EVAL if fold_bn else torch.onnx.TrainingMode.PRESERVE,
                      **extra)


def export_model(name, out_dir, batch=2, opset=13, seed=0, force=False, fold_bn=False, log=print):
    """Exports `name` into `out_dir` unless up to date; returns its paths dict."""
    import onnx
    import torch

    os.makedirs(out_dir, exist_ok=True)
    paths = model_paths(out_dir, name)
    if not force and is_up_to_date(paths):
        log(f"{name}: up to date in {out_dir}")
        return paths
    start = time.time()
    model = build_model(name, seed)
    x = make_input(batch, seed, name)
    with torch.no_grad():
        y = model(x)
    tmp_model = paths["model"] + ".tmp"
    with warnings.catch_warnings():
        # The exporter warns that constant folding with PRESERVE may alter parameters of a model in
        # training mode; ours is in eval mode, so folding is exact.
        warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
        _export(model, x, tmp_model, opset, fold_bn)
    onnx.checker.check_model(tmp_model)
    os.replace(tmp_model, paths["model"])
    # Data files after the model, so their mtimes are >= the model's.
    save_tensor_pb(paths["input"], x.numpy(), "input")
    save_tensor_pb(paths["output"], y.numpy(), "output")
    log(f"{name}: exported to {paths['model']} (opset {opset}, batch {batch}, "
        f"output {tuple(y.shape)}, {time.time() - start:.1f} s)")
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"),
                        help="output folder (default: models/generated, which git ignores)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated subset of {','.join(ALL_MODELS)} (default: "
                             "the classification models)")
    parser.add_argument("--batch", type=int, default=2, help="batch of the saved input/output (default 2)")
    parser.add_argument("--opset", type=int, default=13, help="ONNX opset (default 13)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--force", action="store_true", help="re-export even when up to date")
    parser.add_argument("--fold-bn", action="store_true",
                        help="let the exporter fold BatchNorm into Conv (default: keep BatchNormalization nodes)")
    args = parser.parse_args(argv)

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in ALL_MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(ALL_MODELS)}")
    if args.batch < 1:
        parser.error("--batch must be >= 1")

    import torch
    torch.set_num_threads(max(1, args.threads))
    for name in names:
        export_model(name, args.out, args.batch, args.opset, args.seed, args.force, args.fold_bn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
