#!/usr/bin/env bash
# The optimizer's GPU benchmarks (issue 4, "Benchmarks"; results go in
# docs/PERFORMANCE.md). Runs on the device machine, after scripts/record-h200-db
# (whose database it reuses; without one it benchmarks first). For AlexNet and
# ResNet-50 at batch 256, fp32 with TF32 allowed:
#  (a) ucudnn_bench_convs, NCHW and NHWC: measured sum of convolution kernel times of the plans
#      for undivided / wr / wd at 8, 64, 512 MiB and undivided with unlimited
#      workspace, with the predicted sums beside them (items 1 and 3);
#  (b) whole network, in both layouts: `ucudnn plan --policy wd --workspace 64MiB
#      [--share-workspace] [--streams 2] --layout L` then `ucudnn run --plan ... --json`, host
#      to host and with --device-io (inputs and outputs in GPU memory), and the
#      CUDA default (wr 64 MiB per kernel, --layout auto; undivided before 2026-12-03), against PyTorch eager (NCHW and
#      channels-last) and torch.compile (scripts/bench_torch_gpu.py), with peak
#      device memory; one --profile run of the NHWC shared plan;
#  (c) ResNet-50 optimisation time cold (empty database; from record-h200-db's
#      log when present, else measured here) and warm;
#  one stream against two (Note [side stream]) is scripts/bench_streams_gpu.sh.
# Everything goes under $OUT/bench; a summary goes to stdout and $OUT/bench/summary.txt.
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
  for layout in nchw nhwc; do
    echo "== (a) $model ($layout): convolution time per policy and workspace"
    "$BIN/ucudnn_bench_convs" "$onnx" --batch "$BATCH" --db "$DB" --layout $layout --json-out "$BENCH/convs.jsonl" \
        > "$BENCH/$model.$layout.convs.txt" 2> "$BENCH/$model.$layout.convs.err" || status=1
    grep -v '^JSON ' "$BENCH/$model.$layout.convs.txt"; tail -n 3 "$BENCH/$model.$layout.convs.err"
  done
  fi

  echo "== (b) $model: whole network"
  # Per layout: wd 64MiB (the paper's sum budget) and wd 64MiB --share-workspace,
  # each run host to host and with --device-io (inputs/outputs kept in GPU memory,
  # as PyTorch's device_ms); then the default session (wr 64 MiB, --layout auto).
  for layout in nchw nhwc; do
    for variant in wd64 wd64s wd64x2 wd64sx2; do
      share=(); case $variant in wd64s*) share=(--share-workspace) ;; esac
      share+=(--streams "$([ "${variant%x2}" = "$variant" ] && echo 1 || echo 2)")
      plan=$BENCH/$model.$layout.$variant.plan.json
      "$BIN/ucudnn" plan "$onnx" --device cuda --batch "$BATCH" --policy wd --workspace 64MiB "${share[@]}" \
          --layout $layout --db "$DB" --quiet -o "$plan" > "$plan.log" 2>&1 || status=1
      for io in host device; do
        flags=(); [ "$io" = device ] && flags=(--device-io)
        "$BIN/ucudnn" run "$onnx" --device cuda --batch "$BATCH" --plan "$plan" "${flags[@]}" \
            --iterations 20 --warmup 5 --json > "$BENCH/$model.$layout.$variant.$io.json" \
            2> "$BENCH/$model.$layout.$variant.$io.err" || status=1
      done
    done
  done
  for io in host device; do
    flags=(); [ "$io" = device ] && flags=(--device-io)
    "$BIN/ucudnn" run "$onnx" --device cuda --batch "$BATCH" --workspace 64MiB "${flags[@]}" \
        --iterations 20 --warmup 5 --json > "$BENCH/$model.default.$io.json" 2> "$BENCH/$model.default.$io.err" \
        || status=1
  done
  "$BIN/ucudnn" run "$onnx" --device cuda --batch "$BATCH" --plan "$BENCH/$model.nhwc.wd64s.plan.json" --profile \
      --iterations 1 --warmup 2 > "$BENCH/$model.nhwc.wd64s.profile.txt" 2>&1 || status=1
done
"$PYTHON" "$(dirname "$0")/bench_torch_gpu.py" --models "$MODELS_LIST" --batch "$BATCH" "${TORCH_FLAGS[@]}" \
    --json-out "$BENCH/torch.jsonl" > "$BENCH/torch.log" 2>&1 || status=1
tail -n 2 "$BENCH/torch.log"

# Summary: each ucudnn variant against each torch variant, device-resident
# (ucudnn --device-io vs torch device_ms) and host to host, with peak memory.
"$PYTHON" - "$BENCH" "$MODELS_LIST" "$BATCH" <<'PY' | tee "$BENCH/summary.txt" || status=1
import json, os, sys
bench, models, batch = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
torch_rows = []
if os.path.exists(os.path.join(bench, "torch.jsonl")):
    torch_rows = [json.loads(l) for l in open(os.path.join(bench, "torch.jsonl")) if l.strip()]
def load(path):
    try:
        return json.load(open(path))
    except Exception:
        return None
def mib(b):
    return f"{b / 2**20:8.0f}" if b else f"{'?':>8}"
for m in models:
    torch_ok = [r for r in torch_rows if r["model"] == m and "error" not in r]
    for r in torch_rows:
        if r["model"] == m and "error" in r:
            print(f"{m}: torch {r.get('variant', '')} error: {r['error'][:160]}")
    print(f"\n{m}, batch {batch}: ms (median); speed ratio = torch ms / ucudnn ms (> 1: ucudnn faster)")
    head = f"{'variant':34} {'device ms':>9} {'host ms':>9} {'peak MiB':>8}"
    print(head + "".join(f"  {'vs ' + r['variant'] + ' dev/host':>36}" for r in torch_ok))
    names = {"wd64": "wd64", "wd64s": "wd64 shared", "wd64x2": "wd64 2 streams", "wd64sx2": "wd64 shared 2 streams"}
    variants = [(f"ucudnn {l} {names[v]}", f"{m}.{l}.{v}") for l in ("nchw", "nhwc")
                for v in names] + [("ucudnn default (auto, wr 64 MiB)", f"{m}.default")]
    for label, stem in variants:
        dev, host = load(os.path.join(bench, stem + ".device.json")), load(os.path.join(bench, stem + ".host.json"))
        d = dev["latency_ms"]["median"] if dev else None
        h = host["latency_ms"]["median"] if host else None
        mem = (dev or host or {}).get("memory", {})
        peak = sum(mem.get(k, 0) for k in ("arena_bytes", "weight_bytes", "workspace_bytes"))
        ratio = lambda torch_ms, ms: f"{torch_ms / ms:.2f}x" if ms else "?"
        cells = "".join(f"  {ratio(r['device_ms'], d) + ' / ' + ratio(r['host_ms'], h):>36}" for r in torch_ok)
        print(f"{label:34} {d or float('nan'):9.3f} {h or float('nan'):9.3f} {mib(peak)}{cells}")
    for r in torch_ok:
        print(f"{'torch ' + r['variant']:34} {r['device_ms']:9.3f} {r['host_ms']:9.3f} {mib(r.get('peak_bytes'))}")
PY
exit $status
