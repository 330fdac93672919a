# Install rules (included last from the top-level CMakeLists.txt, once every target exists):
#
#   cmake --install build --prefix P
#
#   P/bin/ucudnn                                  the command line (target ucudnn_cli)
#   P/lib/libucudnn*.a                            ucudnn and the static libraries it links
#   P/include/ucudnn/ucudnn.h, P/include/runtime/core/*.h   the public header and what it includes
#   P/lib/cmake/ucudnn/ucudnn{Config,ConfigVersion,Targets*}.cmake   find_package(ucudnn) → ucudnn::ucudnn
#   P/lib/pkgconfig/ucudnn.pc                     pkg-config --cflags --libs ucudnn
#
# tests/install/install_test.sh installs a build tree and builds tools/examples/embed_example.cc
# against it out of tree, with find_package and with pkg-config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(UCUDNN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ucudnn)

# --- Libraries -------------------------------------------------------------------------------
# ucudnn is static, so every library of ours that it links (ucudnn_runtime, ucudnn_optimizer,
# ucudnn_onnx_import, and with CUDA ucudnn_cuda, ucudnn_optimizer_cuda) is installed and
# exported with it. They are found by walking ucudnn's link libraries (ucudnn_linked_libraries), so
# one added later is installed without an edit here. Imported targets (Eigen3::Eigen, PkgConfig::CBC, onnx_proto,
# CUDA::cudart_static, ...) are the dependencies that ucudnnConfig.cmake finds again.
# UCUDNN_INSTALL_LIBRARIES: ours, each before those it links (the order static linking needs).
ucudnn_linked_libraries(ucudnn UCUDNN_INSTALL_LIBRARIES)  # cmake/UcudnnHelpers.cmake
list(REVERSE UCUDNN_INSTALL_LIBRARIES)

# The public header needs C++20 (<span>): consumers compile with at least that.
target_compile_features(ucudnn INTERFACE cxx_std_20)

install(TARGETS ${UCUDNN_INSTALL_LIBRARIES} EXPORT ucudnnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ucudnn_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# --- Headers ---------------------------------------------------------------------------------
# Exactly include/ucudnn/ucudnn.h and the headers it includes, transitively, keeping the paths
# it includes them by. install_test.sh compares this list against the compiler's and fails
# when they differ: a header that gains an #include of ours belongs here.
install(FILES include/ucudnn/ucudnn.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ucudnn)
install(FILES runtime/core/model_info.h
              runtime/core/status.h
              runtime/core/tensor.h
              runtime/core/dtype.h
              runtime/core/half.h
              runtime/core/host_device.h
              runtime/core/shape.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/runtime/core)

# --- CMake package: find_package(ucudnn) → ucudnn::ucudnn -------------------------------------
install(EXPORT ucudnnTargets NAMESPACE ucudnn:: DESTINATION ${UCUDNN_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ucudnnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/install-files/ucudnnConfig.cmake
                              INSTALL_DESTINATION ${UCUDNN_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install-files/ucudnnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install-files/ucudnnConfig.cmake
              ${PROJECT_BINARY_DIR}/install-files/ucudnnConfigVersion.cmake
        DESTINATION ${UCUDNN_INSTALL_CMAKEDIR})

# --- pkg-config: ucudnn.pc --------------------------------------------------------------------
# The libraries are static, so Libs names all of ours (in link order) and every dependency:
# Requires those with a .pc of their own, flags for the rest.
list(TRANSFORM UCUDNN_INSTALL_LIBRARIES PREPEND "-l" OUTPUT_VARIABLE UCUDNN_PC_LIBS)
list(JOIN UCUDNN_PC_LIBS " " UCUDNN_PC_LIBS)
set(UCUDNN_PC_CFLAGS "")
set(UCUDNN_PC_REQUIRES "eigen3 >= 3.4, protobuf, sqlite3, cbc, nlohmann_json >= 3")
set(UCUDNN_PC_DEP_LIBS "")
# onnx_proto (libonnx-dev) has no .pc: its directory, unless the linker searches it anyway.
get_target_property(_ucudnn_onnx_proto onnx_proto LOCATION)
get_filename_component(_ucudnn_onnx_proto_dir "${_ucudnn_onnx_proto}" DIRECTORY)
if(NOT _ucudnn_onnx_proto_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
  string(APPEND UCUDNN_PC_DEP_LIBS " -L${_ucudnn_onnx_proto_dir}")
endif()
string(APPEND UCUDNN_PC_DEP_LIBS " -lonnx_proto ${OpenMP_CXX_FLAGS}")
if(UCUDNN_ONEDNN)  # oneDNN (libdnnl-dev) has no .pc
  string(APPEND UCUDNN_PC_DEP_LIBS " -ldnnl")
endif()
if(UCUDNN_HAVE_CUDA)
  string(APPEND UCUDNN_PC_CFLAGS " -DUCUDNN_HAVE_CUDA=1 -I${UCUDNN_CUDNN_INCLUDE_DIR}")
  set(_ucudnn_cuda_dirs "")
  get_target_property(_ucudnn_cudart CUDA::cudart_static LOCATION)
  get_target_property(_ucudnn_cublas CUDA::cublas LOCATION)
  foreach(_ucudnn_file IN ITEMS "${_ucudnn_cudart}" "${_ucudnn_cublas}" "${UCUDNN_CUDNN_LIBRARY}")
    get_filename_component(_ucudnn_dir "${_ucudnn_file}" DIRECTORY)
    list(APPEND _ucudnn_cuda_dirs "-L${_ucudnn_dir}")
  endforeach()
  list(REMOVE_DUPLICATES _ucudnn_cuda_dirs)
  list(JOIN _ucudnn_cuda_dirs " " _ucudnn_cuda_dirs)
  string(APPEND UCUDNN_PC_DEP_LIBS " ${_ucudnn_cuda_dirs} -lcudart_static -lcublas -lcublasLt -lcudnn -ldl -lrt -lpthread")
endif()
# Written at install time, so that prefix= is the prefix installed to (cmake --install --prefix):
# configured now but for @UCUDNN_PC_PREFIX@, which the install step fills in.
set(UCUDNN_PC_PREFIX "@UCUDNN_PC_PREFIX@")
configure_file(${CMAKE_CURRENT_LIST_DIR}/ucudnn.pc.in ${PROJECT_BINARY_DIR}/install-files/ucudnn.pc.in @ONLY)
install(CODE "
  set(UCUDNN_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/install-files/ucudnn.pc.in\" \"${PROJECT_BINARY_DIR}/install-files/ucudnn.pc\" @ONLY)
")
install(FILES ${PROJECT_BINARY_DIR}/install-files/ucudnn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
