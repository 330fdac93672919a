#!/usr/bin/python3
"""CPU inference latency: ucudnn (`ucudnn run --json`) against ONNX Runtime and PyTorch eager.

For each model and batch, in the same invocation and with the same threads,
warm-up and iteration counts: the ucudnn CLI's median latency; ONNX Runtime's
(CPUExecutionProvider, all graph optimizations, intra-op threads T, one inter-op
thread) on the SAME .onnx file; and PyTorch's median over timed `model(x)` calls
under torch.no_grad() with torch.set_num_threads(T). ONNX Runtime or PyTorch that
cannot be imported is reported as unavailable (its columns say "n/a"). Models
with the same seeded weights come from models/export_torchvision.py (exported
when missing). Prints a table with the ratios ucudnn/ORT and ucudnn/PyTorch (below
1 is ucudnn faster) and the machine; with --json-out also writes one JSON object
per (model, batch). --layouts times ucudnn once per layout named (`--layout`;
default auto, what a user runs), e.g. nchw,auto for the channels-last gain in the
same command, and --batch-groups likewise (`--batch-groups`: 1,auto for the gain of running the
batch as groups of samples); the ratios use the last one. "(ran)" is the layout auto chose, "/g8"
when the batch ran as 8 groups. --rounds R times every system R times, one after the
other, and reports the medians over rounds (a shared machine's slow spells then hit all of them);
then, over every timed iteration of all rounds, the fastest and the 90th percentile of ucudnn and ONNX
Runtime (the JSON has min, p10, median and p90 of each system: "ms_spread"), each round's ucudnn / ORT
ratio (the two ran minutes apart at most, so a slow spell of the host moves both), and each model's
largest batch over batch 1.

  python3 scripts/bench_cpu.py [--models resnet18,resnet50] [--batches 1,16]
      [--iterations 20] [--warmup 3] [--threads N] [--ucudnn build/bin/ucudnn]
      [--layouts auto] [--batch-groups auto] [--rounds 1] [--model-dir build/models] [--json-out results.jsonl] [--no-ort] [--no-torch]
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


def bench_ucudnn(binary, model_path, batch, iterations, warmup, threads, layout="auto", batch_groups="auto"):
    """Every timed iteration's latency in ms reported by `ucudnn run --json`, plus the whole JSON."""
    command = [binary, "run", model_path, "--device", "cpu", "--batch", str(batch), "--json",
               "--iterations", str(iterations), "--warmup", str(warmup), "--threads", str(threads),
               "--layout", layout, "--batch-groups", batch_groups]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr.strip()}")
    report = json.loads(result.stdout)
    return [float(t) for t in report["latency_ms"]["each"]], report


def times_ms(run, iterations, warmup):
    """Wall time in ms of each of `iterations` calls of `run()` after `warmup` untimed ones."""
    times = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        run()
        elapsed = (time.perf_counter() - start) * 1000.0
        if i >= warmup:
            times.append(elapsed)
    return times


def spread(times):
    """min, 10th percentile, median and 90th percentile of a list of times: on a shared host the
    median moves with the neighbours' load, the minimum shows what a runtime does on a quiet machine."""
    ordered = sorted(times)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"min": ordered[0], "p10": at(0.1), "median": statistics.median(ordered), "p90": at(0.9)}


def ort_version():
    """ONNX Runtime's version, or None when it cannot be imported."""
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime.__version__


def ort_session(model_path, threads, profile_prefix=None):
    """ONNX Runtime's CPU session as this benchmark runs it: all graph optimizations, `threads` intra-op
    threads, one inter-op thread, sequential; with profile_prefix, its profiler on, writing there."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def bench_ort(model_path, batch, iterations, warmup, threads, seed=0):
    """Each timed iteration's latency in ms of ONNX Runtime on the CPU for the same ONNX file."""
    session = ort_session(model_path, threads)
    feed = {session.get_inputs()[0].name: export_torchvision.make_input(batch, seed).numpy()}
    return times_ms(lambda: session.run(None, feed), iterations, warmup)


def torch_version():
    """PyTorch's version, or None when it cannot be imported."""
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), else platform.processor()."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def ratio(a, b):
    return a / b if a is not None and b else None


def cell(value, width, digits=2):
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'n/a':>{width}}"


def bench_torch(name, batch, iterations, warmup, threads, seed=0):
    """Each timed iteration's latency in ms of PyTorch eager inference."""
    import torch

    torch.set_num_threads(threads)
    model = export_torchvision.build_model(name, seed)
    x = export_torchvision.make_input(batch, seed, name)
    with torch.no_grad():
        return times_ms(lambda: model(x), iterations, warmup)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="resnet18,resnet50")
    parser.add_argument("--batches", default="1,16")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ucudnn", default=os.path.join(ROOT, "build", "bin", "ucudnn"),
                        help="the ucudnn CLI to time (default build/bin/ucudnn)")
    parser.add_argument("--layouts", default="auto",
                        help="ucudnn's --layout values to time, comma-separated (the ratios use the last)")
    parser.add_argument("--batch-groups", default="auto",
                        help="ucudnn's --batch-groups values to time, comma-separated, each with every layout "
                             "(1,auto: without and with groups in one run; the ratios use the last)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="times each system is timed, alternating; the figures are the medians over rounds")
    parser.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch")
    parser.add_argument("--model-dir", default=os.path.join(ROOT, "build", "models"),
                        help="where the exported models live (exported here when missing)")
    parser.add_argument("--json-out", help="append one JSON line per (model, batch) to this file")
    args = parser.parse_args(argv)

    names = [n for n in args.models.split(",") if n]
    layout_names = [l for l in args.layouts.split(",") if l]
    if not layout_names or any(l not in ("auto", "nchw", "nhwc") for l in layout_names):
        parser.error(f"--layouts must name auto, nchw or nhwc, got '{args.layouts}'")
    group_values = [g for g in args.batch_groups.split(",") if g]
    if not group_values or any(g != "auto" and not g.isdigit() for g in group_values):
        parser.error(f"--batch-groups must name auto or numbers, got '{args.batch_groups}'")
    # Each ucudnn configuration timed: a layout, or with several --batch-groups values "layout/groups".
    configs = {(l if len(group_values) == 1 else f"{l}/g{g}"): (l, g) for l in layout_names for g in group_values}
    layouts = list(configs)
    unknown = [n for n in names if n not in export_torchvision.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(export_torchvision.MODELS)}")
    try:
        batches = [int(b) for b in args.batches.split(",") if b]
    except ValueError:
        parser.error(f"--batches must be comma-separated integers, got '{args.batches}'")
    if (not batches or min(batches) < 1 or args.iterations < 1 or args.warmup < 0 or args.threads < 1
            or args.rounds < 1):
        parser.error("batches, --iterations and --rounds must be >= 1, --warmup >= 0, --threads >= 1")
    if not os.access(args.ucudnn, os.X_OK):
        parser.error(f"ucudnn CLI not found at {args.ucudnn} (build the ucudnn_cli target or pass --ucudnn)")

    ort = None if args.no_ort else ort_version()
    torch = None if args.no_torch else torch_version()
    machine = f"{platform.node()} ({cpu_name()}, {os.cpu_count()} CPUs)"
    rows = []
    out = open(args.json_out, "a") if args.json_out else None
    print(f"machine {machine}")
    print(f"threads {args.threads}, {args.warmup} warm-up + {args.iterations} timed iterations, median latency "
          f"(median of {args.rounds} alternating rounds); "
          f"ONNX Runtime {ort or 'unavailable'}, PyTorch {torch or 'unavailable'}; ucudnn {args.ucudnn}")
    header = f"{'model':<20} {'batch':>5} " + " ".join(f"{'ucudnn ' + l:>12}" for l in layouts)
    header += f" {'(ran)':>8} {'ORT ms':>9} {'PyTorch ms':>11} {'/ORT':>6} {'/PyTorch':>8}"
    print(header)
    print("-" * len(header))
    for name in names:
        paths = export_torchvision.export_model(name, args.model_dir, log=lambda m: print(m, file=sys.stderr))
        for batch in batches:
            # Each round times every system once, one after the other, so a machine that slows down
            # for a while (a shared host) slows all of them; the figures are the medians over rounds.
            systems = layouts + (["ort"] if ort else []) + (["torch"] if torch else [])
            each = {s: [] for s in systems}  # every timed iteration of every round
            rounds = {s: [] for s in systems}  # each round's median
            for _ in range(args.rounds):
                for system in systems:
                    if system == "ort":
                        times = bench_ort(paths["model"], batch, args.iterations, args.warmup, args.threads)
                    elif system == "torch":
                        times = bench_torch(name, batch, args.iterations, args.warmup, args.threads)
                    else:
                        times, report = bench_ucudnn(args.ucudnn, paths["model"], batch, args.iterations,
                                                     args.warmup, args.threads, *configs[system])
                    each[system] += times
                    rounds[system].append(statistics.median(times))
            per_layout = {l: statistics.median(rounds[l]) for l in layouts}
            ucudnn_ms = per_layout[layouts[-1]]
            ran = report.get("layout", "?")
            groups = report.get("batch_groups", {}).get("groups", 1)
            ort_ms = statistics.median(rounds["ort"]) if ort else None
            torch_ms = statistics.median(rounds["torch"]) if torch else None
            vs_ort, vs_torch = ratio(ucudnn_ms, ort_ms), ratio(ucudnn_ms, torch_ms)
            cells = " ".join(f"{per_layout[l]:>12.2f}" for l in layouts)
            ran_text = ran if groups == 1 else f"{ran}/g{groups}"
            print(f"{name:<20} {batch:>5} {cells} {ran_text:>8} {cell(ort_ms, 9)} {cell(torch_ms, 11)} "
                  f"{cell(vs_ort, 6)} {cell(vs_torch, 8)}", flush=True)
            row = {"model": name, "batch": batch, "threads": args.threads, "iterations": args.iterations,
                   "warmup": args.warmup, "machine": machine, "ucudnn": args.ucudnn, "ucudnn_ms": ucudnn_ms,
                   "ucudnn_layout": ran, "ucudnn_batch_groups": groups,
                   "ucudnn_batch_groups_note": report.get("batch_groups", {}).get("note", ""),
                   "ucudnn_ms_by_layout": per_layout, "rounds": args.rounds,
                   "ms_by_round": rounds, "ms_spread": {s: spread(each[s]) for s in systems},
                   "ort_version": ort, "ort_ms": ort_ms, "torch_version": torch, "torch_ms": torch_ms,
                   "ratio_vs_ort": vs_ort, "ratio_vs_torch": vs_torch,
                   "ratio_vs_ort_by_round": ([u / o for u, o in zip(rounds[layouts[-1]], rounds["ort"])]
                                             if ort else None),
                   "ucudnn_peak_memory_bytes": report.get("peak_memory_bytes"),
                   "ucudnn_throughput_per_s": report.get("throughput_per_s")}
            rows.append(row)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
    if out:
        out.close()
    print_spread(rows, layouts[-1])
    print_batch_scaling(rows)
    return 0


def print_spread(rows, layout):
    """Per model and batch: the fastest and the 90th-percentile iteration over all rounds, ucudnn and
    ONNX Runtime, and their ratios (a shared host's neighbours move the median; the minimum is the
    quiet machine's figure)."""
    rows = [r for r in rows if "ort" in r["ms_spread"]]
    if not rows:
        return
    print(f"\nspread over all rounds' iterations, ms (ucudnn {layout} / ORT), and each round's ratio of medians:")
    print(f"{'model':<20} {'batch':>5} {'min':>17} {'/ORT':>5} {'p90':>17} {'/ORT':>5}  rounds' /ORT")
    for r in rows:
        mine, theirs = r["ms_spread"][layout], r["ms_spread"]["ort"]
        cells = "".join(f" {mine[q]:>8.2f}/{theirs[q]:<8.2f} {mine[q] / theirs[q]:>5.2f}" for q in ("min", "p90"))
        by_round = ", ".join(f"{x:.2f}" for x in r["ratio_vs_ort_by_round"])
        print(f"{r['model']:<20} {r['batch']:>5}{cells}  {by_round}")


def print_batch_scaling(rows):
    """Per model: the largest batch's latency over batch 1's, for ucudnn and ONNX Runtime."""
    lines = []
    for name in dict.fromkeys(r["model"] for r in rows):
        mine = {r["batch"]: r for r in rows if r["model"] == name}
        if 1 not in mine or len(mine) < 2:
            continue
        big = max(mine)
        line = f"{name:<20} batch {big} / batch 1: ucudnn {mine[big]['ucudnn_ms'] / mine[1]['ucudnn_ms']:.1f}x"
        if mine[big]["ort_ms"] and mine[1]["ort_ms"]:
            line += f", ONNX Runtime {mine[big]['ort_ms'] / mine[1]['ort_ms']:.1f}x"
        lines.append(line)
    if lines:
        print("\n".join(["", "batch scaling (work grows with the batch):"] + lines))


if __name__ == "__main__":
    sys.exit(main())
