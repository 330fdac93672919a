// The binary ops with bool results (runtime/ops/logic.cc): one list, from which each backend's kernel
// table of them comes.
#pragma once

#define UCUDNN_FOR_EACH_COMPARISON(X) \
  X(Equal) X(Less) X(Greater) X(LessOrEqual) X(GreaterOrEqual) X(And) X(Or) X(Xor)
