# What the Python binding (python/) needs, looked for from the top-level CMakeLists.txt before its
# UCUDNN_PYTHON option: the headers of the interpreter UCUDNN_PYTHON_EXECUTABLE (python3-dev),
# Debian's pybind11 (pybind11-dev) and DLPack's header (libdlpack-dev), in a build without sanitizers.
# Sets UCUDNN_PYTHON_DEPS_FOUND, and UCUDNN_PYTHON_MISSING naming what is missing.
#
# The binding is for the system interpreter by default: another `python3` first on PATH (pyenv, a
# virtual environment) would otherwise be picked, and the module only imports in the interpreter it
# was built for.
set(UCUDNN_PYTHON_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python interpreter the binding is built for")

set(UCUDNN_PYTHON_DEPS_FOUND OFF)
set(UCUDNN_PYTHON_MISSING "")
set(Python_EXECUTABLE ${UCUDNN_PYTHON_EXECUTABLE})  # FindPython: this interpreter, not a search
find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
if(NOT Python_Development.Module_FOUND)
  list(APPEND UCUDNN_PYTHON_MISSING "the headers of ${UCUDNN_PYTHON_EXECUTABLE} (python3-dev)")
else()
  set(PYBIND11_FINDPYTHON ON)  # pybind11 takes the interpreter FindPython found above
  find_package(pybind11 2.6 CONFIG QUIET)
  if(NOT pybind11_FOUND)
    list(APPEND UCUDNN_PYTHON_MISSING "pybind11 (pybind11-dev)")
  endif()
endif()
find_path(UCUDNN_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(NOT UCUDNN_DLPACK_INCLUDE_DIR)
  list(APPEND UCUDNN_PYTHON_MISSING "dlpack/dlpack.h (libdlpack-dev)")
endif()
# A sanitizer build's objects need the sanitizers' runtime loaded first, which python3 is not: the module
# would not import (scripts/run-tests --sanitize, UCUDNN_FUZZ).
if(UCUDNN_FUZZ OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  list(APPEND UCUDNN_PYTHON_MISSING "an uninstrumented build (this one has -fsanitize)")
endif()
if(NOT UCUDNN_PYTHON_MISSING)
  set(UCUDNN_PYTHON_DEPS_FOUND ON)
endif()
list(JOIN UCUDNN_PYTHON_MISSING ", " UCUDNN_PYTHON_MISSING)
