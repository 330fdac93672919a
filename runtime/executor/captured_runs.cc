// CapturedRuns (Note [captured runs], captured_runs.h).
#include "runtime/executor/captured_runs.h"

#include <utility>

namespace ucudnn::runtime {

CapturedRuns::CapturedRuns(Backend& backend, CaptureMode mode, std::string not_capturable)
    : backend_(backend), mode_(mode), fallback_(std::move(not_capturable)) {}

void CapturedRuns::set_mode(CaptureMode mode) {
  mode_ = mode;
  if (mode == CaptureMode::kOff) drop_captures();
}

Status CapturedRuns::run(bool bound, const std::vector<const void*>& inputs, const std::vector<void*>& outputs,
                         const std::function<Status()>& queue) {
  if (!replaying() || !warmed_up_) {
    UCUDNN_RETURN_IF_ERROR(queue());
    warmed_up_ = true;
    return Status::ok();
  }
  Capture& capture = bound ? bound_ : arena_;
  if (capture.work == nullptr || capture.inputs != inputs || capture.outputs != outputs) {
    if (!record(capture, queue)) return queue();  // fell back: this run and every later one eager
    capture.inputs = inputs;
    capture.outputs = outputs;
  }
  return backend_.replay(*capture.work);
}

void CapturedRuns::drop_captures() {
  arena_ = Capture{};
  bound_ = Capture{};
}

bool CapturedRuns::record(Capture& capture, const std::function<Status()>& queue) {
  capture = Capture{};
  Status status = backend_.begin_capture();
  if (status.is_ok()) {
    const Status queued = queue();
    Expected<std::unique_ptr<CapturedWork>> work = backend_.end_capture();  // always, once begun
    if (!queued.is_ok()) {
      status = queued;
    } else if (!work.has_value()) {
      status = work.status();
    } else {
      capture.work = std::move(*work);
      return true;
    }
  }
  fallback_ = "capturing a run failed, so every run is queued eagerly (" + status.to_string() + ")";
  drop_captures();
  return false;
}

}  // namespace ucudnn::runtime
