# Shared build settings for ucudnn targets.

# Warnings on for our own code; errors in CI (UCUDNN_WERROR=ON).
function(ucudnn_target_defaults target)
  # -Wno-missing-field-initializers: designated initializers that leave fields at
  # their defaults are the house style. -Wno-restrict: GCC 12 reports false
  # overlaps inside libstdc++'s `"literal" + std::string` at -O2/-O3 (GCC bug 105329).
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-missing-field-initializers -Wno-restrict>)
  if(UCUDNN_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  # Installed, the headers lie under <prefix>/include (cmake/UcudnnInstall.cmake).
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                              $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
endfunction()

# Where tests keep what ucudnn caches (XDG_CACHE_HOME): the benchmark database of every session
# and plan that names none.
set(UCUDNN_TEST_CACHE_HOME ${PROJECT_BINARY_DIR}/test-cache)

# The GoogleTest tests are one binary, build/tests/ucudnn_tests: the library is linked once (a test
# binary per area linked all of it each, 10-13 MiB apiece, minutes of linking on two cores and a device
# bundle over the carry limit). CTest still runs every test on its own (Suite.Name, gtest_discover_tests);
# `ucudnn_tests --gtest_filter='Suite.*'` runs a group by hand.
set(UCUDNN_TEST_BINARY ucudnn_tests)

# add_ucudnn_test(GROUP SOURCES... [LIBS libs...]): adds a group of test files (GROUP names it in the
# CMakeLists only) and the libraries they need to the one test binary. A source named by two groups is
# compiled once.
function(add_ucudnn_test group)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT TARGET ${UCUDNN_TEST_BINARY})
    add_executable(${UCUDNN_TEST_BINARY})
    ucudnn_target_defaults(${UCUDNN_TEST_BINARY})
    target_link_libraries(${UCUDNN_TEST_BINARY} PRIVATE GTest::gtest_main)
    target_compile_definitions(${UCUDNN_TEST_BINARY} PRIVATE UCUDNN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")  # tests/test_paths.h
    set_target_properties(${UCUDNN_TEST_BINARY} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    # XDG_CACHE_HOME: a session's default benchmark database lies in the build folder, not the user's
    # cache. (A second variable in ENVIRONMENT would be split apart by gtest_discover_tests.)
    gtest_discover_tests(${UCUDNN_TEST_BINARY} DISCOVERY_TIMEOUT 120
                         PROPERTIES ENVIRONMENT "UCUDNN_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                                    ENVIRONMENT_MODIFICATION "XDG_CACHE_HOME=set:${UCUDNN_TEST_CACHE_HOME}")
  endif()
  get_property(added GLOBAL PROPERTY _UCUDNN_TEST_SOURCES)
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(source "${source}" ABSOLUTE)
    if(NOT source IN_LIST added)
      target_sources(${UCUDNN_TEST_BINARY} PRIVATE "${source}")
      set_property(GLOBAL APPEND PROPERTY _UCUDNN_TEST_SOURCES "${source}")
      list(APPEND added "${source}")
    endif()
  endforeach()
  target_link_libraries(${UCUDNN_TEST_BINARY} PRIVATE ${ARG_LIBS})
endfunction()

# Gives every test of the current folder registered with add_test XDG_CACHE_HOME=UCUDNN_TEST_CACHE_HOME
# (add_ucudnn_test's do it themselves). Deferred to the end of the folder: cmake_language(DEFER CALL ...).
function(ucudnn_isolate_test_cache)
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT "XDG_CACHE_HOME=${UCUDNN_TEST_CACHE_HOME}")
  endif()
endfunction()

# Our libraries that `target` links, directly or through others, `target` included; imported targets
# (Eigen3::Eigen, PkgConfig::CBC, CUDA::cudart_static, ...) are left out. In post-order: each after
# every library of ours it links. Walking the links means a library added later is covered without an
# edit: UcudnnInstall.cmake installs and exports these, python/CMakeLists.txt makes them
# position-independent.
function(ucudnn_linked_libraries target out_var)
  set_property(GLOBAL PROPERTY _UCUDNN_LINKED_SEEN_${target} "")
  set_property(GLOBAL PROPERTY _UCUDNN_LINKED_ORDER_${target} "")
  _ucudnn_visit_linked(${target} ${target})
  get_property(order GLOBAL PROPERTY _UCUDNN_LINKED_ORDER_${target})
  set(${out_var} ${order} PARENT_SCOPE)
endfunction()

function(_ucudnn_visit_linked root target)
  get_property(seen GLOBAL PROPERTY _UCUDNN_LINKED_SEEN_${root})
  if(target IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY _UCUDNN_LINKED_SEEN_${root} ${target})
  get_target_property(libs ${target} LINK_LIBRARIES)
  get_target_property(interface_libs ${target} INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS libs interface_libs)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
    if(TARGET "${lib}")
      get_target_property(aliased ${lib} ALIASED_TARGET)
      if(aliased)
        set(lib ${aliased})
      endif()
      get_target_property(imported ${lib} IMPORTED)
      if(NOT imported)
        _ucudnn_visit_linked(${root} ${lib})
      endif()
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY _UCUDNN_LINKED_ORDER_${root} ${target})
endfunction()
