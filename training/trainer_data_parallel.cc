// TrainerEngine with several ranks (trainer_engine.h; docs/TRAINING.md, "Several GPUs"): every
// rank's plan the same, rank 0's weights on every rank, the gradients averaged across ranks in
// buckets while the backward pass runs, and the check that the replicas stayed equal.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/core/fnv1a.h"
#include "training/trainer_engine.h"

namespace ucudnn::training {

// Note [data-parallel step]
// Each rank runs the whole step on its own batch (its share of the global batch: the data loader's
// shard_order). The loss is the mean over the rank's batch, so the mean of the ranks' gradients is
// the gradient of the global batch's mean loss: average_gradients replaces every rank's gradients
// by that mean (ReduceOp::kAverage) before the update, and since every rank then applies the same
// update to the same weights, the replicas stay equal (replica_difference checks it). Buckets are
// reduced while the backward pass goes on (Note [overlapped all-reduce]).
// BatchNormalization normalises each rank's batch by its own statistics, as PyTorch's DDP does
// without SyncBatchNorm; its running statistics are then the rank's own.
Status TrainerEngine::check_plans_agree() {
  const uint64_t hash = fnv1a(plan_json());
  const double high = static_cast<double>(hash >> 32), low = static_cast<double>(hash & 0xffffffffu);
  double values[4] = {high, low, -high, -low};  // max, and minus the min, of both halves
  UCUDNN_RETURN_IF_ERROR(comm_->all_reduce_host(values, 4, distributed::ReduceOp::kMax));
  if (values[0] != -values[2] || values[1] != -values[3])
    return invalid_argument("the ranks planned different training steps (rank " + std::to_string(comm_->rank()) +
                            "'s plan fingerprint is " + std::to_string(hash) + "): every rank must plan from the same "
                            "benchmark database — put it where every host reads it (--db) or copy rank 0's "
                            "to every host — with the same options");
  return Status::ok();
}

Status TrainerEngine::broadcast_state() {
  if (!data_parallel()) return Status::ok();
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("before sharing rank 0's weights"));
  for (runtime::Buffer* buffer : {params_.get(), states_.get(), stats_.get()})
    if (buffer->bytes() > 0)
      UCUDNN_RETURN_IF_ERROR(
          comm_->broadcast(buffer->data(), buffer->bytes(), 0).with_context("sharing rank 0's weights"));
  return Status::ok();
}

// Note [overlapped all-reduce]
// As in PyTorch's DDP, a bucket's reduction starts as soon as the backward pass has produced its
// gradients, while the rest of the backward pass runs. The executor calls back after queuing each
// step of stream 0 (Executor::set_step_callback); bucket b starts after the last step that writes
// or reads one of its gradients (plan_overlap), on the communicator's stream ordered after the
// backend's stream 0 (Backend::native_stream; on the CPU the step is done when it is queued, and
// MPI reduces at once). Every rank has the same plan (check_plans_agree), so all start the buckets
// in the same order. A gradient no step writes (copied in at the end of run_bound), a plan with
// side-stream steps, or a profiled step: those buckets start after the run. average_gradients
// then waits for all before the update reads the gradients.
void TrainerEngine::plan_overlap() {
  const runtime::Plan& plan = train_->executor->plan();
  const ir::Graph& g = train_->graph;
  buckets_after_step_.assign(plan.steps.size(), {});
  bucket_started_.assign(buckets_.size(), false);
  constexpr size_t kAfterRun = SIZE_MAX;
  std::vector<size_t> step_of(g.nodes.size(), kAfterRun);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (plan.steps[s].stream != 0) return;  // side-stream steps: every bucket after the run
    step_of[static_cast<size_t>(plan.steps[s].node)] = s;
  }
  std::vector<size_t> last_use(g.values.size(), 0);  // the last step reading each value
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (ir::ValueId v : g.nodes[n].inputs)
      if (v != ir::kNoValue) last_use[static_cast<size_t>(v)] = std::max(last_use[static_cast<size_t>(v)], step_of[n]);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    size_t ready = 0;
    for (size_t k = buckets_[b].first_parameter; k < buckets_[b].end_parameter; ++k) {
      const ir::ValueId v = g.outputs[layout_.first_gradient_output + k];
      const ir::NodeId producer = g.value(v).producer;
      ready = std::max({ready, producer < 0 ? kAfterRun : step_of[static_cast<size_t>(producer)],
                        last_use[static_cast<size_t>(v)]});
    }
    if (ready != kAfterRun) buckets_after_step_[ready].push_back(b);
  }
  train_->executor->set_step_callback([this](size_t step) { return start_buckets_after(step); });
}

Status TrainerEngine::start_buckets_after(size_t step) {
  if (step >= buckets_after_step_.size()) return Status::ok();
  for (size_t b : buckets_after_step_[step]) {
    const distributed::GradientBucket& bucket = buckets_[b];
    UCUDNN_RETURN_IF_ERROR(comm_->start_all_reduce(reinterpret_cast<float*>(at(*grads_, bucket.begin)),
                                                   (bucket.end - bucket.begin) / sizeof(float),
                                                   distributed::ReduceOp::kAverage, backend_->native_stream(0))
                               .with_context("averaging the gradients of parameters " +
                                             parameter(bucket.first_parameter).name + " .. " +
                                             parameter(bucket.end_parameter - 1).name + " across ranks"));
    bucket_started_[b] = true;
  }
  return Status::ok();
}

Status TrainerEngine::average_gradients() {
  // The step is done (run_bound synchronised): the buckets not started yet go now, then all finish.
  Status status = Status::ok();
  for (size_t b = 0; b < buckets_.size() && status.is_ok(); ++b)
    if (!bucket_started_[b])
      status = comm_->start_all_reduce(reinterpret_cast<float*>(at(*grads_, buckets_[b].begin)),
                                       (buckets_[b].end - buckets_[b].begin) / sizeof(float),
                                       distributed::ReduceOp::kAverage, nullptr);
  bucket_started_.assign(buckets_.size(), false);
  UCUDNN_RETURN_IF_ERROR(status.with_context("averaging the gradients across ranks"));
  return comm_->wait_reductions().with_context("averaging the gradients across ranks");
}

Expected<double> TrainerEngine::replica_difference() {
  if (!data_parallel() || comm_->size() == 1) return 0.0;
  // Rank 0's parameters into every rank's gradient buffer, then both to the host.
  UCUDNN_RETURN_IF_ERROR(backend_->copy_on_device(grads_->data(), params_->data(), params_->bytes(), "parameters"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the parameters"));
  UCUDNN_RETURN_IF_ERROR(comm_->broadcast(grads_->data(), grads_->bytes(), 0).with_context("comparing the replicas"));
  double largest = 0;
  for (size_t k = 0; k < layout_.parameters.size(); ++k) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor mine, queue_download(*params_, param_layout_.offsets[k], DType::kFloat32,
                                                        parameter(k).shape, "parameter"));
    UCUDNN_ASSIGN_OR_RETURN(Tensor first, queue_download(*grads_, param_layout_.offsets[k], DType::kFloat32,
                                                         parameter(k).shape, "rank 0's parameter"));
    UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the parameters to the host"));
    for (int64_t i = 0; i < mine.numel(); ++i) {
      const double d = std::fabs(double(mine.data<float>()[i]) - double(first.data<float>()[i]));
      if (!(d <= largest)) largest = std::isnan(d) ? HUGE_VAL : d;  // NaN counts as the largest difference
    }
  }
  UCUDNN_RETURN_IF_ERROR(comm_->all_reduce_host(&largest, 1, distributed::ReduceOp::kMax));
  return largest;
}

}  // namespace ucudnn::training
