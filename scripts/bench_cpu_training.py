#!/usr/bin/python3
"""CPU training step: ucudnn (`ucudnn train --device cpu`) against PyTorch eager, same threads.

The benchmark of issue 40 item 7 ("the CPU trains too": a step at least as fast as PyTorch's on the
same threads, ResNet-18 and MobileNetV2 at batch 32). For each model, one after the other:

  ucudnn   `ucudnn train MODEL.onnx --synthetic --device cpu --batch B --steps S --threads T --json
           --lr 0.01 --momentum 0.9 [--profile] --db DB`, the model exported by
           models/export_torchvision.py (seeded weights, BatchNormalization kept); each step's ms is
           read from the per-step JSON lines ("event": "step"). The first step also plans (benchmarks
           the convolutions unless DB holds them), so pass the same --db twice to see a warm run.
  PyTorch  torchvision's model in train mode, torch.set_num_threads(T), SGD(lr 0.01, momentum 0.9),
           cross-entropy on a fixed synthetic batch [B, 3, 224, 224] with random labels; each step
           (zero_grad, forward, loss, backward, step) timed with perf_counter.

Both report the median of steps 2..S (the first step is warm-up: planning, first-touch memory,
oneDNN's primitive creation). The ratio ucudnn / PyTorch is below 1 when ucudnn is faster. With
--profile, ucudnn's per-op totals of its extra profiled step are printed (the largest first), and
--json-out writes one JSON object per model.

  /usr/bin/python3 scripts/bench_cpu_training.py [--models resnet18,mobilenet_v2] [--batch 32]
      [--steps 5] [--threads 2] [--ucudnn build/bin/ucudnn] [--model-dir /tmp/ucudnn-models]
      [--db /tmp/ucudnn-cpu-training.sqlite] [--profile] [--top 12] [--no-torch] [--json-out FILE]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
import export_torchvision  # noqa: E402  (after the path tweak)
from bench_cpu import cpu_name  # noqa: E402  (scripts/, this file's folder, is on the path)

LR, MOMENTUM = 0.01, 0.9


def steady_median(times):
    """Median of the steps after the first (steps 2..S)."""
    return statistics.median(times[1:] if len(times) > 1 else times)


def bench_ucudnn(binary, model_path, batch, steps, threads, db, profile):
    """(each step's ms, the summary JSON) of one `ucudnn train` run."""
    command = [binary, "train", model_path, "--synthetic", "--device", "cpu", "--batch", str(batch), "--steps",
               str(steps), "--threads", str(threads), "--json", "--lr", str(LR), "--momentum", str(MOMENTUM)]
    if db:
        command += ["--db", db]
    if profile:
        command.append("--profile")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr.strip()}")
    step_ms, summary = [], None
    for line in result.stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event.get("event") == "step":
            step_ms.append(float(event["ms"]))
        elif event.get("event") == "summary":
            summary = event
    if len(step_ms) != steps or summary is None:
        raise RuntimeError(f"{' '.join(command)}: expected {steps} step lines and a summary, got:\n{result.stdout}")
    return step_ms, summary


def bench_torch(name, batch, steps, threads):
    """Each training step's ms of torchvision's `name` in PyTorch eager."""
    import torch
    import torchvision

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).train()
    x = torch.randn(batch, 3, export_torchvision.IMAGE_SIZE, export_torchvision.IMAGE_SIZE)
    y = torch.randint(0, 1000, (batch,))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        times.append((time.perf_counter() - start) * 1000.0)
    return times


def fmt(times):
    return ", ".join(f"{t:.0f}" for t in times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ucudnn", default=os.path.join(ROOT, "build", "bin", "ucudnn"))
    parser.add_argument("--model-dir", default="/tmp/ucudnn-models")
    parser.add_argument("--db", default="/tmp/ucudnn-cpu-training.sqlite",
                        help="ucudnn's benchmark database ('' for none: every run benchmarks afresh)")
    parser.add_argument("--profile", action="store_true", help="print ucudnn's per-op totals of a profiled step")
    parser.add_argument("--top", type=int, default=12, help="ops shown with --profile")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-ucudnn", action="store_true")
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in export_torchvision.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(export_torchvision.MODELS)}")
    if args.batch < 1 or args.steps < 2 or args.threads < 1:
        parser.error("--batch and --threads must be >= 1, --steps >= 2 (the first step is not counted)")
    if not args.no_ucudnn and not os.access(args.ucudnn, os.X_OK):
        parser.error(f"ucudnn CLI not found at {args.ucudnn} (build the ucudnn_cli target or pass --ucudnn)")

    torch_version = None
    if not args.no_torch:
        import torch
        torch_version = torch.__version__
    print(f"machine {platform.node()} ({cpu_name()}, {os.cpu_count()} CPUs); batch {args.batch}, "
          f"{args.threads} threads, {args.steps} steps, median of steps 2-{args.steps}; "
          f"PyTorch {torch_version or 'not run'}; ucudnn {args.ucudnn}")
    out = open(args.json_out, "a") if args.json_out else None
    rows = []
    for name in names:
        row = {"model": name, "batch": args.batch, "threads": args.threads, "steps": args.steps}
        if not args.no_ucudnn:
            paths = export_torchvision.export_model(name, args.model_dir, log=lambda m: print(m, file=sys.stderr))
            ms, summary = bench_ucudnn(args.ucudnn, paths["model"], args.batch, args.steps, args.threads, args.db,
                                       args.profile)
            row.update(ucudnn_step_ms=ms, ucudnn_ms=steady_median(ms),
                       predicted_conv_ms=summary.get("predicted_conv_ms"))
            print(f"{name}: ucudnn steps {fmt(ms)} ms", flush=True)
            if args.profile and "profile" in summary:
                profile = summary["profile"]
                row["profile_by_op"] = profile["by_op"]
                print(f"  profiled step {profile['total_ms']:.0f} ms; by op (count, ms):")
                for op in sorted(profile["by_op"], key=lambda o: -o["ms"])[:args.top]:
                    print(f"    {op['op']:<24} {op['count']:4d} {op['ms']:9.1f}")
        if not args.no_torch:
            ms = bench_torch(name, args.batch, args.steps, args.threads)
            row.update(torch_step_ms=ms, torch_ms=steady_median(ms), torch=torch_version)
            print(f"{name}: PyTorch steps {fmt(ms)} ms", flush=True)
        rows.append(row)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()
    print(f"\n{'model':<14} {'ucudnn ms':>10} {'PyTorch ms':>11} {'ucudnn/PyTorch':>15}")
    for r in rows:
        u, t = r.get("ucudnn_ms"), r.get("torch_ms")
        ratio = f"{u / t:.2f}" if u and t else "n/a"
        shown = ["n/a" if v is None else f"{v:.0f}" for v in (u, t)]
        print(f"{r['model']:<14} {shown[0]:>10} {shown[1]:>11} {ratio:>15}")
    if out:
        out.close()


if __name__ == "__main__":
    main()
