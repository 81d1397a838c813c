#include "support/tree_checks.hpp"

#include <cstdint>
#include <set>

namespace regionprof::test {

std::string path_text(const analysis_result& result, const run_result& run, std::size_t node) {
  std::string text;
  for (std::uint32_t region : tree_path(run.tree, node)) {
    text += (text.empty() ? "" : "/") + result.tree_regions.at(region).id;
  }
  return text;
}

std::vector<std::string> tree_violations(const analysis_result& result) {
  std::vector<std::string> bad;
  if (result.tree_regions.size() < result.regions.size()) bad.push_back("tree_regions shorter than regions");
  for (std::size_t i = 0; i < result.regions.size() && i < result.tree_regions.size(); ++i) {
    if (result.tree_regions[i].id != result.regions[i].id) {
      bad.push_back("tree_regions[" + std::to_string(i) + "] differs");
    }
  }
  for (const run_result& run : result.runs) {
    const std::string where = "run " + std::to_string(run.run_index) + ": ";
    const std::size_t n = run.tree.size();
    std::vector<std::int64_t> child_cpu(n, 0);
    std::vector<std::int64_t> child_device(n, 0);
    std::vector<std::uint32_t> open;  // the ancestors of the current node (depth-first order)
    std::set<std::pair<std::uint32_t, std::uint32_t>> siblings;  // (parent, region)
    std::vector<std::size_t> topmost;
    for (std::size_t i = 0; i < n; ++i) {
      const tree_node& node = run.tree[i];
      const std::string at = where + "node " + std::to_string(i) + ": ";
      if (node.region >= result.tree_regions.size()) {
        bad.push_back(at + "region out of range");
        return bad;
      }
      if (node.parent == tree_node::no_parent) {
        open.clear();
        topmost.push_back(i);
        if (node.depth != 0) bad.push_back(at + "topmost node with depth " + std::to_string(node.depth));
      } else {
        if (node.parent >= i) {
          bad.push_back(at + "parent after the node");
          return bad;
        }
        while (!open.empty() && open.back() != node.parent) open.pop_back();
        if (open.empty()) bad.push_back(at + "not depth-first: its parent's subtree was closed");
        if (node.depth != run.tree[node.parent].depth + 1) bad.push_back(at + "depth is not its parent's + 1");
        child_cpu[node.parent] += node.cpu_time_ns;
        child_device[node.parent] += node.device_time_ns.value_or(0);
      }
      if (!siblings.insert({node.parent, node.region}).second) bad.push_back(at + "two siblings with one region");
      open.push_back(static_cast<std::uint32_t>(i));
      if (node.device_time_ns.has_value() != result.has_device_data ||
          node.self_device_time_ns.has_value() != result.has_device_data) {
        bad.push_back(at + "device fields present without device data, or absent with it");
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      const tree_node& node = run.tree[i];
      const std::string at = where + path_text(result, run, i) + ": ";
      if (node.self_cpu_time_ns != node.cpu_time_ns - child_cpu[i]) {
        bad.push_back(at + "self CPU " + std::to_string(node.self_cpu_time_ns) + " != inclusive " +
                      std::to_string(node.cpu_time_ns) + " - children " + std::to_string(child_cpu[i]));
      }
      if (node.self_cpu_time_ns < 0) bad.push_back(at + "negative self CPU");
      if (node.device_time_ns && node.self_device_time_ns) {
        if (*node.self_device_time_ns != *node.device_time_ns - child_device[i]) {
          bad.push_back(at + "self device != inclusive - children");
        }
        if (*node.self_device_time_ns < 0) bad.push_back(at + "negative self device");
      }
    }
    if (topmost.size() != run.regions.size()) {
      bad.push_back(where + std::to_string(topmost.size()) + " topmost nodes, " + std::to_string(run.regions.size()) +
                    " regions");
      continue;
    }
    for (std::size_t k = 0; k < topmost.size(); ++k) {
      const tree_node& node = run.tree[topmost[k]];
      const region_aggregate& region = run.regions[k];
      const std::string at = where + "topmost " + result.tree_regions[node.region].id + ": ";
      if (result.tree_regions[node.region].id != result.regions.at(region.region).id) {
        bad.push_back(at + "is not regions[" + std::to_string(k) + "] " + result.regions.at(region.region).id);
        continue;
      }
      if (node.calls != region.calls) bad.push_back(at + "calls differ from regions[]");
      if (node.cpu_time_ns != region.cpu_time_ns) bad.push_back(at + "CPU time differs from regions[]");
      if (node.device_time_ns != region.device_time_ns) bad.push_back(at + "device time differs from regions[]");
    }
  }
  return bad;
}

}  // namespace regionprof::test
