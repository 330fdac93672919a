// training_reference: dispatch to the family references (training_reference.h).
#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> training_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kConvGradData: case OpKind::kConvGradFilter: return conv_grad_reference(node, inputs);
    case OpKind::kActivationGrad: case OpKind::kPReluGrad: case OpKind::kDropoutTrain:
      return activation_grad_reference(node, inputs);
    case OpKind::kMaxPoolGrad: case OpKind::kAveragePoolGrad: return pooling_grad_reference(node, inputs);
    case OpKind::kBatchNormTrain: case OpKind::kBatchNormGrad: return batch_norm_train_reference(node, inputs);
    case OpKind::kSoftmaxGrad: case OpKind::kLogSoftmaxGrad: case OpKind::kSoftmaxCrossEntropyMean:
    case OpKind::kSoftmaxCrossEntropyMeanGrad: case OpKind::kReduceSum: case OpKind::kExpand:
    case OpKind::kNegativeLogLikelihoodLoss: case OpKind::kSoftmaxCrossEntropyLoss:
      return softmax_loss_reference(node, inputs);
    case OpKind::kSgdUpdate: case OpKind::kAdamWUpdate: return optimizer_update_reference(node, inputs);
    default: return unsupported("no training reference for " + node.describe());
  }
}

}  // namespace ucudnn::reference
