#!/usr/bin/env bash
# Issue 15's benchmark on the device host's CPU (results in docs/PERFORMANCE.md): ucudnn against ONNX
# Runtime and PyTorch on the same ONNX files with the same threads (scripts/bench_cpu.py; ONNX Runtime is
# installed there, not on the dev machine), then one `ucudnn run --profile` per model and batch: time by
# op type, the slowest nodes. Runs from a bundle (scripts/device-bundle) or a checkout's build.
#
#   scripts/bench_cpu_device.sh [--models a,b,...] [--batches 1,16] [--threads 8] [--layouts auto]
#                               [--batch-groups auto] [--rounds 3] [--no-torch]
#
# The benchmark database starts empty (every convolution is measured, at the threads given); it is left,
# gzipped, beside the results for a later run. Everything goes under $OUT/cpu; the table to stdout and
# $OUT/cpu/bench.txt, the profiles in $OUT/cpu/profiles.tar.gz.
set -uo pipefail
source "$(dirname "$0")/gpubench-env.sh"
MODELS=resnet18,resnet50,mobilenet_v3_large,efficientnet_b1
BATCHES=1,16
THREADS=8
LAYOUTS=auto
BATCH_GROUPS=auto
ROUNDS=3
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS=$2; shift 2 ;;
    --batches) BATCHES=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --layouts) LAYOUTS=$2; shift 2 ;;
    --batch-groups) BATCH_GROUPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --no-torch) EXTRA+=(--no-torch); shift ;;
    *) echo "bench_cpu_device.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
R=$OUT/cpu
mkdir -p "$R/models"
export XDG_CACHE_HOME=$R/cache  # the database: ucudnn/benchmarks.sqlite under it
(lscpu; free -g) > "$R/machine.txt" 2>&1
"$PYTHON" "$SRC/scripts/bench_cpu.py" --models "$MODELS" --batches "$BATCHES" --threads "$THREADS" \
  --iterations 20 --warmup 3 --rounds "$ROUNDS" --layouts "$LAYOUTS" --batch-groups "$BATCH_GROUPS" \
  --ucudnn "$BIN/ucudnn" --model-dir "$R/models" \
  --json-out "$R/bench.jsonl" "${EXTRA[@]}" 2>&1 | tee "$R/bench.txt"
for model in ${MODELS//,/ }; do
  for batch in ${BATCHES//,/ }; do
    "$BIN/ucudnn" run "$R/models/$model.onnx" --device cpu --threads "$THREADS" --batch "$batch" --profile \
      --quiet --iterations 10 --warmup 2 > "$R/profile_${model}_b$batch.txt" 2>&1
  done
done
# At most 8 files come back from the device (DEVICE.md): the profiles travel as one archive, the database
# gzipped beside it; the models (large; the exporter makes them again) and the rest of the cache are deleted.
(cd "$R" && tar czf profiles.tar.gz profile_*.txt && rm -f profile_*.txt)
DB=$R/cache/ucudnn/benchmarks.sqlite
if [ -f "$DB" ]; then gzip -c "$DB" > "$R/benchmarks.sqlite.gz"; fi
rm -rf "$R/models" "$R/cache"
