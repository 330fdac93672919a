// Op-table cases of the softmax_loss family (docs/TRAINING.md): STUB, filled by the family's owner.
#include "tests/op_cases.h"

namespace ucudnn_test {

std::vector<OpCase> softmax_loss_cases() { return {}; }

}  // namespace ucudnn_test
