
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/runtime/core/dtype.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/dtype.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/dtype.cc.o.d"
  "/work/main/runtime/core/shape.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/shape.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/shape.cc.o.d"
  "/work/main/runtime/core/status.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/status.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/status.cc.o.d"
  "/work/main/runtime/core/tensor.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/tensor.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/core/tensor.cc.o.d"
  "/work/main/runtime/cpu/activations.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/activations.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/activations.cc.o.d"
  "/work/main/runtime/cpu/binary.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/binary.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/binary.cc.o.d"
  "/work/main/runtime/cpu/conv.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/conv.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/conv.cc.o.d"
  "/work/main/runtime/cpu/conv_algorithms.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/conv_algorithms.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/conv_algorithms.cc.o.d"
  "/work/main/runtime/cpu/cpu_registry.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/cpu_registry.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/cpu_registry.cc.o.d"
  "/work/main/runtime/cpu/data_movement.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/data_movement.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/data_movement.cc.o.d"
  "/work/main/runtime/cpu/matmul.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/matmul.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/matmul.cc.o.d"
  "/work/main/runtime/cpu/normalization.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/normalization.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/normalization.cc.o.d"
  "/work/main/runtime/cpu/pooling.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/pooling.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/pooling.cc.o.d"
  "/work/main/runtime/cpu/reductions.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/reductions.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/reductions.cc.o.d"
  "/work/main/runtime/cpu/shape_ops.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/shape_ops.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/shape_ops.cc.o.d"
  "/work/main/runtime/executor/cpu_executor.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/cpu_executor.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/cpu_executor.cc.o.d"
  "/work/main/runtime/executor/plan.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/plan.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/plan.cc.o.d"
  "/work/main/runtime/executor/plan_json.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/plan_json.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/plan_json.cc.o.d"
  "/work/main/runtime/ir/attributes.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/attributes.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/attributes.cc.o.d"
  "/work/main/runtime/ir/graph.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/graph.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/graph.cc.o.d"
  "/work/main/runtime/memory/arena_planner.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/memory/arena_planner.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/memory/arena_planner.cc.o.d"
  "/work/main/runtime/ops/activations.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/activations.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/activations.cc.o.d"
  "/work/main/runtime/ops/binary.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/binary.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/binary.cc.o.d"
  "/work/main/runtime/ops/conv.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/conv.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/conv.cc.o.d"
  "/work/main/runtime/ops/data_movement.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/data_movement.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/data_movement.cc.o.d"
  "/work/main/runtime/ops/matmul.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/matmul.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/matmul.cc.o.d"
  "/work/main/runtime/ops/normalization.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/normalization.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/normalization.cc.o.d"
  "/work/main/runtime/ops/op_registry.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/op_registry.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/op_registry.cc.o.d"
  "/work/main/runtime/ops/pending_ops.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/pending_ops.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/pending_ops.cc.o.d"
  "/work/main/runtime/ops/pooling.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/pooling.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/pooling.cc.o.d"
  "/work/main/runtime/ops/reductions.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/reductions.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/reductions.cc.o.d"
  "/work/main/runtime/ops/shape_ops.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/shape_ops.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/shape_ops.cc.o.d"
  "/work/main/runtime/ops/window_geometry.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/window_geometry.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/window_geometry.cc.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
