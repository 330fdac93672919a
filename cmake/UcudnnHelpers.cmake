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

# add_ucudnn_test(NAME SOURCES... [LIBS libs...]): a GoogleTest binary registered with CTest.
function(add_ucudnn_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  ucudnn_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE UCUDNN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")  # tests/test_paths.h
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  # XDG_CACHE_HOME: a session's default benchmark database lies in the build folder, not the user's
  # cache. (A second variable in ENVIRONMENT would be split apart by gtest_discover_tests.)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "UCUDNN_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                                  ENVIRONMENT_MODIFICATION "XDG_CACHE_HOME=set:${UCUDNN_TEST_CACHE_HOME}")
endfunction()

# Gives every test of the current folder registered with add_test XDG_CACHE_HOME=UCUDNN_TEST_CACHE_HOME
# (add_ucudnn_test's do it themselves). Deferred to the end of the folder: cmake_language(DEFER CALL ...).
function(ucudnn_isolate_test_cache)
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT "XDG_CACHE_HOME=${UCUDNN_TEST_CACHE_HOME}")
  endif()
endfunction()
