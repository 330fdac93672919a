#!/usr/bin/env bash
# One stream against two (Note [side stream], runtime/plan/side_stream.h) on
# the device machine, with everything else equal: per model, batch and layout,
# `ucudnn plan --policy undivided --streams 2` makes one plan; a copy with the
# side-stream marks removed runs the very same algorithms and memory layout on
# one stream. Both run alternately (ABAB), device-resident (--device-io), and the
# medians print as one-stream ms / two-stream ms (> 1: the second stream helps),
# with the activation arena a one-stream plan and the two-stream plan need.
#
#   scripts/bench_streams_gpu.sh [--db PATH] [--models resnet50,resnet18] [--batches 32,256]
set -uo pipefail
source "$(dirname "$0")/gpubench-env.sh"
MODELS_LIST=resnet50,resnet18
BATCHES=32,256
DB=$OUT/streams.sqlite
while [ $# -gt 0 ]; do
  case "$1" in
    --db) DB=$2; shift 2 ;;
    --models) MODELS_LIST=$2; shift 2 ;;
    --batches) BATCHES=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
MODELS=$OUT/models
AB=$OUT/streams
mkdir -p "$AB"
status=0
missing=""
for model in ${MODELS_LIST//,/ }; do [ -f "$MODELS/$model.onnx" ] || missing+="${missing:+,}$model"; done
[ -z "$missing" ] || gpubench_export_models "$missing" "$MODELS" > "$AB/export.log" 2>&1 || status=1

for model in ${MODELS_LIST//,/ }; do
  for batch in ${BATCHES//,/ }; do
    for layout in nchw nhwc; do
      stem=$AB/$model.b$batch.$layout
      "$BIN/ucudnn" plan "$MODELS/$model.onnx" --device cuda --batch "$batch" --policy undivided --workspace 64MiB \
          --layout $layout --streams 2 --db "$DB" --quiet -o "$stem.2.plan.json" > "$stem.plan.log" 2>&1 || { status=1; continue; }
      # The same plan on one stream: drop the side-stream marks.
      "$PYTHON" -c 'import json, sys
plan = json.load(open(sys.argv[1]))
for step in plan["steps"]: step.pop("stream", None)
json.dump(plan, open(sys.argv[2], "w"), indent=1)' "$stem.2.plan.json" "$stem.1.plan.json"
      # What one stream plans for activations (the copy above keeps the two-stream layout).
      "$BIN/ucudnn" plan "$MODELS/$model.onnx" --device cuda --batch "$batch" --policy undivided --workspace 64MiB \
          --layout $layout --db "$DB" --quiet -o "$stem.serial.plan.json" >> "$stem.plan.log" 2>&1 || status=1
      for round in a b; do
        for streams in 1 2; do
          "$BIN/ucudnn" run "$MODELS/$model.onnx" --device cuda --batch "$batch" --plan "$stem.$streams.plan.json" \
              --device-io --iterations 50 --warmup 10 --json > "$stem.$streams.$round.json" 2> "$stem.$streams.$round.err" \
              || status=1
        done
      done
    done
  done
done

"$PYTHON" - "$AB" "$MODELS_LIST" "$BATCHES" <<'PY' | tee "$AB/summary.txt" || status=1
import json, os, statistics, sys
ab, models, batches = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
print(f"{'model':10} {'batch':>5} {'layout':6} {'side':>4} {'1 stream ms':>11} {'2 streams ms':>12} {'ratio':>6}"
      f" {'arena MiB 1/2':>14}")
for m in models:
    for b in batches:
        for layout in ("nchw", "nhwc"):
            stem = os.path.join(ab, f"{m}.b{b}.{layout}")
            try:
                runs = {s: [json.load(open(f"{stem}.{s}.{r}.json")) for r in "ab"] for s in (1, 2)}
                plan = json.load(open(f"{stem}.2.plan.json"))
            except Exception as e:
                print(f"{m:10} {b:>5} {layout:6} missing: {e}")
                continue
            ms = {s: statistics.median(r["latency_ms"]["median"] for r in runs[s]) for s in (1, 2)}
            side = sum(1 for step in plan["steps"] if step.get("stream", 0) == 1)
            serial = json.load(open(f"{stem}.serial.plan.json"))
            arena = {1: serial["arena_bytes"] / 2**20, 2: plan["arena_bytes"] / 2**20}
            print(f"{m:10} {b:>5} {layout:6} {side:>4} {ms[1]:11.3f} {ms[2]:12.3f} {ms[1] / ms[2]:5.3f}x"
                  f" {arena[1]:6.0f} / {arena[2]:<6.0f}")
PY
exit $status
