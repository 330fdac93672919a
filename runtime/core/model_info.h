// ModelInfo: what an ONNX file declares (IR version, opset, producer, inputs and outputs as written,
// op counts, parameter count, what ucudnn cannot run), read without resolving shapes. One struct for
// both sides: onnx_import::summarize_model fills it, ucudnn::model_info (include/ucudnn/ucudnn.h)
// returns it, `ucudnn info` prints it. Plain data, standard headers only: it is part of the public API.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ucudnn {

// What `ucudnn info` shows of a model, read without resolving shapes.
struct ModelInfo {
  int64_t ir_version = 0;
  int opset = 0;
  std::string producer;
  struct Io {
    std::string name;
    std::string dtype;              // "float32", or the ONNX name of an unsupported type
    std::vector<std::string> dims;  // numbers or symbolic names ("batch_size", "?")
  };
  std::vector<Io> inputs, outputs;
  std::map<std::string, int> op_counts;  // op_type → count (domain-qualified if not the default)
  std::vector<std::string> unsupported;  // "node 'x' (Foo, opset 13): why", one per problem
  int64_t parameter_count = 0;
};

}  // namespace ucudnn
