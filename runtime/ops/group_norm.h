// Which form of GroupNormalization's Scale and B an opset has, for its shape rule (group_norm.cc) and its
// lowering (onnx_import/lowering/group_norm.h).
#pragma once

namespace ucudnn {

// True from opset 21, which made Scale and B per channel ([C]); opset 18 had them per group ([num_groups]).
bool group_norm_per_channel(int opset);

}  // namespace ucudnn
