#!/usr/bin/python3
"""Half-precision models end to end (issue 41; Note [half-precision models]): a tiny CNN exported from
PyTorch in bfloat16 and in float16, run with `ucudnn run`, compared with PyTorch.

  half_models.py --ucudnn PATH --work DIR [--device cpu|cuda]

bfloat16: the model is `.to(torch.bfloat16)` and exported as PyTorch traces it (on the CPU); PyTorch's
own bfloat16 output is the reference, within 2e-2 of the largest logit (PyTorch rounds every activation
to bfloat16, ucudnn computes in float32 between the model's edges). float16: PyTorch 1.13 has no float16
convolution on the CPU, so its exporter cannot trace `.half()` there; the float32 export of the same
module, with weights rounded to float16, is given float16 initializers, input and output — the graph
`.half()` exports on a GPU — and the reference is PyTorch's float32 output rounded to float16, within one
float16 step. Exit status 0 all match, 1 a mismatch or failed run, 77 without torch and onnx.
"""
import argparse
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
except ImportError as e:  # CTest's SKIP_RETURN_CODE
    print(f"SKIP: {e}")
    sys.exit(77)


def tiny_cnn():
    torch.manual_seed(41)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 2 * 2, 10)).eval()


def tensor_pb(array, elem_type, name):
    """A TensorProto of `elem_type` holding `array`'s 16-bit encodings (uint16) or float32 values."""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = elem_type
    t.dims.extend(array.shape)
    t.raw_data = np.ascontiguousarray(array).tobytes()
    return t


def bf16_bits(x):
    """bfloat16 tensor -> its encodings (uint16)."""
    return x.view(torch.int16).numpy().view(np.uint16)


def bits_to_float(bits, elem_type):
    if elem_type == onnx.TensorProto.FLOAT16:
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)  # bfloat16: float32's top half


def export_bf16(work):
    model = tiny_cnn().to(torch.bfloat16)
    x = torch.randn(2, 3, 8, 8).to(torch.bfloat16)
    path = os.path.join(work, "cnn_bf16.onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"])
    with torch.no_grad():
        want = model(x).float().numpy()
    return path, tensor_pb(bf16_bits(x), onnx.TensorProto.BFLOAT16, "input"), want, 2e-2


def export_fp16(work):
    model = tiny_cnn().half().float()  # weights rounded to float16, computed in float32 here
    x = torch.randn(2, 3, 8, 8).half().float()
    path = os.path.join(work, "cnn_fp16.onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"])
    m = onnx.load(path)
    for init in m.graph.initializer:
        if init.data_type == onnx.TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    onnx.save(m, path)
    with torch.no_grad():
        want = model(x).numpy().astype(np.float16).astype(np.float32)
    return path, tensor_pb(x.half().numpy().view(np.uint16), onnx.TensorProto.FLOAT16, "input"), want, None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ucudnn", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    status = 0
    for name, export in (("bf16", export_bf16), ("fp16", export_fp16)):
        path, x, want, rel = export(args.work)
        input_pb = path.replace(".onnx", ".input.pb")
        with open(input_pb, "wb") as f:
            f.write(x.SerializeToString())
        out_dir = path.replace(".onnx", ".ucudnn")
        os.makedirs(out_dir, exist_ok=True)
        run = [args.ucudnn, "run", path, "--input", "input=" + input_pb, "--batch", "2", "--iterations", "1",
               "--warmup", "0", "--device", args.device, "--output-dir", out_dir]
        if args.device == "cuda":
            run += ["--math", "fp32"]
        if subprocess.run(run).returncode != 0:
            print(f"{name}: FAIL: ucudnn run exited with an error")
            status = 1
            continue
        got_pb = onnx.TensorProto()
        with open(os.path.join(out_dir, "output.pb"), "rb") as f:
            got_pb.ParseFromString(f.read())
        if got_pb.data_type != x.data_type:
            print(f"{name}: FAIL: output dtype {got_pb.data_type}, expected {x.data_type}")
            status = 1
            continue
        got = bits_to_float(np.frombuffer(got_pb.raw_data, dtype=np.uint16), got_pb.data_type).reshape(want.shape)
        scale = float(np.abs(want).max())
        if rel is None:  # float16: one step of float16 at each value
            bound = np.maximum(np.abs(want), 2.0 ** -14) * 2.0 ** -10
            ok = bool((np.abs(got - want) <= bound).all())
            text = f"max abs error {float(np.abs(got - want).max()):.3e} (one float16 step allowed)"
        else:
            error = float(np.abs(got - want).max())
            ok = error <= rel * scale
            text = f"max abs error {error:.3e}, bound {rel * scale:.3e} (= {rel:g} x max|ref| {scale:.4g})"
        print(f"{name}: {'ok' if ok else 'FAIL'}: {text}")
        status |= 0 if ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
