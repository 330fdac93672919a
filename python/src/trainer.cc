// Trainer: ucudnn::Trainer from Python — training steps on host arrays, evaluation, the trained model
// and checkpoints. A checkpoint file is the command line's (training/checkpoint.h; what `ucudnn train
// --checkpoint` writes and `--resume` reads): the trainer's state, its step, the seed, the optimizer and
// the parameters' names and shapes, so a run can move between Python and the command line. Steps
// release the GIL; a Trainer takes one call at a time (a concurrent one raises ValueError).
#include <pybind11/stl.h>

#include <sstream>

#include "python/src/arrays.h"
#include "python/src/binding.h"
#include "python/src/errors.h"
#include "python/src/session.h"
#include "training/checkpoint.h"

namespace ucudnn::python {

namespace {

class PyTrainer {
 public:
  PyTrainer(const std::string& model_path, TrainOptions options) : seed_(options.seed) {
    Expected<std::unique_ptr<Trainer>> loaded = [&] {
      py::gil_scoped_release release;
      return Trainer::load(model_path, options);
    }();
    trainer_ = value_or_raise(std::move(loaded));
  }

  Trainer& trainer() { return *trainer_; }
  const TrainStepResult& last_step() const { return last_step_; }

  // The model's inputs from one array (a model of one input), a sequence in the order of inputs, or a
  // dict by name; `keep` holds the arrays the tensors borrow.
  std::vector<Tensor> inputs_from(py::handle value, std::vector<ImportedArray>* keep) const;
  // int64 labels [N] from an array (the Trainer checks N).
  Tensor labels_from(py::handle value, std::vector<ImportedArray>* keep) const;

  double step(py::handle inputs, py::handle labels);
  double step_staged(py::handle next_inputs, py::handle next_labels);
  void stage(py::handle inputs, py::handle labels);
  void checkpoint(const std::string& path, int64_t epoch) const;
  void load_checkpoint(const std::string& path);

 private:
  double record(Expected<TrainStepResult>&& result) {
    last_step_ = value_or_raise(std::move(result));
    return last_step_.loss;
  }
  std::string fingerprint() const;

  std::unique_ptr<Trainer> trainer_;
  uint64_t seed_ = 0;
  TrainStepResult last_step_;
};

std::vector<Tensor> PyTrainer::inputs_from(py::handle value, std::vector<ImportedArray>* keep) const {
  const std::vector<TensorInfo>& infos = trainer_->inputs();
  std::vector<py::object> values(infos.size());
  if (py::isinstance<py::dict>(value)) {
    const py::dict feed = py::reinterpret_borrow<py::dict>(value);
    if (feed.size() != infos.size())
      throw py::value_error("expected " + std::to_string(infos.size()) + " inputs by name, got " +
                            std::to_string(feed.size()));
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!feed.contains(infos[i].name)) throw py::value_error("missing input '" + infos[i].name + "'");
      values[i] = py::object(feed[py::str(infos[i].name)]);
    }
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    const py::sequence sequence = py::reinterpret_borrow<py::sequence>(value);
    if (sequence.size() != infos.size())
      throw py::value_error("expected " + std::to_string(infos.size()) + " inputs, got " +
                            std::to_string(sequence.size()));
    for (size_t i = 0; i < infos.size(); ++i) values[i] = py::object(sequence[i]);
  } else {
    if (infos.size() != 1)
      throw py::value_error("the model has " + std::to_string(infos.size()) +
                            " inputs: give a list or a dict of arrays");
    values[0] = py::reinterpret_borrow<py::object>(value);
  }
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < infos.size(); ++i) {
    const std::string what = "input '" + infos[i].name + "'";
    keep->push_back(import_array(values[i], what, /*convert=*/true));
    if (keep->back().memory != Memory::kHost) throw py::value_error(what + ": the Trainer takes host arrays");
    check_matches(keep->back(), infos[i], what);
    tensors.push_back(keep->back().host_view());
  }
  return tensors;
}

Tensor PyTrainer::labels_from(py::handle value, std::vector<ImportedArray>* keep) const {
  keep->push_back(import_array(value, "labels", /*convert=*/true));
  const ImportedArray& labels = keep->back();
  if (labels.memory != Memory::kHost) throw py::value_error("labels: the Trainer takes host arrays");
  if (labels.dtype != DType::kInt64)
    throw py::value_error("labels must be int64 class indices, got " + describe(labels.dtype, labels.shape));
  return labels.host_view();
}

double PyTrainer::step(py::handle inputs, py::handle labels) {
  std::vector<ImportedArray> keep;
  const std::vector<Tensor> x = inputs_from(inputs, &keep);
  const Tensor y = labels_from(labels, &keep);
  Expected<TrainStepResult> result = [&] {
    py::gil_scoped_release release;
    return trainer_->step(x, y);
  }();
  return record(std::move(result));
}

void PyTrainer::stage(py::handle inputs, py::handle labels) {
  std::vector<ImportedArray> keep;
  const std::vector<Tensor> x = inputs_from(inputs, &keep);
  const Tensor y = labels_from(labels, &keep);
  Status status;
  {
    py::gil_scoped_release release;
    status = trainer_->stage(x, y);
  }
  check(status);
}

double PyTrainer::step_staged(py::handle next_inputs, py::handle next_labels) {
  std::vector<ImportedArray> keep;
  std::vector<Tensor> x;
  Tensor y;
  if (!next_inputs.is_none()) {
    x = inputs_from(next_inputs, &keep);
    y = labels_from(next_labels, &keep);
  }
  Expected<TrainStepResult> result = [&] {
    py::gil_scoped_release release;
    return trainer_->step_staged(x, y);
  }();
  return record(std::move(result));
}

// What identifies the training a checkpoint belongs to: the parameters' names and shapes (as `ucudnn train`).
std::string PyTrainer::fingerprint() const {
  std::string text;
  for (const TensorInfo& p : trainer_->parameters()) text += p.name + shape_to_string(p.shape) + ";";
  for (const TensorInfo& s : trainer_->running_stats()) text += s.name + shape_to_string(s.shape) + ";";
  return text;
}

void PyTrainer::checkpoint(const std::string& path, int64_t epoch) const {
  training::Checkpoint saved;
  saved.tensors = value_or_raise(trainer_->state());
  saved.step = trainer_->steps_done();
  saved.epoch = epoch;
  saved.rng_state = {seed_};
  saved.graph_fingerprint = fingerprint();
  saved.optimizer_config = trainer_->optimizer();
  check(training::save_checkpoint(path, saved));
}

void PyTrainer::load_checkpoint(const std::string& path) {
  const training::Checkpoint saved = value_or_raise(training::load_checkpoint(path));
  if (saved.graph_fingerprint != fingerprint())
    throw py::value_error(path + ": the checkpoint is of another model (other parameters or shapes)");
  if (saved.rng_state != std::vector<uint64_t>{seed_})
    throw py::value_error(path + ": saved with another seed (dropout follows it); give the trainer the run's seed");
  if (saved.optimizer_config != trainer_->optimizer())
    throw py::value_error(path + ": saved with optimizer '" + saved.optimizer_config + "', this trainer has '" +
                          trainer_->optimizer() + "'");
  check(trainer_->load_state(saved.tensors).with_context(path));
}

py::dict tensors_to_dict(std::map<std::string, Tensor> tensors) {
  py::dict values;
  for (auto& [name, tensor] : tensors) values[py::str(name)] = to_numpy(std::move(tensor));
  return values;
}

py::list to_numpy_list(std::vector<Tensor> tensors) {
  py::list arrays;
  for (Tensor& t : tensors) arrays.append(to_numpy(std::move(t)));
  return arrays;
}

}  // namespace

void bind_trainer(py::module_& m) {
  py::class_<TrainStepResult>(m, "StepResult", "One training step: loss, correct samples and times.")
      .def_readonly("loss", &TrainStepResult::loss, "Mean softmax cross-entropy of the batch (before the update).")
      .def_readonly("correct", &TrainStepResult::correct, "Samples whose largest logit is their label.")
      .def_readonly("upload_ms", &TrainStepResult::upload_ms)
      .def_readonly("compute_ms", &TrainStepResult::compute_ms)
      .def_readonly("all_reduce_ms", &TrainStepResult::all_reduce_ms)
      .def("__float__", [](const TrainStepResult& r) { return static_cast<double>(r.loss); })
      .def("__repr__", [](const TrainStepResult& r) {
        std::ostringstream out;
        out << "StepResult(loss=" << r.loss << ", correct=" << r.correct << ", compute_ms=" << r.compute_ms << ")";
        return out.str();
      });

  py::class_<PyTrainer>(m, "Trainer",
                        "Trains an ONNX model whose first output is the logits (ucudnn::Trainer). The Python class "
                        "ucudnn.Trainer takes keyword options; this one takes (model_path, TrainOptions).")
      .def(py::init([](const std::string& path, const TrainOptions& options) {
             return std::make_unique<PyTrainer>(path, options);
           }),
           py::arg("model_path"), py::arg("options"))
      .def("step", &PyTrainer::step, py::arg("inputs"), py::arg("labels"),
           "One training step on a batch: the model's inputs (an array, a list, or a dict by name) and int64 "
           "labels [N]. Returns the batch's loss before the update; last_step has the rest.")
      .def("stage", &PyTrainer::stage, py::arg("inputs"), py::arg("labels"),
           "Copies a batch to the device for step_staged.")
      .def("step_staged", &PyTrainer::step_staged, py::arg("next_inputs") = py::none(),
           py::arg("next_labels") = py::none(),
           "Trains on the staged batch while staging the next one (None: nothing); returns the loss.")
      .def_property_readonly("last_step", &PyTrainer::last_step, "The StepResult of the last step.")
      .def(
          "evaluate",
          [](PyTrainer& t, py::handle inputs) {
            std::vector<ImportedArray> keep;
            const std::vector<Tensor> x = t.inputs_from(inputs, &keep);
            Expected<std::vector<Tensor>> outputs = [&] {
              py::gil_scoped_release release;
              return t.trainer().evaluate(x);
            }();
            return to_numpy_list(value_or_raise(std::move(outputs)));
          },
          py::arg("inputs"), "The model's outputs in inference mode with the current weights (list of arrays).")
      .def(
          "profile_step",
          [](PyTrainer& t, py::handle inputs, py::handle labels) {
            std::vector<ImportedArray> keep;
            const std::vector<Tensor> x = t.inputs_from(inputs, &keep);
            const Tensor y = t.labels_from(labels, &keep);
            Expected<std::vector<StepProfile>> steps = [&] {
              py::gil_scoped_release release;
              return t.trainer().profile_step(x, y);
            }();
            py::list result;
            for (const StepProfile& s : value_or_raise(std::move(steps)))
              result.append(py::dict(py::arg("node") = s.node, py::arg("op") = s.op, py::arg("ms") = s.ms));
            return result;
          },
          py::arg("inputs"), py::arg("labels"), "One step (it trains), timed per node: [{'node', 'op', 'ms'}].")
      .def(
          "save",
          [](PyTrainer& t, const std::string& path) {
            Status status;
            {
              py::gil_scoped_release release;
              status = t.trainer().save(path);
            }
            check(status);
          },
          py::arg("onnx_path"), "Writes the model with the trained initializers.")
      .def("checkpoint", &PyTrainer::checkpoint, py::arg("path"), py::arg("epoch") = 0,
           "Writes a checkpoint file (as `ucudnn train --checkpoint`): weights, optimizer state, step.")
      .def("load_checkpoint", &PyTrainer::load_checkpoint, py::arg("path"),
           "Continues from a checkpoint file of this model, optimizer and seed.")
      .def(
          "weights", [](PyTrainer& t) { return tensors_to_dict(value_or_raise(t.trainer().weights())); },
          "The trained initializers by name (host copies).")
      .def(
          "state", [](PyTrainer& t) { return tensors_to_dict(value_or_raise(t.trainer().state())); },
          "Everything a run needs to continue: weights, optimizer state, step.")
      .def(
          "load_state",
          [](PyTrainer& t, const py::dict& state) {
            std::map<std::string, Tensor> tensors;
            for (const auto& [name, value] : state) {
              const std::string key = py::cast<std::string>(name);
              tensors[key] = host_tensor_copy(value, "state '" + key + "'");
            }
            check(t.trainer().load_state(tensors));
          },
          py::arg("state"), "Restores what state() returned.")
      .def_property(
          "learning_rate", [](PyTrainer& t) { return t.trainer().learning_rate(); },
          [](PyTrainer& t, double lr) { t.trainer().set_learning_rate(lr); })
      .def_property_readonly("steps_done", [](PyTrainer& t) { return t.trainer().steps_done(); })
      .def_property_readonly("optimizer", [](PyTrainer& t) { return t.trainer().optimizer(); })
      .def_property_readonly("inputs", [](PyTrainer& t) { return t.trainer().inputs(); })
      .def_property_readonly("outputs", [](PyTrainer& t) { return t.trainer().outputs(); })
      .def_property_readonly("parameters", [](PyTrainer& t) { return t.trainer().parameters(); })
      .def_property_readonly("running_stats", [](PyTrainer& t) { return t.trainer().running_stats(); })
      .def("memory", [](PyTrainer& t) { return memory_to_dict(t.trainer().memory()); })
      .def("plan_json", [](PyTrainer& t) { return t.trainer().plan_json(); })
      .def_property_readonly("predicted_conv_ms", [](PyTrainer& t) { return t.trainer().predicted_conv_ms(); });
}

}  // namespace ucudnn::python
