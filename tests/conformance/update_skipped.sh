#!/usr/bin/env bash
# Regenerates tests/conformance/skipped.txt from what the conformance runner
# finds unsupported now, one line per case, `test_name  # reason`, grouped by
# reason. The reason is a category read off the error message:
#   op not supported: Abs            (ops are listed together when a model has several)
#   domain not supported: ai.onnx.ml
#   dtype not supported: float16
#   non-tensor value (sequence, map or optional)
#   attribute not supported: Conv.auto_pad ...
#   opset too old for: Upsample
#   opset not supported: 6
#   Reshape: shape (input 1) must be known when the model is loaded    (node-specific reasons)
#   other: <the message, node names removed>
# Cases that fail for other reasons (wrong numbers, crashes) are not listed:
# those are bugs, not skips.
#
#   update_skipped.sh [RUNNER] [RUNNER ARGS...] [ROOT...]
# RUNNER defaults to build/tests/conformance_runner; everything after it goes to
# the runner as it is (ROOTs, --filter, --timeout, --device, --math ...).
#
# With `--device cuda` among them (on the device machine, where the GPU is) it
# writes skipped_cuda.txt instead: the cases only the CUDA backend rejects, i.e.
# unsupported on the GPU and not already in skipped.txt. The runner with
# --device cuda skips the union of both lists.
#
# UCUDNN_SKIP_OUT=FILE writes there instead of beside this script (e.g. to $OUT on
# the device machine, whose copy of the tree does not come back); PYTHON picks
# the interpreter (default /usr/bin/python3, else python3; standard library only).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
runner="${1:-$here/../../build/tests/conformance_runner}"
[ $# -gt 0 ] && shift
if [ ! -x "$runner" ]; then
  echo "update_skipped.sh: runner '$runner' not found; build the conformance_runner target" >&2
  exit 2
fi
device=cpu
previous=
for arg in "$@"; do
  [ "$previous" = "--device" ] && device="$arg"
  previous="$arg"
done
if [ "$device" = cuda ]; then
  out="${UCUDNN_SKIP_OUT:-$here/skipped_cuda.txt}"
  exclude="$here/skipped.txt"
else
  out="${UCUDNN_SKIP_OUT:-$here/skipped.txt}"
  exclude=/dev/null
fi
python="${PYTHON:-/usr/bin/python3}"
[ -x "$python" ] || python=python3
dump="$(mktemp)"
trap 'rm -f "$dump" "$out.tmp"' EXIT
# The runner exits 1 when anything fails (unlisted unsupported cases do, here); that is expected.
status=0
"$runner" --no-skip-file --dump-unsupported "$@" > "$dump" || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
  echo "update_skipped.sh: the runner exited with $status (77: no usable GPU for --device cuda), nothing written" >&2
  exit "$status"
fi

"$python" - "$dump" "$out.tmp" "$device" "$exclude" <<'EOF'
import re
import sys
from collections import defaultdict

def category(message):
    ops = sorted(set(re.findall(r"op '([^']+)' is not implemented", message)))
    if ops:
        return "op not supported: " + ", ".join(ops)
    domains = sorted(set(re.findall(r"domain '([^']+)' is not supported", message)))
    if domains:
        return "domain not supported: " + ", ".join(domains)
    if "sequences, maps and optionals" in message or "is not a tensor" in message:
        return "non-tensor value (sequence, map or optional)"
    dtypes = sorted(set(re.findall(r"has dtype '?([A-Za-z0-9_]+)", message)))
    if dtypes:
        return "dtype not supported: " + ", ".join(dtypes)
    attributes = sorted(set(re.findall(r"\(([A-Za-z0-9_.]+), opset \d+\)[^|]*?attribute '([^']+)' is not supported", message)))
    if attributes:
        return "attribute not supported: " + ", ".join(f"{op}.{attr}" for op, attr in attributes)
    old = sorted(set(re.findall(r"implements ([A-Za-z0-9_]+) from opset \d+", message)))
    if old:
        return "opset too old for: " + ", ".join(old)
    opsets = sorted(set(re.findall(r"uses opset (\d+) of the default ONNX domain", message)), key=int)
    if opsets:
        return "opset not supported: " + ", ".join(opsets)
    # "node 'n' (Op, opset 13) with inputs (float32[2, 3], ...): why" -> "Op: why", without
    # the shapes, parenthesised lists and anything after "; " (so similar cases group).
    node = re.search(r"node '[^']*' \(([A-Za-z0-9_.]+), opset \d+\)(?: with inputs \([^()]*\))?: (.*)", message)
    if node:
        why = re.sub(r" \([^()]*,[^()]*\)", "", node.group(2).split(" | ")[0]).split("; ")[0]
        return f"{node.group(1)}: {why[:100]}"
    # Drop what is specific to one model so similar cases group together.
    text = re.sub(r"'[^']*'", "'...'", message.split(" | ")[0])
    text = re.sub(r"^(load|test_data_set_\d+(: run)?): ", "", text)
    text = re.sub(r"^Unsupported: ", "", text)
    return "other: " + text[:120]

device, exclude_path = sys.argv[3], sys.argv[4]
excluded = set()
with open(exclude_path) as f:  # skipped.txt when writing skipped_cuda.txt
    for line in f:
        name = line.split("#", 1)[0].strip()
        if name:
            excluded.add(name)

groups = defaultdict(list)
with open(sys.argv[1]) as f:
    for line in f:
        name, _, message = line.rstrip("\n").partition("\t")
        if name and name not in excluded:
            groups[category(message)].append(name)

with open(sys.argv[2], "w") as out:
    if device == "cuda":
        out.write("# ONNX conformance cases skipped on the GPU only: the CUDA backend rejects what they\n"
                  "# use (kUnsupported) although the CPU runs them; cases in skipped.txt are not repeated.\n"
                  "# Produced on the device machine by tests/conformance/update_skipped.sh RUNNER\n"
                  "# --device cuda (see docs/DEVICE_WORKFLOW.md); format: test_name  # reason.\n"
                  "# conformance_runner --device cuda skips the union of skipped.txt and this file.\n"
                  "# A listed case is skipped only while it fails with kUnsupported; any other failure\n"
                  "# still fails, and the runner reports listed cases that pass (remove them).\n")
    else:
        out.write("# ONNX conformance cases skipped because ucudnn does not support what they use.\n"
                  "# Generated by tests/conformance/update_skipped.sh; format: test_name  # reason.\n"
                  "# A listed case is skipped only while it fails with kUnsupported; any other failure\n"
                  "# still fails, and the runner reports listed cases that pass (remove them).\n")
    for reason in sorted(groups):
        out.write(f"\n# --- {reason} ({len(groups[reason])})\n")
        for name in sorted(groups[reason]):
            out.write(f"{name}  # {reason}\n")
total = sum(len(v) for v in groups.values())
print(f"update_skipped.sh: {total} unsupported cases in {len(groups)} categories", file=sys.stderr)
EOF
mv "$out.tmp" "$out"
echo "wrote $out"
