#!/usr/bin/python3
"""Compares ucudnn's output with a reference (both ONNX TensorProto .pb files).

Passes when shapes and dtypes agree, nothing is NaN/Inf where the reference is
finite, and max |got - want| <= rel * max |want| (default rel 1e-4): a relative
bound on the whole tensor, right for logits whose scale depends on random weights.

  compare_outputs.py EXPECTED.pb GOT.pb [--rel 1e-4] [--label NAME]
Exit status 0 on a match, 1 on a mismatch, 2 on unreadable input.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def compare(want, got, rel):
    """Returns (ok, one-line description)."""
    if want.shape != got.shape:
        return False, f"shape {got.shape}, expected {want.shape}"
    if want.dtype != got.dtype:
        return False, f"dtype {got.dtype}, expected {want.dtype}"
    want64, got64 = want.astype(np.float64), got.astype(np.float64)
    if not np.isfinite(got64[np.isfinite(want64)]).all():
        return False, "NaN or Inf where the reference is finite"
    scale = float(np.abs(want64).max()) if want.size else 0.0
    error = float(np.abs(want64 - got64).max()) if want.size else 0.0
    bound = rel * scale
    text = f"max abs error {error:.3e}, bound {bound:.3e} (= {rel:g} x max|ref| {scale:.4g})"
    if want.size and scale == 0.0:
        return error == 0.0, text + "; reference is all zero"
    return error <= bound, text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expected")
    parser.add_argument("got")
    parser.add_argument("--rel", type=float, default=1e-4)
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    try:
        want, got = load(args.expected), load(args.got)
    except (OSError, Exception) as e:  # protobuf raises its own DecodeError
        print(f"{args.label or args.got}: cannot read: {e}")
        return 2
    ok, text = compare(want, got, args.rel)
    print(f"{args.label or args.got}: {'ok' if ok else 'MISMATCH'}: {text}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
