// BatchNormTrain with its activation (Note [batch norm with its activation], runtime/ops/batch_norm_train.cc):
// the pass training/fuse_batch_norm.h on small graphs written by hand — what fuses (BatchNormTrain → Relu,
// BatchNormTrain → Add → Relu with Z before or after the BatchNormTrain, either Add operand) against the
// graph it must make, and what must stay apart; the fused forms' shape rules; the fused BatchNormTrain's
// gradient rule against finite differences; and a training step of a small residual CNN built with and
// without the fusion (TrainingGraphOptions::fuse_batch_norm), whose loss, logits, gradients and running
// statistics must agree on every backend present. The fused kernels against their references: the op
// table (tests/op_cases_batch_norm_train.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/ir/fusion.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/support/backend_runner.h"
#include "tests/support/gradient_check.h"
#include "tests/support/graph_builder.h"
#include "tests/support/graph_compare.h"
#include "tests/support/training_step_compare.h"
#include "training/fuse_batch_norm.h"
#include "training/training_graph.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::StatusCode;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;
namespace training = ucudnn::training;

// ---- the pass -------------------------------------------------------------------------------

// The inputs of one BatchNormTrain: scale, B, running mean and running var [C], graph inputs named
// "<name>/scale", ... as the training graph has them.
struct BatchNormInputs {
  ir::ValueId scale, bias, mean, var;
};

BatchNormInputs batch_norm_inputs(GraphBuilder& b, const std::string& name, int64_t channels) {
  return {b.input(name + "/scale", {channels}), b.input(name + "/B", {channels}),
          b.input(name + "/mean", {channels}), b.input(name + "/var", {channels})};
}

// BatchNormTrain(x, ...) [+ Z, activation] with its five outputs.
std::vector<ir::ValueId> batch_norm_train(GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in,
                                          ir::ValueId z = ir::kNoValue, const std::string& activation = "") {
  const Shape c = {b.shape(x)[1]};
  ir::Attributes attrs;
  attrs.set("epsilon", 1e-5f);
  attrs.set("momentum", 0.9f);
  if (!activation.empty()) attrs.set(ir::kFusedActivationAttr, activation);
  std::vector<ir::ValueId> inputs = {x, in.scale, in.bias, in.mean, in.var};
  if (z != ir::kNoValue) inputs.push_back(z);
  return b.node(OpKind::kBatchNormTrain, std::move(inputs), {b.shape(x), c, c, c, c}, std::move(attrs));
}

// Runs the pass on `graph`; its counts, and the graph still valid.
training::BatchNormFusion fuse(ir::Graph& graph) {
  auto fused = training::fuse_batch_norm_activations(graph);
  EXPECT_TRUE(fused.has_value()) << fused.status().to_string();
  if (!fused) return {};
  const ucudnn::Status valid = graph.validate();
  EXPECT_TRUE(valid.is_ok()) << valid.to_string();
  return *fused;
}

TEST(FuseBatchNorm, ReluIsFused) {
  auto build = [](bool fused) {
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {2, 3, 4, 4});
    const BatchNormInputs in = batch_norm_inputs(b, "bn", 3);
    if (fused) {
      b.output(batch_norm_train(b, x, in, ir::kNoValue, "Relu")[0], "out");
    } else {
      b.output(b.relu(batch_norm_train(b, x, in)[0]), "out");
    }
    return b.finish();
  };
  ir::Graph graph = build(false);
  const ir::ValueId y = graph.nodes[0].outputs[0], out = graph.outputs[0];
  const training::BatchNormFusion fusion = fuse(graph);
  EXPECT_EQ(fusion.relus, 1);
  EXPECT_EQ(fusion.residuals, 0);
  EXPECT_TRUE(same_graph(build(true), graph));
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].name, "BatchNormTrain_0") << "the fused node keeps the BatchNormTrain's name";
  EXPECT_EQ(fusion.map(y), ir::kNoValue) << "the BatchNormTrain's own Y is gone";
  EXPECT_EQ(graph.nodes[0].outputs[0], fusion.map(out)) << "the fused node writes the Relu's output value";
  EXPECT_EQ(graph.value(graph.outputs[0]).name, "out");
}

// A ResNet block's ending whose shortcut (here another BatchNormTrain: the downsample branch) comes
// after the main BatchNormTrain: the fused node takes the Relu's place, after Z; the shortcut's
// BatchNormTrain, whose Y the Add also reads, stays apart. Both operand orders of the Add.
TEST(FuseBatchNorm, ResidualAddAndReluAreFused) {
  for (bool z_first : {false, true}) {
    SCOPED_TRACE(z_first ? "Add(Z, Y)" : "Add(Y, Z)");
    auto build = [z_first](bool fused) {
      GraphBuilder b;
      const ir::ValueId x = b.input("x", {2, 4, 3, 3});
      const ir::ValueId shortcut_x = b.input("shortcut_x", {2, 4, 3, 3});
      const BatchNormInputs main_in = batch_norm_inputs(b, "main", 4);
      const BatchNormInputs shortcut_in = batch_norm_inputs(b, "shortcut", 4);
      if (fused) {
        const ir::ValueId z = batch_norm_train(b, shortcut_x, shortcut_in)[0];
        b.output(batch_norm_train(b, x, main_in, z, "Relu")[0], "out");
      } else {
        const ir::ValueId y = batch_norm_train(b, x, main_in)[0];
        const ir::ValueId z = batch_norm_train(b, shortcut_x, shortcut_in)[0];
        b.output(b.relu(z_first ? b.add(z, y) : b.add(y, z)), "out");
      }
      return b.finish();
    };
    ir::Graph graph = build(false);
    const training::BatchNormFusion fusion = fuse(graph);
    EXPECT_EQ(fusion.relus, 0);
    EXPECT_EQ(fusion.residuals, 1);
    EXPECT_TRUE(same_graph(build(true), graph));
    ASSERT_EQ(graph.nodes.size(), 2u);
    EXPECT_EQ(graph.nodes[1].name, "BatchNormTrain_0");
    EXPECT_EQ(graph.nodes[0].name, "BatchNormTrain_1");
  }
}

// What stays apart: the graph after the pass is the graph before it.
TEST(FuseBatchNorm, UnfusableGraphsStayAsTheyAre) {
  struct Case {
    std::string name;
    void (*build)(GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in);
  };
  const std::vector<Case> cases = {
      {"Y read twice", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const ir::ValueId y = batch_norm_train(b, x, in)[0];
         b.output(b.relu(y));
         b.output(b.identity(y));
       }},
      {"Y a graph output", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const ir::ValueId y = batch_norm_train(b, x, in)[0];
         b.output(b.relu(y));
         b.output(y);
       }},
      {"Add(Y, Y)", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const ir::ValueId y = batch_norm_train(b, x, in)[0];
         b.output(b.relu(b.add(y, y)));
       }},
      {"Add broadcasting Z", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const ir::ValueId z = b.input("z", {1, 3, 1, 1});
         const ir::ValueId y = batch_norm_train(b, x, in)[0];
         b.output(b.relu(b.node(OpKind::kAdd, {y, z}, {b.shape(y)})[0]));
       }},
      {"Add output read twice", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const ir::ValueId z = b.input("z", {2, 3, 4, 4});
         const ir::ValueId sum = b.add(batch_norm_train(b, x, in)[0], z);
         b.output(b.relu(sum));
         b.output(b.identity(sum));
       }},
      {"Add without a Relu", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const ir::ValueId z = b.input("z", {2, 3, 4, 4});
         b.output(b.same_shape(OpKind::kSigmoid, {b.add(batch_norm_train(b, x, in)[0], z)}));
       }},
      {"another activation", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         b.output(b.same_shape(OpKind::kSigmoid, {batch_norm_train(b, x, in)[0]}));
       }},
      {"statistics read", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         const std::vector<ir::ValueId> bn = batch_norm_train(b, x, in);
         b.output(b.identity(bn[3]));
         b.output(b.relu(bn[0]));
       }},
      {"already fused", [](GraphBuilder& b, ir::ValueId x, const BatchNormInputs& in) {
         b.output(b.relu(batch_norm_train(b, x, in, ir::kNoValue, "Relu")[0]));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {2, 3, 4, 4});
    c.build(b, x, batch_norm_inputs(b, "bn", 3));
    const ir::Graph before = b.finish();
    ir::Graph graph = before;
    const training::BatchNormFusion fusion = fuse(graph);
    EXPECT_EQ(fusion.relus + fusion.residuals, 0);
    EXPECT_TRUE(same_graph(before, graph));
  }
}

// ---- the fused forms' shape rules and gradient rule --------------------------------------------

TEST(FusedBatchNormShapes, RefuseWhatTheFormsDoNotAllow) {
  const Shape x = {2, 3, 4}, c = {3};
  const auto stats = [&c] { return std::vector<InputSpec>{input(c, 0.5, 1.5), input(c), input(c)}; };
  struct Refused {
    std::string name;
    OpKind op;
    std::vector<InputSpec> inputs;
    AttrList attrs;
    int outputs;
    std::string mentions;
  };
  std::vector<InputSpec> train = {input(x), input(c), input(c), input(c), input(c, 0.5, 2.0)};
  std::vector<InputSpec> grad = {input(x), input(x)};
  for (const InputSpec& s : stats()) grad.push_back(s);
  auto with = [](std::vector<InputSpec> inputs, InputSpec extra) {
    inputs.push_back(std::move(extra));
    return inputs;
  };
  const AttrList relu = {{"activation", std::string("Relu")}};
  const std::vector<Refused> cases = {
      {"bn_residual_broadcast", OpKind::kBatchNormTrain, with(train, input({1, 3, 1})), relu, 5, "X's shape"},
      {"bn_sigmoid", OpKind::kBatchNormTrain, train, {{"activation", std::string("Sigmoid")}}, 5, "Sigmoid"},
      {"bn_grad_relu_without_y", OpKind::kBatchNormGrad, grad, relu, 3, "input 5"},
      {"bn_grad_y_without_relu", OpKind::kBatchNormGrad, with(grad, input(x)), {}, 3, "input 5"},
      {"bn_grad_dz_without_relu", OpKind::kBatchNormGrad, grad, {}, 4, "output 3"},
      {"bn_grad_y_shape", OpKind::kBatchNormGrad, with(grad, input({2, 3, 2})), relu, 3, "X's shape"},
  };
  for (const Refused& r : cases) {
    SCOPED_TRACE(r.name);
    auto built = make_one_node_graph(r.name, r.op, 17, r.inputs, r.attrs, r.outputs, seed_for(r.name));
    ASSERT_FALSE(built.has_value()) << "the shape rule accepted it";
    EXPECT_EQ(built.status().code(), StatusCode::kInvalidModel) << built.status().to_string();
    EXPECT_NE(built.status().message().find("'" + r.name + "'"), std::string::npos) << built.status().to_string();
    EXPECT_NE(built.status().message().find(r.mentions), std::string::npos) << built.status().to_string();
  }
}

// Z's values are ±3.5 .. ±4.5 and |scale · x̂ + B| stays under 2.8, so Y's sign is Z's: a mask that mixes
// within every channel, and no finite-difference step crosses the Relu's kink.
InputSpec residual_far_from_the_kink(const Shape& x) {
  return input_values(x, {3.6, -3.9, 4.1, -3.5, -4.4, 3.8, -4.0, 4.5, 3.7});
}

TEST(FusedBatchNormGradient, ResidualAndRelu) {
  const Shape x = {3, 2, 3, 4};
  check_gradients({.name = "batch_norm_train_residual_relu",
                   .op = OpKind::kBatchNormTrain,
                   .inputs = {input(x), input({2}, 0.5, 1.0), input({2}, -0.2, 0.2), input({2}), input({2}, 0.5, 2),
                              residual_far_from_the_kink(x)},
                   .attrs = {{"activation", std::string("Relu")}},
                   .outputs = 5,
                   .seeded_outputs = {0},
                   .wrt = {0, 1, 2, 5},
                   .step = 1e-2,
                   .max_elements = 72});
}

// Only Z needs a gradient: the rule gives it dY through the Relu alone (ActivationGrad).
TEST(FusedBatchNormGradient, ResidualAloneThroughTheRelu) {
  const Shape x = {3, 2, 3, 4};
  check_gradients({.name = "batch_norm_train_residual_relu_z_only",
                   .op = OpKind::kBatchNormTrain,
                   .inputs = {input(x), input({2}, 0.5, 1.0), input({2}, -0.2, 0.2), input({2}), input({2}, 0.5, 2),
                              residual_far_from_the_kink(x)},
                   .attrs = {{"activation", std::string("Relu")}},
                   .outputs = 5,
                   .seeded_outputs = {0},
                   .wrt = {5},
                   .step = 1e-2,
                   .max_elements = 72});
}

// A residual without an activation: Z's gradient is dY itself.
TEST(FusedBatchNormGradient, ResidualWithoutActivation) {
  const Shape x = {4, 3, 5};
  check_gradients({.name = "batch_norm_train_residual",
                   .op = OpKind::kBatchNormTrain,
                   .inputs = {input(x), input({3}, 0.5, 1.5), input({3}), input({3}), input({3}, 0.5, 2), input(x)},
                   .outputs = 5,
                   .seeded_outputs = {0},
                   .wrt = {0, 1, 2, 5},
                   .step = 1e-2,
                   .max_elements = 60});
}

// ---- a training step with and without the fusion ---------------------------------------------------

// A small residual CNN as an imported inference graph: Conv → BN → Relu, then Conv → BN and a
// downsample Conv → BN joined by Add → Relu (the shortcut's BN after the main one in node order),
// GlobalAveragePool, Flatten, Gemm: logits [4, 3].
ir::Graph residual_cnn() {
  GraphBuilder b;
  uint32_t seed = 100;
  auto weight = [&b, &seed](const std::string& name, const Shape& shape, float low = -0.5f, float high = 0.5f) {
    return b.constant(name, random_tensor(shape, seed++, low, high));
  };
  auto batch_norm = [&](const std::string& name, ir::ValueId x) {
    return b.batch_norm(x, weight(name + ".scale", {4}, 0.5f, 1.5f), weight(name + ".bias", {4}),
                        weight(name + ".mean", {4}), weight(name + ".var", {4}, 0.5f, 1.5f), 1e-5f);
  };
  const ir::ValueId x = b.input("x", {4, 3, 6, 6});
  const ir::ValueId r1 =
      b.relu(batch_norm("bn1", b.conv(x, weight("w1", {4, 3, 3, 3}), weight("b1", {4}), {.pad = 1})));
  const ir::ValueId y2 = batch_norm("bn2", b.conv(r1, weight("w2", {4, 4, 3, 3}), weight("b2", {4}), {.pad = 1}));
  const ir::ValueId yd = batch_norm("bn_down", b.conv(r1, weight("wd", {4, 4, 1, 1}), weight("bd", {4})));
  const ir::ValueId pooled = b.flatten(b.global_average_pool(b.relu(b.add(y2, yd))));
  ir::Attributes gemm;
  gemm.set("transB", int64_t{1});
  b.output(b.node(OpKind::kGemm, {pooled, weight("fc.w", {3, 4}), weight("fc.b", {3})}, {{4, 3}}, gemm)[0],
           "logits");
  ir::Graph graph = b.finish();
  for (ir::Node& node : graph.nodes) ucudnn::fill_default_attributes(node);  // as the importer leaves them
  return graph;
}

int count_nodes(const ir::Graph& graph, OpKind op, bool (*also)(const ir::Node&) = nullptr) {
  int count = 0;
  for (const ir::Node& node : graph.nodes) count += node.op == op && (also == nullptr || also(node));
  return count;
}
bool has_relu(const ir::Node& node) { return ir::fused_activation(node) == "Relu"; }
bool has_sixth_input(const ir::Node& node) { return node.inputs.size() == 6; }
bool has_fourth_output(const ir::Node& node) { return node.outputs.size() == 4; }

TEST(FusedBatchNormTraining, StepEqualsTheUnfusedStep) {
  const ir::Graph inference = residual_cnn();
  // The batch-norm fusion alone: no pointwise fusion on either side.
  training::TrainingGraphOptions fused_options;
  fused_options.fuse_pointwise = false;
  training::TrainingGraphOptions unfused_options = fused_options;
  unfused_options.fuse_batch_norm = false;
  auto unfused = training::build_training_graph(inference, unfused_options);
  ASSERT_TRUE(unfused.has_value()) << unfused.status().to_string();
  auto fused = training::build_training_graph(inference, fused_options);
  ASSERT_TRUE(fused.has_value()) << fused.status().to_string();

  // The fusion happened: no Relu, Add-then-Relu or ActivationGrad is left; two BatchNormTrains carry
  // the Relu, one the residual, and their gradients are the fused BatchNormGrads (one with dZ).
  const ir::Graph& f = fused->graph;
  EXPECT_EQ(count_nodes(f, OpKind::kRelu), 0);
  EXPECT_EQ(count_nodes(f, OpKind::kActivationGrad), 0);
  EXPECT_EQ(count_nodes(f, OpKind::kBatchNormTrain), 3);
  EXPECT_EQ(count_nodes(f, OpKind::kBatchNormTrain, has_relu), 2);
  EXPECT_EQ(count_nodes(f, OpKind::kBatchNormTrain, has_sixth_input), 1);
  EXPECT_EQ(count_nodes(f, OpKind::kBatchNormGrad), 3);
  EXPECT_EQ(count_nodes(f, OpKind::kBatchNormGrad, has_relu), 2);
  EXPECT_EQ(count_nodes(f, OpKind::kBatchNormGrad, has_fourth_output), 1);
  const ir::Graph& u = unfused->graph;
  EXPECT_EQ(count_nodes(u, OpKind::kRelu), 2);
  EXPECT_EQ(count_nodes(u, OpKind::kActivationGrad), 2);
  EXPECT_EQ(count_nodes(u, OpKind::kBatchNormTrain, has_relu), 0);
  EXPECT_LT(f.nodes.size(), u.nodes.size());

  // The same interface: inputs and outputs in the same order, of the same names and shapes.
  ASSERT_EQ(f.inputs.size(), u.inputs.size());
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    EXPECT_EQ(f.value(f.inputs[i]).name, u.value(u.inputs[i]).name) << "input " << i;
    EXPECT_EQ(f.value(f.inputs[i]).shape, u.value(u.inputs[i]).shape) << "input " << i;
  }
  ASSERT_EQ(f.outputs.size(), u.outputs.size());
  EXPECT_EQ(fused->parameters.size(), unfused->parameters.size());
  EXPECT_EQ(fused->running_stats.size(), unfused->running_stats.size());
  for (size_t k = 0; k < fused->parameters.size(); ++k)
    EXPECT_EQ(f.value(fused->parameters[k]).name, u.value(unfused->parameters[k]).name) << "parameter " << k;
  EXPECT_EQ(f.value(fused->labels).name, "labels");
  EXPECT_EQ(f.value(f.outputs[fused->logits_output]).name, "logits");

  // Loss, logits, every gradient, every running statistic.
  expect_same_step_everywhere(u, f, training_inputs(inference, u), "fused vs unfused training step",
                              StepNeeds::kFusedBatchNorm);
}

// A CNN with SiLU activations, x · sigmoid(x), and a residual Add: elementwise work
// in the forward and the backward that fuse_pointwise can join (the training graph's own pass).
ir::Graph silu_cnn() {
  GraphBuilder b;
  uint32_t seed = 300;
  auto weight = [&b, &seed](const std::string& name, const Shape& shape) {
    return b.constant(name, random_tensor(shape, seed++, -0.5f, 0.5f));
  };
  auto silu = [&b](ir::ValueId v) { return b.same_shape(OpKind::kMul, {v, b.same_shape(OpKind::kSigmoid, {v})}); };
  const ir::ValueId x = b.input("x", {4, 3, 6, 6});
  const ir::ValueId a = silu(b.conv(x, weight("w1", {4, 3, 3, 3}), weight("b1", {4}), {.pad = 1}));
  const ir::ValueId c = silu(b.conv(a, weight("w2", {4, 4, 3, 3}), weight("b2", {4}), {.pad = 1}));
  const ir::ValueId pooled = b.flatten(b.global_average_pool(b.add(c, a)));
  ir::Attributes gemm;
  gemm.set("transB", int64_t{1});
  b.output(b.node(OpKind::kGemm, {pooled, weight("fc.w", {3, 4}), weight("fc.b", {3})}, {{4, 3}}, gemm)[0],
           "logits");
  ir::Graph graph = b.finish();
  for (ir::Node& node : graph.nodes) ucudnn::fill_default_attributes(node);
  return graph;
}

// TrainingGraphOptions::fuse_pointwise: the step with its elementwise trees fused computes what the
// step without does, on every backend present, and the trainer's ids still name the right values.
TEST(FusedPointwiseTraining, StepEqualsTheUnfusedStep) {
  const ir::Graph inference = silu_cnn();
  training::TrainingGraphOptions plain_options;
  plain_options.fuse_pointwise = false;
  auto plain = training::build_training_graph(inference, plain_options);
  ASSERT_TRUE(plain.has_value()) << plain.status().to_string();
  auto fused = training::build_training_graph(inference, {});
  ASSERT_TRUE(fused.has_value()) << fused.status().to_string();
  const ir::Graph& f = fused->graph;
  const ir::Graph& u = plain->graph;
  EXPECT_EQ(count_nodes(u, OpKind::kFusedPointwise), 0);
  EXPECT_GE(count_nodes(f, OpKind::kFusedPointwise), 1);
  EXPECT_LT(f.nodes.size(), u.nodes.size());
  ASSERT_EQ(f.inputs.size(), u.inputs.size());
  for (size_t i = 0; i < f.inputs.size(); ++i) EXPECT_EQ(f.value(f.inputs[i]).name, u.value(u.inputs[i]).name);
  ASSERT_EQ(fused->parameters.size(), plain->parameters.size());
  for (size_t k = 0; k < fused->parameters.size(); ++k)
    EXPECT_EQ(f.value(fused->parameters[k]).name, u.value(plain->parameters[k]).name) << "parameter " << k;
  EXPECT_EQ(f.value(fused->labels).name, "labels");

  expect_same_step_everywhere(u, f, training_inputs(inference, u), "fused vs plain pointwise training step");
}

}  // namespace
}  // namespace ucudnn_test
