#!/usr/bin/env bash
# Checks the GPU on the networks the inference passes rewrite (issue 15's ninth part; device-run checks
# the plain ones), on ConvNeXt (LayerNorm, GELU, Linear layers) and on two segmentation networks (dilated
# convolutions, Resize). Each model is exported with the device's torch (opset 13, or --opset's: 17 writes
# LayerNormalization), then rewritten into the forms other
# exporters write (models/rewrite_exported_forms.py: mean, pad, pad_same). Each is run by
# `ucudnn run --device cuda --math fp32` in NCHW and in NHWC, batch 2:
#   - the model and its mean and pad forms against PyTorch's output;
#   - pad_same (no PyTorch output: TensorFlow's pads) against ucudnn's CPU run of it.
# One line per run to stdout and $OUT/models_gpu/summary.txt; exit 1 if any run fails or differs.
#
#   scripts/check_models_gpu.sh [--models a,b,...] [--opset N]   (from a bundle: scripts/device-bundle)
set -uo pipefail
source "$(dirname "$0")/gpubench-env.sh"
OPSET=13
MODELS=shufflenet_v2_x1_0,mnasnet1_0,densenet121,efficientnet_b1,mobilenet_v3_large,regnet_y_800mf,convnext_tiny,lraspp_mobilenet_v3_large,deeplabv3_mobilenet_v3_large
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS=$2; shift 2 ;;
    --opset) OPSET=$2; shift 2 ;;
    *) echo "check_models_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
R=$OUT/models_gpu
mkdir -p "$R/onnx"
SUMMARY=$R/summary.txt
: > "$SUMMARY"
status=0
"$PYTHON" "$SRC/models/export_torchvision.py" --out "$R/onnx" --models "$MODELS" --opset "$OPSET" \
  --batch 2 --threads 8 > "$R/export.log" 2>&1 || { echo "export failed: $(tail -n 3 "$R/export.log")" | tee -a "$SUMMARY"; status=1; }

# run MODEL_FILE DEVICE LAYOUT OUT_DIR: one run of batch 2 on the exported input, its output in OUT_DIR.
run() {
  "$BIN/ucudnn" run "$1" --device "$2" --layout "$3" --math fp32 --batch 2 --quiet --iterations 1 --warmup 0 \
    --input "input=$INPUT" --output-dir "$4" >> "$R/runs.log" 2>&1
}
# check LABEL WANT GOT: compares, one line to the summary.
check() {
  "$PYTHON" "$SRC/tests/models/compare_outputs.py" "$2" "$3" --rel 1e-3 --label "$1" 2>&1 | tee -a "$SUMMARY"
  return "${PIPESTATUS[0]}"
}

for model in ${MODELS//,/ }; do
  INPUT=$R/onnx/$model.input.pb
  [ -f "$R/onnx/$model.onnx" ] || { echo "$model: not exported" | tee -a "$SUMMARY"; status=1; continue; }
  for form in plain mean pad pad_same; do
    file=$R/onnx/$model.onnx
    if [ $form != plain ]; then
      file=$R/onnx/${model}_$form.onnx
      "$PYTHON" "$SRC/models/rewrite_exported_forms.py" "$R/onnx/$model.onnx" "$file" --form $form \
        >> "$R/rewrite.log" 2>&1
      rewritten=$?
      if [ $rewritten = 3 ]; then echo "$model $form: nothing to rewrite" >> "$SUMMARY"; continue; fi
      if [ $rewritten != 0 ]; then
        echo "$model $form: the rewrite failed ($(tail -n 1 "$R/rewrite.log"))" | tee -a "$SUMMARY"; status=1; continue
      fi
    fi
    want=$R/onnx/$model.output.pb
    if [ $form = pad_same ]; then
      run "$file" cpu nchw "$R/out_${model}_${form}_cpu" || { echo "$model $form cpu: run failed" | tee -a "$SUMMARY"; status=1; continue; }
      want=$R/out_${model}_${form}_cpu/output.pb
    fi
    for layout in nchw nhwc; do
      out=$R/out_${model}_${form}_$layout
      if ! run "$file" cuda $layout "$out"; then
        echo "$model $form cuda $layout: run failed ($(tail -n 1 "$R/runs.log"))" | tee -a "$SUMMARY"; status=1
        continue
      fi
      check "$model $form cuda $layout" "$want" "$out/output.pb" || status=1
    done
  done
done
rm -rf "$R"/onnx "$R"/out_*  # large; the exporter makes them again
exit $status
