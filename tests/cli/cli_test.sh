#!/usr/bin/env bash
# End-to-end checks of the `ucudnn` command line: success paths (info, run,
# --json, --output-dir round trip, --input files, plan → run --plan) and every
# kind of bad input giving a one-line error and a non-zero exit, never a crash.
#
# usage: cli_test.sh UCUDNN SOURCE_DIR WORK_DIR
set -uo pipefail
ucudnn="$1"; src="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
model="$src/models/tiny/tiny_cnn/model.onnx"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error NAME EXPECTED_EXIT PATTERN -- command...
expect_error() {
  local name="$1" code="$2" pattern="$3"; shift 4
  local out rc
  out=$("$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $code ]]; then fail "$name: exit $rc, expected $code ($out)"; return; fi
  if ! grep -q -- "$pattern" <<<"$out"; then fail "$name: stderr '$out' lacks '$pattern'"; return; fi
  if [[ $(wc -l <<<"$out") -ne 1 ]]; then fail "$name: error is not one line: $out"; return; fi
  echo "ok: $name"
}

expect_ok() {
  local name="$1"; shift
  if ! "$@" >"$work/$name.out" 2>"$work/$name.err"; then fail "$name: $(cat "$work/$name.err")"; return 1; fi
  echo "ok: $name"
}

# --- success paths
expect_ok info "$ucudnn" info "$model" && grep -q "Conv" "$work/info.out" || fail "info lists no Conv"
expect_ok run "$ucudnn" run "$model" --batch 3 --iterations 2 --warmup 1
grep -q "output float32\[3, 5\]" "$work/run.out" || fail "run summary lacks the output shape"
expect_ok run_json "$ucudnn" run "$model" --batch 2 --json --iterations 3
python3 - "$work/run_json.out" <<'PY' || fail "run --json is not the documented object"
import json, sys
j = json.load(open(sys.argv[1]))
for key in ("model", "device", "batch", "latency_ms", "throughput_per_s", "peak_memory_bytes"):
    assert key in j, key
assert j["batch"] == 2 and j["device"] == "cpu" and j["io"] == "host"
assert j["plan"] == "wr", j["plan"]  # no --policy: the optimizer's own default
assert set(j["latency_ms"]) >= {"median", "min", "max"} and j["latency_ms"]["min"] <= j["latency_ms"]["median"]
each = j["latency_ms"]["each"]
assert len(each) == 3 and min(each) == j["latency_ms"]["min"] and max(each) == j["latency_ms"]["max"], each
PY
# Outputs written as TensorProto and fed back as an input file of another run.
expect_ok run_outdir "$ucudnn" run "$src/models/tiny/tiny_cnn/model.onnx" --input input="$src/models/tiny/tiny_cnn/test_data_set_0/input_0.pb" --output-dir "$work/out" --iterations 1
[[ -s "$work/out/output.pb" ]] || fail "--output-dir wrote no output.pb"
/usr/bin/python3 - "$work/out/output.pb" "$src/models/tiny/tiny_cnn/test_data_set_0/output_0.pb" <<'PY' || fail "written output differs from the expected one"
import sys
import numpy as np
from onnx import TensorProto, numpy_helper
def load(path):
    t = TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return t.name, numpy_helper.to_array(t)
(name, got), (_, want) = load(sys.argv[1]), load(sys.argv[2])
assert name == "output", name
assert got.shape == want.shape, (got.shape, want.shape)
assert np.allclose(got, want, rtol=1e-4, atol=1e-5), np.abs(got - want).max()
PY
expect_ok plan "$ucudnn" plan "$model" --batch 4 --policy wd --workspace 1MiB --db "$work/bench.sqlite" --quiet -o "$work/plan.json"
expect_ok run_plan "$ucudnn" run "$model" --batch 4 --plan "$work/plan.json" --iterations 1
expect_ok run_policy "$ucudnn" run "$model" --batch 4 --policy wr --workspace 64KiB --db "$work/bench.sqlite" --quiet --iterations 1
# The default plan's timings go to $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite; a model without
# convolutions opens no database at all.
XDG_CACHE_HOME="$work/cache" expect_ok run_default_db "$ucudnn" run "$model" --batch 2 --iterations 1
[[ -s "$work/cache/ucudnn/benchmarks.sqlite" ]] || fail "the default plan stored no timings under XDG_CACHE_HOME"
XDG_CACHE_HOME="$work/cache_noconv" expect_ok run_without_convs "$ucudnn" run "$src/models/tiny/tiny_reshape/model.onnx" --batch 2 --iterations 1
[[ -e "$work/cache_noconv" ]] && fail "a model without convolutions created a benchmark database"
# --workspace unlimited under every policy: plans, runs, and the report says what bounded the timings.
for policy in undivided wr wd; do
  expect_ok "run_unlimited_$policy" "$ucudnn" run "$model" --batch 4 --policy $policy --workspace unlimited --db "$work/bench.sqlite" --iterations 1
done
expect_ok report_unlimited "$ucudnn" report "$model" --batch 4 --workspace unlimited --db "$work/bench.sqlite"
grep -q "per-kernel limit unlimited (benchmarked with the free host memory)" "$work/report_unlimited.out" || fail "report --workspace unlimited does not say so"
# The report's "undivided" total is what --policy undivided runs (same timings, same function), in one
# layout: under --layout auto each plan keeps the layout whose measured run was faster, and under 8 KiB
# NHWC may fit only as micro-batches (Winograd), so the two could run different layouts.
expect_ok report_wr_json "$ucudnn" report "$model" --batch 4 --workspace 8KiB --layout nchw --db "$work/bench.sqlite" --json
expect_ok report_undivided_json "$ucudnn" report "$model" --batch 4 --policy undivided --workspace 8KiB --layout nchw --db "$work/bench.sqlite" --json
python3 - "$work/report_wr_json.out" "$work/report_undivided_json.out" <<'PY' || fail "report's undivided total differs from --policy undivided"
import json, sys
wr, undivided = (json.load(open(p)) for p in sys.argv[1:3])
assert wr["policy"] == "wr" and undivided["policy"] == "undivided"
assert wr["layout"] == undivided["layout"] == "nchw", (wr["layout"], undivided["layout"])
assert wr["totals"]["undivided_ms"] == undivided["totals"]["predicted_ms"], (wr["totals"], undivided["totals"])
PY
expect_ok report_auto_json "$ucudnn" report "$model" --batch 4 --workspace 8KiB --db "$work/bench.sqlite" --json
python3 - "$work/report_auto_json.out" <<'PY' || fail "report --layout auto does not say which layout it chose"
import json, sys
report = json.load(open(sys.argv[1]))
# The report names the layout the plan runs: on a CPU with oneDNN both were planned and the faster
# measured run was kept (it says so); without oneDNN only NCHW is planned, so nothing was chosen between.
if report["layout_choice"] is None:
    assert report["layout"] == "nchw", report["layout"]
else:
    # (NHWC may not be plannable under 8 KiB; then NCHW runs)
    assert report["layout"] in ("nchw", "nhwc") and "nchw" in report["layout_choice"], (report["layout"], report["layout_choice"])
PY
grep -Eq "^layout:   (nchw|nhwc)" "$work/report_unlimited.out" || fail "the text report does not name the layout"

# --- bad input: files
: > "$work/empty.onnx"
head -c 4000 /dev/urandom > "$work/random.onnx"
head -c $(( $(stat -c %s "$model") / 2 )) "$model" > "$work/truncated.onnx"
expect_error missing_model 1 "NotFound\|cannot open\|No such" -- "$ucudnn" run "$work/nope.onnx"
expect_error empty_model 1 "empty" -- "$ucudnn" run "$work/empty.onnx"
expect_error random_model 1 "InvalidModel" -- "$ucudnn" run "$work/random.onnx"
expect_error truncated_model 1 "InvalidModel" -- "$ucudnn" run "$work/truncated.onnx"
expect_error info_truncated 1 "InvalidModel" -- "$ucudnn" info "$work/truncated.onnx"
# An op ucudnn does not implement: named with its node by info (exit 1) and run.
unsupported_model=/usr/share/libonnx-testdata/data/node/test_det_2d/model.onnx
if [[ -f "$unsupported_model" ]]; then
  out=$("$ucudnn" info "$unsupported_model" 2>&1); rc=$?
  if [[ $rc -ne 1 ]] || ! grep -q "Det" <<<"$out"; then fail "info on an unsupported op: exit $rc, output: $out"; else echo "ok: info_unsupported"; fi
  expect_error run_unsupported 1 "Unsupported.*Det" -- "$ucudnn" run "$unsupported_model"
fi
# A known op in a form ucudnn does not run (Resize's tf_crop_and_resize): info imports the model to see it.
unsupported_form=/usr/share/libonnx-testdata/data/node/test_resize_tf_crop_and_resize/model.onnx
if [[ -f "$unsupported_form" ]]; then
  out=$("$ucudnn" info "$unsupported_form" 2>&1); rc=$?
  if [[ $rc -ne 1 ]] || ! grep -q "tf_crop_and_resize" <<<"$out"; then
    fail "info on Resize's tf_crop_and_resize: exit $rc, output: $out"
  else echo "ok: info_unsupported_form"; fi
fi
# --- bad input: flags and inputs
expect_error unknown_flag 2 "unknown flag --frobnicate" -- "$ucudnn" run "$model" --frobnicate
expect_error bad_batch 2 "batch" -- "$ucudnn" run "$model" --batch 0
expect_error bad_device 2 "device" -- "$ucudnn" run "$model" --device tpu
expect_error device_io_on_cpu 2 "device-io needs --device cuda" -- "$ucudnn" run "$model" --device cpu --device-io
expect_error bad_workspace 2 "size" -- "$ucudnn" run "$model" --policy wr --workspace 12parsecs
# Bad option values are usage errors (exit 2), named with the flag, in every command.
expect_error bad_policy 2 "--policy must be undivided, wr or wd, got 'fastest'" -- "$ucudnn" run "$model" --policy fastest --db "$work/bench.sqlite"
expect_error bad_policy_plan 2 "--policy must be" -- "$ucudnn" plan "$model" --policy fastest -o "$work/x.json"
expect_error bad_policy_report 2 "--policy must be" -- "$ucudnn" report "$model" --policy fastest
expect_error bad_math 2 "--math must be tf32 or fp32, got 'bf16'" -- "$ucudnn" run "$model" --math bf16
expect_error bad_batch_sizes 2 "--batch-sizes must be powerOfTwo, all or undivided" -- "$ucudnn" plan "$model" --batch-sizes some -o "$work/x.json"
expect_error bad_layout 2 "--layout must be auto, nchw or nhwc" -- "$ucudnn" report "$model" --layout chwn
# Channels-last on the CPU runs through oneDNN; a build without it says so.
if "$ucudnn" run "$model" --device cpu --layout nhwc --iterations 1 --warmup 0 --db "$work/bench.sqlite" \
     > "$work/nhwc_cpu.log" 2>&1; then
  grep -q "layout nhwc" "$work/nhwc_cpu.log" || fail "nhwc_on_cpu: the run does not say it ran nhwc: $(cat "$work/nhwc_cpu.log")"
else
  grep -q "oneDNN, which this build lacks" "$work/nhwc_cpu.log" || fail "nhwc_on_cpu: $(cat "$work/nhwc_cpu.log")"
fi
expect_error bad_streams 2 "streams must be 1 or 2, got 3" -- "$ucudnn" run "$model" --streams 3
expect_error huge_threads 2 "--threads must be from 0 to 2147483647, got 99999999999" -- "$ucudnn" run "$model" --threads 99999999999
# Integer flags out of range are usage errors naming the flag (strtoll's overflow used to pass, clamped).
expect_error batch_overflow 2 "--batch must be from 1 to 9223372036854775807, got 99999999999999999999999 (beyond 64 bits)" -- "$ucudnn" run "$model" --batch 99999999999999999999999
expect_error batch_negative 2 "--batch must be at least 1, got -4" -- "$ucudnn" plan "$model" --batch -4 -o "$work/x.json"
expect_error batch_not_integer 2 "--batch expects an integer" -- "$ucudnn" report "$model" --batch 8x
expect_error iterations_zero 2 "--iterations must be at least 1, got 0" -- "$ucudnn" run "$model" --iterations 0
expect_error warmup_negative 2 "--warmup must be at least 0, got -1" -- "$ucudnn" run "$model" --warmup -1
expect_error seed_overflow 2 "--seed must be from 0 to 4294967295" -- "$ucudnn" run "$model" --seed 4294967296
expect_error streams_overflow 2 "--streams must be from 1 to" -- "$ucudnn" run "$model" --streams 18446744073709551617
# A batch whose sizes overflow: one clear line and exit 1, not std::bad_alloc (exit 134) or a crash.
expect_error batch_too_large 1 "2^63 bytes" -- "$ucudnn" run "$model" --batch 4611686018427387904
# Every usage error exits 2 in every command.
for cmd in run report; do
  expect_error "bad_policy_$cmd" 2 "--policy must be undivided, wr or wd, got 'xx'" -- "$ucudnn" $cmd "$model" --policy xx
  expect_error "bad_batch_sizes_$cmd" 2 "--batch-sizes must be powerOfTwo, all or undivided, got 'some'" -- "$ucudnn" $cmd "$model" --batch-sizes some
done
expect_error bad_policy_plan_xx 2 "--policy must be undivided, wr or wd, got 'xx'" -- "$ucudnn" plan "$model" -o "$work/x.json" --policy xx
expect_error share_without_wd 2 "share_workspace applies to policy wd" -- "$ucudnn" plan "$model" --share-workspace -o "$work/x.json"
expect_error plan_and_policy 2 "either --plan or --policy" -- "$ucudnn" run "$model" --plan "$work/plan.json" --policy wr
expect_error plan_with_plan 2 "--plan is for run" -- "$ucudnn" plan "$model" --plan "$work/plan.json" -o "$work/x.json"
[[ -e "$work/x.json" ]] && fail "a refused plan command wrote its output"
expect_error wrong_input_name 1 "not a .*input" -- "$ucudnn" run "$model" --input nope="$src/models/tiny/tiny_cnn/test_data_set_0/input_0.pb"
# An input file must be what the model declares: dtype, rank and static dims; its symbolic
# dims set the batch. Refused before anything is planned, naming the input, the file and both shapes.
tiny_input="$src/models/tiny/tiny_cnn/test_data_set_0/input_0.pb"
expect_error wrong_input_shape 1 "input=$tiny_input: the file holds float32\[2, 3, 8, 8\], but the model's input 'input' is float32\[batch, 4, 6, 6\]: dim 1 is 3, not 4" -- "$ucudnn" run "$src/models/tiny/tiny_residual/model.onnx" --input input="$tiny_input"
/usr/bin/python3 - "$work" <<'PY' || fail "could not write the input files"
import sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(0)
for name, shape, dtype in [("x_1x3x9x9", (1, 3, 9, 9), np.float32), ("x_1x4x8x8", (1, 4, 8, 8), np.float32),
                           ("x_2x3x8x8", (2, 3, 8, 8), np.float32), ("x_f64", (1, 3, 8, 8), np.float64),
                           ("x_3x8x8", (3, 8, 8), np.float32)]:
    np.save(f"{work}/{name}.npy", rng.standard_normal(shape).astype(dtype))
PY
expect_error input_larger_spatial 1 "input=$work/x_1x3x9x9.npy: the file holds float32\[1, 3, 9, 9\], but the model's input 'input' is float32\[batch, 3, 8, 8\]: dim 2 is 9, not 8" -- "$ucudnn" run "$model" --input input="$work/x_1x3x9x9.npy"
# Four channels for three: the input is blamed, not the model ("InvalidModel ... channel mismatch" before).
expect_error input_four_channels 1 "InvalidArgument: --input input=$work/x_1x4x8x8.npy: .*dim 1 is 4, not 3" -- "$ucudnn" run "$model" --input input="$work/x_1x4x8x8.npy"
expect_error input_wrong_rank 1 "float32\[3, 8, 8\], but the model's input 'input' is float32\[batch, 3, 8, 8\]: rank 3, not 4" -- "$ucudnn" run "$model" --input input="$work/x_3x8x8.npy"
expect_error input_wrong_dtype 1 "the file holds float64\[1, 3, 8, 8\], but the model's input 'input' is float32\[batch, 3, 8, 8\]: the dtypes differ" -- "$ucudnn" run "$model" --input input="$work/x_f64.npy"
expect_error input_batch_vs_flag 1 "x_2x3x8x8.npy: .*dim 0 is 2 (batch), but --batch is 3; drop --batch" -- "$ucudnn" run "$model" --batch 3 --input input="$work/x_2x3x8x8.npy"
expect_error input_twice 2 "--input names 'input' twice" -- "$ucudnn" run "$model" --input input="$work/x_2x3x8x8.npy" --input input="$tiny_input"
expect_error input_malformed 2 "--input expects NAME=FILE, got 'input'" -- "$ucudnn" run "$model" --input input
# Without --batch the batch is the file's: the summary says so and the throughput counts it.
expect_ok input_sets_batch "$ucudnn" run "$model" --input input="$work/x_2x3x8x8.npy" --iterations 2 --warmup 0
grep -q "batch 2," "$work/input_sets_batch.out" || fail "run with a batch-2 input file does not report batch 2: $(cat "$work/input_sets_batch.out")"
grep -q "output float32\[2, 5\]" "$work/input_sets_batch.out" || fail "run with a batch-2 input file gives no [2, 5] output"
expect_ok input_sets_batch_json "$ucudnn" run "$model" --input input="$work/x_2x3x8x8.npy" --iterations 2 --warmup 0 --json
python3 - "$work/input_sets_batch_json.out" <<'PY' || fail "run --json with a batch-2 input file: batch or throughput not the file's"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["batch"] == 2, j["batch"]
assert abs(j["throughput_per_s"] - 2 * 1000.0 / j["latency_ms"]["median"]) <= 1e-6 * j["throughput_per_s"], j
PY
expect_ok input_same_batch_flag "$ucudnn" run "$model" --batch 2 --input input="$work/x_2x3x8x8.npy" --iterations 1 --warmup 0
# int64 files are given at load as constants: a Reshape whose target is a graph input runs.
/usr/bin/python3 - "$work" <<'PY' || fail "could not write the Reshape-by-input model"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
work = sys.argv[1]
graph = helper.make_graph([helper.make_node("Reshape", ["x", "target"], ["y"])], "reshape_by_input",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6]),
                           helper.make_tensor_value_info("target", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/reshape_by_input.onnx")
np.save(f"{work}/target.npy", np.array([3, -1], dtype=np.int64))
np.save(f"{work}/x_2x6.npy", np.arange(12, dtype=np.float32).reshape(2, 6))
PY
expect_ok run_shape_input "$ucudnn" run "$work/reshape_by_input.onnx" --input target="$work/target.npy" --input x="$work/x_2x6.npy" --iterations 1 --warmup 0 --output-dir "$work/reshape_out"
/usr/bin/python3 - "$work/reshape_out/y.pb" <<'PY' || fail "the Reshape by an int64 input file gave the wrong output"
import sys
import numpy as np
from onnx import TensorProto, numpy_helper
t = TensorProto()
t.ParseFromString(open(sys.argv[1], "rb").read())
y = numpy_helper.to_array(t)
assert y.shape == (3, 4) and np.array_equal(y, np.arange(12, dtype=np.float32).reshape(3, 4)), y
PY
expect_error run_shape_input_missing 1 "must be known when the model is loaded.*graph input 'target'.*--input target=FILE" -- "$ucudnn" run "$work/reshape_by_input.onnx"
# (Through a file: with pipefail, grep -q closing the pipe at its match could fail the writer.)
"$ucudnn" run --help > "$work/run_help.txt" 2>&1
grep -q "int64 files" "$work/run_help.txt" || fail "run --help does not say int64 input files are given at load"
expect_error missing_input_file 1 "nope.pb" -- "$ucudnn" run "$model" --input input="$work/nope.pb"
# A plan for another batch, and a corrupt plan, are refused.
expect_error plan_other_batch 1 "another model or input shape" -- "$ucudnn" run "$model" --batch 5 --plan "$work/plan.json"
echo '{"format": "ucudnn-plan", "version": 1' > "$work/broken_plan.json"
expect_error plan_corrupt 1 "malformed plan" -- "$ucudnn" run "$model" --plan "$work/broken_plan.json"
# A corrupt benchmark database: clear error, file left alone.
head -c 8192 /dev/urandom > "$work/corrupt.sqlite"
before=$(md5sum < "$work/corrupt.sqlite")
expect_error corrupt_db 1 "corrupt.sqlite" -- "$ucudnn" plan "$model" --batch 2 --policy wr --db "$work/corrupt.sqlite" --quiet -o "$work/p2.json"
[[ "$(md5sum < "$work/corrupt.sqlite")" == "$before" ]] || fail "the corrupt database was modified without --rebenchmark"
# An existing output file is not clobbered by a failing plan.
echo keep > "$work/keep.json"
expect_error plan_fails_keeps_file 1 "InvalidModel" -- "$ucudnn" plan "$work/truncated.onnx" -o "$work/keep.json"
[[ "$(cat "$work/keep.json")" == keep ]] || fail "a failed plan overwrote its output file"
# --profile: a by-op table naming Conv, and profile.by_op / profile.slowest in --json.
expect_ok run_profile "$ucudnn" run "$model" --batch 2 --iterations 1 --warmup 0 --profile
grep -qE "^  Conv +[0-9]+ +[0-9.]+ +[0-9.]+$" "$work/run_profile.out" || fail "run --profile prints no Conv row in the by-op table"
grep -q "slowest nodes" "$work/run_profile.out" || fail "run --profile prints no slowest nodes"
expect_ok run_profile_json "$ucudnn" run "$model" --batch 2 --iterations 1 --warmup 0 --profile --json
python3 - "$work/run_profile_json.out" <<'PY' || fail "run --profile --json lacks profile.by_op / profile.slowest / profile.steps"
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
ops = {row["op"]: row for row in p["by_op"]}
assert "Conv" in ops and "copy" in ops, ops
assert all(row["ms"] >= 0 and row["count"] >= 1 for row in p["by_op"])
assert abs(sum(row["ms"] for row in p["by_op"]) - p["total_ms"]) < 1e-6 * max(1.0, p["total_ms"])
assert 0 < len(p["slowest"]) <= 10 and all(s["op"] != "copy" for s in p["slowest"])
assert [s["ms"] for s in p["slowest"]] == sorted((s["ms"] for s in p["slowest"]), reverse=True)
steps = p["steps"]  # every step in run order: the input copy first, the output copy last
assert steps[0]["node"] == "copy inputs in" and steps[-1]["node"] == "copy outputs out", steps
assert sum(1 for s in steps if s["op"] != "copy") == sum(row["count"] for row in p["by_op"] if row["op"] != "copy")
assert abs(sum(s["ms"] for s in steps) - p["total_ms"]) < 1e-6 * max(1.0, p["total_ms"])
PY
expect_ok run_no_profile_json "$ucudnn" run "$model" --iterations 1 --json
grep -q '"profile"' "$work/run_no_profile_json.out" && fail "run --json without --profile has a profile"

# --- training: ucudnn train / eval on a tiny IDX data set (8x8 images, 5 classes) -------------
tmodel="$src/tests/data/training/tiny_bn_cnn_sgd/model.onnx"   # input [4, 1, 8, 8], 5 classes
python3 - "$work/idx" <<'PY'
import os, struct, sys
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
def write(name, count, classes):
    pixels = bytes((i * 37 + (i // 64) * 11) % 256 for i in range(count * 64))
    with open(os.path.join(out, f"{name}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, count, 8, 8) + pixels)
    with open(os.path.join(out, f"{name}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, count) + bytes(i % classes for i in range(count)))
write("train", 32, 5); write("t10k", 10, 5)
os.makedirs(out + "_ten", exist_ok=True)
for name in ("train", "t10k"):
    for kind in ("images-idx3", "labels-idx1"):
        src = os.path.join(out, f"{name}-{kind}-ubyte")
        data = open(src, "rb").read()
        if kind.startswith("labels"):
            data = data[:8] + bytes(i % 10 for i in range(len(data) - 8))  # labels 0..9: too many classes
        open(os.path.join(out + "_ten", f"{name}-{kind}-ubyte"), "wb").write(data)
PY
expect_ok info_trainable "$ucudnn" info "$src/tests/data/training/tiny_two_bn_fresh/model.onnx" --trainable
grep -q "trainable:  8 parameters" "$work/info_trainable.out" || fail "info --trainable does not count the 8 parameters (merged BatchNorm initializers apart)"
train_flags=(--data "$work/idx" --lr 0.05 --momentum 0.9 --seed 3 --db "$work/train.sqlite" --quiet)
expect_ok train_two_epochs "$ucudnn" train "$tmodel" "${train_flags[@]}" --epochs 2 --save "$work/straight.onnx"
grep -q "val top-1" "$work/train_two_epochs.out" || fail "train prints no validation accuracy"
expect_ok train_one_epoch "$ucudnn" train "$tmodel" "${train_flags[@]}" --epochs 1 --checkpoint "$work/ck"
expect_ok train_resumed "$ucudnn" train "$tmodel" "${train_flags[@]}" --epochs 2 --resume "$work/ck" --save "$work/resumed.onnx"
cmp -s "$work/straight.onnx" "$work/resumed.onnx" || fail "two epochs resumed after one differ from two straight epochs"
expect_ok eval_trained "$ucudnn" eval "$work/resumed.onnx" --data "$work/idx" --json
grep -q '"top1"' "$work/eval_trained.out" || fail "eval --json has no top1"
expect_ok train_json "$ucudnn" train "$tmodel" --synthetic --steps 3 --json --db "$work/train.sqlite"
[[ $(grep -c '"event":"step"' "$work/train_json.out") -eq 3 ]] || fail "train --json does not print one line per step"
expect_error train_no_data 1 "no such directory" -- "$ucudnn" train "$tmodel" --data "$work/nowhere"
expect_error train_bad_optimizer 2 "sgd or adamw" -- "$ucudnn" train "$tmodel" --synthetic --optimizer adam
expect_error train_data_and_synthetic 2 "either --data" -- "$ucudnn" train "$tmodel" --synthetic --data "$work/idx"
expect_error train_too_many_classes 1 "10 classes" -- "$ucudnn" train "$tmodel" --data "$work/idx_ten" --quiet
expect_error train_bad_schedule 2 "schedule" -- "$ucudnn" train "$tmodel" --synthetic --schedule cosine,min_lr=x
expect_error resume_other_model 1 "another model" -- "$ucudnn" train "$src/tests/data/training/tiny_two_bn_fresh/model.onnx" "${train_flags[@]}" --resume "$work/ck"
head -c 100 "$work/ck/last.ckpt" > "$work/cut.ckpt"
expect_error resume_truncated 1 "cut.ckpt" -- "$ucudnn" train "$tmodel" "${train_flags[@]}" --resume "$work/cut.ckpt"

if [[ $failures -ne 0 ]]; then echo "$failures CLI check(s) failed"; exit 1; fi
echo "all CLI checks passed"
