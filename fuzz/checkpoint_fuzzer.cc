// libFuzzer target: the training checkpoint reader (training::load_checkpoint on the input as a file).
// A refusal must be an error Status with a message (fuzz_inputs.h); scripts/fuzz runs it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ucudnn::fuzz::require_clean(ucudnn::fuzz::read_checkpoint_bytes(bytes));
  return 0;
}
