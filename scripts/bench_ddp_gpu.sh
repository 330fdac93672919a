#!/usr/bin/env bash
# Data-parallel training throughput (docs/TRAINING.md "Several GPUs", docs/PERFORMANCE.md): ResNet-50
# images/s on 1, 2, 4 and 8 GPUs — as many of those as `nvidia-smi -L` lists — for
# `ucudnn train --gpus N --synthetic` and PyTorch DDP (scripts/bench_torch_ddp.py: eager NCHW and
# channels-last) with the same batch per GPU, then the scaling efficiency of each,
# images/s on N GPUs / (N x images/s on one).
#
#   scripts/bench_ddp_gpu.sh UCUDNN MODELS_DIR OUT_DIR      (MODELS_DIR/resnet50.onnx)
#   env: BATCH (per GPU, default 256), STEPS (ucudnn, default 30), POLICY (default wr:64MiB),
#        GPU_COUNTS (default "1 2 4 8"), NO_TORCH=1 to skip PyTorch, MODEL (default resnet50)
# One benchmark database is shared: the first run plans (rank 0 measures), the others reuse it.
set -uo pipefail
UCUDNN=$1
MODELS=$2
OUT=$3
MODEL=${MODEL:-resnet50}
BATCH=${BATCH:-256}
STEPS=${STEPS:-30}
POLICY=${POLICY:-wr:64MiB}
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off (the device documentation requires it)
mkdir -p "$OUT"
present=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
counts=()
for n in ${GPU_COUNTS:-1 2 4 8}; do
  [ "$n" -le "$present" ] && counts+=("$n")
done
if [ ${#counts[@]} -eq 0 ]; then
  echo "bench_ddp_gpu: no GPU (nvidia-smi -L lists $present)" >&2
  exit 1
fi
echo "GPUs present: $present; measuring on ${counts[*]}; batch $BATCH per GPU; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
results=$OUT/ddp_results.jsonl
: > "$results"
for n in "${counts[@]}"; do
  log=$OUT/ucudnn.$MODEL.gpus$n
  timeout 900 "$UCUDNN" train "$MODELS/$MODEL.onnx" --synthetic --device cuda --gpus "$n" --batch "$BATCH" \
      --steps "$STEPS" --policy "${POLICY%%:*}" --workspace "${POLICY#*:}" --lr 0.01 --momentum 0.9 \
      --weight-decay 1e-4 --json --quiet --db "$OUT/ddp.sqlite" > "$log.jsonl" 2> "$log.err"
  rc=$?
  summary=$(grep '"event":"summary"' "$log.jsonl" | tail -1)
  if [ $rc -ne 0 ] || [ -z "$summary" ]; then
    echo "ucudnn --gpus $n: failed (exit $rc): $(tail -n 3 "$log.err")"
    continue
  fi
  python3 - "$n" "$summary" "$MODEL" >> "$results" <<'PY'
import json, sys
n, s, model = int(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
print(json.dumps({"framework": "ucudnn", "model": model, "variant": "nchw", "gpus": n, "batch_per_gpu": s["batch"],
                  "step_ms": s["median_step_ms"], "all_reduce_ms": s.get("median_all_reduce_ms", 0),
                  "images_per_s": s["images_per_s"], "replicas_identical": s.get("replicas_identical")}))
PY
  tail -1 "$results"
done
if [ -z "${NO_TORCH:-}" ]; then
  HERE=$(cd "$(dirname "$0")" && pwd)
  for n in "${counts[@]}"; do
    timeout 900 python3 "$HERE/bench_torch_ddp.py" --model "$MODEL" --gpus "$n" --batch "$BATCH" \
        2> "$OUT/torch.$MODEL.gpus$n.err" | tee -a "$results" \
      || echo "pytorch ddp --gpus $n: failed: $(tail -n 3 "$OUT/torch.$MODEL.gpus$n.err")"
  done
fi
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
one = {(r["framework"], r["variant"]): r["images_per_s"] for r in rows if r["gpus"] == 1}
print(f"\n{'framework':12} {'variant':20} {'GPUs':>4} {'images/s':>10} {'step ms':>9} {'scaling':>8}")
for r in sorted(rows, key=lambda r: (r["framework"], r["variant"], r["gpus"])):
    base = one.get((r["framework"], r["variant"]))
    eff = f"{100 * r['images_per_s'] / (r['gpus'] * base):7.1f}%" if base else "      -"
    print(f"{r['framework']:12} {r['variant']:20} {r['gpus']:4d} {r['images_per_s']:10.1f} {r['step_ms']:9.2f} {eff}")
PY
