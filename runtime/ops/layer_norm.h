// LayerNormalization's axis, read by its shape rule (layer_norm.cc) and by its lowering
// (onnx_import/lowering/layer_norm.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/ir/attributes.h"

namespace ucudnn {

// The `axis` attribute of a LayerNormalization whose X has rank `rank`, as a dim index; -1 when out of range.
int64_t layer_norm_axis(const ir::Attributes& attrs, size_t rank);

}  // namespace ucudnn
