// Naive double-precision references of the softmax_loss family: STUB, filled by the family's owner.
#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> softmax_loss_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  (void)inputs;
  return unsupported("no reference for " + node.describe() + " yet");
}

}  // namespace ucudnn::reference
