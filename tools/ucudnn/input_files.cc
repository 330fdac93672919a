// --input files for `ucudnn run` (see input_files.h). The check runs on the
// model's declarations (model_info) before Session::load, so a wrong file is
// refused before anything is planned or benchmarked, and blamed on the file.
#include "tools/ucudnn/input_files.h"

#include <map>
#include <set>

namespace ucudnn::cli {

namespace {

// A declared dim as model_info spells it: a number, a symbolic name, "?" (no name).
struct DeclaredDim {
  bool is_static = false;
  int64_t value = 0;
  std::string symbol;  // "" for "?"
};

DeclaredDim parse_declared_dim(const std::string& text) {
  DeclaredDim dim;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 19) {
    dim.is_static = true;
    dim.value = std::stoll(text);
  } else if (text != "?") {
    dim.symbol = text;
  }
  return dim;
}

std::string declared_type(const ModelInfo::Io& io) {
  std::string dims;
  for (size_t i = 0; i < io.dims.size(); ++i) dims += (i ? ", " : "") + io.dims[i];
  return io.dtype + "[" + dims + "]";
}

// "--input NAME=FILE: FILE holds float32[1, 3, 9, 9], but the model's input 'NAME' is float32[batch, 3, 8, 8]"
std::string mismatch(const InputFile& file, const ModelInfo::Io& io) {
  return "--input " + file.name + "=" + file.path + ": the file holds " + file.tensor.describe() +
         ", but the model's input '" + io.name + "' is " + declared_type(io);
}

const ModelInfo::Io* find_input(const ModelInfo& model, const std::string& name) {
  for (const ModelInfo::Io& io : model.inputs)
    if (io.name == name) return &io;
  return nullptr;
}

std::string input_names(const ModelInfo& model) {
  std::string names;
  for (const ModelInfo::Io& io : model.inputs) names += (names.empty() ? "" : ", ") + io.name;
  return names;
}

// One file against its input's declaration; symbolic dims it fixes go into `bound`
// (name → value and the file that set it).
Status check_file(const InputFile& file, const ModelInfo::Io& io, std::optional<int64_t> batch_flag,
                  std::map<std::string, std::pair<int64_t, std::string>>* bound) {
  if (io.dtype != dtype_name(file.tensor.dtype()))
    return invalid_argument(mismatch(file, io) + ": the dtypes differ" +
                            (io.dtype == "bfloat16" ? " (NumPy has no bfloat16: give a TensorProto file, .pb)" : ""));
  if (io.dims.size() == 1 && io.dims[0] == "unknown rank") return Status::ok();  // the model declares no shape
  const Shape& shape = file.tensor.shape();
  if (shape.size() != io.dims.size())
    return invalid_argument(mismatch(file, io) + ": rank " + std::to_string(shape.size()) + ", not " +
                            std::to_string(io.dims.size()));
  for (size_t i = 0; i < shape.size(); ++i) {
    const DeclaredDim dim = parse_declared_dim(io.dims[i]);
    const std::string at = ": dim " + std::to_string(i) + " is " + std::to_string(shape[i]);
    if (dim.is_static) {
      if (shape[i] != dim.value) return invalid_argument(mismatch(file, io) + at + ", not " + io.dims[i]);
      continue;
    }
    if (batch_flag && shape[i] != *batch_flag)
      return invalid_argument(mismatch(file, io) + at + " (" + io.dims[i] + "), but --batch is " +
                              std::to_string(*batch_flag) + "; drop --batch to run the file's batch");
    if (dim.symbol.empty()) continue;
    auto [it, inserted] = bound->emplace(dim.symbol, std::make_pair(shape[i], file.path));
    if (!inserted && it->second.first != shape[i])
      return invalid_argument(mismatch(file, io) + at + " (" + dim.symbol + "), but " + it->second.second +
                              " sets " + dim.symbol + " to " + std::to_string(it->second.first));
  }
  return Status::ok();
}

}  // namespace

Expected<std::vector<InputFile>> parse_input_specs(const std::vector<std::string>& specs) {
  std::vector<InputFile> files;
  std::set<std::string> names;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return invalid_argument("--input expects NAME=FILE, got '" + spec + "'");
    InputFile file;
    file.name = spec.substr(0, eq);
    file.path = spec.substr(eq + 1);
    if (!names.insert(file.name).second)
      return invalid_argument("--input names '" + file.name + "' twice; give each input once");
    files.push_back(std::move(file));
  }
  return files;
}

Status read_input_files(std::vector<InputFile>* files) {
  for (InputFile& file : *files) {
    auto tensor = read_tensor_file(file.path);
    if (!tensor) return tensor.status().with_context("--input " + file.name + "=" + file.path);
    file.tensor = std::move(*tensor);
  }
  return Status::ok();
}

Expected<std::optional<int64_t>> check_input_files(const ModelInfo& model, const std::vector<InputFile>& files,
                                                   std::optional<int64_t> batch_flag) {
  std::map<std::string, std::pair<int64_t, std::string>> bound;
  for (const InputFile& file : files) {
    const ModelInfo::Io* io = find_input(model, file.name);
    if (!io)
      return invalid_argument("--input names '" + file.name + "', which is not a model input (inputs: " +
                              input_names(model) + ")");
    UCUDNN_RETURN_IF_ERROR(check_file(file, *io, batch_flag, &bound));
  }
  // The batch: the first symbolic dim, in model order, that a file fixes.
  for (const ModelInfo::Io& io : model.inputs)
    for (const std::string& text : io.dims) {
      auto it = bound.find(text);
      if (it != bound.end()) return std::optional<int64_t>(it->second.first);
    }
  return std::optional<int64_t>();
}

void add_input_files(const std::vector<InputFile>& files, SessionOptions* options) {
  for (const InputFile& file : files) {
    if (file.constant())
      options->constant_inputs[file.name] = file.tensor;
    else
      options->input_shapes[file.name] = file.tensor.shape();
  }
}

}  // namespace ucudnn::cli
