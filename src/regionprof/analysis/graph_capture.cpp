// CUDA graph replays owned by the region that captured them (docs/design.md, rule 15): each replayed
// op's capturing API call (trace::graph_ops) -> the path of regions open around that call on its thread,
// resolved once per call before the walks; the op then goes, within the run of its launch, to that
// path's topmost region and its tree node. A node captured outside every region keeps its launch's owner.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

namespace {

constexpr std::uint32_t no_path = static_cast<std::uint32_t>(-1);

/// An open region or marker on a capture thread's walk.
struct capture_frame {
  std::int64_t end = 0;
  std::uint32_t cls = no_class;
};

}  // namespace

// Cost: one pass over the threads that made captured nodes (a stack of their regions and markers), and
// a hash lookup per API call on them; nothing when the trace has no graph_ops or the mode is launch.
void engine::resolve_captures() {
  if (options_.graph_attribution != regionprof::graph_attribution::capture || in_.graph_ops.empty()) return;
  const std::size_t op_count = in_.device_ops.size();

  // The capturing calls, by interval index -> their path (no_path until found).
  std::unordered_map<std::uint32_t, std::uint32_t> call_path;
  std::vector<bool> capture_thread(thread_count_, false);
  for (const graph_op& entry : in_.graph_ops) {
    if (entry.op >= op_count || entry.capture_correlation_id == 0) continue;
    const std::uint32_t slot = correlation_.slot(entry.capture_correlation_id);
    if (slot == correlation_index::none) continue;
    const std::uint32_t call = correlation_.call(slot);
    if (call_path.emplace(call, no_path).second) capture_thread[in_.intervals[call].thread] = true;
  }

  std::vector<capture_frame> stack;
  for (std::uint32_t thread = 0; thread < thread_count_ && !call_path.empty(); ++thread) {
    if (!capture_thread[thread]) continue;
    stack.clear();
    for (std::uint32_t index : order_.of(thread)) {
      const cpu_interval& interval = in_.intervals[index];
      const std::int64_t start = interval.start_ns;
      std::int64_t end = effective_end(interval);
      // Rule 1's nesting, over regions and markers only: pop what ended, clip what overlaps.
      while (!stack.empty() && end > stack.back().end) {
        if (start < stack.back().end) {
          end = stack.back().end;
          break;
        }
        stack.pop_back();
      }
      if (is_api_call(interval.kind)) {
        const auto found = call_path.find(index);
        if (found == call_path.end()) continue;
        // The regions below the innermost marker (rule 14's path), topmost first.
        std::size_t first = 0;
        for (std::size_t i = stack.size(); i-- > 0;) {
          if (stack[i].cls == marker_class) {
            first = i + 1;
            break;
          }
        }
        const auto begin = static_cast<std::uint32_t>(capture_regions_.size());
        for (std::size_t i = first; i < stack.size(); ++i) {
          if (stack[i].cls >= region_class) capture_regions_.push_back(stack[i].cls - region_class);
        }
        found->second = static_cast<std::uint32_t>(capture_paths_.size());
        capture_paths_.emplace_back(begin, static_cast<std::uint32_t>(capture_regions_.size()));
        continue;
      }
      const std::uint32_t cls = classify(interval);
      if (cls == marker_class || cls >= region_class) stack.push_back({end, cls});
    }
  }

  // Each replayed op: its path, and the device time its launch's tree node gives up.
  op_capture_path_.assign(op_count, no_path);
  slot_captured_.assign(correlation_.size(), 0);
  for (const graph_op& entry : in_.graph_ops) {
    if (entry.op >= op_count) continue;
    const device_op& op = in_.device_ops[entry.op];
    std::uint32_t path = no_path;
    if (entry.capture_correlation_id != 0) {
      const std::uint32_t slot = correlation_.slot(entry.capture_correlation_id);
      if (slot != correlation_index::none) path = call_path[correlation_.call(slot)];
    }
    if (path == no_path) {
      ++uncaptured_graph_ops_;
      uncaptured_graph_time_ += duration(op);
      continue;
    }
    const auto [begin, end] = capture_paths_[path];
    if (begin == end) continue;  // captured outside every region: the launch's region is the better owner
    op_capture_path_[entry.op] = path;
    const std::uint32_t launch = correlation_.slot(op.correlation_id);
    if (launch != correlation_index::none) slot_captured_[launch] += duration(op);
  }
}

bool engine::capture_owner(std::uint32_t op, run_index run, aggregate_index& owner, tree_node_index& node) {
  if (op_capture_path_.empty() || op_capture_path_[op] == no_path) return false;
  const auto [begin, end] = capture_paths_[op_capture_path_[op]];
  const std::uint32_t slot = correlation_.slot(in_.device_ops[op].correlation_id);
  const std::int64_t launched = in_.intervals[correlation_.call(slot)].start_ns;
  owner = aggregate_of(run, capture_regions_[begin]);
  aggregate& a = aggregates_[owner];
  a.first_seen = std::min(a.first_seen, launched);
  if (!options_.region_tree) return true;
  if (!a.tree_root.is_index()) {
    a.tree_root = new_tree_node(run, no_tree_node::none, capture_regions_[begin], root_path(capture_regions_[begin]));
  }
  node = a.tree_root;
  tree_[node].first_seen = std::min(tree_[node].first_seen, launched);
  for (std::uint32_t k = begin + 1; k < end; ++k) {
    const tree_node_index child = child_node(run, node, capture_regions_[k]);
    if (!child.is_index()) break;  // folded into its parent by the cap (REGION_TREE_TRUNCATED)
    node = child;
    tree_[node].first_seen = std::min(tree_[node].first_seen, launched);
  }
  return true;
}

}  // namespace regionprof::detail::attribution
