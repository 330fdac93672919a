file(REMOVE_RECURSE
  "libucudnn_runtime.a"
)
