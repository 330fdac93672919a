// InferenceSession: ucudnn::Session under ONNX Runtime's Python names (get_inputs, get_outputs, run), plus
// run_dlpack for arrays where they lie (Note [zero copy] in arrays.h). The GIL is released while a model
// loads or runs, so other Python threads go on meanwhile; runs on one session from several threads take
// turns (Note [one run at a time] in ucudnn.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "python/src/arrays.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::python {

class PySession {
 public:
  // Loads `model_path` with the GIL released; raises the Status of a failed load.
  PySession(const std::string& model_path, SessionOptions options);

  Session& session() { return *session_; }
  Device device() const { return device_; }
  const std::string& model_path() const { return model_path_; }
  const std::vector<TensorInfo>& inputs() const { return session_->inputs(); }
  const std::vector<TensorInfo>& outputs() const { return session_->outputs(); }

  // The index of an input or output by name; ValueError naming the model's ones when there is none.
  size_t input_index(const std::string& name) const;
  size_t output_index(const std::string& name) const;
  // Indices into outputs() of `names`: None for all, a name, or a sequence of names.
  std::vector<size_t> output_indices(const py::handle& names) const;
  // The arrays of `feed` ({input name: array}) in the order of inputs(), each checked against its input
  // (ValueError for an unknown, missing or mismatched input).
  std::vector<ImportedArray> import_feed(const py::dict& feed, bool convert) const;

  // Session::run on host arrays (ValueError for one in GPU memory), the GIL released.
  std::vector<Tensor> run_host(const std::vector<ImportedArray>& inputs);
  // Session::run_on_device into `outputs` (GPU pointers, one per output), the GIL released: GPU inputs are
  // read in place, host inputs uploaded first, once the GPU has finished what was queued on it.
  void run_device(const std::vector<ImportedArray>& inputs, const std::vector<void*>& outputs);

 private:
  std::unique_ptr<Session> session_;
  Device device_;
  std::string model_path_;
};

// MemoryStats as a dict of bytes (InferenceSession.memory(), Trainer.memory()).
py::dict memory_to_dict(const MemoryStats& m);

}  // namespace ucudnn::python
