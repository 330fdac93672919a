#!/usr/bin/env bash
# One device call for the GPU training work (docs/DEVICE_WORKFLOW.md): unpacks the bundle that
# scripts/device-bundle made, then, each part skipped once LIMIT seconds are near,
#   1. the training tests and the op-table cases of the training kernels on the GPU (tests.log),
#   2. compute-sanitizer memcheck over the batch-norm, pooling-gradient and reduction cases (memcheck.log),
#   3. `ucudnn train --synthetic --profile` on the models of MODELS at batch BATCH in each layout of
#      LAYOUTS (train.<model>.<layout>.jsonl),
#   4. PyTorch's training step on the same models: eager NCHW, eager channels-last, torch.compile
#      channels-last (torch.jsonl; scripts/bench_torch_training.py).
# Results go to $OUT; summary.txt says what each part gave.
#
#   run(command="scripts/gpu_training_check.sh", carry=["build-device/bundle.tar.gz"], timeout_s=600)
#   MODELS=resnet50,resnet18 BATCH=256 STEPS=12 LAYOUTS="nchw nhwc" LIMIT=560 EXTRA=...
#   RUN_TESTS=0, MEMCHECK=0, TORCH=0 skip parts 1, 2, 4; UNPACKED=1: the bundle is unpacked already (a second
#   run in the same call)
set -uo pipefail
START=$SECONDS
LIMIT=${LIMIT:-560}
# Whether `need` more seconds fit before LIMIT.
fits() { [ $((SECONDS - START + $1)) -lt "$LIMIT" ]; }
ROOT=$(pwd)
[ "${UNPACKED:-0}" = 1 ] || tar xzf build-device/bundle.tar.gz -C build-device || exit 1
B=$ROOT/build-device/bundle
OUT=${OUT:-/tmp/ucudnn-out}
. "$B/scripts/gpubench-env.sh"
export UCUDNN_SOURCE_DIR=$ROOT
SUMMARY=$OUT/summary.txt
note() { echo "$*" | tee -a "$SUMMARY"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
# The interpreters there (the Python binding is built for this machine's /usr/bin/python3).
for py in /usr/bin/python3 /usr/bin/python3.11 python3; do
  echo "$py: $($py -c 'import sys; print(sys.version.split()[0])' 2>&1 | head -1)," \
       "numpy $($py -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1)," \
       "pytest $($py -c 'import pytest; print(pytest.__version__)' 2>&1 | tail -1)"
done > "$OUT/python.txt" 2>&1

TEST_FILTER=${TEST_FILTER:-'FusedBatchNorm*:FusedPointwiseTraining.*:ChannelsLastTraining.*:Trainer*:*OpTable*cuda*batch_norm*:*OpTable*cuda*reduce*:*OpTable*cuda*pool*grad*:*OpTable*cuda*conv_grad*:*OpTable*cuda*activation_grad*:OpTableCoverage.*'}
if [ "${RUN_TESTS:-1}" != 0 ] && fits 120; then
  timeout $((LIMIT - (SECONDS - START) - 60)) "$B/tests/ucudnn_tests" --gtest_filter="$TEST_FILTER" > "$OUT/tests.log" 2>&1
  note "tests: exit $? — $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/tests.log" | tr '\n' ' ')"
fi

SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ "${MEMCHECK:-1}" != 0 ] && [ -n "$SANITIZER" ] && fits 200; then
  timeout 120 "$SANITIZER" --tool memcheck --error-exitcode 9 "$B/tests/ucudnn_tests" \
      --gtest_filter='*OpTable*cuda_fp32*batch_norm*:*OpTable*cuda_fp32*split*:*OpTable*cuda_fp32*pool_grad*' > "$OUT/memcheck.log" 2>&1
  note "memcheck: exit $? — $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
fi

MODELS=${MODELS:-resnet50}
BATCH=${BATCH:-256}
STEPS=${STEPS:-12}
if fits 150; then
  python3 "$B/src/models/export_torchvision.py" --out /tmp/models --models "$MODELS" --batch 2 > "$OUT/export.log" 2>&1 ||
    note "export failed: $(tail -n 3 "$OUT/export.log")"
fi
LAYOUTS=${LAYOUTS:-"nchw nhwc"}
for model in ${MODELS//,/ }; do
  for layout in $LAYOUTS; do
    fits 90 || { note "$model $layout: skipped (time)"; continue; }
    log=$OUT/train.$model.$layout.b$BATCH
    timeout 240 "$B/bin/ucudnn" train "/tmp/models/$model.onnx" --synthetic --device cuda --batch "$BATCH" \
        --steps "$STEPS" --lr 0.01 --momentum 0.9 --weight-decay 1e-4 --json --quiet --profile --layout "$layout" \
        --db "$OUT/train.sqlite" ${EXTRA:-} > "$log.jsonl" 2> "$log.err"
    rc=$?
    python3 - "$model $layout" "$rc" "$log.jsonl" <<'PY' | tee -a "$SUMMARY"
import json, sys
model, rc, path = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [json.loads(l) for l in open(path) if l.startswith("{")]
s = next((r for r in rows if r.get("event") == "summary"), None)
if s is None:
    print(f"{model}: ucudnn train failed (exit {rc})")
    sys.exit()
m = {k: v / 2**30 for k, v in s['memory'].items()}
print(f"{model}: step {s['median_step_ms']:.2f} ms (device {s['median_compute_ms']:.2f}, upload "
      f"{s['median_upload_ms']:.2f})  memory {m['total_bytes']:.2f} GiB (arena {m['arena_bytes']:.2f}, workspace "
      f"{m['workspace_bytes']:.2f}, weights {m['weight_bytes']:.2f}, kernels {m['kernel_bytes']:.2f})  "
      f"loss {s['final_loss']:.3f}")
if "profile" in s:
    print("    by op: " + ", ".join(f"{r['op']} {r['ms']:.2f} ({r['count']})" for r in s["profile"]["by_op"][:14]))
    print("    slowest: " + ", ".join(f"{n['op']} {n['ms']:.2f}" for n in s["profile"]["slowest"][:10]))
PY
    [ "$rc" = 0 ] || note "    $(tail -n 3 "$log.err")"
  done
done

if [ "${TORCH:-1}" != 0 ] && fits 150; then
  timeout $((LIMIT - (SECONDS - START) - 10)) python3 "$B/scripts/bench_torch_training.py" --models "$MODELS" \
      --batch "$BATCH" --iterations 10 --warmup 3 \
      --variants "${TORCH_VARIANTS:-eager_channels_last,compile_channels_last}" --json-out "$OUT/torch.b$BATCH.jsonl" \
      > "$OUT/torch.b$BATCH.log" 2>&1
  note "torch: exit $?"
  grep -v Warning "$OUT/torch.b$BATCH.log" | tail -n 8 | tee -a "$SUMMARY"
fi
# The run tool brings back only so many files: the per-model logs travel as one archive.
tar czf "$OUT/train_logs.b$BATCH.tar.gz" -C "$OUT" $(cd "$OUT" && ls train.*.b$BATCH.* 2>/dev/null) 2>/dev/null &&
  (cd "$OUT" && rm -f train.*.b$BATCH.jsonl train.*.b$BATCH.err)
rm -f "$OUT/train.sqlite"
note "total ${SECONDS}s"
