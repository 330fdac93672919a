// Attribute storage and typed access.
#include "runtime/ir/attributes.h"

#include <cstdio>
#include <cstdlib>

namespace ucudnn::ir {

const char* attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "string";
    case AttrType::kInts: return "ints";
    case AttrType::kFloats: return "floats";
    case AttrType::kTensor: return "tensor";
  }
  return "?";
}

AttrType attr_value_type(const AttrValue& value) { return static_cast<AttrType>(value.index()); }

const AttrValue& Attributes::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    std::fprintf(stderr, "ucudnn internal error: attribute '%s' read but never declared\n", name.c_str());
    std::abort();
  }
  return it->second;
}

int64_t Attributes::get_int(const std::string& name) const { return std::get<int64_t>(at(name)); }
float Attributes::get_float(const std::string& name) const { return std::get<float>(at(name)); }
const std::string& Attributes::get_string(const std::string& name) const { return std::get<std::string>(at(name)); }
const std::vector<int64_t>& Attributes::get_ints(const std::string& name) const {
  return std::get<std::vector<int64_t>>(at(name));
}
const std::vector<float>& Attributes::get_floats(const std::string& name) const {
  return std::get<std::vector<float>>(at(name));
}
const Tensor& Attributes::get_tensor(const std::string& name) const { return std::get<Tensor>(at(name)); }

}  // namespace ucudnn::ir
