// `ucudnn eval MODEL --data DIR`: top-1 and top-5 accuracy of a model (an inference Session:
// the same road as `ucudnn run`) over a data set's validation split (or --split train). The last
// batch is padded with zeros; only its real samples count.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "tools/ucudnn/cli_args.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/session_flags.h"
#include "tools/ucudnn/train_data.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

namespace {

constexpr const char* kEvalUsage =
    "usage: ucudnn eval MODEL --data DIR [--split val|train] [--workers N] [--json] [session flags]\n"
    "  --data DIR               an IDX folder (MNIST / Fashion-MNIST) or an ImageFolder tree (DIR/val/...)\n"
    "  --split val|train        which part to evaluate (default val; IDX: t10k)\n"
    "  --workers N              data loading threads (default 4)\n"
    "  --json                   one JSON object on stdout\n"
    "The model's first output is the logits [N, classes]; --batch is the evaluation batch.\n";

int eval(const std::string& model_path, const Args& args) {
  SessionOptions options;
  Status parsed = session_options_from_flags(args, &options);
  if (!parsed.is_ok()) return report_error(parsed, true);
  const std::string split_name = args.get("split", "val");
  if (split_name != "val" && split_name != "train")
    return report_error(invalid_argument("--split '" + split_name + "': val or train"), true);
  if (!args.has("data")) return report_error(invalid_argument("--data DIR is required"), true);
  auto workers = args.get_int("workers", 4, 0, 256);
  if (!workers) return report_error(workers.status(), true);

  auto session = Session::load(model_path, options);
  if (!session) return report_error(session.status());
  if ((*session)->inputs().size() != 1 || (*session)->inputs().front().shape.size() < 2)
    return report_error(unsupported("ucudnn eval feeds models with one image input [N, C, ...]"));
  const TensorInfo& input = (*session)->inputs().front();
  const Shape sample(input.shape.begin() + 1, input.shape.end());
  auto dataset = open_dataset(args.get("data"), split_name == "val" ? data::Split::kVal : data::Split::kTrain, sample);
  if (!dataset) return report_error(dataset.status());
  const int64_t classes = (*session)->outputs().front().shape.back();
  Status fits = check_dataset_fits(**dataset, sample, classes, input.name);
  if (!fits.is_ok()) return report_error(fits);

  auto counts = measure_accuracy(*dataset, input.shape, static_cast<int>(*workers),
                                 [&](const Tensor& images) { return (*session)->run({images}); });
  if (!counts) return report_error(counts.status());
  const double top1 = counts->samples ? double(counts->top1) / counts->samples : 0;
  const double top5 = counts->samples ? double(counts->top5) / counts->samples : 0;
  if (args.has("json")) {
    std::printf("%s\n", nlohmann::json{{"model", model_path},
                                       {"data", (*dataset)->describe()},
                                       {"samples", counts->samples},
                                       {"top1", top1},
                                       {"top5", top5}}
                            .dump()
                            .c_str());
  } else {
    std::printf("%s on %s\n  top-1 %.2f %%, top-5 %.2f %% (%lld samples)\n", model_path.c_str(),
                (*dataset)->describe().c_str(), 100 * top1, 100 * top5, static_cast<long long>(counts->samples));
  }
  return 0;
}

}  // namespace

int cmd_eval(int argc, char** argv) {
  const std::set<std::string> value_flags = flag_union(kSessionValueFlags, {"data", "split", "workers"});
  const std::set<std::string> bool_flags = flag_union(kSessionBoolFlags, {"json", "help"});
  auto args = Args::parse(argc, argv, value_flags, bool_flags);
  if (!args) {
    std::fprintf(stderr, "%s%s", kEvalUsage, kSessionFlagsHelp);
    return report_error(args.status(), true);
  }
  if (args->has("help")) {
    std::printf("%s%s", kEvalUsage, kSessionFlagsHelp);
    return 0;
  }
  if (args->positional().size() != 1) {
    std::fprintf(stderr, "%s", kEvalUsage);
    return report_error(invalid_argument("expected one MODEL"), true);
  }
  return eval(args->positional()[0], *args);
}

}  // namespace ucudnn::cli
