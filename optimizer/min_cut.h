// A minimum s-t cut of a small directed graph with real capacities: the exact
// solver of a two-label problem whose pairwise costs only charge for labels that
// differ (the layout of each node: optimizer/layout_regions.h). Edmonds–Karp
// (shortest augmenting paths), O(V·E²); the layout graphs have a few hundred
// nodes.
#pragma once

#include <vector>

namespace ucudnn::optimizer {

class MinCut {
 public:
  explicit MinCut(int nodes);

  int nodes() const { return static_cast<int>(adjacency_.size()); }
  // An edge from → to of `capacity` ≥ 0 (ignored when 0). Parallel edges add up.
  void add_edge(int from, int to, double capacity);

  // Solves the cut between `source` and `sink`: per node, whether it is on the
  // source side (reachable from the source through edges not saturated by a
  // maximum flow). Among minimum cuts this is the one with the smallest source side.
  std::vector<bool> source_side(int source, int sink);
  double cut_capacity() const { return flow_; }  // after source_side: the minimum cut's capacity

 private:
  struct Edge {
    int to;
    int reverse;  // index of the reverse edge in adjacency_[to]
    double residual;
  };
  std::vector<std::vector<Edge>> adjacency_;
  double flow_ = 0;
};

}  // namespace ucudnn::optimizer
