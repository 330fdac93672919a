// MinCut (min_cut.h): Edmonds–Karp max flow over a residual adjacency list; the source side of the
// minimum cut is what the last breadth-first search still reaches.
#include "optimizer/min_cut.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace ucudnn::optimizer {

namespace {
// Residual capacity below this is saturated: capacities here are milliseconds, and
// sums of doubles leave crumbs.
constexpr double kSaturated = 1e-12;
}  // namespace

MinCut::MinCut(int nodes) : adjacency_(static_cast<size_t>(nodes)) {}

void MinCut::add_edge(int from, int to, double capacity) {
  if (!(capacity > 0)) return;
  const int forward = static_cast<int>(adjacency_[from].size());
  const int backward = static_cast<int>(adjacency_[to].size()) + (from == to ? 1 : 0);
  adjacency_[from].push_back({to, backward, capacity});
  adjacency_[to].push_back({from, forward, 0.0});
}

std::vector<bool> MinCut::source_side(int source, int sink) {
  const size_t n = adjacency_.size();
  flow_ = 0;
  std::vector<std::pair<int, int>> parent(n);  // (node, edge index) each node was reached by
  std::vector<bool> seen(n);
  auto search = [&] {  // breadth first over unsaturated edges; true when the sink is reached
    std::fill(seen.begin(), seen.end(), false);
    std::queue<int> queue;
    queue.push(source);
    seen[source] = true;
    while (!queue.empty()) {
      const int u = queue.front();
      queue.pop();
      for (size_t e = 0; e < adjacency_[u].size(); ++e) {
        const Edge& edge = adjacency_[u][e];
        if (edge.residual <= kSaturated || seen[edge.to]) continue;
        seen[edge.to] = true;
        parent[edge.to] = {u, static_cast<int>(e)};
        if (edge.to == sink) return true;
        queue.push(edge.to);
      }
    }
    return false;
  };
  while (search()) {
    double push = std::numeric_limits<double>::infinity();
    for (int v = sink; v != source; v = parent[v].first)
      push = std::min(push, adjacency_[parent[v].first][parent[v].second].residual);
    for (int v = sink; v != source; v = parent[v].first) {
      Edge& edge = adjacency_[parent[v].first][parent[v].second];
      edge.residual -= push;
      adjacency_[v][edge.reverse].residual += push;
    }
    flow_ += push;
  }
  return seen;  // the last search: everything still reachable from the source
}

}  // namespace ucudnn::optimizer
