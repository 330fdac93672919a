// Naive reference of Einsum (einsum_reference.h).
#include "tests/reference/einsum_reference.h"

#include <algorithm>
#include <map>
#include <string>

#include "tests/reference/element_access.h"
#include "tests/reference/elementwise_reference.h"

namespace ucudnn::reference {

namespace {

// "..." as the labels 'A'+20.. (none of the tests' equations use them), right-aligned over `rank` dims.
std::string expand(std::string term, size_t rank, size_t broadcast) {
  const size_t dots = term.find("...");
  if (dots == std::string::npos) return term;
  const size_t count = rank - (term.size() - 3);
  std::string labels;
  for (size_t i = broadcast - count; i < broadcast; ++i) labels += static_cast<char>('a' + 26 - broadcast + i);
  return term.replace(dots, 3, labels);
}

}  // namespace

Tensor einsum(const ir::Node& node, const std::vector<const Tensor*>& in) {
  std::string eq;
  for (char c : node.attrs.get_string("equation"))
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  size_t broadcast = 0;
  for (size_t t = 0; t < terms.size(); ++t)
    if (terms[t].find("...") != std::string::npos)
      broadcast = std::max(broadcast, in[t]->shape().size() - (terms[t].size() - 3));
  std::map<char, int64_t> size;
  for (size_t t = 0; t < terms.size(); ++t) {
    terms[t] = expand(terms[t], in[t]->shape().size(), broadcast);
    for (size_t d = 0; d < terms[t].size(); ++d) size[terms[t][d]] = std::max(size[terms[t][d]], in[t]->shape()[d]);
  }
  std::string output;
  if (arrow != std::string::npos) {
    output = expand(eq.substr(arrow + 2), broadcast + (eq.size() - arrow - 2 - 3), broadcast);
  } else {  // implicit: broadcast labels, then the letters used once, sorted
    output = expand("...", broadcast, broadcast);
    std::map<char, int> count;
    for (const std::string& t : terms)
      for (char c : t) ++count[c];
    for (const auto& [c, n] : count)
      if (n == 1 && output.find(c) == std::string::npos) output += c;
  }
  std::string all = output;
  for (const auto& [c, n] : size)
    if (all.find(c) == std::string::npos) all += c;
  Shape out_shape;
  for (char c : output) out_shape.push_back(size[c]);
  Tensor y = make(DType::kFloat32, out_shape);
  Shape all_shape;
  for (char c : all) all_shape.push_back(size[c]);
  for (int64_t i = 0; i < shape_numel(all_shape); ++i) {
    const Index value = unravel(i, all_shape);
    double product = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      Index at;
      for (size_t d = 0; d < terms[t].size(); ++d) {
        const int64_t v = value[all.find(terms[t][d])];
        at.push_back(in[t]->shape()[d] == 1 ? 0 : v);  // a broadcast dim of 1
      }
      product *= get(*in[t], ravel(at, in[t]->shape()));
    }
    const Index out_at(value.begin(), value.begin() + static_cast<int64_t>(output.size()));
    const int64_t o = ravel(out_at, out_shape);
    put(y, o, get(y, o) + product);
  }
  return y;
}

}  // namespace ucudnn::reference
