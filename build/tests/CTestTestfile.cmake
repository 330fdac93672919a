# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
include("/work/main/build/tests/arena_planner_test[1]_include.cmake")
include("/work/main/build/tests/executor_test[1]_include.cmake")
include("/work/main/build/tests/onnx_import_test[1]_include.cmake")
include("/work/main/build/tests/ops_conv_test[1]_include.cmake")
include("/work/main/build/tests/optimizer_dp_test[1]_include.cmake")
include("/work/main/build/tests/optimizer_ilp_test[1]_include.cmake")
include("/work/main/build/tests/optimizer_policies_test[1]_include.cmake")
include("/work/main/build/tests/benchmark_db_test[1]_include.cmake")
include("/work/main/build/tests/report_test[1]_include.cmake")
include("/work/main/build/tests/ops_elementwise_test[1]_include.cmake")
include("/work/main/build/tests/planner_test[1]_include.cmake")
add_test([=[onnx_conformance]=] "/work/main/build/tests/conformance_runner" "--skip-file" "/work/main/tests/conformance/skipped.txt")
set_tests_properties([=[onnx_conformance]=] PROPERTIES  LABELS "conformance" TIMEOUT "2400" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;36;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[tiny_models]=] "/work/main/build/tests/conformance_runner" "--no-skip-file" "/work/main/models/tiny")
set_tests_properties([=[tiny_models]=] PROPERTIES  LABELS "conformance" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;40;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[torchvision_models]=] "bash" "/work/main/tests/models/run_models.sh" "--ucudnn" "/work/main/build/bin/ucudnn" "--source" "/work/main" "--work" "/work/main/build/models")
set_tests_properties([=[torchvision_models]=] PROPERTIES  LABELS "models;slow" SKIP_RETURN_CODE "77" TIMEOUT "3600" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;46;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[cli]=] "bash" "/work/main/tests/cli/cli_test.sh" "/work/main/build/bin/ucudnn" "/work/main" "/work/main/build/cli_test")
set_tests_properties([=[cli]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;57;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[embed_example]=] "/work/main/build/bin/embed_example" "/work/main/models/tiny/tiny_cnn/model.onnx" "2")
set_tests_properties([=[embed_example]=] PROPERTIES  PASS_REGULAR_EXPRESSION "output float32\\[2, 5\\]" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;60;add_test;/work/main/tests/CMakeLists.txt;0;")
