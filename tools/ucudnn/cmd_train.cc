// `ucudnn train MODEL`: train a model on a data set (or synthetic data) with the Trainer
// (include/ucudnn/ucudnn.h): a progress line on stderr (terminals only), one JSON object per
// step and per epoch with --json, a summary at the end; --save writes the trained ONNX model,
// --checkpoint DIR keeps DIR/last.ckpt (every epoch, at the end, and on Ctrl-C), --resume
// continues from one exactly (same data order, learning rate and dropout draws).
//
// Several GPUs (docs/TRAINING.md): `--gpus N` starts N copies of this command, one per GPU
// (training/distributed/local_ranks.h); each copy — or each process mpirun or a torchrun-style
// launcher started — finds its rank in the environment, takes its GPU, joins the others
// (training/distributed/connect.h) and trains on its share of every global batch. Rank 0 alone
// prints, evaluates and writes checkpoints and the model.
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "tools/ucudnn/cli_args.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/profile_report.h"
#include "tools/ucudnn/session_flags.h"
#include "tools/ucudnn/train_data.h"
#include "training/checkpoint.h"
#include "training/distributed/communicator.h"
#include "training/distributed/connect.h"
#include "training/distributed/launch.h"
#include "training/distributed/local_ranks.h"
#include "training/data/loader.h"
#include "training/data/synthetic.h"
#include "training/schedule.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

namespace {

constexpr const char* kTrainUsage =
    "usage: ucudnn train MODEL (--data DIR | --synthetic) [--epochs N | --steps N] [options] [session flags]\n"
    "  --data DIR               an IDX folder (MNIST / Fashion-MNIST: {train,t10k}-*-ubyte[.gz]) or an\n"
    "                           ImageFolder tree (DIR/train/<class>/*.jpg|png, DIR/val/...)\n"
    "  --synthetic              random images and labels (a training-speed benchmark)\n"
    "  --epochs N               passes over the training set (default 1)\n"
    "  --steps N                stop after N steps in all (default: the epochs' steps)\n"
    "  --optimizer sgd|adamw    torch.optim.SGD or torch.optim.AdamW semantics (default sgd)\n"
    "  --lr X                   base learning rate (default 0.1 for sgd, 0.001 for adamw)\n"
    "  --momentum X, --dampening X, --nesterov   SGD (default 0, 0, off)\n"
    "  --weight-decay X         SGD: L2 added to the gradient; AdamW: decoupled (default 0, adamw 0.01)\n"
    "  --beta1 X, --beta2 X, --eps X            AdamW (default 0.9, 0.999, 1e-8)\n"
    "  --schedule SPEC          constant (default) | step,step_size=N,gamma=X | cosine[,min_lr=X], each\n"
    "                           with optional ,warmup_steps=N[,warmup_start_factor=X]\n"
    "  --label-smoothing X      cross-entropy label smoothing in [0, 1) (default 0)\n"
    "  --seed N                 data order, augmentation and dropout (default 0)\n"
    "  --workers N              data loading threads (default 4)\n"
    "  --save FILE              write the trained model (ONNX) at the end\n"
    "  --checkpoint DIR         keep DIR/last.ckpt: after every epoch, at the end and on Ctrl-C\n"
    "  --resume FILE|DIR        continue from a checkpoint (DIR: DIR/last.ckpt)\n"
    "  --no-eval                skip the validation pass after each epoch\n"
    "  --no-shuffle             visit the training set in its own order (comparisons with other frameworks)\n"
    "  --json                   one JSON object per line on stdout (steps, epochs, summary)\n"
    "  --profile                after training and saving, one more step (not saved) timed per node:\n"
    "                           time by op type and the 10 slowest nodes (the step's and the update's)\n"
    "  --gpus N                 data-parallel on N GPUs of this host: one process per GPU, gradients\n"
    "                           averaged with NCCL; --batch is per GPU (the global batch is N times it).\n"
    "                           Under mpirun or torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK,\n"
    "                           MASTER_ADDR, MASTER_PORT) every process is one rank without --gpus\n"
    "  --bucket-size SIZE       several ranks: gradients averaged in buckets of about SIZE (default 25MiB)\n"
    "Training runs in NCHW; --batch is the training batch (of each rank).\n";

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }

Expected<double> get_double(const Args& args, const std::string& flag, double fallback) {
  if (!args.has(flag)) return fallback;
  const std::string text = args.get(flag);
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  return invalid_argument("--" + flag + " '" + text + "' is not a number");
}

// What the command line asks for beyond the trainer's options.
struct RunConfig {
  std::string data_dir;
  bool synthetic = false;
  int64_t epochs = 1, max_steps = -1;
  std::string schedule = "constant";
  uint64_t seed = 0;
  int workers = 4;
  std::string save_path, checkpoint_dir, resume;
  bool eval = true, json = false, quiet = false, shuffle = true, profile = false;
};

Status parse_flags(const Args& args, TrainOptions* options, RunConfig* run) {
  UCUDNN_RETURN_IF_ERROR(session_options_from_flags(args, &options->session));
  if (args.has("plan")) return invalid_argument("--plan is for inference; training makes its own plan");
  run->data_dir = args.get("data");
  run->synthetic = args.has("synthetic");
  if (run->synthetic == !run->data_dir.empty()) return invalid_argument("give either --data DIR or --synthetic");
  UCUDNN_ASSIGN_OR_RETURN(run->epochs, args.get_int("epochs", 1, 1));
  UCUDNN_ASSIGN_OR_RETURN(run->max_steps, args.get_int("steps", -1, 1));
  const std::string optimizer = args.get("optimizer", "sgd");
  if (optimizer != "sgd" && optimizer != "adamw")
    return invalid_argument("--optimizer '" + optimizer + "': sgd or adamw");
  options->optimizer = optimizer == "sgd" ? Optimizer::kSgd : Optimizer::kAdamW;
  const bool sgd = options->optimizer == Optimizer::kSgd;
  UCUDNN_ASSIGN_OR_RETURN(options->learning_rate, get_double(args, "lr", sgd ? 0.1 : 0.001));
  UCUDNN_ASSIGN_OR_RETURN(options->momentum, get_double(args, "momentum", 0.0));
  UCUDNN_ASSIGN_OR_RETURN(options->dampening, get_double(args, "dampening", 0.0));
  UCUDNN_ASSIGN_OR_RETURN(options->weight_decay, get_double(args, "weight-decay", sgd ? 0.0 : 0.01));
  UCUDNN_ASSIGN_OR_RETURN(options->beta1, get_double(args, "beta1", 0.9));
  UCUDNN_ASSIGN_OR_RETURN(options->beta2, get_double(args, "beta2", 0.999));
  UCUDNN_ASSIGN_OR_RETURN(options->epsilon, get_double(args, "eps", 1e-8));
  UCUDNN_ASSIGN_OR_RETURN(double smoothing, get_double(args, "label-smoothing", 0.0));
  options->label_smoothing = static_cast<float>(smoothing);
  options->nesterov = args.has("nesterov");
  if (!sgd && (args.has("momentum") || args.has("dampening") || args.has("nesterov")))
    return invalid_argument("--momentum, --dampening and --nesterov are SGD's; AdamW takes --beta1/--beta2");
  UCUDNN_ASSIGN_OR_RETURN(int64_t seed, args.get_int("seed", 0, 0));
  run->seed = static_cast<uint64_t>(seed);
  options->seed = run->seed;
  UCUDNN_ASSIGN_OR_RETURN(int64_t workers, args.get_int("workers", 4, 0, 256));
  run->workers = static_cast<int>(workers);
  run->schedule = args.get("schedule", "constant");
  run->save_path = args.get("save");
  run->checkpoint_dir = args.get("checkpoint");
  run->resume = args.get("resume");
  run->eval = !args.has("no-eval");
  run->shuffle = !args.has("no-shuffle");
  run->profile = args.has("profile");
  run->json = args.has("json");
  if (args.has("bucket-size")) {
    auto bytes = parse_byte_size(args.get("bucket-size"));
    if (!bytes || *bytes < sizeof(float)) return invalid_argument("--bucket-size '" + args.get("bucket-size") +
                                                                  "': a size of at least 4 bytes (25MiB, 4096)");
    options->bucket_bytes = *bytes;
  }
  run->quiet = args.has("quiet") || run->json || !isatty(STDERR_FILENO);
  return Status::ok();
}

// What identifies the training a checkpoint belongs to: the parameters' names and shapes.
std::string training_fingerprint(const Trainer& trainer) {
  std::string text;
  for (const TensorInfo& p : trainer.parameters()) text += p.name + shape_to_string(p.shape) + ";";
  for (const TensorInfo& s : trainer.running_stats()) text += s.name + shape_to_string(s.shape) + ";";
  return text;
}

std::string checkpoint_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? (std::filesystem::path(path) / "last.ckpt").string() : path;
}

Status write_checkpoint(const Trainer& trainer, const RunConfig& run, int64_t epoch, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("--checkpoint " + dir + ": cannot create the folder (" + ec.message() + ")");
  training::Checkpoint ckpt;
  UCUDNN_ASSIGN_OR_RETURN(ckpt.tensors, trainer.state());
  ckpt.step = trainer.steps_done();
  ckpt.epoch = epoch;
  ckpt.rng_state = {run.seed};
  ckpt.graph_fingerprint = training_fingerprint(trainer);
  ckpt.optimizer_config = trainer.optimizer();
  return training::save_checkpoint((std::filesystem::path(dir) / "last.ckpt").string(), ckpt);
}

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}


// The ranks agree to stop when any of them was interrupted (Ctrl-C reaches them at different steps).
Expected<bool> interrupted_anywhere(distributed::Communicator* comm) {
  double flag = g_interrupted ? 1 : 0;
  if (comm != nullptr && comm->size() > 1)
    UCUDNN_RETURN_IF_ERROR(comm->all_reduce_host(&flag, 1, distributed::ReduceOp::kMax));
  return flag > 0;
}

int train(const std::string& model_path, TrainOptions options, RunConfig run) {
  distributed::Communicator* comm = options.communicator.get();
  const int world = comm ? comm->size() : 1, rank = comm ? comm->rank() : 0;
  auto fail = [&](const Status& status) {
    return report_error(world > 1 ? status.with_context("rank " + std::to_string(rank) + " of " +
                                                        std::to_string(world))
                                  : status);
  };
  const bool speaks = rank == 0;  // rank 0 prints, evaluates and saves
  if (!speaks) run.quiet = true;
  auto loaded = Trainer::load(model_path, options);
  if (!loaded) return fail(loaded.status());
  Trainer& trainer = **loaded;
  if (trainer.inputs().size() != 1 || trainer.inputs().front().shape.size() < 2)
    return fail(unsupported("ucudnn train feeds models with one image input [N, C, ...]; '" + model_path +
                            "' takes " + std::to_string(trainer.inputs().size()) + " inputs"));
  const TensorInfo& input = trainer.inputs().front();
  const int64_t batch = input.shape[0];
  const Shape sample(input.shape.begin() + 1, input.shape.end());

  const int64_t classes = trainer.outputs().front().shape.back();  // the logits' width
  std::shared_ptr<const data::Dataset> train_set, val_set;
  if (run.synthetic) {
    // One epoch of --steps batches (default 100): a speed benchmark needs no more.
    const int64_t samples = batch * world * (run.max_steps > 0 ? run.max_steps : 100);
    auto synthetic = data::SyntheticDataset::create(samples, sample, classes, run.seed);
    if (!synthetic) return fail(synthetic.status());
    train_set = std::move(*synthetic);
  } else {
    auto opened = open_dataset(run.data_dir, data::Split::kTrain, sample);
    if (!opened) return fail(opened.status());
    train_set = std::move(*opened);
    if (run.eval && rank == 0) {
      auto val = open_dataset(run.data_dir, data::Split::kVal, sample);
      if (val) val_set = std::move(*val);
      else if (val.status().code() != StatusCode::kNotFound) return fail(val.status());
    }
  }
  for (const auto& set : {train_set, val_set}) {
    if (set == nullptr) continue;
    Status fits = check_dataset_fits(*set, sample, classes, input.name);
    if (!fits.is_ok()) return fail(fits);
  }

  data::LoaderOptions lo;
  lo.batch_size = batch;
  lo.shuffle = run.shuffle;
  lo.drop_last = true;
  lo.seed = run.seed;
  lo.num_threads = run.workers;
  lo.rank = rank;
  lo.world_size = world;
  auto loader = data::DataLoader::create(train_set, lo);
  if (!loader) return fail(loader.status());
  const int64_t per_epoch = (*loader)->batches_per_epoch();
  const int64_t total_steps = run.max_steps > 0 ? std::min(run.max_steps, run.epochs * per_epoch)
                                                : run.epochs * per_epoch;
  auto schedule = training::parse_schedule(run.schedule, options.learning_rate, total_steps);
  if (!schedule) return report_error(schedule.status(), true);

  int64_t start_epoch = 0;
  if (!run.resume.empty()) {
    const std::string file = checkpoint_file(run.resume);
    auto ckpt = training::load_checkpoint(file);
    if (!ckpt) return fail(ckpt.status());
    if (ckpt->graph_fingerprint != training_fingerprint(trainer))
      return fail(invalid_argument("--resume " + file + ": the checkpoint is of another model"));
    if (ckpt->rng_state != std::vector<uint64_t>{run.seed})
      return fail(invalid_argument("--resume " + file + ": saved with another --seed (data order and dropout "
                                   "follow it); give the run's --seed again"));
    if (ckpt->optimizer_config != trainer.optimizer())
      return fail(invalid_argument("--resume " + file + ": saved with optimizer '" + ckpt->optimizer_config +
                                   "', this run asks for '" + trainer.optimizer() + "'"));
    Status loaded_state = trainer.load_state(ckpt->tensors);
    if (!loaded_state.is_ok()) return fail(loaded_state.with_context("--resume " + file));
    start_epoch = trainer.steps_done() / per_epoch;
  }

  std::signal(SIGINT, on_sigint);
  // Whole step; its device part; the batch's copy; the gradients' averaging across ranks; waiting for
  // the loader's next batch, and staging an epoch's first (outside the step).
  std::vector<double> step_ms, compute_ms, upload_ms, all_reduce_ms, data_ms;
  double last_loss = 0, epoch_loss = 0;
  int64_t epoch_correct = 0, epoch_samples = 0;
  std::optional<Accuracy> last_val;
  const auto started = std::chrono::steady_clock::now();
  int64_t epoch = start_epoch;
  bool interrupted = false;
  for (; epoch < run.epochs && trainer.steps_done() < total_steps && !interrupted; ++epoch) {
    (*loader)->start_epoch(epoch);
    epoch_loss = 0;
    epoch_correct = epoch_samples = 0;
    // Resuming inside an epoch: its first batches were trained on already.
    for (int64_t skip = trainer.steps_done() - epoch * per_epoch; skip > 0; --skip) {
      auto b = (*loader)->next();
      if (!b) return fail(b.status());
    }
    // Each step trains on the batch staged before it and stages the next one meanwhile (Trainer::step_staged):
    // the batch's copy to the device overlaps the step before. The first batch of an epoch is staged alone.
    bool staged = false;
    while (trainer.steps_done() < total_steps) {
      auto stop = interrupted_anywhere(comm);
      if (!stop) return fail(stop.status());
      if (*stop) {
        interrupted = true;
        break;
      }
      const auto waited = std::chrono::steady_clock::now();
      if (!staged) {
        auto first = (*loader)->next();
        if (!first) return fail(first.status());
        if (*first == nullptr) break;
        Status stage = trainer.stage({(*first)->images}, (*first)->labels);
        if (!stage.is_ok()) return fail(stage);
      }
      const data::Batch* ahead = nullptr;  // the next step's batch; none at the epoch's or the run's end
      if (trainer.steps_done() + 1 < total_steps) {
        auto next = (*loader)->next();
        if (!next) return fail(next.status());
        ahead = *next;
      }
      const double data_wait =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - waited).count();
      trainer.set_learning_rate(training::learning_rate(*schedule, trainer.steps_done()));
      const auto t0 = std::chrono::steady_clock::now();
      auto result =
          ahead != nullptr ? trainer.step_staged({ahead->images}, ahead->labels) : trainer.step_staged({}, {});
      if (!result) return fail(result.status());
      staged = ahead != nullptr;
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      step_ms.push_back(ms);
      compute_ms.push_back(result->compute_ms);
      upload_ms.push_back(result->upload_ms);
      all_reduce_ms.push_back(result->all_reduce_ms);
      data_ms.push_back(data_wait);
      last_loss = result->loss;
      epoch_loss += result->loss;
      epoch_correct += result->correct;
      epoch_samples += batch * world;  // the global batch: loss and correct are every rank's
      const int64_t done = trainer.steps_done();
      if (run.json && speaks) {
        std::printf("%s\n", nlohmann::json{{"event", "step"}, {"step", done}, {"epoch", epoch + 1},
                                           {"loss", result->loss},
                                           {"accuracy", double(result->correct) / double(batch * world)},
                                           {"lr", trainer.learning_rate()}, {"ms", ms},
                                           {"compute_ms", result->compute_ms}, {"upload_ms", result->upload_ms},
                                           {"all_reduce_ms", result->all_reduce_ms}, {"data_ms", data_wait},
                                           {"images_per_s", batch * world * 1000.0 / ms}}
                                .dump()
                                .c_str());
        std::fflush(stdout);
      } else if (!run.quiet) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const double eta = elapsed / double(std::max<int64_t>(1, step_ms.size())) * double(total_steps - done);
        std::fprintf(stderr, "\repoch %lld/%lld  step %lld/%lld  loss %.4f  %.0f img/s  ETA %s   ",
                     static_cast<long long>(epoch + 1), static_cast<long long>(run.epochs),
                     static_cast<long long>(done), static_cast<long long>(total_steps), result->loss,
                     batch * world * 1000.0 / ms, format_duration(eta).c_str());
      }
    }
    if (interrupted) break;
    if (val_set) {
      auto acc = measure_accuracy(val_set, input.shape, run.workers,
                                  [&](const Tensor& images) { return trainer.evaluate({images}); });
      if (!acc) return fail(acc.status());
      last_val = *acc;
    }
    const double steps_in_epoch = std::max<double>(1, double(epoch_samples) / double(batch * world));
    if (run.json && speaks) {
      nlohmann::json e{{"event", "epoch"}, {"epoch", epoch + 1}, {"train_loss", epoch_loss / steps_in_epoch},
                       {"train_accuracy", epoch_samples ? double(epoch_correct) / epoch_samples : 0.0}};
      if (last_val) e["val_top1"] = double(last_val->top1) / last_val->samples;
      std::printf("%s\n", e.dump().c_str());
    } else if (!run.quiet) {
      std::fprintf(stderr, "\n");
    }
    if (!run.json && speaks) {
      std::printf("epoch %lld: train loss %.4f, train accuracy %.2f %%", static_cast<long long>(epoch + 1),
                  epoch_loss / steps_in_epoch, epoch_samples ? 100.0 * epoch_correct / epoch_samples : 0.0);
      if (last_val)
        std::printf(", val top-1 %.2f %% top-5 %.2f %% (%lld samples)", 100.0 * last_val->top1 / last_val->samples,
                    100.0 * last_val->top5 / last_val->samples, static_cast<long long>(last_val->samples));
      std::printf("\n");
    }
    if (!run.checkpoint_dir.empty() && speaks) {
      Status saved = write_checkpoint(trainer, run, epoch + 1, run.checkpoint_dir);
      if (!saved.is_ok()) return fail(saved);
    }
  }
  std::signal(SIGINT, SIG_DFL);

  if (interrupted || !run.checkpoint_dir.empty()) {
    const std::string dir = run.checkpoint_dir.empty() ? "ucudnn-train-interrupted" : run.checkpoint_dir;
    Status saved = speaks ? write_checkpoint(trainer, run, epoch, dir) : Status::ok();
    if (!saved.is_ok()) return fail(saved);
    if (interrupted) {
      if (!speaks) return 130;
      std::fprintf(stderr, "\ninterrupted at step %lld: checkpoint saved to %s/last.ckpt (continue with --resume %s)\n",
                   static_cast<long long>(trainer.steps_done()), dir.c_str(), dir.c_str());
      return 130;
    }
  }
  if (!run.save_path.empty() && speaks) {
    Status saved = trainer.save(run.save_path);
    if (!saved.is_ok()) return fail(saved);
  }
  // Data-parallel: every rank must hold rank 0's parameters (Note [data-parallel step],
  // training/trainer_data_parallel.cc).
  auto replica_difference = trainer.replica_difference();
  if (!replica_difference) return fail(replica_difference.status());
  if (*replica_difference != 0)
    return fail(internal_error("the " + std::to_string(world) + " ranks' parameters differ after training (largest "
                               "difference " + std::to_string(*replica_difference) + "): a bug in data-parallel "
                               "training"));

  // Steady state: the medians after the first three steps (warm-up, caches).
  auto steady_median = [](const std::vector<double>& v) {
    return percentile_median(std::vector<double>(v.size() > 3 ? v.begin() + 3 : v.begin(), v.end()));
  };
  const double med = steady_median(step_ms), med_compute = steady_median(compute_ms),
               med_upload = steady_median(upload_ms);
  const MemoryStats memory = trainer.memory();
  const int64_t steps = trainer.steps_done();  // before --profile's extra step (timed, not saved)
  std::optional<std::vector<StepProfile>> profile;
  if (run.profile) {
    (*loader)->start_epoch(epoch);
    auto next = (*loader)->next();
    if (!next) return fail(next.status());
    if (*next != nullptr) {
      auto timed = trainer.profile_step({(*next)->images}, (*next)->labels);
      if (!timed) return fail(timed.status());
      profile = std::move(*timed);
    }
  }
  double profile_total_ms = 0;  // the step's and the update's nodes
  if (profile)
    for (const StepProfile& p : *profile) profile_total_ms += p.ms;
  if (!speaks) return 0;
  const double images_per_s = med > 0 ? batch * world * 1000.0 / med : 0.0;
  if (run.json) {
    nlohmann::json s{{"event", "summary"},
                     {"model", model_path},
                     {"batch", batch},
                     {"steps", steps},
                     {"final_loss", last_loss},
                     {"median_step_ms", med},
                     {"median_compute_ms", med_compute},
                     {"median_upload_ms", med_upload},
                     {"median_all_reduce_ms", steady_median(all_reduce_ms)},
                     {"median_data_ms", steady_median(data_ms)},
                     {"images_per_s", images_per_s},
                     {"ranks", world},
                     {"global_batch", batch * world},
                     {"replicas_identical", true},
                     {"predicted_conv_ms", trainer.predicted_conv_ms()},
                     {"memory", {{"arena_bytes", memory.arena_bytes},
                                 {"workspace_bytes", memory.workspace_bytes},
                                 {"largest_workspace_bytes", memory.largest_workspace_bytes},
                                 {"weight_bytes", memory.weight_bytes},
                                 {"kernel_bytes", memory.kernel_bytes},
                                 {"total_bytes", memory.peak_bytes()}}}};
    if (last_val) s["val_top1"] = double(last_val->top1) / last_val->samples;
    if (profile) s["profile"] = profile_json(*profile, profile_total_ms);
    std::printf("%s\n", s.dump().c_str());
  } else {
    std::printf("trained %s: %lld steps of batch %lld, final loss %.4f\n", model_path.c_str(),
                static_cast<long long>(steps), static_cast<long long>(batch * world), last_loss);
    if (world > 1)
      std::printf("  %d ranks (%s) of batch %lld each; parameters identical on every rank at the end\n", world,
                  comm->name(), static_cast<long long>(batch));
    std::printf("  median step %.2f ms (%.0f images/s): on the device %.2f ms, copying the batch %.2f ms\n", med,
                images_per_s, med_compute, med_upload);
    std::printf("  memory %s (activations %s, workspace %s, weights/grads/state %s)\n",
                format_bytes(memory.peak_bytes()).c_str(),
                format_bytes(memory.arena_bytes).c_str(), memory.workspace_text().c_str(),
                format_bytes(memory.weight_bytes).c_str());
    if (!run.save_path.empty()) std::printf("  saved %s\n", run.save_path.c_str());
    if (profile) print_profile(*profile, profile_total_ms, device_name(options.session.device));
  }
  return 0;
}

}  // namespace

// `--gpus N` outside a launcher: N copies of this command, one per GPU (local_ranks.h).
int run_gpu_ranks(int gpus, int argc, char** argv) {
  if (!distributed::have_nccl())
    return report_error(unsupported("--gpus " + std::to_string(gpus) + ": this build of ucudnn has no NCCL (it comes "
                                    "with the CUDA toolkit; configure with the CUDA backend)"));
  const int present = distributed::gpu_count();
  if (present < gpus)
    return report_error(unsupported("--gpus " + std::to_string(gpus) + ": this machine has " + std::to_string(present) +
                                    " GPU" + (present == 1 ? "" : "s") +
                                    (present == 0 ? " (no CUDA device or driver)" : "")));
  char self[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return report_error(io_error("--gpus: cannot find this program's path (/proc/self/exe)"));
  std::vector<std::string> command = {std::string(self, static_cast<size_t>(length)), "train"};
  for (int i = 0; i < argc; ++i) command.emplace_back(argv[i]);
  auto status = distributed::run_local_ranks(command, gpus);
  if (!status) return report_error(status.status());
  return *status;
}

// This process's rank, GPU and communicator when a launcher (or --gpus) made it one of several;
// `options` unchanged otherwise. Runs before anything starts CUDA (select_local_gpu).
Status join_ranks(const Args& args, const distributed::World& world, TrainOptions* options) {
  UCUDNN_ASSIGN_OR_RETURN(int64_t gpus, args.get_int("gpus", 0, 1, 4096));
  if (gpus > 0 && gpus != world.size)
    return invalid_argument("--gpus " + std::to_string(gpus) + " in a launch of " + std::to_string(world.size) +
                            " ranks (" + world.describe() + "): give the launcher's count, or leave --gpus out");
  const bool cpu = args.get("device", "auto") == "cpu";
  if (cpu && gpus > 0) return invalid_argument("--gpus with --device cpu: CPU ranks are started by mpirun -np N");
  if (!cpu) UCUDNN_RETURN_IF_ERROR(distributed::select_local_gpu(world));
  UCUDNN_RETURN_IF_ERROR(session_options_from_flags(args, &options->session));
  if (options->session.device == Device::kCuda && !cuda_available())
    return unsupported(world.describe() + ": no GPU for local rank " + std::to_string(world.local_rank) +
                       " on this host (one GPU per rank)");
  UCUDNN_ASSIGN_OR_RETURN(options->communicator,
                          distributed::connect_world(world, options->session.device == Device::kCuda));
  return Status::ok();
}

int cmd_train(int argc, char** argv) {
  const std::set<std::string> value_flags = flag_union(
      kSessionValueFlags, {"data", "epochs", "steps", "optimizer", "lr", "momentum", "dampening", "weight-decay",
                           "beta1", "beta2", "eps", "schedule", "label-smoothing", "seed", "workers", "save",
                           "checkpoint", "resume", "gpus", "bucket-size"});
  const std::set<std::string> bool_flags =
      flag_union(kSessionBoolFlags, {"synthetic", "nesterov", "no-eval", "no-shuffle", "json", "profile", "help"});
  auto args = Args::parse(argc, argv, value_flags, bool_flags);
  if (!args) {
    std::fprintf(stderr, "%s%s", kTrainUsage, kSessionFlagsHelp);
    return report_error(args.status(), true);
  }
  if (args->has("help")) {
    std::printf("%s%s", kTrainUsage, kSessionFlagsHelp);
    return 0;
  }
  if (args->positional().size() != 1) {
    std::fprintf(stderr, "%s", kTrainUsage);
    return report_error(invalid_argument("expected one MODEL"), true);
  }
  auto world = distributed::discover_world(distributed::process_environment());
  if (!world) return report_error(world.status(), true);
  TrainOptions options;
  if (!world->distributed() && args->has("gpus")) {
    auto gpus = args->get_int("gpus", 0, 1, 4096);
    if (!gpus) return report_error(gpus.status(), true);
    if (args->get("device", "auto") == "cpu")
      return report_error(invalid_argument("--gpus with --device cpu: CPU ranks are started by mpirun -np N"), true);
    return run_gpu_ranks(static_cast<int>(*gpus), argc, argv);
  }
  if (world->distributed()) {
    Status joined = join_ranks(*args, *world, &options);
    if (!joined.is_ok()) return report_error(joined.with_context(world->describe()));
  }
  RunConfig run;
  Status parsed = parse_flags(*args, &options, &run);
  if (!parsed.is_ok()) return report_error(parsed, true);
  return train(args->positional()[0], std::move(options), run);
}

}  // namespace ucudnn::cli
