#!/usr/bin/python3
"""What the Python binding adds to a run: time per run through `InferenceSession.run` (and `run_dlpack`)
against the same session's `Session::run` timed in a C++ loop (the binding's `_time_runs`, which converts
the inputs once and calls the C++ API back to back, the GIL released), and, with --cli, against
`ucudnn run --json` (the mean of the command line's own timings). Goal on the CPU: <= 20 us of overhead per run.

    PYTHONPATH=build/python /usr/bin/python3 python/bench_overhead.py                   # tiny_cnn, CPU
    PYTHONPATH=build/python /usr/bin/python3 python/bench_overhead.py --cli build/bin/ucudnn
    # GPU (issue 43): ResNet-50 at batch 256 through run_dlpack against `ucudnn run --device-io`
    PYTHONPATH=build/python /usr/bin/python3 python/bench_overhead.py --model resnet50.onnx --device cuda \
        --batch 256 --iterations 20 --cli build/bin/ucudnn

Python and C++ loops alternate, --repeats times; each side's best mean is compared (the least disturbed
by the machine's other work). Means, not medians, on every side: a Python loop is timed as a whole.
Prints one summary per API and, with --json, one JSON object.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# This script lies beside the package's sources (python/ucudnn, without its extension), which Python would
# import first from the script's folder: the built package (PYTHONPATH) is the one to time.
HERE = pathlib.Path(__file__).resolve().parent
sys.path = [p for p in sys.path if pathlib.Path(p or ".").resolve() != HERE]
import ucudnn  # noqa: E402

SOURCE_DIR = HERE.parent


def python_loop(call, iterations):
    """Seconds per call of `call()` over `iterations` calls in a Python loop."""
    start = time.perf_counter()
    for _ in range(iterations):
        call()
    return (time.perf_counter() - start) / iterations


def cli_mean(cli, model, device, batch, threads, feed_file, db, iterations):
    """The mean of the run times (seconds) `ucudnn run --json` reports for the same model and options.
    Means everywhere: a tiny model's runs have a long tail (the median is about half the mean here), and
    the Python loop can only be timed as a whole."""
    args = [cli, "run", model, "--device", device, "--batch", str(batch), "--iterations", str(iterations),
            "--warmup", "10", "--json", "--quiet", "--db", db]
    if device == "cpu":
        args += ["--threads", str(threads), "--batch-groups", "1", "--layout", "nchw", "--input", feed_file]
    else:
        args += ["--device-io"]
    result = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return statistics.fmean(result["latency_ms"]["each"]) / 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(SOURCE_DIR / "models" / "tiny" / "tiny_cnn" / "model.onnx"))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (1: the least noisy)")
    parser.add_argument("--iterations", type=int, default=20000, help="runs per timed loop")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--db", default="", help="benchmark database (default: a temporary one)")
    parser.add_argument("--cli", default="", help="the ucudnn command line, to compare with its timings too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="ucudnn-bench-")
    db = args.db or os.path.join(tmp, "benchmarks.sqlite")
    options = dict(device=args.device, batch=args.batch, benchmark_db=db, progress=False)
    if args.device == "cpu":
        options.update(threads=args.threads, batch_groups=1, layout="nchw")
    session = ucudnn.InferenceSession(args.model, **options)
    rng = np.random.default_rng(0)
    feed = {i.name: rng.standard_normal(i.shape).astype(i.dtype) for i in session.get_inputs()}
    if args.device == "cuda":
        device_feed = {name: ucudnn.GpuTensor.upload(x) for name, x in feed.items()}
    else:
        device_feed = feed

    # IOBinding: inputs and outputs bound once, outputs written in place (on CUDA: run_on_device as is).
    binding = session.io_binding()
    for name, x in device_feed.items():
        binding.bind_input(name, x)
    for o in session.get_outputs():
        binding.bind_output(o.name, ucudnn.GpuTensor.allocate(o.shape, o.dtype) if args.device == "cuda"
                            else np.empty(o.shape, o.dtype))
    apis = {"run": lambda: session.run(None, feed), "run_dlpack": lambda: session.run_dlpack(device_feed),
            "iobinding": lambda: session.run_with_iobinding(binding)}
    if args.device == "cuda":  # what `ucudnn run --device-io` times: inputs and outputs in GPU memory
        del apis["run"]
    cpp, python = [], {name: [] for name in apis}
    for call in apis.values():  # warm up
        python_loop(call, min(args.iterations, 100))
    for _ in range(args.repeats):
        if args.device == "cpu":  # the C++ helper runs host inputs (Session::run)
            cpp.append(statistics.fmean(session._time_runs(feed, args.iterations, 10)))
        for name, call in apis.items():
            python[name].append(python_loop(call, args.iterations))

    report = {"model": args.model, "device": args.device, "batch": args.batch, "iterations": args.iterations,
              "repeats": args.repeats}
    baselines = {}
    if cpp:
        baselines["C++ loop (Session::run, _time_runs)"] = min(cpp)
    if args.cli:
        feed_file = os.path.join(tmp, "input.npy")
        [(name, x)] = feed.items() if len(feed) == 1 else [(None, None)]
        if name is None and args.device == "cpu":
            sys.exit("--cli on the CPU takes a model of one input")
        if name is not None:
            np.save(feed_file, x)
        baselines["CLI mean (ucudnn run --json" + (" --device-io" if args.device == "cuda" else "") + ")"] = \
            cli_mean(args.cli, args.model, args.device, args.batch, args.threads, f"{name}={feed_file}", db,
                       min(args.iterations, 2000))
    for name, times in python.items():
        best = min(times)
        report[name + "_us"] = best * 1e6
        print(f"{name:>11}: {best * 1e6:10.2f} us per run (best of {args.repeats} x {args.iterations})")
        for baseline, seconds in baselines.items():
            overhead = (best - seconds) * 1e6
            print(f"{'':>11}  vs {baseline}: {seconds * 1e6:.2f} us -> overhead {overhead:+.2f} us, "
                  f"ratio {best / seconds:.3f}")
            report.setdefault("baselines_us", {})[baseline] = seconds * 1e6
            report.setdefault("overhead_us", {}).setdefault(name, {})[baseline] = overhead
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
