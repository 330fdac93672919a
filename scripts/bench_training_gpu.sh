#!/usr/bin/env bash
# Training-step benchmark on the GPU (docs/TRAINING.md, docs/PERFORMANCE.md): AlexNet, ResNet-18
# and ResNet-50 at batch 256, `ucudnn train --synthetic` under undivided / wr / wd budgets and
# unlimited, then PyTorch (scripts/bench_torch_training.py) in the same command.
# Each ucudnn figure is the median step of --steps (after 3 warm-up steps) with its planned memory;
# one database is shared, so only the first policy of a model pays for benchmarking.
#
#   scripts/bench_training_gpu.sh UCUDNN MODELS_DIR OUT_DIR [models] [policies]
#   policies: space-separated "policy:workspace" (default below); models: alexnet resnet18 resnet50
#   EXTRA="--cuda-graph off" adds flags to every `ucudnn train` (e.g. to time eager steps)
set -uo pipefail
UCUDNN=$1
MODELS=$2
OUT=$3
LIST=${4:-"alexnet resnet18 resnet50"}
POLICIES=${5:-"undivided:64MiB wr:64MiB wd:8MiB wd:64MiB wd:512MiB wr:unlimited"}
STEPS=${STEPS:-15}
PROFILE=${PROFILE:-wr:64MiB}  # the policy whose run also profiles one step (time by op type)
BATCH=${BATCH:-256}
mkdir -p "$OUT"
for model in $LIST; do
  for p in $POLICIES; do
    policy=${p%%:*}
    workspace=${p#*:}
    log=$OUT/train.$model.$policy.$workspace
    extra=()
    [ "$p" = "$PROFILE" ] && extra=(--profile)
    timeout 300 "$UCUDNN" train "$MODELS/$model.onnx" --synthetic --device cuda --batch "$BATCH" --steps "$STEPS" \
        --policy "$policy" --workspace "$workspace" --lr 0.01 --momentum 0.9 --weight-decay 1e-4 --json --quiet \
        --db "$OUT/train.sqlite" ${EXTRA:-} "${extra[@]}" > "$log.jsonl" 2> "$log.err"
    rc=$?
    summary=$(grep '"event":"summary"' "$log.jsonl" | tail -1)
    if [ $rc -ne 0 ] || [ -z "$summary" ]; then
      echo "$model $policy $workspace: failed (exit $rc): $(tail -n 2 "$log.err")"
      continue
    fi
    python3 - "$model" "$policy" "$workspace" "$summary" <<'PY'
import json, sys
m, p, w, s = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
print(f"{m:9} {p:9} {w:9} step {s['median_step_ms']:8.2f} ms (device {s['median_compute_ms']:8.2f}, "
      f"batch copy {s['median_upload_ms']:6.2f}, loader wait {s.get('median_data_ms', 0):6.2f})  memory {s['memory']['total_bytes'] / 2**30:6.2f} GiB "
      f"(workspace {s['memory']['workspace_bytes'] / 2**20:7.1f} MiB)  predicted conv {s['predicted_conv_ms']:.1f} ms  "
      f"loss {s['final_loss']:.3f}")
if "profile" in s:
    ops = s["profile"]["by_op"]  # slowest first
    print("    by op: " + ", ".join(f"{r['op']} {r['ms']:.2f} ms ({r['count']})" for r in ops[:12]))
    print("    slowest: " + ", ".join(f"{n['op']} {n['ms']:.2f}" for n in s["profile"]["slowest"][:8]))
PY
  done
done
if [ -z "${NO_TORCH:-}" ]; then
  HERE=$(cd "$(dirname "$0")" && pwd)
  python3 "$HERE/bench_torch_training.py" --models "$(echo $LIST | tr ' ' ',')" --batch "$BATCH" \
      --variants "${TORCH_VARIANTS:-eager_nchw,eager_channels_last,compile_channels_last}" \
      --json-out "$OUT/torch_training.jsonl" 2>&1 | grep -v Warning
fi
