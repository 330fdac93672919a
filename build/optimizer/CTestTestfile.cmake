# CMake generated Testfile for 
# Source directory: /work/main/optimizer
# Build directory: /work/main/build/optimizer
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
