// Helpers the importer's tests share (onnx_import_test.cc, onnx_import_forms_test.cc): load a model,
// expect an error naming its parts, skip a test whose ops have no CPU kernel yet.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "onnx_import/onnx_import.h"
#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::testing {

// Tests that need ops other engineers add skip, naming them, until they exist.
inline std::string missing_kernels(std::initializer_list<OpKind> ops) {
  std::string missing;
  for (OpKind op : ops)
    if (cpu::cpu_kernel(op).run == nullptr) missing += std::string(missing.empty() ? "" : ", ") + op_name(op);
  return missing;
}
#define REQUIRE_OPS(...)                                                                     \
  do {                                                                                       \
    const std::string missing = missing_kernels({__VA_ARGS__});                              \
    if (!missing.empty()) GTEST_SKIP() << "ops not implemented yet: " << missing;            \
  } while (0)

inline Expected<ir::Graph> load(const std::string& path, onnx_import::ImportOptions options = {}) {
  return onnx_import::load_model(path, options);
}

inline void expect_error(const Expected<ir::Graph>& g, StatusCode code, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.status().code(), code) << g.status().to_string();
  for (const std::string& p : parts) EXPECT_NE(g.status().message().find(p), std::string::npos)
      << "message lacks '" << p << "': " << g.status().message();
}

}  // namespace ucudnn::testing
