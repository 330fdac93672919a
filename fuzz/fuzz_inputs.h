// The readers that the fuzz targets (fuzz/*_fuzzer.cc) and tests/fuzz_regression_test.cc feed
// bytes to. Each puts the bytes where its public reading function expects them (a file in this
// process's own temporary folder, or a string) and returns what the reader answered: OK, or the
// error Status it refused the input with. A crash, a sanitizer report or an error without a
// message is a finding; a refusal is the expected answer to bad bytes.
#pragma once

#include <string_view>

#include "runtime/core/status.h"

namespace ucudnn::fuzz {

// onnx_import::load_model (batch 1) on the bytes as a .onnx file; summarize_model runs too.
Status read_model_bytes(std::string_view bytes);
// onnx_import::read_tensor_file on the bytes as a file (a TensorProto, or .npy by its magic).
Status read_tensor_bytes(std::string_view bytes);
// read_tensor_bytes on "\x93NUMPY" + bytes: always the .npy reader.
Status read_npy_bytes(std::string_view bytes);
// runtime::plan_from_json on the bytes, then the plan against models/tiny/tiny_cnn at batch 8
// (check_plan_matches, and Executor::create on the CPU backend when its memory is small).
Status read_plan_bytes(std::string_view bytes);
// optimizer::BenchmarkDb::open_read_only on the bytes as a SQLite file, then kernel_count,
// device_keys and lookup of the first kernels it holds.
Status read_database_bytes(std::string_view bytes);
// training::load_checkpoint on the bytes as a file.
Status read_checkpoint_bytes(std::string_view bytes);
// data::read_idx_images and data::read_idx_labels on the bytes as a file (gzip or plain, as zlib
// tells): OK when either accepts them, an IDX file being images or labels; else the images
// reader's refusal (the labels reader's where that one is out of memory or internal).
Status read_idx_bytes(std::string_view bytes);
// data::decode_image on the bytes (a JPEG or PNG by its first bytes: what read_image_file does
// with a file's bytes once read).
Status read_image_bytes(std::string_view bytes);

// Aborts (a finding for libFuzzer) when `status` is an error without a message.
void require_clean(const Status& status);

}  // namespace ucudnn::fuzz
