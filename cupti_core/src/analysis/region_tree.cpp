// The region tree of every run (docs/design.md, rule 14): nodes are (run, path of regions from a topmost
// region down); thread_walk.cpp finds each instance's node, this file makes nodes and assembles the
// result. Memory: one tree_stats (48 B) and one child-map entry per node, capped by
// analysis_options::region_tree_max_nodes (topmost nodes, one per aggregate, are never refused).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/engine.hpp"

namespace regionprof {

std::vector<std::uint32_t> tree_path(const std::vector<tree_node>& tree, std::size_t node) {
  std::vector<std::uint32_t> path;
  for (std::uint32_t at = static_cast<std::uint32_t>(node); at != tree_node::no_parent; at = tree[at].parent) {
    path.push_back(tree[at].region);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

namespace detail::attribution {

tree_node_index engine::new_tree_node(tree_node_index parent, std::uint32_t region) {
  const tree_node_index index = tree_.next();
  tree_stats node;
  node.parent = parent;
  node.region = region;
  tree_.push_back(node);
  return index;
}

tree_node_index engine::child_node(tree_node_index parent, std::uint32_t region) {
  if (const tree_stats& p = tree_[parent]; p.last_child_region == region) return p.last_child;
  const std::uint64_t key = (std::uint64_t{parent.index()} << 32) | region;
  tree_node_index child;
  if (auto found = tree_children_.find(key); found != tree_children_.end()) {
    child = found->second;
  } else if (tree_.size() >= options_.region_tree_max_nodes) {
    ++tree_truncated_;  // the instance (and its subtree) stays in `parent`
    return no_tree_node::none;
  } else {
    child = new_tree_node(parent, region);
    tree_children_.emplace(key, child);
  }
  tree_stats& p = tree_[parent];  // after new_tree_node(): tree_ may have moved
  p.last_child_region = region;
  p.last_child = child;
  return child;
}

// `by_run`: the aggregates ordered by run, then first appearance (the order of each run's `regions`);
// `result_index`: per classifier region, its index in result.regions or -1.
void engine::assemble_tree(analysis_result& result, const std::vector<aggregate_index>& by_run,
                           const std::vector<std::uint32_t>& result_index) {
  result.has_region_tree = options_.region_tree;
  if (!options_.region_tree) return;
  const std::size_t n = tree_.size();
  auto at = [](std::size_t i) { return tree_node_index::at(i); };

  // Inclusive device time and the children's inclusive CPU time: a parent is created before its
  // children, so one pass from the last node back sees every child before its parent.
  std::vector<std::int64_t> device(n);
  std::vector<std::int64_t> child_cpu(n, 0);
  for (std::size_t i = 0; i < n; ++i) device[i] = tree_[at(i)].self_device;
  for (std::size_t i = n; i-- > 0;) {
    const tree_stats& node = tree_[at(i)];
    if (!node.parent.is_index()) continue;
    device[node.parent.index()] += device[i];
    child_cpu[node.parent.index()] += node.cpu;
  }

  // Children of each node (CSR), by first appearance, ties in creation order.
  std::vector<std::uint32_t> first(n + 1, 0);
  for (const tree_stats& node : tree_) {
    if (node.parent.is_index()) ++first[node.parent.index() + 1];
  }
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::uint32_t> children(first.back());
  {
    std::vector<std::uint32_t> cursor(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      const tree_stats& node = tree_[at(i)];
      if (node.parent.is_index()) children[cursor[node.parent.index()]++] = static_cast<std::uint32_t>(i);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::stable_sort(children.begin() + first[i], children.begin() + first[i + 1],
                     [&](std::uint32_t a, std::uint32_t b) { return tree_[at(a)].first_seen < tree_[at(b)].first_seen; });
  }

  // tree_regions: result.regions, then the regions seen only nested, by first appearance.
  constexpr std::uint32_t not_reported = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> tree_index(result_index);
  std::vector<std::int64_t> nested_first(result_index.size(), max_ns);
  for (const tree_stats& node : tree_) {
    if (tree_index[node.region] == not_reported) {
      nested_first[node.region] = std::min(nested_first[node.region], node.first_seen);
    }
  }
  std::vector<std::uint32_t> nested_only;
  for (std::uint32_t r = 0; r < nested_first.size(); ++r) {
    if (nested_first[r] != max_ns) nested_only.push_back(r);  // only set for regions not in result.regions
  }
  std::stable_sort(nested_only.begin(), nested_only.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return nested_first[a] < nested_first[b]; });
  result.tree_regions = result.regions;
  for (std::uint32_t region : nested_only) {
    const region_def& def = classes_.regions()[region];
    tree_index[region] = static_cast<std::uint32_t>(result.tree_regions.size());
    auto type = in_.module_types.find(def.id);
    result.tree_regions.push_back({def.id, def.name, def.kind, type == in_.module_types.end() ? "-" : type->second});
  }

  // Each run's nodes depth-first: its topmost nodes in the order of run.regions, then each subtree.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;  // (node, index of its parent in run.tree)
  for (aggregate_index a : by_run) {
    const aggregate& agg = aggregates_[a];
    std::vector<tree_node>& out = result.runs[agg.run.index()].tree;
    stack.assign(1, {agg.tree_root.index(), tree_node::no_parent});
    while (!stack.empty()) {
      const auto [i, parent] = stack.back();
      stack.pop_back();
      const tree_stats& node = tree_[at(i)];
      tree_node emitted;
      emitted.region = tree_index[node.region];
      emitted.parent = parent;
      emitted.depth = parent == tree_node::no_parent ? 0 : out[parent].depth + 1;
      emitted.calls = node.calls;
      emitted.cpu_time_ns = node.cpu;
      emitted.self_cpu_time_ns = node.cpu - child_cpu[i];  // >= 0: children nest in their parent, disjoint
      if (device_data_) {
        emitted.device_time_ns = device[i];
        emitted.self_device_time_ns = node.self_device;
      }
      const auto self = static_cast<std::uint32_t>(out.size());
      out.push_back(emitted);
      for (std::uint32_t k = first[i + 1]; k-- > first[i];) stack.emplace_back(children[k], self);
    }
  }
}

}  // namespace detail::attribution
}  // namespace regionprof
