// Op-table cases of the optimizer_update family (docs/TRAINING.md): STUB, filled by the family's owner.
#include "tests/op_cases.h"

namespace ucudnn_test {

std::vector<OpCase> optimizer_update_cases() { return {}; }

}  // namespace ucudnn_test
