// `ucudnn run --input NAME=FILE`: the files read and checked against the model's
// declared inputs before anything is loaded — dtype, rank, static dims, one value
// per symbolic dim (and --batch's, when given) — then handed to the session:
// int64 files as values known at load (SessionOptions::constant_inputs, so shape
// inputs such as a Reshape's target fold), the others by their shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

struct InputFile {
  std::string name;  // the model input
  std::string path;
  Tensor tensor;
  bool constant() const { return tensor.dtype() == DType::kInt64; }  // given at load, not at run
};

// Splits NAME=FILE specs. InvalidArgument — a usage error — for a malformed spec or
// a NAME given twice.
Expected<std::vector<InputFile>> parse_input_specs(const std::vector<std::string>& specs);

// Reads every file (.pb or .npy); errors name the spec.
Status read_input_files(std::vector<InputFile>* files);

// Checks `files` against `model`'s declared inputs: the name is an input, dtype and
// rank equal, static dims equal, a symbolic dim one value across files and equal to
// `batch_flag` when --batch was given. Returns the batch the files set (the value
// of the first symbolic dim they fix, in model order), or nullopt when they fix
// none. InvalidArgument naming the input, the file and both shapes otherwise.
Expected<std::optional<int64_t>> check_input_files(const ModelInfo& model, const std::vector<InputFile>& files,
                                                   std::optional<int64_t> batch_flag);

// Adds the files to `options`: int64 ones as constant_inputs, the others as input_shapes.
void add_input_files(const std::vector<InputFile>& files, SessionOptions* options);

}  // namespace ucudnn::cli
