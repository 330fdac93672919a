# Sourced by scripts/record-h200-db and scripts/bench_optimizer_gpu.sh: finds the
# binaries and sources in a checkout (build/bin, override with UCUDNN_BUILD=DIR)
# or in a device bundle (scripts/device-bundle:
# bin/, tests/, lib/, src/, scripts/), sets LD_LIBRARY_PATH like scripts/device-run
# (bundle libs, cuDNN 9.19 from PyTorch's environment, cuBLAS 13), and OUT.
GPUBENCH_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -x "$GPUBENCH_TOP/bin/ucudnn" ]; then  # a bundle
  BIN=$GPUBENCH_TOP/bin
  TESTS=$GPUBENCH_TOP/tests
  SRC=$GPUBENCH_TOP/src
  export LD_LIBRARY_PATH="$GPUBENCH_TOP/lib:${LD_LIBRARY_PATH:-}"
else
  BUILD=${UCUDNN_BUILD:-$GPUBENCH_TOP/build}
  BIN=$BUILD/bin
  TESTS=$BUILD/tests
  SRC=$GPUBENCH_TOP
fi
CUDNN_DIR=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
if [ -d "$CUDNN_DIR" ]; then export LD_LIBRARY_PATH="$CUDNN_DIR:${LD_LIBRARY_PATH:-}"; fi
CUBLAS_FILE=$(find /opt/torch/.venv /usr/local/cuda* -name 'libcublas.so.13*' 2>/dev/null | head -1)
if [ -n "$CUBLAS_FILE" ]; then export LD_LIBRARY_PATH="$(dirname "$CUBLAS_FILE"):${LD_LIBRARY_PATH:-}"; fi
NCCL_FILE=$(find /opt/torch/.venv /usr/local/cuda* -name 'libnccl.so.2*' 2>/dev/null | head -1)
if [ -n "$NCCL_FILE" ]; then export LD_LIBRARY_PATH="$(dirname "$NCCL_FILE"):${LD_LIBRARY_PATH:-}"; fi
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on the shared machines (device documentation)
PYTHON=${PYTHON:-python3}
OUT=${OUT:-/tmp/ucudnn-out}
mkdir -p "$OUT"

# Exports the torchvision models named in $1 (comma-separated) into $2 with the device's torch.
gpubench_export_models() {
  "$PYTHON" "$SRC/models/export_torchvision.py" --out "$2" --models "$1" --batch 2 --threads 8
}
