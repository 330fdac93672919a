// ONNX import: ModelProto (.onnx, optionally with external data) → ir::Graph.
//
// Stages: parse the protobuf → check IR version, opsets and ops (listing every
// unsupported op at once) → fix input shapes (symbolic dims from the user's
// shapes or the batch) → build values and nodes: older opset forms normalised
// to one form per op (upgrade.cc), then attributes checked against each op's
// descriptor (spec defaults filled in) → infer every value's dtype and shape in
// topological order, folding constant nodes as they come (Shape → Gather →
// Concat → Reshape chains) → prune. Internals: internal.h. Every failure is a Status naming file, node, op and
// opset; nothing here asserts on user input.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/core/model_info.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::onnx_import {

struct ImportOptions {
  // Shapes for graph inputs by name. They set the declared symbolic dims (one
  // value per name across inputs) and must equal the static ones and the rank.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs whose values are known at load: they become constants (as
  // initializers would), so shape rules and constant folding see them — a
  // Reshape's shape or a Slice's starts fed as inputs. They are no longer
  // runtime inputs. Their dtype must be the declared one; their shapes count as given.
  std::map<std::string, Tensor> constant_inputs;
  // Value for symbolic dims not fixed by the given shapes (the batch, usually).
  int64_t batch = 1;
  // Evaluate nodes whose inputs are all constant at import time.
  bool fold_constants = true;
};

// Loads `path` (external data files are looked up next to it) into a graph with
// static shapes. NotFound when the file is missing; InvalidModel (naming the
// path) when it is not a readable ONNX model; Unsupported for opsets outside
// 7..21, other domains and unknown ops; InvalidArgument for bad options.
// With fold_constants off nothing is folded, not even Shape, so models whose
// Reshape targets are computed from shapes fail to load.
Expected<ir::Graph> load_model(const std::string& path, const ImportOptions& options);

// What `ucudnn info` prints, available without resolving shapes: the public ModelInfo
// (runtime/core/model_info.h), filled here and returned by ucudnn::model_info as it is.
Expected<ModelInfo> summarize_model(const std::string& path);

// Reads a tensor from an ONNX TensorProto file (.pb) or a NumPy file (.npy).
Expected<Tensor> read_tensor_file(const std::string& path);
// Writes `tensor` as a TensorProto named `name`. Writes to a temporary file and
// renames it, so an existing file is never left half-written.
Status write_tensor_pb(const std::string& path, const std::string& name, const Tensor& tensor);

// --- saving a trained model (save_model.cc; owner: optim) -------------------------------------

// Writes the ONNX model at `in_path` to `out_path` with the data of the named initializers replaced
// (trained weights, BatchNorm running_mean / running_var): each name must be a float32 initializer of
// the model (NotFound otherwise) and the tensor float32 of exactly its shape (InvalidArgument naming
// both shapes otherwise); a float16 or bfloat16 initializer (a half-precision model) takes a float32
// tensor too, rounded to the initializer's type. Replaced data is stored inline as raw_data (little-endian); everything else
// in the ModelProto is kept as it is — initializers left in external data files are referenced
// relative to the output's folder, so that must be the input's (InvalidArgument otherwise). The output
// is written atomically (a temporary file renamed over it); in_path may equal out_path.
//
// `splits` first gives inputs their own initializer: input `input` of node `node` (the node's
// name, or "<op_type>_<index>" for an unnamed one, as the importer names nodes) stops reading
// initializer `from` and reads a new one named `to`, a copy of `from` — how a model whose exporter
// merged equal initializers gets back the parameters training kept apart (training/training_graph.h,
// untie_shared_parameters). `initializers` may then replace `to` like any other. A name in
// `initializers` that is the output of an Identity of an initializer (PyTorch's exporter writes a
// parameter equal to another so) becomes an initializer in its own right, and the Identity goes.
struct InitializerSplit {
  std::string node;
  size_t input = 0;
  std::string from, to;
};
Status save_model_with_initializers(const std::string& in_path, const std::string& out_path,
                                    const std::map<std::string, Tensor>& initializers,
                                    const std::vector<InitializerSplit>& splits = {});

}  // namespace ucudnn::onnx_import
