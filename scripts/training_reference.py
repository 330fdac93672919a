#!/usr/bin/python3
"""PyTorch's side of the training tests (tests/trainer_test.cc, docs/TRAINING.md).

Builds a model, exports it to ONNX in eval mode (BatchNormalization kept as a node: no constant
folding), then trains a copy in PyTorch for --steps steps on one fixed batch from the same initial
weights, and writes into --out:

  model.onnx            the export ucudnn trains
  input.npy, labels.npy the batch (float32 NCHW, int64)
  losses.npy            float32 [steps]: the loss of each step (before its update)
  config.txt            the hyperparameters, one `key=value` per line
  after/<name>.npy      every initializer of the ONNX model after the last step (parameters and
                        BatchNormalization running statistics), by ONNX initializer name

Models: tiny_bn_cnn (Conv, BatchNorm, Relu, MaxPool, strided Conv with bias, GAP, Flatten, Gemm),
tiny_two_bn (two BatchNorms of equal width) and resnet18 (torchvision, 10 classes). Needs the system interpreter's torch.
Usage: scripts/training_reference.py --model tiny_bn_cnn --out DIR [--optimizer sgd|adamw] [--steps 3]
"""
import argparse
import inspect
import os

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn


class TinyBnCnn(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class TinyTwoBn(nn.Module):
    """Two BatchNorms of equal width: freshly initialised, the exporter merges their initializers."""

    def __init__(self, classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def build(name):
    if name == "tiny_bn_cnn":
        return TinyBnCnn(), (4, 1, 8, 8), 5
    if name == "tiny_two_bn":
        return TinyTwoBn(), (4, 1, 8, 8), 5
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(num_classes=10), (2, 3, 64, 64), 10
    raise SystemExit("unknown model " + name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="tiny_bn_cnn")
    ap.add_argument("--out", required=True)
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adamw"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fresh-batchnorm", action="store_true",
                    help="keep BatchNorm's initial ones and zeros (the exporter then merges equal initializers)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    model, shape, classes = build(args.model)
    # Non-trivial BatchNorm parameters and running statistics, so that their updates are checked,
    # and so that no two are equal: the exporter merges initializers of equal contents.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d) and not args.fresh_batchnorm:
                m.weight.uniform_(0.8, 1.2)
                m.bias.uniform_(-0.1, 0.1)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    x = torch.randn(*shape)
    y = torch.randint(0, classes, (shape[0],))

    os.makedirs(os.path.join(args.out, "after"), exist_ok=True)
    model.eval()
    path = os.path.join(args.out, "model.onnx")
    # PRESERVE with the model in eval mode: BatchNormalization stays a node (EVAL, the default,
    # folds it into the Conv before it, which training must not see).
    # torch >= 2.9 exports with the dynamo-based exporter by default: ask for the TorchScript one.
    extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, x, path, opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=["input"], output_names=["logits"], **extra)
    np.save(os.path.join(args.out, "input.npy"), x.numpy())
    np.save(os.path.join(args.out, "labels.npy"), y.numpy().astype(np.int64))

    model.train()
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                              weight_decay=args.weight_decay)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    losses = []
    for _ in range(args.steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.save(os.path.join(args.out, "losses.npy"), np.array(losses, dtype=np.float32))

    # The trained values under their ONNX names: the export names initializers by state_dict key
    # (do_constant_folding off keeps them one to one), and a parameter whose initial value equals
    # another's is an Identity of that one's initializer, named by its own key.
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    graph = onnx.load(path).graph
    names = {init.name for init in graph.initializer}
    names |= {n.output[0] for n in graph.node if n.op_type == "Identity" and n.input[0] in names}
    written = 0
    for name in sorted(names):
        if name in state:
            np.save(os.path.join(args.out, "after", name + ".npy"), state[name].astype(np.float32))
            written += 1
    if written == 0:
        raise SystemExit("no ONNX initializer matched a state_dict key")
    with open(os.path.join(args.out, "config.txt"), "w") as f:
        f.write(f"model={args.model}\noptimizer={args.optimizer}\nsteps={args.steps}\nlr={args.lr}\n"
                f"momentum={args.momentum}\nweight_decay={args.weight_decay}\nbatch={shape[0]}\n")


if __name__ == "__main__":
    main()
