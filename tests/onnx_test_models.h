// Helpers for the importer tests: build small ModelProtos in C++ and write them
// to a temporary folder that is removed with the fixture.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace ucudnn::testing {

// A fresh folder under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ucudnn_import_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A version-1 .npy file of `bytes` raw bytes: NumPy's header for dtype `descr` ("<f4") and `shape`
// ("(2, 3)"), padded with spaces to a multiple of 64 bytes.
inline std::string npy_bytes(const std::string& descr, const std::string& shape, const void* data, size_t bytes,
                             bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

// Dims as strings: digits → dim_value, "" → a dim without value, else dim_param.
inline void set_tensor_type(onnx::ValueInfoProto* v, const std::string& name, int elem_type,
                            const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (d.empty()) continue;
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

// A model with IR version 8 importing `opset` of the default domain.
inline onnx::ModelProto make_model(int opset = 13, int64_t ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("ucudnn-test");
  auto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

inline void add_input(onnx::ModelProto& m, const std::string& name, const std::vector<std::string>& dims,
                      int elem_type = onnx::TensorProto::FLOAT) {
  set_tensor_type(m.mutable_graph()->add_input(), name, elem_type, dims);
}

inline void add_output(onnx::ModelProto& m, const std::string& name, const std::vector<std::string>& dims,
                       int elem_type = onnx::TensorProto::FLOAT) {
  set_tensor_type(m.mutable_graph()->add_output(), name, elem_type, dims);
}

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, const std::string& name = "") {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : inputs) n->add_input(s);
  for (auto& s : outputs) n->add_output(s);
  return n;
}

inline void add_ints_attr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void add_float_attr(onnx::NodeProto* n, const std::string& name, float value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

inline void add_int_attr(onnx::NodeProto* n, const std::string& name, int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// A float tensor attribute of `dims` holding `values` (ConstantOfShape's `value`, ...).
inline void add_float_tensor_attr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> dims,
                                  std::vector<float> values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) a->mutable_t()->add_dims(d);
  for (float v : values) a->mutable_t()->add_float_data(v);
}

inline onnx::TensorProto* add_float_initializer(onnx::ModelProto& m, const std::string& name,
                                                std::vector<int64_t> dims, std::vector<float> values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
  return t;
}

inline onnx::TensorProto* add_int64_initializer(onnx::ModelProto& m, const std::string& name,
                                                std::vector<int64_t> dims, std::vector<int64_t> values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

inline std::string write_model(const TempDir& dir, const onnx::ModelProto& m, const std::string& name = "model.onnx") {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  const std::string path = dir.file(name);
  write_bytes(path, bytes);
  return path;
}

}  // namespace ucudnn::testing
