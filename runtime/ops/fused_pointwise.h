// A FusedPointwise node's program decoded and checked (Note [pointwise programs],
// runtime/ir/pointwise_program.h): what its shape rule verifies and its kernels (runtime/cpu,
// runtime/cuda) run. Decoding checks everything an evaluation relies on — registers read only
// leaves and earlier instructions, opcodes known, immediates inside `constants`, the limits of
// pointwise_program.h — so a kernel indexes registers and leaves without further checks.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn {

struct PointwiseInstruction {
  ir::PointwiseOp op = ir::PointwiseOp::kAdd;
  int a = 0, b = 0;      // registers read (b: binary ops only, else 0)
  float p0 = 0, p1 = 0;  // the immediates the op reads (0 for those it does not)
};

struct PointwiseProgram {
  int leaves = 0;        // registers 0 .. leaves-1
  int concat_count = 0;  // > 0: inputs 0 .. concat_count-1 are joined into leaf 0
  int concat_axis = 0;   // normalized: 0 .. rank-1 (0 without a concat)
  std::vector<PointwiseInstruction> code;  // instruction i writes register leaves + i; the last is the output

  int registers() const { return leaves + static_cast<int>(code.size()); }
  // The node input leaf `leaf` is (for leaf 0 with a concat: its first piece).
  size_t input_of_leaf(int leaf) const {
    return concat_count > 0 && leaf > 0 ? static_cast<size_t>(concat_count + leaf - 1) : static_cast<size_t>(leaf);
  }
};

// Decodes `node`'s program for `num_inputs` inputs of rank `rank`. InvalidModel for a malformed
// program (a register read before it is written, an unknown opcode, immediates past `constants`),
// Unsupported past the limits of pointwise_program.h; messages name the instruction, not the node.
Expected<PointwiseProgram> decode_pointwise_program(const ir::Node& node, size_t num_inputs, int64_t rank);

// Each leaf's shape from the inputs' shapes (the concat leaf: its pieces joined along the axis),
// checking the pieces agree off the axis; errors as decode_pointwise_program.
Expected<std::vector<Shape>> pointwise_leaf_shapes(const PointwiseProgram& program, const std::vector<Shape>& inputs);

// The output shape the leaves broadcast to (numpy-style, equal ranks; the concat leaf must already
// have it); InvalidModel when they do not.
Expected<Shape> pointwise_output_shape(const PointwiseProgram& program, const std::vector<Shape>& leaf_shapes);

}  // namespace ucudnn
