#!/usr/bin/env python3
"""GPU inference latency of PyTorch (eager NCHW, eager channels-last, torch.compile
channels-last) on the torchvision models with the same seeded weights ucudnn runs
(models/export_torchvision.py), for scripts/bench_optimizer_gpu.sh.

Settings: fp32 with TF32 allowed (cudnn and matmul), cudnn.benchmark on, so
unlimited workspace; torch.no_grad(). Two times per variant, both medians:
  device_ms  input already on the GPU, output left there (CUDA events);
  host_ms    pageable host input -> GPU -> model -> host output (wall clock),
             which is what `ucudnn run --json` latency includes (and `--device-io`
             leaves out, like device_ms).
and peak_bytes, torch.cuda.max_memory_allocated() over the device-time runs.
Writes one JSON object per (model, variant) to --json-out and prints a table.

  python3 scripts/bench_torch_gpu.py --models alexnet,resnet50 --batch 256 --json-out torch.jsonl
      [--variants eager_nchw,eager_channels_last,compile_channels_last] [--no-compile]
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for candidate in (os.path.join(HERE, "..", "models"), os.path.join(HERE, "..", "src", "models")):
    if os.path.exists(os.path.join(candidate, "export_torchvision.py")):
        sys.path.insert(0, candidate)
        break
import export_torchvision  # noqa: E402


def median_device_ms(fn, x, warmup, iterations):
    import torch
    for _ in range(warmup):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def median_host_ms(fn, x_host, memory_format, warmup, iterations):
    import torch

    def once():
        x = x_host.to("cuda").contiguous(memory_format=memory_format)
        return fn(x).cpu()

    for _ in range(warmup):
        once()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        once()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="alexnet,resnet50")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--variants", default="eager_nchw,eager_channels_last,compile_channels_last",
                        help="comma-separated subset to run")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    import torch
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    rows = []
    for name in [m for m in args.models.split(",") if m]:
        try:
            base = export_torchvision.build_model(name).cuda().eval()
        except Exception as error:  # no GPU, or out of memory
            row = {"model": name, "batch": args.batch, "error": f"{type(error).__name__}: {error}"[:500]}
            print(json.dumps(row), flush=True)
            if args.json_out:
                with open(args.json_out, "a") as f:
                    f.write(json.dumps(row) + "\n")
            continue
        x_host = export_torchvision.make_input(args.batch)
        variants = [("eager_nchw", torch.contiguous_format, False), ("eager_channels_last", torch.channels_last, False)]
        if not args.no_compile:
            variants.append(("compile_channels_last", torch.channels_last, True))
        variants = [v for v in variants if v[0] in args.variants.split(",")]
        for variant, memory_format, compiled in variants:
            model = base.to(memory_format=memory_format)
            fn = torch.compile(model) if compiled else model
            x = x_host.to("cuda").contiguous(memory_format=memory_format)
            row = {"model": name, "batch": args.batch, "variant": variant, "torch": torch.__version__,
                   "device": torch.cuda.get_device_name()}
            try:
                with torch.no_grad():
                    start = time.perf_counter()
                    fn(x)  # compiles when compiled
                    torch.cuda.synchronize()
                    row["first_call_s"] = time.perf_counter() - start
                    torch.cuda.reset_peak_memory_stats()
                    row["device_ms"] = median_device_ms(fn, x, args.warmup, args.iterations)
                    # Everything PyTorch's allocator held while running: weights, input,
                    # activations, cuDNN workspaces (what ucudnn's weights + arena + pool are).
                    row["peak_bytes"] = torch.cuda.max_memory_allocated()
                    row["host_ms"] = median_host_ms(fn, x_host, memory_format, args.warmup, args.iterations)
                row["img_per_s_device"] = args.batch * 1000.0 / row["device_ms"]
                row["img_per_s_host"] = args.batch * 1000.0 / row["host_ms"]
            except Exception as error:  # e.g. torch.compile without a working compiler
                row["error"] = f"{type(error).__name__}: {error}"[:500]
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json_out:
                with open(args.json_out, "a") as f:
                    f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
