#!/usr/bin/env python3
"""Data-parallel training on CPU ranks under mpirun against one process (docs/TRAINING.md, "Several GPUs").

  ddp_cpu_test.py UCUDNN WORKDIR [MODEL_WITH_BN]

1. A small CNN without BatchNormalization (written here with onnx.helper): `mpirun -np 2 ucudnn train
   --batch 4` and `ucudnn train --batch 8` on the same synthetic data, seed and schedule must end
   with the same weights (within float tolerance): rank r's batch b is the r-th half of global
   batch b, and the ranks average their gradients — here in one bucket per parameter, each reduced
   as soon as the backward pass has written it (Note [overlapped all-reduce],
   training/trainer_data_parallel.cc).
2. With BatchNormalization (MODEL_WITH_BN, models/tiny/tiny_cnn): two ranks train (statistics per
   rank, so no single-process twin) and finish with identical parameters, which `ucudnn train`
   checks itself; the saved model reloads.
3. Launch variables that cannot work are refused with what to do (CPU ranks without mpirun, a RANK
   outside WORLD_SIZE); `--gpus 2` fails with a clear message on a machine without two GPUs (or a build without NCCL);
   with two GPUs it trains on both.
Exit 77 (skipped) without mpirun, numpy or onnx.
"""
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

MPIRUN = shutil.which("mpirun")
if MPIRUN is None:
    print("skipped: no mpirun (apt-get install openmpi-bin)")
    sys.exit(77)


def write_model(path):
    rng = np.random.default_rng(7)
    w1 = rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (4,)).astype(np.float32)
    w2 = rng.normal(0, 0.3, (5, 4)).astype(np.float32)
    b2 = rng.normal(0, 0.1, (5,)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r1"], ["p1"], name="pool"),
        helper.make_node("Flatten", ["p1"], ["f1"], name="flatten"),
        helper.make_node("Gemm", ["f1", "w2", "b2"], ["logits"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "ddp_tiny",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 5])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def weights(path):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def run(cmd, env=None, expect_ok=True):
    print("+", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    if expect_ok and result.returncode != 0:
        sys.exit(f"FAILED: exit status {result.returncode}")
    return result


def main():
    ucudnn, work = sys.argv[1], sys.argv[2]
    bn_model = sys.argv[3] if len(sys.argv) > 3 else None
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    model = os.path.join(work, "ddp_tiny.onnx")
    write_model(model)
    common = ["--device", "cpu", "--synthetic", "--steps", "4", "--seed", "3", "--lr", "0.5",
              "--momentum", "0.9", "--weight-decay", "0.01", "--threads", "1", "--workers", "0",
              "--db", os.path.join(work, "bench.sqlite")]
    mpirun = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "2"]

    single, double = os.path.join(work, "single.onnx"), os.path.join(work, "two_ranks.onnx")
    run([ucudnn, "train", model, *common, "--batch", "8", "--save", single], env)
    # Buckets of 64 bytes: each parameter its own bucket, reduced as soon as backward has written it.
    out = run([*mpirun, ucudnn, "train", model, *common, "--batch", "4", "--bucket-size", "64", "--save", double], env)
    if "2 ranks (mpi)" not in out.stdout:
        sys.exit("FAILED: rank 0 did not report 2 MPI ranks")
    if out.stdout.count("trained ") != 1:
        sys.exit("FAILED: expected one summary (rank 0's)")
    a, b = weights(single), weights(double)
    initial = weights(model)
    worst = 0.0
    for name in a:
        moved = np.abs(a[name] - initial[name]).max()
        diff = np.abs(a[name] - b[name]).max()
        print(f"{name}: moved {moved:.3g}, two ranks vs one process {diff:.3g}")
        if moved < 1e-3:
            sys.exit(f"FAILED: {name} did not train")
        worst = max(worst, diff)
    if worst > 1e-5:
        sys.exit(f"FAILED: two ranks differ from one process by {worst}")

    if bn_model is not None:
        saved = os.path.join(work, "bn_two_ranks.onnx")
        out = run([*mpirun, ucudnn, "train", bn_model, *common, "--batch", "4", "--json", "--save", saved], env)
        if '"replicas_identical":true' not in out.stdout.replace(" ", ""):
            sys.exit("FAILED: the BatchNorm model's replicas were not reported identical")
        onnx.checker.check_model(onnx.load(saved))

    # Launch variables: CPU ranks without mpirun, and a rank outside the world, are refused clearly.
    torchrun = dict(env, RANK="0", WORLD_SIZE="2", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="1")
    out = run([ucudnn, "train", model, *common, "--batch", "4"], torchrun, expect_ok=False)
    if out.returncode == 0 or "launch them with mpirun" not in out.stderr:
        sys.exit("FAILED: CPU ranks launched torchrun-style must be refused, pointing at mpirun")
    out = run([ucudnn, "train", model, *common, "--batch", "4"], dict(torchrun, RANK="2"), expect_ok=False)
    if out.returncode != 2 or "RANK=2 is not below WORLD_SIZE=2" not in out.stderr:
        sys.exit("FAILED: RANK=2 of WORLD_SIZE=2 must be a usage error naming both")

    # Without two GPUs (or without NCCL) --gpus 2 fails, naming it; with them it trains.
    gpus = run([ucudnn, "train", model, "--synthetic", "--steps", "2", "--gpus", "2", "--db",
                os.path.join(work, "bench_gpu.sqlite")], env, expect_ok=False)
    if gpus.returncode == 0:
        if "2 ranks (nccl)" not in gpus.stdout:
            sys.exit("FAILED: --gpus 2 succeeded without reporting 2 NCCL ranks")
    elif "--gpus 2" not in gpus.stderr:
        sys.exit("FAILED: --gpus 2 failed without naming --gpus 2")
    print("PASSED")


if __name__ == "__main__":
    main()
