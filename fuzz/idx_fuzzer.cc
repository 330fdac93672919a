// libFuzzer target: the IDX reader (read_idx_images and read_idx_labels on the input as a file, gzip or plain).
// A refusal must be an error Status with a message (fuzz_inputs.h); scripts/fuzz runs it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ucudnn::fuzz::require_clean(ucudnn::fuzz::read_idx_bytes(bytes));
  return 0;
}
