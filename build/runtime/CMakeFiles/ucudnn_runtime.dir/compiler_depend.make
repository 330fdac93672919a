# Empty compiler generated dependencies file for ucudnn_runtime.
# This may be replaced when dependencies are built.
