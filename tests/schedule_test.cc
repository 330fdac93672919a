// training::learning_rate against PyTorch's schedulers (tests/data/training/lr_schedules.txt, from
// scripts/gen_optimizer_reference.py: StepLR, CosineAnnealingLR, ConstantLR, each behind a LinearLR
// warm-up through SequentialLR where the spec asks for one), the spec strings the CLI parses, and
// the errors for bad ones.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "training/schedule.h"

namespace ucudnn_test {
namespace {

namespace training = ucudnn::training;

struct TorchSchedule {
  std::string spec;
  double base_lr = 0;
  int64_t total_steps = 0;
  std::vector<double> lrs;  // before update 1, 2, ..., and after the last
};

std::vector<TorchSchedule> torch_schedules() {
  std::ifstream file(ucudnn_test::source_dir() + "/tests/data/training/lr_schedules.txt");
  std::vector<TorchSchedule> schedules;
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "schedule") {
      TorchSchedule s;
      std::string base, total;
      in >> s.spec >> base >> total;
      s.base_lr = std::stod(base.substr(base.find('=') + 1));
      s.total_steps = std::stoll(total.substr(total.find('=') + 1));
      schedules.push_back(s);
    } else if (key == "lrs") {
      for (double v; in >> v;) schedules.back().lrs.push_back(v);
    }
  }
  return schedules;
}

TEST(Schedule, MatchesPyTorch) {
  const std::vector<TorchSchedule> schedules = torch_schedules();
  ASSERT_EQ(schedules.size(), 7u) << "regenerate tests/data/training/lr_schedules.txt";
  for (const TorchSchedule& t : schedules) {
    auto schedule = training::parse_schedule(t.spec, t.base_lr, t.total_steps);
    ASSERT_TRUE(schedule.has_value()) << schedule.status().to_string();
    ASSERT_EQ(t.lrs.size(), static_cast<size_t>(t.total_steps + 1)) << t.spec;
    for (size_t step = 0; step < t.lrs.size(); ++step)  // PyTorch's recursive forms round a little
      EXPECT_NEAR(training::learning_rate(*schedule, static_cast<int64_t>(step)), t.lrs[step],
                  1e-12 + 1e-9 * t.lrs[step])
          << t.spec << " at step " << step;
  }
}

TEST(Schedule, ClosedFormsByHand) {
  training::LrSchedule step{.kind = training::ScheduleKind::kStep, .base_lr = 1.0, .step_size = 30, .gamma = 0.1};
  EXPECT_DOUBLE_EQ(training::learning_rate(step, 29), 1.0);
  EXPECT_DOUBLE_EQ(training::learning_rate(step, 30), 0.1);
  EXPECT_NEAR(training::learning_rate(step, 95), 1e-3, 1e-15);

  training::LrSchedule cosine{.kind = training::ScheduleKind::kCosine, .base_lr = 0.5, .total_steps = 110,
                              .min_lr = 0.1, .warmup_steps = 10, .warmup_start_factor = 0.5};
  EXPECT_DOUBLE_EQ(training::learning_rate(cosine, 0), 0.25);
  EXPECT_DOUBLE_EQ(training::learning_rate(cosine, 5), 0.375);
  EXPECT_DOUBLE_EQ(training::learning_rate(cosine, 10), 0.5);
  EXPECT_NEAR(training::learning_rate(cosine, 60), 0.3, 1e-15);  // half way: the mean of 0.5 and 0.1
  EXPECT_DOUBLE_EQ(training::learning_rate(cosine, 110), 0.1);
  EXPECT_DOUBLE_EQ(training::learning_rate(cosine, 500), 0.1);   // held at min_lr past the end
}

TEST(Schedule, SpecRoundTrips) {
  for (const char* spec : {"constant", "step,step_size=7,gamma=0.25", "cosine,min_lr=1e-05,warmup_steps=3",
                           "constant,warmup_steps=2,warmup_start_factor=0.5"}) {
    auto parsed = training::parse_schedule(spec, 0.3, 50);
    ASSERT_TRUE(parsed.has_value()) << spec << ": " << parsed.status().to_string();
    const std::string canonical = training::schedule_to_string(*parsed);
    auto again = training::parse_schedule(canonical, 0.3, 50);
    ASSERT_TRUE(again.has_value()) << canonical << ": " << again.status().to_string();
    EXPECT_EQ(training::schedule_to_string(*again), canonical);
    for (int64_t s = 0; s <= 50; ++s)
      EXPECT_EQ(training::learning_rate(*again, s), training::learning_rate(*parsed, s)) << canonical << " step " << s;
  }
}

TEST(Schedule, BadSpecsSayWhatIsWrong) {
  const struct {
    const char* spec;
    const char* phrase;
  } bad[] = {
      {"linear", "unknown learning-rate schedule 'linear' (use constant, step or cosine)"},
      {"", "unknown learning-rate schedule ''"},
      {"step,step_size=0", "step_size 0 must be >= 1"},
      {"step,step_size=3x", "step_size='3x' is not an integer"},
      {"cosine,gamma=0.1", "the cosine schedule has no option 'gamma' (it accepts min_lr, warmup_steps"},
      {"cosine,min_lr", "option 'min_lr' is not key=value"},
      {"cosine,min_lr=nan", "min_lr='nan' is not a finite number"},
      {"cosine,min_lr=2", "min_lr 2 must be in [0, the learning rate 0.1]"},
      {"cosine,warmup_steps=100", "cosine needs more steps in the run (100) than warm-up steps (100)"},
      {"constant,warmup_steps=-1", "warmup_steps -1 must be >= 0"},
      {"constant,warmup_start_factor=0", "warmup_start_factor 0 must be in (0, 1]"},
  };
  for (const auto& b : bad) {
    auto parsed = training::parse_schedule(b.spec, 0.1, 100);
    ASSERT_FALSE(parsed.has_value()) << b.spec;
    EXPECT_EQ(parsed.status().code(), ucudnn::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(b.phrase), std::string::npos) << parsed.status().message();
  }
  auto zero_lr = training::parse_schedule("constant", 0.0, 10);
  ASSERT_FALSE(zero_lr.has_value());
  EXPECT_NE(zero_lr.status().message().find("the learning rate 0 must be positive"), std::string::npos)
      << zero_lr.status().message();
}

}  // namespace
}  // namespace ucudnn_test
