// Learning-rate schedules (schedule.h): the closed forms, their checks, and the spec strings the
// command line and checkpoints use ("cosine,min_lr=1e-5,warmup_steps=500").
#include "training/schedule.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <vector>

namespace ucudnn::training {

namespace {

// The rate of the main schedule `e` updates after the warm-up.
double main_rate(const LrSchedule& s, int64_t e) {
  switch (s.kind) {
    case ScheduleKind::kConstant: return s.base_lr;
    case ScheduleKind::kStep: return s.base_lr * std::pow(s.gamma, static_cast<double>(e / s.step_size));
    case ScheduleKind::kCosine: {
      const int64_t period = s.total_steps - s.warmup_steps;
      const double progress = static_cast<double>(std::min(e, period)) / static_cast<double>(period);
      return s.min_lr + (s.base_lr - s.min_lr) * (1.0 + std::cos(std::numbers::pi * progress)) / 2.0;
    }
  }
  return s.base_lr;
}

// `value` printed with `digits` significant digits: 17 reads back exactly (specs), 6 is for messages.
std::string number(double value, int digits = 6) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

Expected<double> parse_double(const std::string& key, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
    return invalid_argument("schedule option " + key + "='" + text + "' is not a finite number");
  return value;
}

Expected<int64_t> parse_int(const std::string& key, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)
    return invalid_argument("schedule option " + key + "='" + text + "' is not an integer");
  return static_cast<int64_t>(value);
}

// The options a kind accepts, for errors.
std::string accepted_options(ScheduleKind kind) {
  const std::string warmup = "warmup_steps, warmup_start_factor";
  switch (kind) {
    case ScheduleKind::kStep: return "step_size, gamma, " + warmup;
    case ScheduleKind::kCosine: return "min_lr, " + warmup;
    case ScheduleKind::kConstant: break;
  }
  return warmup;
}

Status set_option(LrSchedule& s, const std::string& key, const std::string& value) {
  const bool step = s.kind == ScheduleKind::kStep, cosine = s.kind == ScheduleKind::kCosine;
  if (key == "warmup_steps") {
    UCUDNN_ASSIGN_OR_RETURN(s.warmup_steps, parse_int(key, value));
  } else if (key == "warmup_start_factor") {
    UCUDNN_ASSIGN_OR_RETURN(s.warmup_start_factor, parse_double(key, value));
  } else if (step && key == "step_size") {
    UCUDNN_ASSIGN_OR_RETURN(s.step_size, parse_int(key, value));
  } else if (step && key == "gamma") {
    UCUDNN_ASSIGN_OR_RETURN(s.gamma, parse_double(key, value));
  } else if (cosine && key == "min_lr") {
    UCUDNN_ASSIGN_OR_RETURN(s.min_lr, parse_double(key, value));
  } else {
    return invalid_argument("the " + std::string(schedule_kind_name(s.kind)) + " schedule has no option '" + key +
                            "' (it accepts " + accepted_options(s.kind) + ")");
  }
  return Status::ok();
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = text.find(separator, start)) != std::string::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

double learning_rate(const LrSchedule& schedule, int64_t step) {
  if (step < schedule.warmup_steps) {
    const double f = schedule.warmup_start_factor;
    return schedule.base_lr * (f + (1.0 - f) * static_cast<double>(step) / static_cast<double>(schedule.warmup_steps));
  }
  return main_rate(schedule, step - schedule.warmup_steps);
}

Status validate_schedule(const LrSchedule& s) {
  const auto bad = [](const std::string& what) { return invalid_argument("learning-rate schedule: " + what); };
  if (!(s.base_lr > 0.0 && std::isfinite(s.base_lr)))
    return bad("the learning rate " + number(s.base_lr) + " must be positive and finite");
  if (s.warmup_steps < 0) return bad("warmup_steps " + std::to_string(s.warmup_steps) + " must be >= 0");
  if (!(s.warmup_start_factor > 0.0 && s.warmup_start_factor <= 1.0))
    return bad("warmup_start_factor " + number(s.warmup_start_factor) + " must be in (0, 1]");
  if (s.kind == ScheduleKind::kStep) {
    if (s.step_size < 1) return bad("step_size " + std::to_string(s.step_size) + " must be >= 1");
    if (!(s.gamma > 0.0 && std::isfinite(s.gamma))) return bad("gamma " + number(s.gamma) + " must be positive");
  }
  if (s.kind == ScheduleKind::kCosine) {
    if (s.total_steps <= s.warmup_steps)
      return bad("cosine needs more steps in the run (" + std::to_string(s.total_steps) + ") than warm-up steps (" +
                 std::to_string(s.warmup_steps) + ")");
    if (!(s.min_lr >= 0.0 && s.min_lr <= s.base_lr))
      return bad("min_lr " + number(s.min_lr) + " must be in [0, the learning rate " + number(s.base_lr) + "]");
  }
  return Status::ok();
}

const char* schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kConstant: return "constant";
    case ScheduleKind::kStep: return "step";
    case ScheduleKind::kCosine: return "cosine";
  }
  return "?";
}

Expected<ScheduleKind> parse_schedule_kind(const std::string& name) {
  for (ScheduleKind kind : {ScheduleKind::kConstant, ScheduleKind::kStep, ScheduleKind::kCosine})
    if (name == schedule_kind_name(kind)) return kind;
  return invalid_argument("unknown learning-rate schedule '" + name + "' (use constant, step or cosine)");
}

Expected<LrSchedule> parse_schedule(const std::string& spec, double base_lr, int64_t total_steps) {
  const std::vector<std::string> parts = split(spec, ',');
  LrSchedule s;
  UCUDNN_ASSIGN_OR_RETURN(s.kind, parse_schedule_kind(parts[0]));
  s.base_lr = base_lr;
  s.total_steps = total_steps;
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t equals = parts[i].find('=');
    if (equals == std::string::npos || equals == 0)
      return invalid_argument("schedule '" + spec + "': option '" + parts[i] + "' is not key=value");
    Status status = set_option(s, parts[i].substr(0, equals), parts[i].substr(equals + 1));
    if (!status.is_ok()) return status.with_context("schedule '" + spec + "'");
  }
  Status status = validate_schedule(s);
  if (!status.is_ok()) return status.with_context("schedule '" + spec + "'");
  return s;
}

std::string schedule_to_string(const LrSchedule& s) {
  std::string text = schedule_kind_name(s.kind);
  if (s.kind == ScheduleKind::kStep)
    text += ",step_size=" + std::to_string(s.step_size) + ",gamma=" + number(s.gamma, 17);
  if (s.kind == ScheduleKind::kCosine) text += ",min_lr=" + number(s.min_lr, 17);
  return text + ",warmup_steps=" + std::to_string(s.warmup_steps) +
         ",warmup_start_factor=" + number(s.warmup_start_factor, 17);
}

}  // namespace ucudnn::training
