// Op-table cases of the pooling_grad family (docs/TRAINING.md): STUB, filled by the family's owner.
#include "tests/op_cases.h"

namespace ucudnn_test {

std::vector<OpCase> pooling_grad_cases() { return {}; }

}  // namespace ucudnn_test
