// Descriptor of FusedPointwise (Note [pointwise programs], runtime/ir/pointwise_program.h): an
// internal op only optimizer/passes/fuse_pointwise.cc creates. The shape rule decodes and checks
// the program (fused_pointwise.h) and broadcasts the leaves to the output; FLOPs count each
// instruction once per output element, the transcendental ones four times.
#include "runtime/ops/fused_pointwise.h"

#include <string>

#include "runtime/core/bytes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

using ir::PointwiseOp;

std::string instruction_name(size_t i) { return "program instruction " + std::to_string(i); }

// Register `r` may be read by instruction `i` of a program with `leaves` leaves.
Status check_register(int64_t r, size_t i, int leaves, const char* operand) {
  if (r >= 0 && r < leaves + static_cast<int64_t>(i)) return Status::ok();
  return invalid_model(instruction_name(i) + " reads register " + std::to_string(r) + " as its " + operand +
                       "; it may read only the " + std::to_string(leaves) + " leaves and the " + std::to_string(i) +
                       " registers written before it");
}

Expected<PointwiseInstruction> decode_instruction(const int64_t* word, size_t i, int leaves,
                                                  const std::vector<float>& constants) {
  if (word[0] < 0 || word[0] >= static_cast<int64_t>(PointwiseOp::kCount))
    return invalid_model(instruction_name(i) + " has unknown opcode " + std::to_string(word[0]));
  PointwiseInstruction ins;
  ins.op = static_cast<PointwiseOp>(word[0]);
  if (ins.op != PointwiseOp::kConstant) {
    UCUDNN_RETURN_IF_ERROR(check_register(word[1], i, leaves, "operand a"));
    ins.a = static_cast<int>(word[1]);
  }
  if (ir::pointwise_op_is_binary(ins.op)) {
    UCUDNN_RETURN_IF_ERROR(check_register(word[2], i, leaves, "operand b"));
    ins.b = static_cast<int>(word[2]);
  }
  const int immediates = ir::pointwise_op_immediates(ins.op);
  if (immediates > 0) {
    const int64_t k = word[3];
    if (k < 0 || k > static_cast<int64_t>(constants.size()) - immediates)
      return invalid_model(instruction_name(i) + " reads constants[" + std::to_string(k) + "] and " +
                           std::to_string(immediates - 1) + " after it; there are " +
                           std::to_string(constants.size()) + " constants");
    ins.p0 = constants[static_cast<size_t>(k)];
    if (immediates > 1) ins.p1 = constants[static_cast<size_t>(k) + 1];
  }
  return ins;
}

Status fused_pointwise_infer(InferContext& ctx) {
  const size_t n = ctx.num_inputs();
  if (n == 0) return ctx.error("needs at least one input");
  for (size_t i = 0; i < n; ++i) UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
  std::vector<Shape> inputs;
  for (size_t i = 0; i < n; ++i) inputs.push_back(ctx.input(i).shape);
  const auto rank = static_cast<int64_t>(inputs[0].size());
  for (size_t i = 1; i < n; ++i)
    if (static_cast<int64_t>(inputs[i].size()) != rank)
      return ctx.error("every input must have the output's rank (" + std::to_string(rank) + "); input " +
                       std::to_string(i) + " has shape " + shape_to_string(inputs[i]));
  auto fail = [&ctx](const Status& s) {
    return s.code() == StatusCode::kUnsupported ? ctx.unsupported_error(s.message()) : ctx.error(s.message());
  };
  Expected<PointwiseProgram> program = decode_pointwise_program(ctx.node(), n, rank);
  if (!program) return fail(program.status());
  Expected<std::vector<Shape>> leaves = pointwise_leaf_shapes(*program, inputs);
  if (!leaves) return fail(leaves.status());
  Expected<Shape> out = pointwise_output_shape(*program, *leaves);
  if (!out) return fail(out.status());
  ctx.set_output(0, DType::kFloat32, *out);
  return Status::ok();
}

int64_t fused_pointwise_flops(const InferContext& ctx) {
  const std::vector<int64_t>& words = ctx.attrs().get_ints(ir::kPointwiseProgramAttr);
  int64_t per_element = 0;
  for (size_t w = 0; w + ir::kInstructionWidth <= words.size(); w += ir::kInstructionWidth) {
    switch (static_cast<PointwiseOp>(words[w])) {
      case PointwiseOp::kConstant: break;
      case PointwiseOp::kSigmoid: case PointwiseOp::kTanh: case PointwiseOp::kElu: case PointwiseOp::kErf:
      case PointwiseOp::kHardSwish: case PointwiseOp::kHardSigmoid: case PointwiseOp::kExp: case PointwiseOp::kLog:
      case PointwiseOp::kSoftplus: case PointwiseOp::kPow: per_element += 4; break;
      default: per_element += 1;
    }
  }
  return saturating_mul(per_element, shape_numel(ctx.output(0).shape));
}

}  // namespace

Expected<PointwiseProgram> decode_pointwise_program(const ir::Node& node, size_t num_inputs, int64_t rank) {
  const ir::Attributes& attrs = node.attrs;
  if (!attrs.has(ir::kPointwiseProgramAttr)) return invalid_model("no 'program' attribute");
  const std::vector<int64_t>& words = attrs.get_ints(ir::kPointwiseProgramAttr);
  static const std::vector<float> kNoConstants;
  const std::vector<float>& constants =
      attrs.has(ir::kPointwiseConstantsAttr) ? attrs.get_floats(ir::kPointwiseConstantsAttr) : kNoConstants;
  PointwiseProgram program;
  const int64_t concat_count = attrs.has(ir::kPointwiseConcatCountAttr) ? attrs.get_int(ir::kPointwiseConcatCountAttr)
                                                                        : 0;
  if (concat_count < 0 || concat_count > static_cast<int64_t>(num_inputs))
    return invalid_model("concat_count " + std::to_string(concat_count) + " is not between 0 and the " +
                         std::to_string(num_inputs) + " inputs");
  if (concat_count > ir::kMaxConcatPieces)
    return unsupported("concat_count " + std::to_string(concat_count) + " is above the limit of " +
                       std::to_string(ir::kMaxConcatPieces) + " pieces");
  program.concat_count = static_cast<int>(concat_count);
  if (concat_count > 0) {
    const int64_t axis = attrs.has(ir::kPointwiseConcatAxisAttr) ? attrs.get_int(ir::kPointwiseConcatAxisAttr) : -1;
    const int64_t d = normalize_axis(axis, rank);
    if (d < 0) return invalid_model("concat_axis " + std::to_string(axis) + " is out of range for rank " +
                                    std::to_string(rank));
    program.concat_axis = static_cast<int>(d);
  }
  const int64_t leaves = static_cast<int64_t>(num_inputs) - concat_count + (concat_count > 0 ? 1 : 0);
  if (leaves > ir::kMaxPointwiseLeaves)
    return unsupported(std::to_string(leaves) + " leaves, above the limit of " +
                       std::to_string(ir::kMaxPointwiseLeaves));
  if (rank > ir::kMaxPointwiseRank)
    return unsupported("rank " + std::to_string(rank) + " is above the limit of " +
                       std::to_string(ir::kMaxPointwiseRank));
  program.leaves = static_cast<int>(leaves);
  if (words.empty() || words.size() % ir::kInstructionWidth != 0)
    return invalid_model("program has " + std::to_string(words.size()) + " ints, not one or more instructions of " +
                         std::to_string(ir::kInstructionWidth));
  const size_t count = words.size() / ir::kInstructionWidth;
  if (leaves + static_cast<int64_t>(count) > ir::kMaxPointwiseRegisters)
    return unsupported(std::to_string(leaves) + " leaves and " + std::to_string(count) + " instructions need " +
                       std::to_string(leaves + static_cast<int64_t>(count)) + " registers, above the limit of " +
                       std::to_string(ir::kMaxPointwiseRegisters));
  for (size_t i = 0; i < count; ++i) {
    UCUDNN_ASSIGN_OR_RETURN(PointwiseInstruction ins,
                            decode_instruction(&words[i * ir::kInstructionWidth], i, program.leaves, constants));
    program.code.push_back(ins);
  }
  return program;
}

Expected<std::vector<Shape>> pointwise_leaf_shapes(const PointwiseProgram& program, const std::vector<Shape>& inputs) {
  std::vector<Shape> leaves;
  if (program.concat_count > 0) {
    const auto axis = static_cast<size_t>(program.concat_axis);
    Shape joined = inputs[0];
    for (int p = 1; p < program.concat_count; ++p) {
      const Shape& piece = inputs[static_cast<size_t>(p)];
      for (size_t d = 0; d < joined.size(); ++d)
        if (d != axis && piece[d] != joined[d])
          return invalid_model("concat piece " + std::to_string(p) + " has shape " + shape_to_string(piece) +
                               ", unlike piece 0 " + shape_to_string(inputs[0]) + " off axis " +
                               std::to_string(axis));
      joined[axis] += piece[axis];
    }
    leaves.push_back(std::move(joined));
  }
  for (int leaf = program.concat_count > 0 ? 1 : 0; leaf < program.leaves; ++leaf)
    leaves.push_back(inputs[program.input_of_leaf(leaf)]);
  return leaves;
}

Expected<Shape> pointwise_output_shape(const PointwiseProgram& program, const std::vector<Shape>& leaf_shapes) {
  Shape out = leaf_shapes[0];
  for (size_t leaf = 1; leaf < leaf_shapes.size(); ++leaf) {
    const Shape& s = leaf_shapes[leaf];
    for (size_t d = 0; d < out.size(); ++d) {
      if (s[d] == out[d] || s[d] == 1) continue;
      if (out[d] != 1)
        return invalid_model("leaf " + std::to_string(leaf) + " of shape " + shape_to_string(s) +
                             " does not broadcast with " + shape_to_string(out));
      out[d] = s[d];
    }
  }
  if (program.concat_count > 0 && leaf_shapes[0] != out)
    return invalid_model("the concatenated leaf has shape " + shape_to_string(leaf_shapes[0]) +
                         "; it must be the output's shape " + shape_to_string(out));
  return out;
}

const OpDescriptor& describe_FusedPointwise() {
  static const OpDescriptor d{.kind = OpKind::kFusedPointwise,
                              .min_inputs = 1,
                              .max_inputs = ir::kMaxConcatPieces + ir::kMaxPointwiseLeaves - 1,
                              .min_opset = 1,
                              .attrs = {attr_required(ir::kPointwiseProgramAttr, ir::AttrType::kInts),
                                        attr_optional(ir::kPointwiseConstantsAttr, ir::AttrType::kFloats),
                                        attr_int(ir::kPointwiseConcatAxisAttr, -1),
                                        attr_int(ir::kPointwiseConcatCountAttr, 0),
                                        attr_string(ir::kPointwisePatternAttr, "")},
                              .infer = fused_pointwise_infer,
                              .flops = fused_pointwise_flops,
                              .internal = true};
  return d;
}

}  // namespace ucudnn
