// CapturedRuns: the executor's runs of the steps recorded once and replayed
// (CUDA graphs on the CUDA backend), or queued eagerly.
//
// Note [captured runs]
// ~~~~~~~~~~~~~~~~~~~~
// Every run queues the same calls with the same arguments; only where the
// graph inputs and outputs live can change (run_bound: the caller's buffers).
// A backend that captures (Backend::begin_capture) can record the queued steps
// once and replay them as one launch, sparing the host one launch per kernel.
//  - What: the steps only (Executor::queue_steps: both streams with their
//    events). `run`'s host copies stay outside (pageable host memory cannot be
//    captured), as do run_bound's device copies of the outputs it cannot bind.
//  - When: the first run is eager — libraries initialise lazily on a first call
//    (cuDNN's execution plans, kernel modules), which must not happen inside a
//    capture —, the next one is captured and replayed, later ones replay.
//  - Pointers: a capture holds the pointers it was recorded with. The arena
//    (`run`) and the caller's buffers (`run_bound`) keep one capture each; buffers
//    other than the last capture's are captured again.
//  - Eager instead: mode kOff; a backend without capture (the CPU); a plan with a
//    call whose kernel is not capturable (Kernel::capturable); and after a
//    capture that failed — that run is then queued again eagerly, and so is every
//    later one. `fallback()` says why.
//  - Never: profiling (it records an event between the steps), data-parallel
//    training (its all-reduces start between the step's kernels: made with kOff).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/core/status.h"

namespace ucudnn::runtime {

// Whether an executor's runs are captured and replayed (the public CudaGraph option): kAuto and kOn
// behave alike here; the session warns when kOn falls back.
enum class CaptureMode { kOff, kAuto, kOn };

class CapturedRuns {
 public:
  // `not_capturable`: "" when the plan's calls may be captured on `backend`, else why not.
  CapturedRuns(Backend& backend, CaptureMode mode, std::string not_capturable);

  // One run of the steps, queued by `queue` (which stops at the first error): eagerly, or captured
  // and replayed (Note [captured runs]). `bound`: the graph inputs and outputs are the caller's
  // buffers `inputs` and `outputs` (run_bound), else the arena (both empty).
  Status run(bool bound, const std::vector<const void*>& inputs, const std::vector<void*>& outputs,
             const std::function<Status()>& queue);

  // From the next run on; kOff drops the captures.
  void set_mode(CaptureMode mode);
  CaptureMode mode() const { return mode_; }
  // Why runs are eager although the mode is not kOff; "" when they replay (from the second run on).
  const std::string& fallback() const { return fallback_; }
  // True when runs replay (or will from the second run on): the mode is not kOff and nothing fell back.
  bool replaying() const { return mode_ != CaptureMode::kOff && fallback_.empty(); }

 private:
  struct Capture {
    std::vector<const void*> inputs;
    std::vector<void*> outputs;
    std::unique_ptr<CapturedWork> work;  // null: nothing captured
  };
  // Records one run into `capture`: true; else false with fallback_ set and every capture dropped.
  bool record(Capture& capture, const std::function<Status()>& queue);

  void drop_captures();

  Backend& backend_;
  CaptureMode mode_;
  std::string fallback_;
  bool warmed_up_ = false;  // an eager run completed its queuing
  Capture arena_, bound_;
};

}  // namespace ucudnn::runtime
