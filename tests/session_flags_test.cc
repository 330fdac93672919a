// The CLI's shared session flags (tools/ucudnn/session_flags.cc): --math,
// --device and --streams turn into SessionOptions, malformed values into InvalidArgument.
// Table-driven: each row is a command line and what it must give.
#include "tools/ucudnn/session_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ucudnn::cli {
namespace {

struct FlagCase {
  const char* name;
  std::vector<std::string> argv;  // after the subcommand
  StatusCode code;                // kOk when the flags are valid
  bool strict_fp32;               // expected when valid
};

Status parse(const std::vector<std::string>& words, SessionOptions* options) {
  std::vector<std::string> storage = {"plan"};
  storage.insert(storage.end(), words.begin(), words.end());
  std::vector<char*> argv;
  for (std::string& word : storage) argv.push_back(word.data());
  auto args = Args::parse(static_cast<int>(argv.size()), argv.data(), kSessionValueFlags, kSessionBoolFlags);
  if (!args) return args.status();
  return session_options_from_flags(*args, options);
}

TEST(SessionFlags, Math) {
  const std::vector<FlagCase> cases = {
      {"default is tf32", {"m.onnx"}, StatusCode::kOk, false},
      {"tf32", {"m.onnx", "--math", "tf32"}, StatusCode::kOk, false},
      {"fp32", {"m.onnx", "--math", "fp32"}, StatusCode::kOk, true},
      {"fp32 with =", {"m.onnx", "--math=fp32"}, StatusCode::kOk, true},
      {"the last one counts", {"m.onnx", "--math", "fp32", "--math", "tf32"}, StatusCode::kOk, false},
      {"cpu accepts fp32", {"m.onnx", "--device", "cpu", "--math", "fp32"}, StatusCode::kOk, true},
      {"cpu accepts tf32", {"m.onnx", "--device", "cpu", "--math", "tf32"}, StatusCode::kOk, false},
      {"cuda with fp32", {"m.onnx", "--device", "cuda", "--math", "fp32"}, StatusCode::kOk, true},
      {"unknown value", {"m.onnx", "--math", "bf16"}, StatusCode::kInvalidArgument, false},
      {"upper case", {"m.onnx", "--math", "FP32"}, StatusCode::kInvalidArgument, false},
      {"empty value", {"m.onnx", "--math="}, StatusCode::kInvalidArgument, false},
  };
  for (const FlagCase& c : cases) {
    SCOPED_TRACE(c.name);
    SessionOptions options;
    options.strict_fp32 = !c.strict_fp32;  // so a flag that is ignored shows
    const Status status = parse(c.argv, &options);
    EXPECT_EQ(status.code(), c.code) << status.to_string();
    if (c.code == StatusCode::kOk) {
      EXPECT_EQ(options.strict_fp32, c.strict_fp32);
    } else {
      EXPECT_NE(status.to_string().find("--math must be tf32 or fp32"), std::string::npos) << status.to_string();
    }
  }
}

TEST(SessionFlags, Streams) {
  struct StreamCase {
    const char* name;
    std::vector<std::string> argv;
    int streams;  // expected; 0 = refused
  };
  const std::vector<StreamCase> cases = {
      {"default is one", {"m.onnx"}, 1},
      {"one", {"m.onnx", "--streams", "1"}, 1},
      {"two", {"m.onnx", "--streams", "2"}, 2},
      {"three", {"m.onnx", "--streams", "3"}, 0},
      {"zero", {"m.onnx", "--streams", "0"}, 0},
      {"not a number", {"m.onnx", "--streams", "many"}, 0},
  };
  for (const StreamCase& c : cases) {
    SCOPED_TRACE(c.name);
    SessionOptions options;
    const Status status = parse(c.argv, &options);
    if (c.streams == 0) {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
      EXPECT_NE(status.to_string().find("streams"), std::string::npos) << status.to_string();
    } else {
      EXPECT_TRUE(status.is_ok()) << status.to_string();
      EXPECT_EQ(options.streams, c.streams);
    }
  }
}

TEST(SessionFlags, HelpNamesMath) {
  const std::string help = kSessionFlagsHelp;
  EXPECT_NE(help.find("--math tf32|fp32"), std::string::npos);
  EXPECT_NE(kSessionValueFlags.count("math"), 0u);
}

}  // namespace
}  // namespace ucudnn::cli
