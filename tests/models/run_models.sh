#!/usr/bin/env bash
# End-to-end check of real CNNs: export torchvision models with random weights
# (models/export_torchvision.py), run each with `ucudnn run` on the CPU at batch 2,
# and compare with PyTorch's output (tests/models/compare_outputs.py:
# max abs error <= 1e-4 x max |output|).
#
#   run_models.sh --ucudnn PATH --source SRC_DIR --work DIR [--models a,b,...] [--threads N]
#                 [--device cpu|cuda|auto]   (default cpu)  [--layout auto|nchw|nhwc] (GPU)
#
# Exit status: 0 all match, 1 a mismatch or a failed run, 77 when the system
# python lacks torch/torchvision/onnx (CTest's SKIP_RETURN_CODE).
set -u

PYTHON=${PYTHON:-/usr/bin/python3}
UCUDNN=""
SOURCE=""
WORK=""
MODELS="alexnet,resnet18,resnet50,vgg16"
THREADS=2
DEVICE=cpu
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ucudnn) UCUDNN=$2; shift 2 ;;
    --source) SOURCE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --device) DEVICE=$2; shift 2 ;;
    --layout) EXTRA+=(--layout "$2"); shift 2 ;;
    *) echo "run_models.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$UCUDNN" ] || [ -z "$SOURCE" ] || [ -z "$WORK" ]; then
  echo "usage: run_models.sh --ucudnn PATH --source SRC_DIR --work DIR [--models a,b] [--threads N] [--device D]" >&2
  exit 2
fi

if ! "$PYTHON" -c 'import torch, torchvision, onnx, numpy' 2>/dev/null; then
  echo "SKIP: $PYTHON cannot import torch, torchvision, onnx and numpy"
  exit 77
fi
if [ ! -x "$UCUDNN" ]; then
  echo "FAIL: ucudnn CLI not found at $UCUDNN (build target ucudnn_cli)" >&2
  exit 1
fi

mkdir -p "$WORK" || exit 1
# Export (skips models already exported by this version of the script).
if ! "$PYTHON" "$SOURCE/models/export_torchvision.py" --out "$WORK" --models "$MODELS" --batch 2 --threads "$THREADS"; then
  echo "FAIL: export_torchvision.py failed" >&2
  exit 1
fi

status=0
for model in ${MODELS//,/ }; do
  out="$WORK/$model.ucudnn"
  rm -rf "$out"
  mkdir -p "$out"
  echo "== $model"
  # On a GPU: strict FP32 (TF32 is not within the tolerance), and enough runs that the output comes
  # from a replayed CUDA graph.
  runs=(--iterations 1 --warmup 0)
  [ "$DEVICE" = cuda ] && runs=(--iterations 2 --warmup 1 --math fp32)
  if ! "$UCUDNN" run "$WORK/$model.onnx" --input "input=$WORK/$model.input.pb" --batch 2 "${runs[@]}" "${EXTRA[@]}" \
       --device "$DEVICE" --threads "$THREADS" --output-dir "$out"; then
    echo "$model: FAIL: ucudnn run exited with an error" >&2
    status=1
    continue
  fi
  if [ ! -f "$out/output.pb" ]; then
    echo "$model: FAIL: ucudnn wrote no $out/output.pb" >&2
    status=1
    continue
  fi
  "$PYTHON" "$SOURCE/tests/models/compare_outputs.py" "$WORK/$model.output.pb" "$out/output.pb" \
      --rel 1e-4 --label "$model" || status=1
done
exit $status
