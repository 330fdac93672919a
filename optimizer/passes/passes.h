// Inference graph passes, run for every backend after import and before planning:
//   remove_identities      drop Identity, inference Dropout and a Pad whose pads are all 0 (their
//                          output aliases their input)
//   global_pool_from_reduce_mean  ReduceMean over H and W of a 4-D X becomes GlobalAveragePool
//                          (which runs channels-last), then Flatten where keepdims is 0
//   matmul_to_gemm         MatMul(A [..., K], B) with a constant B [K, N] becomes Reshape → Gemm →
//                          Reshape, an Add of a constant bias [N] after it the Gemm's C (a Linear
//                          layer on a channels-last activation: ConvNeXt)
//   channel_shuffle_to_gather  Reshape [N, C, H, W] → [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4),
//                          Reshape back (ShuffleNet's channel shuffle) becomes one Gather of the
//                          channels (which runs channels-last)
//   fold_pad_into_conv     a Pad with value 0 on the spatial axes that only Convs read (as X) becomes
//                          their padding ("same" padding written as Pad, as tf2onnx exports it); the
//                          GPU's only where each axis's two ends come out equal, the CPU's
//                          (fold_any_pad_into_conv) always
//   fold_batch_norm        Conv → BatchNormalization with constant parameters becomes one Conv
//                          with rescaled weights and a bias
//   fuse_conv_activation   Conv → Relu becomes one Conv with attribute "activation" = "Relu"
//                          (kernels apply it to their output; cuDNN fuses it)
//   fuse_add_activation    Add → Relu likewise (one elementwise pass instead of two)
//   fuse_conv_add          Conv → Add(·, z) → Relu becomes one Conv with a fourth input z
//                          (Note [fused nodes], runtime/ir/fusion.h); the CPU runs fuse_conv_any_add,
//                          which also joins an Add without the Relu
//   decompose_batch_norm   a BatchNormalization left unfolded (constant parameters) becomes
//                          Mul(x, scale) → Add(·, shift), scale and shift [1, C, 1, ..., 1]
//   fuse_pointwise         trees of elementwise nodes (and a Concat feeding one) become one
//                          FusedPointwise node (Note [pointwise programs], runtime/ir/pointwise_program.h)
//   fuse_depthwise_activation  (GPU) a depthwise Conv → FusedPointwise activation (SiLU, HardSwish,
//                          Sigmoid, Clip) becomes one Conv applying it in its epilogue
//   fuse_any_conv_activation  (CPU) the same for every Conv without a residual input (oneDNN
//                          applies it inside the convolution)
//   fuse_conv_bias         (GPU) a Conv's bias moves into the FusedPointwise that alone reads its
//                          output (added while the pointwise kernel reads Y, not as a pass of its own);
//                          a lone residual Add reading such a Conv first becomes a FusedPointwise
// One more pass is not part of run_inference_passes; the CUDA backend runs it
// when a session's layout is NHWC:
//   convert_to_channels_last  4-D activations between convolutions stored NHWC, with
//                          Transpose nodes at the boundaries (Note [channels-last],
//                          runtime/ir/layout.h)
// Each pass is a pure function of the graph: results stay within floating-point
// tolerance of the unmodified graph (tests/passes_test.cc checks both the
// structure and the numbers).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

struct PassStats {
  int identities_removed = 0;
  int batch_norms_folded = 0;
  int activations_fused = 0;
  int residuals_fused = 0;      // Conv → Add → Relu joins made one Conv
  int channels_last_nodes = 0;  // nodes that run channels-last
  int layout_transposes = 0;    // Transpose nodes added between the layouts
  int batch_norms_decomposed = 0;    // BatchNormalizations made Mul → Add
  int pointwise_fused = 0;           // FusedPointwise nodes made
  int pointwise_nodes_replaced = 0;  // the elementwise nodes and Concats they replaced
  int conv_biases_moved = 0;         // Conv biases given to the FusedPointwise reading the Conv
  int adds_made_pointwise = 0;       // lone Adds made FusedPointwise to take a Conv's bias (fuse_conv_bias)
  int reduce_means_made_global_pools = 0;  // global_pool_from_reduce_mean
  int channel_shuffles_made_gathers = 0;   // channel_shuffle_to_gather
  int pads_folded = 0;                     // fold_pad_into_conv
  int matmuls_made_gemms = 0;              // matmul_to_gemm
  int biases_folded_into_gemms = 0;        // matmul_to_gemm: Adds that became the Gemm's C
  int constant_reshapes_folded = 0;        // fold_constant_reshapes
};

Status remove_identities(ir::Graph& graph, PassStats* stats);
Status fold_constant_reshapes(ir::Graph& graph, PassStats* stats);
Status global_pool_from_reduce_mean(ir::Graph& graph, PassStats* stats);
Status matmul_to_gemm(ir::Graph& graph, PassStats* stats);
Status channel_shuffle_to_gather(ir::Graph& graph, PassStats* stats);
Status fold_pad_into_conv(ir::Graph& graph, PassStats* stats);
Status fold_any_pad_into_conv(ir::Graph& graph, PassStats* stats);
Status fold_batch_norm(ir::Graph& graph, PassStats* stats);
Status fuse_conv_activation(ir::Graph& graph, PassStats* stats);
Status fuse_add_activation(ir::Graph& graph, PassStats* stats);
Status fuse_conv_add(ir::Graph& graph, PassStats* stats);
Status fuse_conv_any_add(ir::Graph& graph, PassStats* stats);
Status decompose_batch_norm(ir::Graph& graph, PassStats* stats);
Status fuse_pointwise(ir::Graph& graph, PassStats* stats);
Status fuse_depthwise_activation(ir::Graph& graph, PassStats* stats);
Status fuse_any_conv_activation(ir::Graph& graph, PassStats* stats);
Status fuse_conv_bias(ir::Graph& graph, PassStats* stats);
Status convert_to_channels_last(ir::Graph& graph, PassStats* stats);
// The same with the Conv nodes named in `nchw_convs` kept NCHW (Note [layout regions],
// optimizer/layout_regions.h); InvalidArgument naming one that is no Conv of the graph.
Status convert_to_channels_last_except(ir::Graph& graph, PassStats* stats, const std::vector<std::string>& nchw_convs);
// The same over a training step (training/training_graph.h): also its Convs whose weight is a graph
// input (a parameter: transposed every step, its gradient transposed back) and its training ops
// (convolution and batch-norm gradients, pools' gradients; docs/TRAINING.md).
Status convert_training_step_to_channels_last(ir::Graph& graph, PassStats* stats);
// The training ops that pass runs channels-last (a 4-D X): every 4-D input and output of theirs takes the
// layout, a filter or its gradient as KRSC. ConvGradData, ConvGradFilter, BatchNormTrain, BatchNormGrad,
// MaxPoolGrad, AveragePoolGrad.
bool is_training_layout_op(OpKind op);
// Whether convert_to_channels_last can run `node` (of an NCHW graph) channels-last: a Conv
// with a constant weight, a pool, an elementwise op or Concat on 4-D operands, a Slice (constant
// starts and axes) or a Gather (1-D indices) of a 4-D X into a 4-D Y.
bool can_run_channels_last(const ir::Graph& graph, const ir::Node& node);

struct InferencePassOptions {
  // The GPU's passes, fuse_depthwise_activation and fuse_conv_bias: they pay where cuDNN adds a bias
  // as a pass of its own (unless a Relu is fused too) and where UCUDNN_DEPTHWISE's epilogue applies any
  // activation. Otherwise the CPU's, fuse_any_conv_activation: a CPU Conv adds its bias in its own
  // epilogue, and oneDNN applies any activation there too.
  bool gpu_fusions = true;
};

// All of them, in that order (the GPU's or the CPU's as `options` say); then prunes and validates the graph.
Expected<PassStats> run_inference_passes(ir::Graph& graph, const InferencePassOptions& options = {});

}  // namespace ucudnn::optimizer
