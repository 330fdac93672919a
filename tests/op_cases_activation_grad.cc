// Op-table cases of the activation_grad family (docs/TRAINING.md): STUB, filled by the family's owner.
#include "tests/op_cases.h"

namespace ucudnn_test {

std::vector<OpCase> activation_grad_cases() { return {}; }

}  // namespace ucudnn_test
