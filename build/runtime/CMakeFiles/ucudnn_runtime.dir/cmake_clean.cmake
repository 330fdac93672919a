file(REMOVE_RECURSE
  "CMakeFiles/ucudnn_runtime.dir/core/dtype.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/core/dtype.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/core/shape.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/core/shape.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/core/status.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/core/status.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/core/tensor.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/core/tensor.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/cpu/activations.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/cpu/activations.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/cpu/cpu_registry.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/cpu/cpu_registry.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/executor/cpu_executor.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/executor/cpu_executor.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/executor/plan.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/executor/plan.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/ir/attributes.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/ir/attributes.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/ir/graph.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/ir/graph.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/memory/arena_planner.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/memory/arena_planner.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/ops/activations.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/ops/activations.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/ops/op_registry.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/ops/op_registry.cc.o.d"
  "CMakeFiles/ucudnn_runtime.dir/ops/pending_ops.cc.o"
  "CMakeFiles/ucudnn_runtime.dir/ops/pending_ops.cc.o.d"
  "libucudnn_runtime.pdb"
  "libucudnn_runtime.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/ucudnn_runtime.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
