// run_inference_passes: the inference passes in order (see passes.h).
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

Expected<PassStats> run_inference_passes(ir::Graph& graph, const InferencePassOptions& options) {
  PassStats stats;
  UCUDNN_RETURN_IF_ERROR(remove_identities(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(fold_constant_reshapes(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(global_pool_from_reduce_mean(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(matmul_to_gemm(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(channel_shuffle_to_gather(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(options.gpu_fusions ? fold_pad_into_conv(graph, &stats)
                                              : fold_any_pad_into_conv(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(fold_batch_norm(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(fuse_conv_activation(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(fuse_add_activation(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(options.gpu_fusions ? fuse_conv_add(graph, &stats) : fuse_conv_any_add(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(decompose_batch_norm(graph, &stats));
  UCUDNN_RETURN_IF_ERROR(fuse_pointwise(graph, &stats));
  if (options.gpu_fusions) {
    UCUDNN_RETURN_IF_ERROR(fuse_depthwise_activation(graph, &stats));
    UCUDNN_RETURN_IF_ERROR(fuse_conv_bias(graph, &stats));
  } else {
    UCUDNN_RETURN_IF_ERROR(fuse_any_conv_activation(graph, &stats));
  }
  UCUDNN_RETURN_IF_ERROR(graph.validate().with_context("after the inference passes"));
  return stats;
}

}  // namespace ucudnn::optimizer
