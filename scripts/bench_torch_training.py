#!/usr/bin/env python3
"""GPU training-step time of PyTorch on torchvision models, the baseline of
scripts/bench_training_gpu.sh (docs/TRAINING.md).

One step = forward, cross-entropy, backward and torch.optim.SGD(momentum 0.9,
weight decay 1e-4) on a fixed random batch already on the GPU. fp32 with TF32
allowed, cudnn.benchmark on. Variants: eager NCHW, eager channels-last,
torch.compile channels-last. Median of --iterations steps (CUDA events) after
--warmup; peak = torch.cuda.max_memory_allocated() over the timed steps.
Writes one JSON object per (model, variant) to --json-out and prints a table.

  python3 scripts/bench_torch_training.py --models alexnet,resnet18,resnet50 --batch 256 --json-out t.jsonl
"""
import argparse
import json
import statistics


def time_steps(step, warmup, iterations):
    import torch
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(iterations):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), torch.cuda.max_memory_allocated()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="alexnet,resnet18,resnet50")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--variants", default="eager_nchw,eager_channels_last,compile_channels_last")
    ap.add_argument("--json-out")
    args = ap.parse_args()
    import torch
    import torchvision
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    rows = []
    for name in args.models.split(","):
        for variant in args.variants.split(","):
            torch.manual_seed(0)
            model = getattr(torchvision.models, name)(num_classes=1000).cuda().train()
            fmt = torch.channels_last if "channels_last" in variant else torch.contiguous_format
            model = model.to(memory_format=fmt)
            x = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
            y = torch.randint(0, 1000, (args.batch,), device="cuda")
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
            fwd = torch.compile(model) if variant.startswith("compile") else model

            def step():
                opt.zero_grad(set_to_none=True)
                torch.nn.functional.cross_entropy(fwd(x), y).backward()
                opt.step()

            try:
                ms, peak = time_steps(step, args.warmup, args.iterations)
            except Exception as e:  # torch.compile may be unavailable
                print(f"{name} {variant}: failed: {e}")
                continue
            row = {"framework": "pytorch", "model": name, "variant": variant, "batch": args.batch,
                   "step_ms": ms, "peak_bytes": peak, "torch": torch.__version__}
            rows.append(row)
            print(f"{name:10} {variant:24} {ms:9.2f} ms  peak {peak / 2**30:6.2f} GiB", flush=True)
            del model, fwd, opt, x, y
            torch.cuda.empty_cache()
    if args.json_out:
        with open(args.json_out, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
