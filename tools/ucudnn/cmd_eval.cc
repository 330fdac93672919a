// `ucudnn eval MODEL --data DIR`: top-1 and top-5 accuracy of a model (an inference Session:
// the same road as `ucudnn run`) over a data set's validation split (or --split train). The last
// batch is padded with zeros; only its real samples count.
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "tools/ucudnn/cli_args.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/session_flags.h"
#include "tools/ucudnn/train_data.h"
#include "training/data/loader.h"
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

struct Counts {
  int64_t samples = 0, top1 = 0, top5 = 0;
};

Expected<Counts> evaluate(Session& session, std::shared_ptr<const data::Dataset> dataset, int workers) {
  const TensorInfo& input = session.inputs().front();
  data::LoaderOptions lo;
  lo.batch_size = input.shape[0];
  lo.shuffle = false;
  lo.num_threads = workers;
  UCUDNN_ASSIGN_OR_RETURN(auto loader, data::DataLoader::create(std::move(dataset), lo));
  loader->start_epoch(0);
  UCUDNN_ASSIGN_OR_RETURN(Tensor images, Tensor::allocate(DType::kFloat32, input.shape));
  Counts counts;
  while (true) {
    UCUDNN_ASSIGN_OR_RETURN(const data::Batch* batch, loader->next());
    if (batch == nullptr) break;
    const int64_t n = batch->labels.numel();
    std::memset(images.raw(), 0, images.nbytes());
    std::memcpy(images.raw(), batch->images.raw(), batch->images.nbytes());
    UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, session.run({images}));
    const Tensor& logits = outputs.front();
    const int64_t classes = logits.shape().back();
    for (int64_t i = 0; i < n; ++i) {
      const float* row = logits.data<float>() + i * classes;
      const float mine = row[batch->labels.data<int64_t>()[i]];
      int64_t above = 0;
      for (int64_t c = 0; c < classes; ++c) above += row[c] > mine;
      counts.top1 += above == 0;
      counts.top5 += above < 5;
    }
    counts.samples += n;
  }
  return counts;
}

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
  const TensorInfo& input = (*session)->inputs().front();
  if ((*session)->inputs().size() != 1 || input.shape.size() < 2)
    return report_error(unsupported("ucudnn eval feeds models with one image input [N, C, ...]"));
  const Shape sample(input.shape.begin() + 1, input.shape.end());
  auto dataset = open_dataset(args.get("data"), split_name == "val" ? data::Split::kVal : data::Split::kTrain, sample);
  if (!dataset) return report_error(dataset.status());
  const int64_t classes = (*session)->outputs().front().shape.back();
  Status fits = check_dataset_fits(**dataset, sample, classes, input.name);
  if (!fits.is_ok()) return report_error(fits);

  auto counts = evaluate(**session, *dataset, static_cast<int>(*workers));
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
