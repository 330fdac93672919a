# CMake generated Testfile for 
# Source directory: /work/main/onnx_import
# Build directory: /work/main/build/onnx_import
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
