#!/usr/bin/python3
"""Builds the tiny committed test models under models/tiny/ with onnx.helper,
with seeded weights and expected outputs computed by NumPy references here.

Each model is written in the layout of ONNX's own test data, so the conformance
runner can run them like any ONNX backend test:
  models/tiny/NAME/model.onnx
  models/tiny/NAME/test_data_set_0/input_0.pb, output_0.pb  (batch 2)

Models (all float32, opset 13, symbolic batch dim "batch"):
  tiny_cnn       Conv -> BatchNormalization -> Relu -> MaxPool -> Conv(+bias)
                 -> Relu -> GlobalAveragePool -> Flatten -> Gemm
  tiny_residual  Conv(+bias) -> Relu -> Conv(+bias) -> Add(skip) -> Relu
  tiny_reshape   Reshape whose shape is Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])
                 -> MatMul -> Add
  tiny_branches  Conv 1x1 and Conv 3x3 branches -> Concat(axis 1) -> AveragePool
                 -> Softmax over channels of the flattened result
  tiny_downsample  a ResNet bottleneck block with a downsample branch: Conv 1x1 -> Relu
                 -> Conv 3x3(stride 2) -> Relu -> Conv 1x1, plus Conv 1x1(stride 2) of
                 the input -> Add -> Relu
  tiny_decoder   a U-Net step: Conv 3x3(stride 2, +bias) -> Relu -> ConvTranspose
                 4x4(stride 2, pads 1, +bias) -> Relu -> ConvTranspose 3x3(pads 1, group 2)
                 -> Add(the input)
  tiny_upsample  an FPN step: Conv 3x3(stride 2) -> Relu -> Resize(linear, x2, half_pixel)
                 -> Add(Conv 1x1 of the input) -> Resize(nearest, x2)

Outputs come from onnxruntime when it is installed, else from the NumPy
references below (onnx 1.12 has no onnx.reference). Run with /usr/bin/python3.
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
BATCH = 2


# ---------------------------------------------------------------- references
def ref_conv(x, w, b=None, pads=(0, 0, 0, 0), strides=(1, 1)):
    """Naive NCHW cross-correlation, group 1, dilation 1; pads = (top, left, bottom, right)."""
    n, c, h, wd = x.shape
    m, c2, kh, kw = w.shape
    assert c == c2
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", patch.astype(np.float64), w.astype(np.float64))
    if b is not None:
        y += b.reshape(1, m, 1, 1)
    return y


def ref_batchnorm(x, scale, bias, mean, var, eps=1e-5):
    shape = (1, -1, 1, 1)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)


def ref_maxpool(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    y = np.empty((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = x[:, :, i * s:i * s + k, j * s:j * s + k].max(axis=(2, 3))
    return y


def ref_avgpool(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    y = np.empty((n, c, oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = x[:, :, i * s:i * s + k, j * s:j * s + k].mean(axis=(2, 3))
    return y


def ref_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def relu(x):
    return np.maximum(x, 0)


# ---------------------------------------------------------------- builders
def _init(name, array):
    # np.ascontiguousarray would turn a 0-d (scalar) array into shape (1,).
    return numpy_helper.from_array(np.array(array, order="C"), name)


def _io(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def _model(graph):
    model = helper.make_model(graph, producer_name="ucudnn make_tiny_models.py",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 7  # what onnx 1.12 writes for opset 13; readable by every runtime
    onnx.checker.check_model(model)
    return model


def tiny_cnn(rng):
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3
    scale = (0.5 + rng.random(4)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(4)).astype(np.float32)
    mean = (0.1 * rng.standard_normal(4)).astype(np.float32)
    var = (0.5 + rng.random(4)).astype(np.float32)
    w2 = rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.2
    b2 = (0.1 * rng.standard_normal(8)).astype(np.float32)
    wf = rng.standard_normal((5, 8)).astype(np.float32) * 0.5
    bf = (0.1 * rng.standard_normal(5)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "w1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["output"], name="fc", transB=1),
    ]
    inits = [_init("w1", w1), _init("bn_scale", scale), _init("bn_bias", bias), _init("bn_mean", mean),
             _init("bn_var", var), _init("w2", w2), _init("b2", b2), _init("wf", wf), _init("bf", bf)]
    graph = helper.make_graph(nodes, "tiny_cnn", [_io("input", ["batch", 3, 8, 8])], [_io("output", ["batch", 5])],
                              inits)

    def reference(x):
        y = relu(ref_batchnorm(ref_conv(x, w1, pads=(1, 1, 1, 1)), scale, bias, mean, var))
        y = ref_maxpool(y, 2, 2)
        y = relu(ref_conv(y, w2, b2, pads=(1, 1, 1, 1)))
        y = y.mean(axis=(2, 3))
        return y @ wf.T.astype(np.float64) + bf

    return _model(graph), (BATCH, 3, 8, 8), reference


def tiny_residual(rng):
    w1 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.25
    b1 = (0.1 * rng.standard_normal(4)).astype(np.float32)
    w2 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.25
    b2 = (0.1 * rng.standard_normal(4)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "input"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["output"], name="relu2"),
    ]
    inits = [_init("w1", w1), _init("b1", b1), _init("w2", w2), _init("b2", b2)]
    graph = helper.make_graph(nodes, "tiny_residual", [_io("input", ["batch", 4, 6, 6])],
                              [_io("output", ["batch", 4, 6, 6])], inits)

    def reference(x):
        y = relu(ref_conv(x, w1, b1, pads=(1, 1, 1, 1)))
        return relu(ref_conv(y, w2, b2, pads=(1, 1, 1, 1)) + x)

    return _model(graph), (BATCH, 4, 6, 6), reference


def tiny_reshape(rng):
    w = rng.standard_normal((24, 3)).astype(np.float32) * 0.3
    b = (0.1 * rng.standard_normal(3)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["input"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["new_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["input", "new_shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "w"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "b"], ["output"], name="add"),
    ]
    inits = [_init("zero", np.array(0, dtype=np.int64)), _init("axes0", np.array([0], dtype=np.int64)),
             _init("minus_one", np.array([-1], dtype=np.int64)), _init("w", w), _init("b", b)]
    graph = helper.make_graph(nodes, "tiny_reshape", [_io("input", ["batch", 2, 3, 4])], [_io("output", ["batch", 3])],
                              inits)

    def reference(x):
        return x.reshape(x.shape[0], -1).astype(np.float64) @ w + b

    return _model(graph), (BATCH, 2, 3, 4), reference


def tiny_branches(rng):
    wa = rng.standard_normal((2, 3, 1, 1)).astype(np.float32) * 0.5
    wb = rng.standard_normal((3, 3, 3, 3)).astype(np.float32) * 0.3
    bb = (0.1 * rng.standard_normal(3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "wa"], ["a"], name="conv_1x1", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["input", "wb", "bb"], ["b"], name="conv_3x3", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["a", "b"], ["cat"], name="concat", axis=1),
        helper.make_node("AveragePool", ["cat"], ["p"], name="avgpool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        helper.make_node("Softmax", ["f"], ["output"], name="softmax", axis=-1),
    ]
    inits = [_init("wa", wa), _init("wb", wb), _init("bb", bb)]
    graph = helper.make_graph(nodes, "tiny_branches", [_io("input", ["batch", 3, 4, 4])],
                              [_io("output", ["batch", 20])], inits)

    def reference(x):
        cat = np.concatenate([ref_conv(x, wa), ref_conv(x, wb, bb, pads=(1, 1, 1, 1))], axis=1)
        p = ref_avgpool(cat, 2, 2)
        return ref_softmax(p.reshape(p.shape[0], -1), axis=-1)

    return _model(graph), (BATCH, 3, 4, 4), reference


def tiny_downsample(rng):
    w1 = rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.25
    w3 = rng.standard_normal((16, 4, 1, 1)).astype(np.float32) * 0.4
    b3 = (0.1 * rng.standard_normal(16)).astype(np.float32)
    wd = rng.standard_normal((16, 8, 1, 1)).astype(np.float32) * 0.3
    nodes = [
        helper.make_node("Conv", ["input", "w1"], ["c1"], name="conv1", kernel_shape=[1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="conv3", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["input", "wd"], ["d"], name="downsample", kernel_shape=[1, 1], strides=[2, 2]),
        helper.make_node("Add", ["c3", "d"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["output"], name="relu3"),
    ]
    inits = [_init("w1", w1), _init("w2", w2), _init("w3", w3), _init("b3", b3), _init("wd", wd)]
    graph = helper.make_graph(nodes, "tiny_downsample", [_io("input", ["batch", 8, 8, 8])],
                              [_io("output", ["batch", 16, 4, 4])], inits)

    def reference(x):
        y = relu(ref_conv(x, w1))
        y = relu(ref_conv(y, w2, pads=(1, 1, 1, 1), strides=(2, 2)))
        return relu(ref_conv(y, w3, b3) + ref_conv(x, wd, strides=(2, 2)))

    return _model(graph), (BATCH, 8, 8, 8), reference


def ref_conv_transpose(x, w, b=None, pads=(0, 0, 0, 0), strides=(1, 1), group=1):
    """Naive NCHW transposed convolution, dilation 1: every input pixel scatters its kernel-sized
    patch; pads = (top, left, bottom, right) are cropped off the full result."""
    n, c, h, wd = x.shape
    c2, mg, kh, kw = w.shape
    assert c == c2
    cg = c // group
    full = np.zeros((n, mg * group, (h - 1) * strides[0] + kh, (wd - 1) * strides[1] + kw), dtype=np.float64)
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg].astype(np.float64)
        ws = w[g * cg:(g + 1) * cg].astype(np.float64)
        for i in range(h):
            for j in range(wd):
                patch = np.einsum("nc,cmyx->nmyx", xs[:, :, i, j], ws)
                full[:, g * mg:(g + 1) * mg, i * strides[0]:i * strides[0] + kh,
                     j * strides[1]:j * strides[1] + kw] += patch
    y = full[:, :, pads[0]:full.shape[2] - pads[2], pads[1]:full.shape[3] - pads[3]]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def tiny_decoder(rng):
    w1 = rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.3
    b1 = (0.1 * rng.standard_normal(8)).astype(np.float32)
    w2 = rng.standard_normal((8, 6, 4, 4)).astype(np.float32) * 0.2
    b2 = (0.1 * rng.standard_normal(6)).astype(np.float32)
    w3 = rng.standard_normal((6, 2, 3, 3)).astype(np.float32) * 0.3
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="down", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("ConvTranspose", ["r1", "w2", "b2"], ["u1"], name="up", kernel_shape=[4, 4],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["u1"], ["r2"], name="relu2"),
        helper.make_node("ConvTranspose", ["r2", "w3"], ["u2"], name="mix", pads=[1, 1, 1, 1], group=2),
        helper.make_node("Add", ["u2", "input"], ["output"], name="skip"),
    ]
    inits = [_init("w1", w1), _init("b1", b1), _init("w2", w2), _init("b2", b2), _init("w3", w3)]
    graph = helper.make_graph(nodes, "tiny_decoder", [_io("input", ["batch", 4, 8, 8])],
                              [_io("output", ["batch", 4, 8, 8])], inits)

    def reference(x):
        y = relu(ref_conv(x, w1, b1, pads=(1, 1, 1, 1), strides=(2, 2)))
        y = relu(ref_conv_transpose(y, w2, b2, pads=(1, 1, 1, 1), strides=(2, 2)))
        return ref_conv_transpose(y, w3, pads=(1, 1, 1, 1), group=2) + x

    return _model(graph), (BATCH, 4, 8, 8), reference


def ref_resize_2x(x, mode):
    """Resize by 2 on H and W with half_pixel coordinates: 'nearest' (round_prefer_floor; no ties at
    x2) or 'linear' (the edge element outside the input)."""
    n, c, h, w = x.shape

    def axis(size):
        s = (np.arange(2 * size) + 0.5) / 2 - 0.5
        if mode == "nearest":
            i = np.clip(np.floor(s + 0.5).astype(int), 0, size - 1)
            return i, i, np.zeros_like(s)
        s = np.clip(s, 0, size - 1)
        lo = np.floor(s).astype(int)
        return lo, np.minimum(lo + 1, size - 1), s - lo

    r0, r1, rw = axis(h)
    c0, c1, cw = axis(w)
    x = x.astype(np.float64)
    top = x[:, :, r0][:, :, :, c0] * (1 - cw) + x[:, :, r0][:, :, :, c1] * cw
    bottom = x[:, :, r1][:, :, :, c0] * (1 - cw) + x[:, :, r1][:, :, :, c1] * cw
    return top * (1 - rw[:, None]) + bottom * rw[:, None]


def tiny_upsample(rng):
    w1 = rng.standard_normal((6, 4, 3, 3)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((6, 4, 1, 1)).astype(np.float32) * 0.4
    nodes = [
        helper.make_node("Conv", ["input", "w1"], ["c1"], name="down", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Resize", ["r1", "", "scales"], ["u1"], name="up_linear", mode="linear"),
        helper.make_node("Conv", ["input", "w2"], ["lateral"], name="lateral", kernel_shape=[1, 1]),
        helper.make_node("Add", ["u1", "lateral"], ["s"], name="add"),
        helper.make_node("Resize", ["s", "", "scales"], ["output"], name="up_nearest", mode="nearest"),
    ]
    inits = [_init("w1", w1), _init("w2", w2), _init("scales", np.array([1, 1, 2, 2], dtype=np.float32))]
    graph = helper.make_graph(nodes, "tiny_upsample", [_io("input", ["batch", 4, 8, 8])],
                              [_io("output", ["batch", 6, 16, 16])], inits)

    def reference(x):
        y = ref_resize_2x(relu(ref_conv(x, w1, pads=(1, 1, 1, 1), strides=(2, 2))), "linear")
        return ref_resize_2x(y + ref_conv(x, w2), "nearest")

    return _model(graph), (BATCH, 4, 8, 8), reference


BUILDERS = {"tiny_cnn": tiny_cnn, "tiny_residual": tiny_residual, "tiny_reshape": tiny_reshape,
            "tiny_branches": tiny_branches, "tiny_downsample": tiny_downsample, "tiny_decoder": tiny_decoder,
            "tiny_upsample": tiny_upsample}


def run_onnxruntime(model, x):
    """Output from onnxruntime, or None when it is not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input": x})[0]


def write_model(out_dir, name, seed):
    rng = np.random.default_rng(seed)
    model, input_shape, reference = BUILDERS[name](rng)
    x = rng.standard_normal(input_shape).astype(np.float32)
    expected = reference(x).astype(np.float32)
    ort = run_onnxruntime(model, x)
    source = "numpy"
    if ort is not None:
        np.testing.assert_allclose(ort, expected, rtol=1e-4, atol=1e-5)  # the references agree
        expected, source = ort, "onnxruntime"
    folder = os.path.join(out_dir, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "input").SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(expected, "output").SerializeToString())
    print(f"{name}: input {tuple(x.shape)} -> output {tuple(expected.shape)} (expected from {source})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default=",".join(BUILDERS), help="comma-separated subset (default: all)")
    args = parser.parse_args(argv)
    written = 0
    for i, name in enumerate(BUILDERS):
        if name in args.models.split(","):
            write_model(args.out, name, args.seed + i)  # the seed depends on the model's place in BUILDERS
            written += 1
    total = sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(args.out) for f in files)
    print(f"{written} models written; {total} bytes in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
