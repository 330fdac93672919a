#!/usr/bin/env bash
# Issue 13's benchmark ("fast on every architecture"; results in docs/PERFORMANCE.md). Runs on the device
# machine from a bundle (scripts/device-bundle) or a checkout's build. For each model at the batch given
# (default 128), fp32 with TF32 allowed, inputs and outputs in GPU memory (--device-io), median of 20 after 5:
#   ucudnn default        `ucudnn run` as a user runs it (wr 64 MiB per kernel, --layout auto, CUDA graph auto)
#   ucudnn default, no graph   the same with --cuda-graph off: the CUDA-graph gain
#   ucudnn wd 64 MiB      --policy wd --workspace 64MiB (one budget for the whole network)
#   ucudnn interpreted    the default with UCUDNN_POINTWISE_JIT=0: the gain of generated pointwise kernels
# against PyTorch eager NCHW, eager channels-last and torch.compile (channels-last), cudnn.benchmark on
# (scripts/bench_torch_gpu.py), in the same command; then ratios (torch ms / ucudnn ms: > 1 means ucudnn is
# faster) and peak memory (ucudnn: weights + arena + workspace pool; PyTorch: max_memory_allocated).
# One `--profile` run per model of the default plan goes beside the figures.
#
#   scripts/bench_arch_gpu.sh [--models a,b,...] [--batch 128] [--db PATH] [--no-compile] [--no-torch]
#
# The database starts empty unless --db names one (every kernel of every model is measured: the cold
# optimisation time is printed per model). Everything goes under $OUT/arch; the summary to stdout and
# $OUT/arch/summary.txt.
set -uo pipefail
source "$(dirname "$0")/gpubench-env.sh"
MODELS_LIST=mobilenet_v3_large,efficientnet_b1,densenet169,regnet_y_800mf,mnasnet1_0,resnet50,resnet101,wide_resnet50_2,vgg16
BATCH=128
DB=""
TORCH_FLAGS=()
RUN_TORCH=1
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS_LIST=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --db) DB=$2; shift 2 ;;
    --no-compile) TORCH_FLAGS+=(--no-compile); shift ;;
    --no-torch) RUN_TORCH=0; shift ;;
    *) echo "bench_arch_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
ARCH=$OUT/arch
MODELS=$OUT/models
mkdir -p "$ARCH" "$MODELS"
[ -n "$DB" ] || DB=$ARCH/benchmarks.sqlite
status=0
missing=""
for model in ${MODELS_LIST//,/ }; do [ -f "$MODELS/$model.onnx" ] || missing+="${missing:+,}$model"; done
if [ -n "$missing" ]; then
  gpubench_export_models "$missing" "$MODELS" > "$ARCH/export.log" 2>&1 || { status=1; tail -n 5 "$ARCH/export.log"; }
fi

for model in ${MODELS_LIST//,/ }; do
  onnx=$MODELS/$model.onnx
  [ -f "$onnx" ] || { echo "$model: not exported"; status=1; continue; }
  common=(--device cuda --batch "$BATCH" --db "$DB" --quiet)
  start=$(date +%s%N)
  "$BIN/ucudnn" plan "$onnx" "${common[@]}" -o "$ARCH/$model.default.plan.json" > "$ARCH/$model.plan.log" 2>&1 \
      || status=1
  echo "$model: default plan (cold for its new kernels) $(( ($(date +%s%N) - start) / 1000000 )) ms"
  for variant in default nograph wd64 interpreted; do
    flags=()
    jit=1
    case $variant in
      nograph) flags=(--cuda-graph off) ;;
      wd64) flags=(--policy wd --workspace 64MiB) ;;
      interpreted) jit=0 ;;
    esac
    UCUDNN_POINTWISE_JIT=$jit \
        "$BIN/ucudnn" run "$onnx" "${common[@]}" "${flags[@]}" --device-io --iterations 20 --warmup 5 --json \
        > "$ARCH/$model.$variant.json" 2> "$ARCH/$model.$variant.err" || { status=1; tail -n 3 "$ARCH/$model.$variant.err"; }
  done
  "$BIN/ucudnn" run "$onnx" "${common[@]}" --profile --iterations 1 --warmup 2 > "$ARCH/$model.profile.txt" 2>&1 \
      || status=1
done
if [ "$RUN_TORCH" = 1 ]; then
  rm -f "$ARCH/torch.jsonl"
  "$PYTHON" "$(dirname "$0")/bench_torch_gpu.py" --models "$MODELS_LIST" --batch "$BATCH" "${TORCH_FLAGS[@]}" \
      --json-out "$ARCH/torch.jsonl" > "$ARCH/torch.log" 2>&1 || status=1
fi

"$PYTHON" - "$ARCH" "$MODELS_LIST" "$BATCH" <<'PY' | tee "$ARCH/summary.txt" || status=1
import json, os, sys
arch, models, batch = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
torch_rows = []
if os.path.exists(os.path.join(arch, "torch.jsonl")):
    torch_rows = [json.loads(l) for l in open(os.path.join(arch, "torch.jsonl")) if l.strip()]
def load(path):
    try:
        return json.load(open(path))
    except Exception:
        return None
torch_names = {"eager_nchw": "eager NCHW", "eager_channels_last": "eager CL", "compile_channels_last": "compile CL"}
print(f"batch {batch}, device ms (median of 20, inputs/outputs on the GPU); ratio = torch ms / ucudnn default ms")
head = f"{'model':20} {'default':>8} {'no graph':>8} {'wd64':>8} {'interp':>8} {'MiB':>6}"
for v in torch_names.values():
    head += f" {v:>11} {'MiB':>6} {'ratio':>6}"
print(head)
for m in models:
    runs = {v: load(os.path.join(arch, f"{m}.{v}.json")) for v in ("default", "nograph", "wd64", "interpreted")}
    ms = {v: (r["latency_ms"]["median"] if r else float("nan")) for v, r in runs.items()}
    mem = (runs["default"] or {}).get("memory", {})
    peak = sum(mem.get(k, 0) for k in ("arena_bytes", "weight_bytes", "workspace_bytes")) / 2**20
    line = f"{m:20} {ms['default']:8.3f} {ms['nograph']:8.3f} {ms['wd64']:8.3f} {ms['interpreted']:8.3f} {peak:6.0f}"
    for key in torch_names:
        row = next((r for r in torch_rows if r["model"] == m and r.get("variant") == key and "error" not in r), None)
        if row:
            line += f" {row['device_ms']:11.3f} {row['peak_bytes'] / 2**20:6.0f} {row['device_ms'] / ms['default']:5.2f}x"
        else:
            line += f" {'-':>11} {'-':>6} {'-':>6}"
    print(line)
for r in torch_rows:
    if "error" in r:
        print(f"{r['model']}: torch {r.get('variant', '')} error: {r['error'][:160]}")
PY
exit $status
