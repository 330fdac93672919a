#!/usr/bin/python3
"""Real convergence: a small CNN trained on Fashion-MNIST by ucudnn and by PyTorch.

Both start from the same weights (the ONNX export of the PyTorch model), see the training set in
its own order (ucudnn train --no-shuffle; a PyTorch DataLoader without shuffling), normalise
pixels the same way ((x/255 - 0.2860) / 0.3530), and use SGD with momentum and a cosine
schedule without warm-up. Prints the two loss curves side by side, then both test accuracies;
exits 1 when ucudnn's test accuracy is more than --tolerance points away from PyTorch's, 77
(CTest's skip) when torch or the data set is missing.

Usage: scripts/fashion_mnist_convergence.py --ucudnn build/bin/ucudnn --work DIR
         [--data /usr/share/datasets/fashion-mnist] [--epochs 1] [--batch 64] [--lr 0.05]
"""
import argparse
import gzip
import json
import os
import subprocess
import sys


def read_idx(path):
    import numpy as np
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(magic & 0xFF)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ucudnn", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--tolerance", type=float, default=1.0, help="points of test accuracy")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
        import torch.nn as nn
    except ImportError as e:
        print(f"skipped: {e}")
        return 77
    images = os.path.join(args.data, "train-images-idx3-ubyte.gz")
    if not os.path.exists(images):
        print(f"skipped: no Fashion-MNIST at {args.data} (Debian package dataset-fashion-mnist)")
        return 77
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count() or 1)

    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    model.eval()
    onnx_path = os.path.join(args.work, "fashion_cnn.onnx")
    torch.onnx.export(model, torch.zeros(args.batch, 1, 28, 28), onnx_path, opset_version=13,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=["input"], output_names=["logits"])

    # ucudnn
    cmd = [args.ucudnn, "train", onnx_path, "--data", args.data, "--batch", str(args.batch),
           "--epochs", str(args.epochs), "--lr", str(args.lr), "--momentum", str(args.momentum),
           "--weight-decay", str(args.weight_decay), "--schedule", "cosine", "--no-shuffle", "--json",
           "--device", args.device, "--db", os.path.join(args.work, "benchmarks.sqlite")]
    print("$ " + " ".join(cmd), flush=True)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        return 1
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    ours = [e["loss"] for e in events if e["event"] == "step"]
    ours_acc = [e for e in events if e["event"] == "epoch"][-1]["val_top1"] * 100

    # PyTorch, same order, same schedule (CosineAnnealingLR over every step, stepped per step)
    mean, std = 0.2860, 0.3530
    x = (read_idx(images).astype(np.float32) / 255 - mean) / std
    y = read_idx(os.path.join(args.data, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    xt = (read_idx(os.path.join(args.data, "t10k-images-idx3-ubyte.gz")).astype(np.float32) / 255 - mean) / std
    yt = read_idx(os.path.join(args.data, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
    steps_per_epoch = len(x) // args.batch  # drop_last, as ucudnn train
    total = steps_per_epoch * args.epochs
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total)
    theirs = []
    for _ in range(args.epochs):
        for b in range(steps_per_epoch):
            xb = torch.from_numpy(x[b * args.batch:(b + 1) * args.batch]).unsqueeze(1)
            yb = torch.from_numpy(y[b * args.batch:(b + 1) * args.batch])
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            theirs.append(loss.item())
    model.eval()
    with torch.no_grad():
        pred = torch.cat([model(torch.from_numpy(xt[i:i + 1000]).unsqueeze(1)).argmax(1) for i in range(0, len(xt), 1000)])
    theirs_acc = (pred.numpy() == yt).mean() * 100

    print(f"{'step':>6} {'ucudnn loss':>12} {'PyTorch loss':>13}")
    for i in range(0, min(len(ours), len(theirs)), max(1, len(theirs) // 20)):
        print(f"{i + 1:>6} {ours[i]:>12.4f} {theirs[i]:>13.4f}")
    print(f"{len(theirs):>6} {ours[-1]:>12.4f} {theirs[-1]:>13.4f}")
    print(f"test accuracy: ucudnn {ours_acc:.2f} %, PyTorch {theirs_acc:.2f} % "
          f"(difference {ours_acc - theirs_acc:+.2f} points, tolerance {args.tolerance})")
    return 0 if abs(ours_acc - theirs_acc) <= args.tolerance and len(ours) == len(theirs) else 1


if __name__ == "__main__":
    sys.exit(main())
