
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
  "/work/main/runtime/cpu/cpu_registry.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/cpu_registry.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/cpu/cpu_registry.cc.o.d"
  "/work/main/runtime/executor/cpu_executor.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/cpu_executor.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/cpu_executor.cc.o.d"
  "/work/main/runtime/executor/plan.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/plan.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/executor/plan.cc.o.d"
  "/work/main/runtime/ir/attributes.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/attributes.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/attributes.cc.o.d"
  "/work/main/runtime/ir/graph.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/graph.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ir/graph.cc.o.d"
  "/work/main/runtime/memory/arena_planner.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/memory/arena_planner.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/memory/arena_planner.cc.o.d"
  "/work/main/runtime/ops/activations.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/activations.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/activations.cc.o.d"
  "/work/main/runtime/ops/op_registry.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/op_registry.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/op_registry.cc.o.d"
  "/work/main/runtime/ops/pending_ops.cc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/pending_ops.cc.o" "gcc" "runtime/CMakeFiles/ucudnn_runtime.dir/ops/pending_ops.cc.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
