// `ucudnn info MODEL`: what a model contains and whether ucudnn can run it.
#include <cstdio>

#include "tools/ucudnn/cli_args.h"
#include "tools/ucudnn/commands.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

namespace {

void print_io(const char* title, const std::vector<ModelInfo::Io>& list) {
  std::printf("%s:\n", title);
  for (const auto& io : list) {
    std::string dims;
    for (size_t i = 0; i < io.dims.size(); ++i) dims += (i ? ", " : "") + io.dims[i];
    std::printf("  %-24s %-8s [%s]\n", io.name.c_str(), io.dtype.c_str(), dims.c_str());
  }
}

// With --trainable: what `ucudnn train` would update, one line each.
void print_trainable(const TrainableTensors& t) {
  int64_t values = 0;
  for (const TensorInfo& p : t.parameters) values += shape_numel(p.shape);
  std::printf("trainable:  %zu parameters (%lld values), %zu running statistics\n", t.parameters.size(),
              static_cast<long long>(values), t.running_stats.size());
  for (const auto* list : {&t.parameters, &t.running_stats})
    for (const TensorInfo& p : *list)
      std::printf("  %-40s %s%s\n", p.name.c_str(), list == &t.parameters ? "" : "(running) ",
                  shape_to_string(p.shape).c_str());
}

}  // namespace

int cmd_info(int argc, char** argv) {
  auto args = Args::parse(argc, argv, {}, {"trainable"});
  if (!args) return report_error(args.status(), true);
  if (args->positional().size() != 1)
    return report_error(invalid_argument("usage: ucudnn info MODEL [--trainable]"), true);
  const std::string& path = args->positional()[0];
  auto summary = model_info(path);
  if (!summary) return report_error(summary.status());

  std::printf("model:      %s\n", path.c_str());
  std::printf("producer:   %s\n", summary->producer.c_str());
  std::printf("ir version: %lld, opset %d\n", static_cast<long long>(summary->ir_version), summary->opset);
  std::printf("parameters: %lld\n", static_cast<long long>(summary->parameter_count));
  print_io("inputs", summary->inputs);
  print_io("outputs", summary->outputs);
  if (args->has("trainable")) {
    auto trainable = trainable_tensors(path);
    if (!trainable) return report_error(trainable.status());
    print_trainable(*trainable);
  }
  std::printf("ops:\n");
  for (const auto& [op, count] : summary->op_counts) std::printf("  %-24s %d\n", op.c_str(), count);
  if (summary->unsupported.empty()) {
    // Every op is known; what the shape rules say of their attributes, dtypes and shapes.
    const Status imported = check_model_imports(path);
    if (imported.is_ok()) {
      std::printf("supported:  yes, every node\n");
      return 0;
    }
    if (imported.code() != StatusCode::kUnsupported && imported.code() != StatusCode::kInvalidModel)
      return report_error(imported);
    summary->unsupported.push_back(imported.to_string());
  }
  std::printf("unsupported (%zu):\n", summary->unsupported.size());
  for (const std::string& line : summary->unsupported) std::printf("  %s\n", line.c_str());
  return 1;
}

}  // namespace ucudnn::cli
