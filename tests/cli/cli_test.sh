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
# The report's "undivided" total is what --policy undivided runs (same timings, same function).
expect_ok report_wr_json "$ucudnn" report "$model" --batch 4 --workspace 8KiB --db "$work/bench.sqlite" --json
expect_ok report_undivided_json "$ucudnn" report "$model" --batch 4 --policy undivided --workspace 8KiB --db "$work/bench.sqlite" --json
python3 - "$work/report_wr_json.out" "$work/report_undivided_json.out" <<'PY' || fail "report's undivided total differs from --policy undivided"
import json, sys
wr, undivided = (json.load(open(p)) for p in sys.argv[1:3])
assert wr["policy"] == "wr" and undivided["policy"] == "undivided"
assert wr["totals"]["undivided_ms"] == undivided["totals"]["predicted_ms"], (wr["totals"], undivided["totals"])
PY

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
unsupported_model=/usr/share/libonnx-testdata/data/node/test_abs/model.onnx
if [[ -f "$unsupported_model" ]]; then
  out=$("$ucudnn" info "$unsupported_model" 2>&1); rc=$?
  if [[ $rc -ne 1 ]] || ! grep -q "Abs" <<<"$out"; then fail "info on an unsupported op: exit $rc, output: $out"; else echo "ok: info_unsupported"; fi
  expect_error run_unsupported 1 "Unsupported.*Abs" -- "$ucudnn" run "$unsupported_model"
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
expect_error nhwc_on_cpu 2 "layout nhwc is a GPU layout" -- "$ucudnn" run "$model" --device cpu --layout nhwc
expect_error bad_streams 2 "streams must be 1 or 2, got 3" -- "$ucudnn" run "$model" --streams 3
expect_error huge_threads 2 "--threads is too large" -- "$ucudnn" run "$model" --threads 99999999999
expect_error share_without_wd 2 "share_workspace applies to policy wd" -- "$ucudnn" plan "$model" --share-workspace -o "$work/x.json"
expect_error plan_and_policy 2 "either --plan or --policy" -- "$ucudnn" run "$model" --plan "$work/plan.json" --policy wr
expect_error plan_with_plan 2 "--plan is for run" -- "$ucudnn" plan "$model" --plan "$work/plan.json" -o "$work/x.json"
[[ -e "$work/x.json" ]] && fail "a refused plan command wrote its output"
expect_error wrong_input_name 1 "not a .*input" -- "$ucudnn" run "$model" --input nope="$src/models/tiny/tiny_cnn/test_data_set_0/input_0.pb"
expect_error wrong_input_shape 1 "input" -- "$ucudnn" run "$src/models/tiny/tiny_residual/model.onnx" --input input="$src/models/tiny/tiny_cnn/test_data_set_0/input_0.pb"
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
python3 - "$work/run_profile_json.out" <<'PY' || fail "run --profile --json lacks profile.by_op / profile.slowest"
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
ops = {row["op"]: row for row in p["by_op"]}
assert "Conv" in ops and "copy" in ops, ops
assert all(row["ms"] >= 0 and row["count"] >= 1 for row in p["by_op"])
assert abs(sum(row["ms"] for row in p["by_op"]) - p["total_ms"]) < 1e-6 * max(1.0, p["total_ms"])
assert 0 < len(p["slowest"]) <= 10 and all(s["op"] != "copy" for s in p["slowest"])
assert [s["ms"] for s in p["slowest"]] == sorted((s["ms"] for s in p["slowest"]), reverse=True)
PY
expect_ok run_no_profile_json "$ucudnn" run "$model" --iterations 1 --json
grep -q '"profile"' "$work/run_no_profile_json.out" && fail "run --json without --profile has a profile"

if [[ $failures -ne 0 ]]; then echo "$failures CLI check(s) failed"; exit 1; fi
echo "all CLI checks passed"
