#!/usr/bin/env bash
# Sharded benchmarking (issue 14, docs/OPTIMIZER.md "Benchmarking on several GPUs"): the cold
# optimisation of ResNet-50 at batch 256 on one GPU (the default: GPU 0, no flag) against every
# GPU of the host (--benchmark-devices all), each time into an empty database:
#  (1) inference: `ucudnn plan --layout auto` — both layouts, the forward kernels; its own
#      "optimized in" time;
#  (2) training: `ucudnn train --synthetic --steps 1` — the training plan (forward, backward-data
#      and backward-filter kernels; training runs NCHW, docs/TRAINING.md); the planning is the cold
#      run's wall time minus a warm rerun's (same database, nothing measured).
# Prints each part's time on 1 and on N GPUs and the speed-ups; then checks that with the N-GPU
# database the plan is the same with --benchmark-devices all, 0 and without it. Runs on the device
# machine (scripts/gpubench-env.sh: binaries, libraries, $OUT); everything goes under $OUT/sharded.
#
#   scripts/bench_sharded_gpu.sh [--batch 256] [--devices all|0,1,...] [--model PATH]
set -uo pipefail
source "$(dirname "$0")/gpubench-env.sh"
BATCH=256
DEVICES=all
MODEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --batch) BATCH=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    *) echo "bench_sharded_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
unset UCUDNN_BENCHMARK_DEVICES  # the baseline is GPU 0 alone
WORK=$OUT/sharded
mkdir -p "$WORK" "$OUT/models"
if [ -z "$MODEL" ]; then
  MODEL=$OUT/models/resnet50.onnx
  [ -f "$MODEL" ] || gpubench_export_models resnet50 "$OUT/models" > "$WORK/export.log" 2>&1
fi
[ -f "$MODEL" ] || { echo "no model $MODEL (see $WORK/export.log)"; exit 1; }
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "== $(nvidia-smi -L 2>/dev/null | sed 's/ (UUID.*//' | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
     "--benchmark-devices $DEVICES; ResNet-50 batch $BATCH"
status=0
COMMON=(--device cuda --batch "$BATCH" --quiet)

# Says on stderr that $1 failed, with the end of its log $2; prints nan (no time).
failed() {
  echo "$1 failed: $(tail -n 2 "$2")" >&2
  echo nan
}

# `ucudnn plan` into a fresh database $1 with the extra flags $3...; prints its "optimized in" seconds.
plan_seconds() {
  local db=$1 tag=$2; shift 2
  rm -f "$db"
  "$BIN/ucudnn" plan "$MODEL" "${COMMON[@]}" --layout auto --db "$db" -o "$WORK/plan.$tag.json" "$@" \
      > "$WORK/plan.$tag.log" 2>&1 || { failed "plan $tag" "$WORK/plan.$tag.log"; return 1; }
  grep -o 'optimized in [0-9.]*' "$WORK/plan.$tag.log" | awk '{print $3}'
}

# `ucudnn train --steps 1` with database $1 (kept) and the extra flags $3...; prints its wall seconds.
train_seconds() {
  local db=$1 tag=$2; shift 2
  local start end
  start=$(date +%s.%N)
  "$BIN/ucudnn" train "$MODEL" --synthetic --steps 1 --no-eval "${COMMON[@]}" --db "$db" "$@" \
      > "$WORK/train.$tag.log" 2>&1 || { failed "train $tag" "$WORK/train.$tag.log"; return 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}

echo "== (1) inference plan, --layout auto (nchw and nhwc, forward)"
plan_one=$(plan_seconds "$WORK/plan1.sqlite" one) || status=1
plan_all=$(plan_seconds "$WORK/planN.sqlite" all --benchmark-devices "$DEVICES") || status=1
echo "== (2) training plan (nchw; forward, backward data, backward filter)"
rm -f "$WORK/train1.sqlite" "$WORK/trainN.sqlite"
train_one_cold=$(train_seconds "$WORK/train1.sqlite" one.cold) || status=1
train_one_warm=$(train_seconds "$WORK/train1.sqlite" one.warm) || status=1
train_all_cold=$(train_seconds "$WORK/trainN.sqlite" all.cold --benchmark-devices "$DEVICES") || status=1
train_all_warm=$(train_seconds "$WORK/trainN.sqlite" all.warm --benchmark-devices "$DEVICES") || status=1

awk -v gpus="$GPUS" -v p1="$plan_one" -v pn="$plan_all" -v c1="$train_one_cold" -v w1="$train_one_warm" \
    -v cn="$train_all_cold" -v wn="$train_all_warm" '
function ratio(a, b) { return b > 0 ? a / b : 0 }
BEGIN {
  t1 = c1 - w1; tn = cn - wn
  printf "inference plan (both layouts): 1 GPU %8.1f s   %d GPUs %8.1f s   speed-up %.2fx\n", p1, gpus, pn, ratio(p1, pn)
  printf "training plan (3 directions):  1 GPU %8.1f s   %d GPUs %8.1f s   speed-up %.2fx" \
         "   (cold minus warm run: %.1f-%.1f, %.1f-%.1f s)\n", t1, gpus, tn, ratio(t1, tn), c1, w1, cn, wn
  printf "both:                          1 GPU %8.1f s   %d GPUs %8.1f s   speed-up %.2fx\n", p1 + t1, gpus, pn + tn,
         ratio(p1 + t1, pn + tn)
}' | tee "$WORK/summary.txt"

echo "== the N-GPU database plans the same whatever --benchmark-devices says (nothing measured)"
for flags in "" "--benchmark-devices 0" "--benchmark-devices $DEVICES"; do
  tag=warm${flags//[^0-9a-z]/}
  "$BIN/ucudnn" plan "$MODEL" "${COMMON[@]}" --layout auto --db "$WORK/planN.sqlite" -o "$WORK/plan.$tag.json" \
      $flags > "$WORK/plan.$tag.log" 2>&1 || { echo "plan $tag failed"; status=1; continue; }
  grep -q '(0 benchmarked' "$WORK/plan.$tag.log" || { echo "plan '$flags' measured something"; status=1; }
  if cmp -s "$WORK/plan.warm.json" "$WORK/plan.$tag.json"; then echo "plan '$flags': same"; else
    echo "plan '$flags': DIFFERENT from the plan without the flag"; status=1; fi
done
exit $status
