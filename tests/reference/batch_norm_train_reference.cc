// Naive double-precision references of the batch_norm_train family: STUB, filled by the family's owner.
#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> batch_norm_train_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  (void)inputs;
  return unsupported("no reference for " + node.describe() + " yet");
}

}  // namespace ucudnn::reference
