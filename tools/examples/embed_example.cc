// The smallest application that embeds ucudnn: load a model, run it on a
// constant input, print each output's shape and first values.
//
//   embed_example MODEL [BATCH]
#include <cstdio>
#include <cstdlib>

#include "ucudnn/ucudnn.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embed_example MODEL [BATCH]\n");
    return 2;
  }
  ucudnn::SessionOptions options;
  options.batch = argc > 2 ? std::atoll(argv[2]) : 1;
  auto session = ucudnn::Session::load(argv[1], options);
  if (!session) {
    std::fprintf(stderr, "embed_example: %s\n", session.status().to_string().c_str());
    return 1;
  }
  std::vector<ucudnn::Tensor> inputs;
  for (const ucudnn::TensorInfo& info : (*session)->inputs()) {
    auto tensor = ucudnn::Tensor::allocate(info.dtype, info.shape);
    if (!tensor) {
      std::fprintf(stderr, "embed_example: %s\n", tensor.status().to_string().c_str());
      return 1;
    }
    if (info.dtype == ucudnn::DType::kFloat32)
      for (int64_t i = 0; i < tensor->numel(); ++i) tensor->data<float>()[i] = 0.5f;
    inputs.push_back(std::move(*tensor));
  }
  auto outputs = (*session)->run(inputs);
  if (!outputs) {
    std::fprintf(stderr, "embed_example: %s\n", outputs.status().to_string().c_str());
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const ucudnn::Tensor& out = (*outputs)[i];
    std::printf("%s %s", (*session)->outputs()[i].name.c_str(), out.describe().c_str());
    if (out.dtype() == ucudnn::DType::kFloat32)
      for (int64_t j = 0; j < std::min<int64_t>(out.numel(), 4); ++j) std::printf(" %.5f", out.data<float>()[j]);
    std::printf("\n");
  }
  return 0;
}
