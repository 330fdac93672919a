// plan() and Plan: what the optimizer chose for a model without loading a session (ucudnn::plan,
// ModelPlan): the summary `ucudnn plan` prints, the reports of `ucudnn report` (text, JSON, HTML) and the
// plan file a session runs (SessionOptions.plan_path). Planning releases the GIL: it may benchmark.
#include <pybind11/stl.h>

#include "python/src/binding.h"
#include "python/src/errors.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::python {

namespace {

struct PyPlan {
  ModelPlan plan;
};

}  // namespace

void bind_plan(py::module_& m) {
  py::class_<PlanSummary>(m, "PlanSummary", "What plan() decided, in numbers (what `ucudnn plan` prints).")
      .def_readonly("device", &PlanSummary::device)
      .def_readonly("device_name", &PlanSummary::device_name)
      .def_readonly("policy", &PlanSummary::policy)
      .def_readonly("layout", &PlanSummary::layout)
      .def_readonly("layout_note", &PlanSummary::layout_note)
      .def_readonly("convolution_kernels", &PlanSummary::convolution_kernels)
      .def_readonly("kernels_benchmarked", &PlanSummary::kernels_benchmarked)
      .def_readonly("kernels_reused", &PlanSummary::kernels_reused)
      .def_readonly("divided_steps", &PlanSummary::divided_steps)
      .def_readonly("side_stream_convolutions", &PlanSummary::side_stream_convolutions)
      .def_readonly("predicted_conv_ms", &PlanSummary::predicted_conv_ms)
      .def_readonly("optimize_seconds", &PlanSummary::optimize_seconds)
      .def_readonly("workspace_pool_bytes", &PlanSummary::workspace_pool_bytes)
      .def_readonly("largest_workspace_bytes", &PlanSummary::largest_workspace_bytes)
      .def_readonly("arena_bytes", &PlanSummary::arena_bytes)
      .def("__repr__", [](const PlanSummary& s) {
        return "PlanSummary(device='" + s.device + "', policy='" + policy_name(s.policy) + "', layout='" +
               layout_name(s.layout) + "', convolution_kernels=" + std::to_string(s.convolution_kernels) +
               ", predicted_conv_ms=" + std::to_string(s.predicted_conv_ms) + ")";
      });

  py::class_<PyPlan>(m, "Plan", "A plan made by plan(): its summary, reports and plan file.")
      .def_property_readonly("summary", [](const PyPlan& p) { return p.plan.summary(); })
      .def(
          "to_json", [](const PyPlan& p) { return p.plan.to_json(); },
          "The plan file's JSON (what save writes and SessionOptions.plan_path reads).")
      .def(
          "report_text", [](const PyPlan& p) { return p.plan.report_text(); },
          "`ucudnn report`: per convolution the configuration chosen against the undivided and unlimited ones.")
      .def(
          "report_json", [](const PyPlan& p) { return p.plan.report_json(); }, "The report as one JSON object.")
      .def(
          "report_html", [](const PyPlan& p) { return p.plan.report_html(); },
          "The report as a self-contained HTML page (inline CSS and SVG plots).")
      .def(
          "save", [](const PyPlan& p, const std::string& path) { check(save_plan(p.plan, path)); }, py::arg("path"),
          "Writes the plan file to `path` atomically.")
      .def("__repr__", [](const PyPlan& p) {
        const PlanSummary& s = p.plan.summary();
        return "Plan(device='" + s.device + "', policy='" + policy_name(s.policy) +
               "', convolution_kernels=" + std::to_string(s.convolution_kernels) + ")";
      });

  m.def(
      "plan",
      [](const std::string& model_path, SessionOptions options) {
        Expected<ModelPlan> made = [&] {
          py::gil_scoped_release release;
          return plan(model_path, options);
        }();
        return PyPlan{value_or_raise(std::move(made))};
      },
      py::arg("model_path"), py::arg("options"),
      "Plans the model exactly as loading a session with `options` would (no plan_path), benchmarking what the "
      "database lacks.");
}

}  // namespace ucudnn::python
