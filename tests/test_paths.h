// Where tests find the source tree (models/, tests/data/): $UCUDNN_SOURCE_DIR
// when set (CTest sets it; so does the device bundle), else the checkout the
// test was built from (UCUDNN_TEST_SOURCE_DIR, set by add_ucudnn_test).
#pragma once

#include <cstdlib>
#include <string>

namespace ucudnn_test {

inline std::string source_dir() {
  const char* dir = std::getenv("UCUDNN_SOURCE_DIR");
  return dir ? dir : UCUDNN_TEST_SOURCE_DIR;
}

}  // namespace ucudnn_test
