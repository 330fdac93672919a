#!/usr/bin/python3
"""ONNX Runtime's time by op type and its slowest nodes, to set beside `ucudnn run --profile`.

Runs one .onnx file on ONNX Runtime's CPUExecutionProvider (all graph optimizations, as
scripts/bench_cpu.py runs it) with its profiler on, and prints the mean time per run of each
op type (ORT's fused kernels keep their own names, e.g. FusedConv) and of the slowest nodes.

  /usr/bin/python3 scripts/profile_ort.py MODEL.onnx [--batch 1] [--threads 8] [--iterations 10]
      [--warmup 3] [--top 12]
"""
import argparse
import collections
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cpu  # noqa: E402  (after the path tweak; its ONNX Runtime session and inputs)


def node_times(profile_path, warmup, iterations):
    """{(node name, op type): mean µs per run} from ORT's Chrome-trace profile, the first `warmup`
    runs left out (where the profile marks runs; else every run counts)."""
    with open(profile_path) as f:
        events = json.load(f)
    run_starts = sorted(e["ts"] for e in events if e.get("cat") == "Session" and e.get("name") == "model_run")
    since, runs = (run_starts[warmup], iterations) if len(run_starts) > warmup else (0, warmup + iterations)
    total = collections.defaultdict(float)
    for event in events:
        if event.get("cat") != "Node" or not event.get("name", "").endswith("_kernel_time") or event["ts"] < since:
            continue
        name = event["name"][: -len("_kernel_time")]
        total[(name, event.get("args", {}).get("op_name", "?"))] += event.get("dur", 0)
    return {key: us / runs for key, us in total.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--top", type=int, default=12, help="slowest nodes listed (default 12)")
    args = parser.parse_args(argv)
    if bench_cpu.ort_version() is None:
        sys.exit("profile_ort.py: ONNX Runtime (onnxruntime) cannot be imported here")
    feed_value = bench_cpu.export_torchvision.make_input(args.batch).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        session = bench_cpu.ort_session(args.model, args.threads, profile_prefix=os.path.join(tmp, "ort"))
        feed = {session.get_inputs()[0].name: feed_value}
        for _ in range(args.warmup + args.iterations):
            session.run(None, feed)
        times = node_times(session.end_profiling(), args.warmup, args.iterations)
    by_op = collections.defaultdict(lambda: [0, 0.0])
    for (_, op), us in times.items():
        by_op[op][0] += 1
        by_op[op][1] += us
    all_ms = sum(us for us in times.values()) / 1000
    if all_ms <= 0:
        sys.exit(f"profile_ort.py: ONNX Runtime's profile of {args.model} holds no node times")
    print(f"ONNX Runtime {bench_cpu.ort_version()}: {args.model}, batch {args.batch}, {args.threads} threads, "
          f"mean of {args.iterations} runs: {all_ms:.3f} ms in kernels")
    print(f"  {'op':<28}{'count':>6}{'total ms':>12}{'%':>8}")
    for op, (count, us) in sorted(by_op.items(), key=lambda kv: -kv[1][1]):
        print(f"  {op:<28}{count:>6}{us / 1000:>12.3f}{100 * us / 1000 / all_ms:>8.1f}")
    print("slowest nodes:")
    for (name, op), us in sorted(times.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {name:<60} {op:<16} {us / 1000:8.3f}")


if __name__ == "__main__":
    main()
