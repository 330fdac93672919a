#!/usr/bin/env bash
# The optimizer's GPU benchmarks (issue 4, "Benchmarks"; results go in
# docs/PERFORMANCE.md). Runs on the device machine, after scripts/record-h200-db
# (whose database it reuses; without one it benchmarks first). For AlexNet and
# ResNet-50 at batch 256, fp32 with TF32 allowed:
#  (a) ucudnn_bench_convs: measured sum of convolution kernel times of the plans
#      for undivided / wr / wd at 8, 64, 512 MiB and undivided with unlimited
#      workspace, with the predicted sums beside them (items 1 and 3);
#  (b) whole network: `ucudnn plan --policy wd --workspace 64MiB` then
#      `ucudnn run --plan ... --json` (the CUDA session takes saved plans; it
#      cannot plan wr/wd itself yet), the CUDA default (undivided) for
#      reference, against PyTorch eager and torch.compile (scripts/bench_torch_gpu.py);
#  (c) ResNet-50 optimisation time cold (empty database; from record-h200-db's
#      log when present, else measured here) and warm.
# Everything goes under $OUT/bench; a summary goes to stdout and $OUT/bench/summary.txt.
#
# (b) also runs wd with --share-workspace (convolutions never overlap on one
# stream, so they may share bytes).
#
#   scripts/bench_optimizer_gpu.sh [--db PATH] [--models alexnet,resnet50] [--batch 256] [--no-compile]
#                                  [--no-convs] (skip (a))
set -uo pipefail
source "$(dirname "$0")/gpubench-env.sh"
MODELS_LIST=alexnet,resnet50
BATCH=256
DB=$OUT/h200_benchmarks.sqlite
TORCH_FLAGS=()
NO_CONVS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --db) DB=$2; shift 2 ;;
    --models) MODELS_LIST=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --no-compile) TORCH_FLAGS+=(--no-compile); shift ;;
    --no-convs) NO_CONVS=1; shift ;;
    *) echo "bench_optimizer_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
BENCH=$OUT/bench
MODELS=$OUT/models
mkdir -p "$BENCH" "$MODELS"
status=0
missing=""
for model in ${MODELS_LIST//,/ }; do [ -f "$MODELS/$model.onnx" ] || missing+="${missing:+,}$model"; done
if [ -n "$missing" ]; then
  gpubench_export_models "$missing" "$MODELS" > "$BENCH/export.log" 2>&1 || status=1
fi

echo "== (c) optimisation time (ResNet-50, batch $BATCH, wr 64MiB)"
if [ -f "$OUT/record/optimize_times.jsonl" ]; then
  grep '"resnet50"' "$OUT/record/optimize_times.jsonl" | tee "$BENCH/optimize_times.jsonl"
elif [ -f "$MODELS/resnet50.onnx" ]; then
  rm -f "$BENCH/cold.sqlite"
  for pass in cold warm; do
    "$BIN/ucudnn" plan "$MODELS/resnet50.onnx" --device cuda --batch "$BATCH" --policy wr --workspace 64MiB \
        --db "$BENCH/cold.sqlite" --quiet -o "$BENCH/resnet50.$pass.plan.json" > "$BENCH/resnet50.$pass.plan.log" 2>&1 \
        || status=1
    echo "resnet50 $pass: $(grep -E 'kernels:|time:' "$BENCH/resnet50.$pass.plan.log" | tr '\n' ' ')" \
        | tee -a "$BENCH/optimize_times.txt"
  done
  [ -f "$DB" ] || DB=$BENCH/cold.sqlite
fi

for model in ${MODELS_LIST//,/ }; do
  onnx=$MODELS/$model.onnx
  [ -f "$onnx" ] || { echo "$model: not exported"; status=1; continue; }
  if [ "$NO_CONVS" = 0 ]; then
  echo "== (a) $model: convolution time per policy and workspace"
  "$BIN/ucudnn_bench_convs" "$onnx" --batch "$BATCH" --db "$DB" --json-out "$BENCH/convs.jsonl" \
      > "$BENCH/$model.convs.txt" 2> "$BENCH/$model.convs.err" || status=1
  grep -v '^JSON ' "$BENCH/$model.convs.txt"; tail -n 3 "$BENCH/$model.convs.err"
  fi

  echo "== (b) $model: whole network"
  "$BIN/ucudnn" plan "$onnx" --device cuda --batch "$BATCH" --policy wd --workspace 64MiB --db "$DB" --quiet \
      -o "$BENCH/$model.wd64.plan.json" > "$BENCH/$model.wd64.plan.log" 2>&1 || status=1
  "$BIN/ucudnn" run "$onnx" --device cuda --batch "$BATCH" --plan "$BENCH/$model.wd64.plan.json" \
      --iterations 20 --warmup 5 --json > "$BENCH/$model.wd64.run.json" 2> "$BENCH/$model.wd64.run.err" || status=1
  "$BIN/ucudnn" plan "$onnx" --device cuda --batch "$BATCH" --policy wd --workspace 64MiB --share-workspace \
      --db "$DB" --quiet -o "$BENCH/$model.wd64s.plan.json" > "$BENCH/$model.wd64s.plan.log" 2>&1 || status=1
  "$BIN/ucudnn" run "$onnx" --device cuda --batch "$BATCH" --plan "$BENCH/$model.wd64s.plan.json" \
      --iterations 20 --warmup 5 --json > "$BENCH/$model.wd64s.run.json" 2> "$BENCH/$model.wd64s.run.err" || status=1
  "$BIN/ucudnn" run "$onnx" --device cuda --batch "$BATCH" --workspace 64MiB \
      --iterations 20 --warmup 5 --json > "$BENCH/$model.default.run.json" 2> "$BENCH/$model.default.run.err" || status=1
done
"$PYTHON" "$(dirname "$0")/bench_torch_gpu.py" --models "$MODELS_LIST" --batch "$BATCH" "${TORCH_FLAGS[@]}" \
    --json-out "$BENCH/torch.jsonl" > "$BENCH/torch.log" 2>&1 || status=1
tail -n 2 "$BENCH/torch.log"

# Summary: ucudnn (host-to-host latency, like torch's host_ms) against each torch variant.
"$PYTHON" - "$BENCH" "$MODELS_LIST" "$BATCH" <<'PY' | tee "$BENCH/summary.txt" || status=1
import json, os, sys
bench, models, batch = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
torch_rows = []
if os.path.exists(os.path.join(bench, "torch.jsonl")):
    torch_rows = [json.loads(l) for l in open(os.path.join(bench, "torch.jsonl")) if l.strip()]
def run_ms(path):
    try:
        return json.load(open(path))["latency_ms"]["median"]
    except Exception:
        return None
print(f"{'model':10} {'variant':24} {'host_ms':>9} {'device_ms':>9} {'img/s(host)':>11}  ucudnn/torch speed: wd64, wd64 shared (host)")
for m in models:
    wd = run_ms(os.path.join(bench, f"{m}.wd64.run.json"))
    shared = run_ms(os.path.join(bench, f"{m}.wd64s.run.json"))
    default = run_ms(os.path.join(bench, f"{m}.default.run.json"))
    for label, ms in (("ucudnn wd 64MiB", wd), ("ucudnn wd 64MiB shared", shared), ("ucudnn undivided 64MiB", default)):
        print(f"{m:10} {label:24} {ms if ms else float('nan'):9.3f} {'':>9} "
              f"{(batch * 1000.0 / ms) if ms else float('nan'):11.1f}")
    for r in torch_rows:
        if r["model"] != m:
            continue
        if "error" in r:
            print(f"{m:10} {r.get('variant', 'torch'):24} error: {r['error'][:120]}")
            continue
        ratio = r["host_ms"] / wd if wd else float("nan")
        ratio_shared = r["host_ms"] / shared if shared else float("nan")
        print(f"{m:10} {r['variant']:24} {r['host_ms']:9.3f} {r['device_ms']:9.3f} {r['img_per_s_host']:11.1f}  "
              f"{ratio:.2f}x, {ratio_shared:.2f}x")
PY
exit $status
