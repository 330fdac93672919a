// Node attributes: ONNX attribute values, keyed by their ONNX names.
//
// The importer fills every attribute an op declares in its descriptor (spec
// default when the model omits it), so kernels and shape rules can read them
// with get_*() without repeating defaults.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "runtime/core/tensor.h"

namespace ucudnn::ir {

enum class AttrType { kInt, kFloat, kString, kInts, kFloats, kTensor };
const char* attr_type_name(AttrType type);

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, Tensor>;
AttrType attr_value_type(const AttrValue& value);

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }

  // Typed reads. Reading an attribute that is missing or of another type is a
  // programmer error (the importer guarantees declared attributes): it asserts.
  int64_t get_int(const std::string& name) const;
  float get_float(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<float>& get_floats(const std::string& name) const;
  const Tensor& get_tensor(const std::string& name) const;

  const std::map<std::string, AttrValue>& all() const { return values_; }

 private:
  const AttrValue& at(const std::string& name) const;
  std::map<std::string, AttrValue> values_;
};

}  // namespace ucudnn::ir
