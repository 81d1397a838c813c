// The region tree of every run (docs/design.md, rule 14): nodes are (run, path of regions from a topmost
// region down); thread_walk.cpp finds each instance's node, this file makes nodes and assembles the
// result. Memory: per node one tree_stats (48 B) and its run's path -> node entry, per distinct path 16 B
// and a (parent path, region) entry; nodes are capped by analysis_options::region_tree_max_nodes
// (topmost nodes, one per aggregate, are never refused).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

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

tree_node_index engine::new_tree_node(run_index run, tree_node_index parent, std::uint32_t region,
                                      tree_path_index path) {
  const tree_node_index index = tree_.next();
  tree_stats node;
  node.parent = parent;
  node.region = region;
  node.path = path;
  node.run = run;
  if (parent.is_index()) {
    node.next_sibling = tree_[parent].first_child;
    tree_[parent].first_child = index;
  }
  tree_.push_back(node);
  return index;
}

tree_path_index engine::root_path(std::uint32_t region) {
  if (region >= root_paths_.size()) root_paths_.resize(region + 1, no_tree_path::none);
  if (!root_paths_[region].is_index()) {
    root_paths_[region] = tree_paths_.next();
    tree_paths_.push_back({.parent = no_tree_path::none, .region = region});
  }
  return root_paths_[region];
}

// Two lookups, both in small tables: the child path among all runs' distinct paths (a one-entry cache,
// then (parent path, region)), then the run's node of that path. Neither allocates unless it creates.
tree_node_index engine::child_node(run_index run, tree_node_index parent, std::uint32_t region) {
  const tree_path_index parent_path = tree_[parent].path;
  tree_path_index path = no_tree_path::none;
  if (const tree_path_entry& p = tree_paths_[parent_path]; p.last_child_region == region) path = p.last_child;
  if (!path.is_index()) {
    const std::uint64_t key = (std::uint64_t{parent_path.index()} << 32) | region;
    path = path_children_.find(key);
    if (!path.is_index()) {
      const std::uint32_t depth = tree_paths_[parent_path].depth + 1;
      if (tree_.size() >= options_.region_tree_max_nodes || depth >= options_.region_tree_max_depth) {
        ++tree_truncated_;  // the instance (and its subtree) stays in `parent`
        return no_tree_node::none;
      }
      path = tree_paths_.next();
      tree_paths_.push_back({.parent = parent_path, .region = region, .depth = depth});
      path_children_.insert(key, path);
    }
    tree_path_entry& p = tree_paths_[parent_path];  // after push_back(): tree_paths_ may have moved
    p.last_child_region = region;
    p.last_child = path;
  }
  flat_index_map<tree_node_index>& nodes = side_of(run).tree_nodes;
  tree_node_index child = nodes.find(path.index());
  if (child.is_index()) return child;
  if (tree_.size() >= options_.region_tree_max_nodes) {
    ++tree_truncated_;
    return no_tree_node::none;
  }
  child = new_tree_node(run, parent, region, path);
  nodes.insert(path.index(), child);
  return child;
}

// `by_run`: the aggregates ordered by run, then first appearance (the order of each run's `regions`);
// `result_index`: per classifier region, its index in result.regions or -1. One pass over the nodes,
// then per run a depth-first pass from its topmost nodes and a pass back over its output: each run's
// nodes lie together, so both stay in cache.
void engine::assemble_tree(analysis_result& result, const std::vector<aggregate_index>& by_run,
                           const std::vector<std::uint32_t>& result_index) {
  result.has_region_tree = options_.region_tree;
  if (!options_.region_tree) return;

  // Nodes per run, and the regions seen only nested (tree_regions: result.regions, then those, by
  // first appearance).
  constexpr std::uint32_t not_reported = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> tree_index(result_index);
  std::vector<std::int64_t> nested_first(result_index.size(), max_ns);
  std::vector<std::uint32_t> per_run(runs_.size(), 0);
  for (const tree_stats& node : tree_) {
    ++per_run[node.run.index()];
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
  for (std::size_t r = 0; r < runs_.size(); ++r) result.runs[r].tree.reserve(per_run[r]);

  // Children by first appearance (ties: the first created). Creation order is that order except where a
  // later walk (another thread, rule 9) saw a node earlier: only those lists are sorted.
  auto later = [&](tree_node_index a, tree_node_index b) {  // a after b in the children's order
    const std::int64_t fa = tree_[a].first_seen;
    const std::int64_t fb = tree_[b].first_seen;
    return fa != fb ? fa > fb : a.index() > b.index();
  };
  std::vector<std::pair<tree_node_index, std::uint32_t>> stack;  // (node, index of its parent in run.tree)
  std::vector<tree_node_index> unsorted;
  for (aggregate_index a : by_run) {
    const aggregate& agg = aggregates_[a];
    std::vector<tree_node>& out = result.runs[agg.run.index()].tree;
    const std::size_t run_begin = out.size();
    stack.assign(1, {agg.tree_root, tree_node::no_parent});
    while (!stack.empty()) {
      const auto [i, parent] = stack.back();
      stack.pop_back();
      const tree_stats& node = tree_[i];
      tree_node emitted;
      emitted.region = tree_index[node.region];
      emitted.parent = parent;
      emitted.depth = parent == tree_node::no_parent ? 0 : out[parent].depth + 1;
      emitted.calls = node.calls;
      emitted.cpu_time_ns = node.cpu;
      emitted.self_cpu_time_ns = node.cpu;  // the children's are taken off below
      if (device_data_) {
        emitted.device_time_ns = node.self_device;  // the children's are added below
        emitted.self_device_time_ns = node.self_device;
      }
      const auto self = static_cast<std::uint32_t>(out.size());
      out.push_back(emitted);
      // Pushed latest first, so the first child in order is popped first.
      bool in_order = true;
      for (tree_node_index c = node.first_child; c.is_index() && tree_[c].next_sibling.is_index();
           c = tree_[c].next_sibling) {
        if (!later(c, tree_[c].next_sibling)) in_order = false;
      }
      if (in_order) {
        for (tree_node_index c = node.first_child; c.is_index(); c = tree_[c].next_sibling) stack.emplace_back(c, self);
      } else {
        unsorted.clear();
        for (tree_node_index c = node.first_child; c.is_index(); c = tree_[c].next_sibling) unsorted.push_back(c);
        std::sort(unsorted.begin(), unsorted.end(), later);
        for (tree_node_index c : unsorted) stack.emplace_back(c, self);
      }
    }
    // Back over this topmost node's subtree (children after their parent): inclusive device time, and
    // self CPU time = inclusive - children (>= 0: children nest in their parent and do not overlap).
    for (std::size_t k = out.size(); k-- > run_begin + 1;) {
      const tree_node& child = out[k];
      tree_node& parent = out[child.parent];
      parent.self_cpu_time_ns -= child.cpu_time_ns;
      if (device_data_) *parent.device_time_ns += *child.device_time_ns;
    }
  }
}

}  // namespace detail::attribution
}  // namespace regionprof
