// The smallest application that embeds ucudnn: load a model, run it on a
// constant input, print each output's shape and first values. Where a GPU is
// present it also runs a CUDA session on tensors kept in GPU memory
// (Session::run_on_device: no host copies per run). With the default options the
// session runs ucudnn's optimizer (policy wr, 64 MiB of workspace per convolution):
// the first run of a model times its convolutions once and keeps the timings in
// $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite (else ~/.cache/ucudnn/).
//
//   embed_example MODEL [BATCH]
#include <cstdio>
#include <cstdlib>

#include "ucudnn/ucudnn.h"

namespace {

// Uploads `inputs` once, runs on GPU memory, downloads the first output to print its first value.
ucudnn::Status run_on_gpu(const ucudnn::SessionOptions& cpu_options, const std::vector<ucudnn::Tensor>& inputs,
                          const char* model) {
  ucudnn::SessionOptions options = cpu_options;
  options.device = ucudnn::Device::kCuda;
  UCUDNN_ASSIGN_OR_RETURN(auto session, ucudnn::Session::load(model, options));
  std::vector<ucudnn::GpuTensor> gpu_inputs, gpu_outputs;
  for (const ucudnn::Tensor& t : inputs) {
    UCUDNN_ASSIGN_OR_RETURN(ucudnn::GpuTensor g, ucudnn::GpuTensor::upload(t));
    gpu_inputs.push_back(std::move(g));
  }
  for (const ucudnn::TensorInfo& info : session->outputs()) {
    UCUDNN_ASSIGN_OR_RETURN(ucudnn::GpuTensor g, ucudnn::GpuTensor::allocate(info.dtype, info.shape));
    gpu_outputs.push_back(std::move(g));
  }
  UCUDNN_RETURN_IF_ERROR(session->run_on_device(gpu_inputs, gpu_outputs));  // no host copies
  UCUDNN_ASSIGN_OR_RETURN(ucudnn::Tensor first, gpu_outputs[0].download());
  std::printf("on the GPU: %s %s", session->outputs()[0].name.c_str(), first.describe().c_str());
  if (first.dtype() == ucudnn::DType::kFloat32 && first.numel() > 0) std::printf(" %.5f", first.data<float>()[0]);
  std::printf("\n");
  return ucudnn::Status::ok();
}

}  // namespace

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
  if (ucudnn::cuda_available()) {
    ucudnn::Status status = run_on_gpu(options, inputs, argv[1]);
    if (!status.is_ok()) {
      std::fprintf(stderr, "embed_example: %s\n", status.to_string().c_str());
      return 1;
    }
  }
  return 0;
}
