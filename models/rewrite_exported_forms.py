#!/usr/bin/python3
"""Rewrites an exported model into the forms other exporters write the same network in, so that
the optimizer's passes for those forms can be checked and timed on real networks (docs/history/PERFORMANCE-2026-12.md,
issue 15's ninth part):

  mean       every GlobalAveragePool becomes ReduceMean(axes=[2, 3], keepdims=1) (over every spatial axis:
             [2, 3, 4] for a video network's): a network written as x.mean((2, 3), keepdim=True) (timm's
             squeeze-excitation blocks) exports so.
  pad        every strided Conv's padding moves into a Pad of zeros before it (its own pads, equal
             at both ends in torchvision's networks): the form tf2onnx and timm's Conv2dSame write.
  pad_same   as pad, but the pads are TensorFlow's "SAME" ones (the extra row and column at the
             end), so the two ends differ. The output is not PyTorch's any more: compare runs of
             ucudnn with each other (CPU against GPU).

The output has the same inputs, outputs and numbers as the input model (pad_same aside).

  rewrite_exported_forms.py MODEL.onnx OUT.onnx --form mean|pad|pad_same

Exit status 0 when written, 3 when the model has nothing to rewrite into that form, 1 otherwise.

Run with the system python (/usr/bin/python3, onnx 1.12); opset 13 models (export_torchvision.py).
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference


def attribute(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def set_ints(node, name, values):
    for a in node.attribute:
        if a.name == name:
            del a.ints[:]
            a.ints.extend(values)
            return
    node.attribute.append(helper.make_attribute(name, values))


def means_for_pools(model):
    ranks = value_ranks(model)
    nodes, made = [], 0
    for node in model.graph.node:
        if node.op_type == "GlobalAveragePool":
            if node.input[0] not in ranks:
                sys.exit(f"rewrite_exported_forms.py: the rank of '{node.input[0]}' (input of GlobalAveragePool "
                         f"'{node.name}') is unknown; the mean form needs it")
            node = helper.make_node("ReduceMean", list(node.input), list(node.output), name=node.name,
                                    axes=list(range(2, ranks[node.input[0]])), keepdims=1)
            made += 1
        nodes.append(node)
    return nodes, made


def inferred_values(model):
    inferred = shape_inference.infer_shapes(model)
    return list(inferred.graph.value_info) + list(inferred.graph.input)


def value_ranks(model):
    """name -> rank of every value whose rank shape inference knows."""
    return {v.name: len(v.type.tensor_type.shape.dim) for v in inferred_values(model)
            if v.type.tensor_type.HasField("shape")}


def spatial_dims(model):
    """name -> spatial dims (H, W), (T, H, W), ... of every value of rank >= 3 whose spatial dims shape
    inference knows."""
    dims = {}
    for value in inferred_values(model):
        shape = value.type.tensor_type.shape.dim
        if len(shape) >= 3 and all(d.HasField("dim_value") for d in shape[2:]):
            dims[value.name] = tuple(d.dim_value for d in shape[2:])
    return dims


def weight_dims(model, name):
    """The spatial dims of initializer `name` (a Conv's W), for a Conv without kernel_shape."""
    for init in model.graph.initializer:
        if init.name == name:
            return list(init.dims[2:])
    sys.exit(f"rewrite_exported_forms.py: Conv weight '{name}' is not an initializer and the Conv has no kernel_shape")


def same_pads(size, kernel, stride, dilation):
    """TensorFlow's SAME padding of one axis: (begin, end), the odd row at the end."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def pads_for_strided_convs(model, same):
    dims = spatial_dims(model) if same else {}
    nodes, made = [], 0
    for node in model.graph.node:
        if node.op_type != "Conv":
            nodes.append(node)
            continue
        kernel = attribute(node, "kernel_shape", None) or weight_dims(model, node.input[1])
        rank = len(kernel)  # spatial axes
        strides = attribute(node, "strides", [1] * rank)
        pads = list(attribute(node, "pads", [0] * 2 * rank))
        auto_pad = attribute(node, "auto_pad", b"NOTSET")
        if max(strides) == 1 or auto_pad not in (b"NOTSET", "NOTSET") or (not any(pads) and not same):
            nodes.append(node)
            continue
        if same:
            if node.input[0] not in dims:
                sys.exit(f"rewrite_exported_forms.py: the spatial dims of '{node.input[0]}' (input of Conv "
                         f"'{node.name}') are unknown; pad_same needs them")
            dilations = attribute(node, "dilations", [1] * rank)
            ends = [same_pads(dims[node.input[0]][i], kernel[i], strides[i], dilations[i]) for i in range(rank)]
            pads = [begin for begin, _ in ends] + [end for _, end in ends]
        padded = f"{node.output[0]}__padded_input"
        pads_name = f"{node.output[0]}__pads"
        model.graph.initializer.append(numpy_helper.from_array(
            np.array([0, 0] + pads[:rank] + [0, 0] + pads[rank:], dtype=np.int64), pads_name))
        nodes.append(helper.make_node("Pad", [node.input[0], pads_name], [padded], name=f"{node.name}_pad",
                                      mode="constant"))
        set_ints(node, "pads", [0] * 2 * rank)
        node.input[0] = padded
        nodes.append(node)
        made += 1
    return nodes, made


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--form", required=True, choices=["mean", "pad", "pad_same"])
    args = parser.parse_args()
    model = onnx.load(args.model)
    if args.form == "mean":
        nodes, made = means_for_pools(model)
        what = "GlobalAveragePools made ReduceMeans"
    else:
        nodes, made = pads_for_strided_convs(model, same=args.form == "pad_same")
        what = "strided Convs given a Pad"
    if made == 0:
        print(f"rewrite_exported_forms.py: {args.model} has nothing to rewrite into the '{args.form}' form",
              file=sys.stderr)
        sys.exit(3)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, args.out)
    print(f"{args.out}: {made} {what}")


if __name__ == "__main__":
    main()
