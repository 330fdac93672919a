// Op-table cases of the batch_norm_train family (docs/TRAINING.md): STUB, filled by the family's owner.
#include "tests/op_cases.h"

namespace ucudnn_test {

std::vector<OpCase> batch_norm_train_cases() { return {}; }

}  // namespace ucudnn_test
