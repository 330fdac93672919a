// The training graph: an inference graph turned into one step of training — forward in
// training mode, the loss, and every parameter's gradient (docs/TRAINING.md).
//
//   - Parameters are the float32 initializers that feed weights and biases: Conv's W and B,
//     Gemm's B and C, a constant MatMul operand (and the constant of an Add right after a
//     MatMul: its bias), BatchNormalization's scale and B, PRelu's slope. They become graph
//     inputs; everything else constant stays constant.
//   - BatchNormalization becomes BatchNormTrain (batch statistics; its running statistics
//     become inputs, and their updates outputs); Dropout becomes DropoutTrain, drawing its mask
//     from a `dropout_seed` input (int64 [1]) the trainer changes every step.
//   - A BatchNormTrain then takes in the Relu after it, or the Add(·, Z) → Relu of a residual block
//     (training/fuse_batch_norm.h; TrainingGraphOptions::fuse_batch_norm).
//   - The loss SoftmaxCrossEntropyMean(logits, labels) follows graph output 0 (logits [N, C]),
//     with `labels` an int64 [N] input; autodiff (training/autodiff.h) appends the backward.
//   - The pointwise fusion pass (optimizer/passes/fuse_pointwise.cc) then runs over the whole step,
//     forward and backward: trees of elementwise nodes whose inner values nothing else reads (not
//     saved for the backward, not gradient sums read twice) become FusedPointwise nodes
//     (TrainingGraphOptions::fuse_pointwise).
//
// Inputs, in order: the model's own inputs, labels, dropout_seed (when there is a Dropout),
// the parameters, the running statistics. Outputs, in order: loss (float32 []), logits, one
// gradient per parameter, the updated running statistics (one per running-statistics input).
// A trainer binds each running statistic's input and output to the same memory.
//
// The evaluation graph is the same forward in inference mode (running statistics, no
// dropout) with the same parameter and running-statistics inputs: outputs are the model's.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::training {

// The opset of every node training adds (the training ops, the backward, the update): the forms of
// standard ops it emits (ReduceSum's axes input, ...) are opset 13's and later.
inline constexpr int kTrainingOpset = 17;

struct TrainingGraphOptions {
  float label_smoothing = 0.0f;
  // Fuse BatchNormTrain → Relu and BatchNormTrain → Add → Relu before the backward is built
  // (fuse_batch_norm_activations); off, the graph keeps them apart (tests compare the two).
  bool fuse_batch_norm = true;
  // Run fuse_pointwise over the finished step; off, every elementwise node stays (tests compare).
  bool fuse_pointwise = true;
};

struct TrainingGraph {
  ir::Graph graph;
  size_t model_inputs = 0;          // graph.inputs[0 .. model_inputs) are the model's own inputs
  ir::ValueId labels = ir::kNoValue;
  ir::ValueId dropout_seed = ir::kNoValue;  // kNoValue when the model has no Dropout
  std::vector<ir::ValueId> parameters;      // graph inputs, in order
  std::vector<ir::ValueId> running_stats;   // graph inputs, in order
  // Positions in graph.outputs.
  size_t loss_output = 0, logits_output = 1;
  size_t first_gradient_output = 2;         // gradient of parameters[k] at first_gradient_output + k
  size_t first_running_stat_output = 0;     // new value of running_stats[k] at this + k
};

// Gives every use of a float initializer in a parameter or running-statistics slot (see above) its
// own value: exporters
// merge initializers of equal contents (a fresh model's BatchNorm scales are all ones), which
// PyTorch trains as separate parameters. A second use of initializer "w" by node "n" becomes a
// new initializer "w@n" holding a copy; returns one entry per such use, for saving the model
// (the saved ONNX gets the new initializers and the rewired inputs).
struct UntiedUse {
  std::string node;         // the node whose input was rewired
  size_t input = 0;         // which input
  std::string initializer;  // the initializer it read before
  std::string untied;       // the new one it reads now
};
std::vector<UntiedUse> untie_shared_parameters(ir::Graph& inference);

// The initializers of `inference` that training updates: parameters (in first-use order) and
// BatchNormalization running statistics. Names are the ONNX initializer names.
struct TrainableValues {
  std::vector<ir::ValueId> parameters;
  std::vector<ir::ValueId> running_stats;
};
TrainableValues find_trainable_values(const ir::Graph& inference);

// `inference` must be an imported graph without the inference passes (no folded BatchNorm, no
// fusions), with output 0 the logits [N, C], and untie_shared_parameters applied (a running
// statistic two BatchNormalizations share is refused). Unsupported, naming the node, for an op on
// the way from a parameter to the loss that has no gradient rule.
Expected<TrainingGraph> build_training_graph(const ir::Graph& inference, const TrainingGraphOptions& options);

// The evaluation graph: `inference` with the same parameters and running statistics as inputs
// (after the model's inputs, in TrainableValues order).
Expected<ir::Graph> build_evaluation_graph(const ir::Graph& inference);

}  // namespace ucudnn::training
