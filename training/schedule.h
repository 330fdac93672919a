// Learning-rate schedules: the learning rate of every update as a pure function of the step.
//
// learning_rate(schedule, step) is the rate of update step + 1 (step 0 = before the first update),
// matching what PyTorch's schedulers leave in the optimizer after `step` calls of scheduler.step():
//   constant  base_lr                                               (ConstantLR with factor 1)
//   step      base_lr · gamma^floor(e / step_size)                  (StepLR)
//   cosine    min_lr + (base_lr − min_lr) · (1 + cos(π·e/T)) / 2    (CosineAnnealingLR, closed form,
//             T = total_steps − warmup_steps; for e ≥ T it stays at min_lr where PyTorch would rise again)
// where e = step − warmup_steps, preceded, when warmup_steps > 0, by a linear warm-up for
// step < warmup_steps: base_lr · (f + (1 − f) · step / warmup_steps), f = warmup_start_factor —
// exactly SequentialLR([LinearLR(start_factor=f, total_iters=warmup_steps), main], milestones=[warmup_steps]).
// tests/schedule_test.cc checks these against PyTorch (scripts/gen_optimizer_reference.py).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/status.h"

namespace ucudnn::training {

enum class ScheduleKind { kConstant, kStep, kCosine };

struct LrSchedule {
  ScheduleKind kind = ScheduleKind::kConstant;
  double base_lr = 0.1;
  int64_t step_size = 1;  // step: updates between decays
  double gamma = 0.1;     // step: the decay factor
  int64_t total_steps = 0;  // cosine: updates in the whole run, warm-up included
  double min_lr = 0.0;      // cosine: the rate at the end
  int64_t warmup_steps = 0;           // 0: no warm-up
  double warmup_start_factor = 0.1;   // the warm-up starts at this fraction of base_lr
};

// The learning rate of update step + 1 (see above). `schedule` must pass validate_schedule; step >= 0.
double learning_rate(const LrSchedule& schedule, int64_t step);

// InvalidArgument naming the field when a schedule cannot run: base_lr not positive and finite,
// step_size < 1, gamma not positive and finite, cosine without total_steps > warmup_steps, min_lr outside
// [0, base_lr], warmup_steps < 0, warmup_start_factor not in (0, 1].
Status validate_schedule(const LrSchedule& schedule);

// Parses a schedule as the command line gives it: a kind, then comma-separated key=value options,
//   "constant" | "step,step_size=30,gamma=0.1" | "cosine,min_lr=1e-5"
//   + for any kind: "warmup_steps=500,warmup_start_factor=0.01"
// with base_lr and total_steps (the run's length, used by cosine) from the caller. Returns a validated
// schedule, or InvalidArgument saying which part is wrong and what is accepted.
Expected<LrSchedule> parse_schedule(const std::string& spec, double base_lr, int64_t total_steps);

// The kind's name ("constant", "step", "cosine") and back; InvalidArgument listing the kinds otherwise.
const char* schedule_kind_name(ScheduleKind kind);
Expected<ScheduleKind> parse_schedule_kind(const std::string& name);

// The spec parse_schedule reads back to `schedule` (with the same base_lr and total_steps), every
// option of its kind written out: for logs and the optimizer configuration kept in checkpoints.
std::string schedule_to_string(const LrSchedule& schedule);

}  // namespace ucudnn::training
