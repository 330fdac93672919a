// Declarations shared by the importer's files (not part of the public API).
//
// The pipeline, in load_model.cc: read_model_file (model_loader.cc) →
// check_model_ops (graph_builder.cc, every unsupported node at once) →
// build_graph (graph_builder.cc: initializers, inputs with resolved shapes,
// nodes with upgraded and validated attributes) → widen_half_precision
// (half_precision.cc, Note [half-precision models]) → infer_and_fold
// (shape_resolution.cc, typed_forms.cc + constant_folding.cc) → prune → lower_composite_ops
// (lowering/lowering.h, Note [lowered ops]: ConvTranspose runs as ConvGradData, LayerNormalization and
// InstanceNormalization as reductions and elementwise ops, ...).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "onnx_import/onnx_import.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn::onnx_import {

// Default-domain opset versions the importer handles.
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 21;

// --- model_loader.cc ---------------------------------------------------------

struct ModelFile {
  onnx::ModelProto proto;
  std::string path;  // as given by the caller
  std::string dir;   // folder of `path`: where external data files are looked up
  int opset = 0;     // version imported for the default domain; 0 when none
};

// Reads and parses `path`. NotFound when missing; InvalidModel naming the path
// when it is not a regular file, empty, not a ModelProto, or has no graph;
// Unsupported for ir_version < 3. Does not check the opset range.
Expected<ModelFile> read_model_file(const std::string& path);
// True for "" and "ai.onnx".
bool is_default_domain(const std::string& domain);

// --- tensor_io.cc ------------------------------------------------------------

// Converts a TensorProto (raw_data, typed fields, or external data found
// relative to `base_dir`) into an owning Tensor. `what` names the tensor in
// errors ("initializer 'w'"). Unsupported dtype → Unsupported; inconsistent
// data → InvalidModel.
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                                   const std::string& what);
// Shape of a TensorProto from its dims (no data read); InvalidModel on negative dims.
Expected<Shape> tensor_proto_shape(const onnx::TensorProto& proto, const std::string& what);
// 1-D tensors holding a copy of `values` (empty ones included).
Tensor int64_vector_tensor(const std::vector<int64_t>& values);
Tensor float_vector_tensor(const std::vector<float>& values);
// Fills `proto` with `tensor` as raw_data.
void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);
// Parses the bytes of a .npy file (float32/float64/float16/int64/int32/..., little-endian, C order).
Expected<Tensor> parse_npy(const std::string& bytes, const std::string& path);

// --- attributes.cc -----------------------------------------------------------

using RawAttributes = std::map<std::string, ir::AttrValue>;

// Converts every AttributeProto of a node into an AttrValue, without looking at
// the op. `who` prefixes errors (a node description).
Expected<RawAttributes> parse_attributes(const onnx::NodeProto& node, const std::string& base_dir,
                                         const std::string& who);
// Checks `raw` against the descriptor's table: unknown attribute → Unsupported,
// wrong type → InvalidModel, missing required → InvalidModel; fills defaults.
Status validate_attributes(const OpDescriptor& desc, RawAttributes raw, const std::string& who,
                           ir::Attributes* out);

// --- upgrade.cc --------------------------------------------------------------

// A node between parsing and validation: names instead of value ids.
struct PendingNode {
  std::string name;
  OpKind op = OpKind::kIdentity;
  int opset = 0;
  std::vector<std::string> inputs;   // "" = absent optional input
  std::vector<std::string> outputs;  // "" = absent optional output
  RawAttributes attrs;
  // Before opset 7 (Note [legacy broadcasting], upgrade.cc): the axis of input 0 where input 1's dims begin,
  // or kLegacySameShape; absent when numpy broadcasting means the same.
  std::optional<int64_t> legacy_broadcast;
  std::string describe() const;      // "node 'x' (Slice, opset 9)"
};
inline constexpr int64_t kLegacySameShape = -1;
// The private attribute that carries PendingNode::legacy_broadcast to rewrite_typed_forms.
inline constexpr const char* kLegacyBroadcastAttr = "legacy_broadcast";

// Adds a constant value to the graph under construction and returns its name.
using AddConstant = std::function<std::string(const std::string& name_hint, Tensor tensor)>;

// Rewrites an older-opset form into the form the op's descriptor declares
// (attributes that became inputs, renamed or dropped attributes).
Status upgrade_node(PendingNode& node, const AddConstant& add_constant);
// True when upgrade_node knows the op's older forms (so the descriptor's
// min_opset does not limit which opsets load).
bool has_upgrade(OpKind op);

// --- graph_builder.cc --------------------------------------------------------

// "node 'x' (Foo, opset 13)" for a NodeProto at `index`, before an ir::Node exists.
std::string node_proto_name(const onnx::NodeProto& node, size_t index);
std::string describe_node_proto(const onnx::ModelProto& model, const onnx::NodeProto& node, size_t index);
// One line per node the importer cannot handle: "node 'x' (Foo, opset 13): why"
// (unknown op, another domain, an opset older than the op's descriptor allows).
std::vector<std::string> find_unsupported_nodes(const onnx::ModelProto& model);
// The op a default-domain `op_type` imports as, and the opset its node gets: the op of that name at the
// model's `opset`; for an op ONNX deprecated in favour of another (Scatter, opsets 9-10, is ScatterElements
// of opset 11 without a reduction), that op at the opset it entered. False for an op ucudnn lacks.
bool import_op(const std::string& op_type, int opset, OpKind* kind, int* node_opset);
// Builds the graph: constants, runtime inputs with resolved shapes, nodes in
// order. Output dtypes/shapes are left for infer_and_fold.
Expected<ir::Graph> build_graph(const ModelFile& model, const ImportOptions& options);

// --- half_precision.cc -------------------------------------------------------

// Rewrites a graph fresh from build_graph (node outputs without dtypes) so that no value between its
// inputs and outputs is float16 or bfloat16 (Note [half-precision models]): half constants become
// float32, half inputs are read through Casts to float32, outputs `proto` declares half are written by
// Casts from float32, explicit Casts to a half type keep their rounding. A model without half values
// is left as it is. Unsupported naming the node for an op whose attribute asks for a half output it
// cannot widen.
Status widen_half_precision(ir::Graph& graph, const onnx::GraphProto& proto);

// --- shape_resolution.cc -----------------------------------------------------

// Symbolic dim names ("batch") → the values the given shapes set them to.
using SymbolBindings = std::map<std::string, int64_t>;
// Checks every shape given for a graph input (options.input_shapes, and the shapes
// of options.constant_inputs) against the model's declaration — same rank, static
// dims equal, each symbolic name one value across all inputs — and returns the
// names they bind. InvalidArgument naming the input and both shapes otherwise.
Expected<SymbolBindings> bind_given_shapes(const onnx::GraphProto& graph, const ImportOptions& options);
// The shape of graph input `input`: the given one, or its declared dims with
// symbolic ones set to their binding, else to `options.batch`.
Expected<Shape> resolve_input_shape(const onnx::ValueInfoProto& input, const ImportOptions& options,
                                    const SymbolBindings& bindings);
// InvalidArgument when a graph input of `shape` would hold 2^63 bytes or more
// (a batch of 2^62, say): sizes are products that must not overflow later.
Status check_input_size(const std::string& name, DType dtype, const Shape& shape, int64_t batch);
// --- typed_forms.cc ----------------------------------------------------------

// Rewrites node `n`, whose inputs have dtypes and shapes, into the form the kernels take, before its shape
// rule runs: Note [legacy broadcasting] (upgrade.cc) where it carries kLegacyBroadcastAttr (B reshaped by a
// Reshape inserted before it, so that the node is then node n + 1, or the shapes checked equal; InvalidModel
// naming the node and both shapes when they do not fit); Neg of integers as Sub(0, X); Pow with an integer
// exponent as Pow of the exponent Cast to float32 (a Cast inserted before it).
Status rewrite_typed_forms(ir::Graph& graph, size_t n);
// Runs every node's shape rule in order, storing dtypes and shapes; folds
// constant nodes when asked; removes folded nodes and prunes the graph.
Status infer_and_fold(ir::Graph& graph, const ImportOptions& options);
// Compares the model's declared graph outputs with what the rules computed
// (dtype and rank always; dims when `compare_dims`).
Status check_declared_outputs(const ir::Graph& graph, const onnx::GraphProto& proto, bool compare_dims);
// True when every runtime input got exactly its declared, fully static shape
// (so declared output dims must match too).
bool inputs_as_declared(const ir::Graph& graph, const onnx::GraphProto& proto);

// --- constant_folding.cc -----------------------------------------------------

// Outputs larger than this stay computed at run time.
inline constexpr size_t kMaxFoldBytes = 64u << 20;
// Evaluates node `id` when all its present inputs are constant (Shape: when its
// input's shape is known), storing results in the outputs' `constant`. Returns
// whether it folded; an error only when evaluation finds the model wrong.
Expected<bool> fold_node(ir::Graph& graph, ir::NodeId id);
// Drops nodes whose outputs are all constant, renumbering producers.
void remove_folded_nodes(ir::Graph& graph);

}  // namespace ucudnn::onnx_import
