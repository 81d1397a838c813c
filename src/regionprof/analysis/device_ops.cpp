// Device ops: each launch's device time per correlation slot before the walks, then each op to its
// launch's owner (docs/design.md, rule 6; off-thread launches, rule 9; graph replays by capture, rule
// 15) and its row among that owner's ops (rule 20), with each run's busy union and span.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

void engine::sum_launches() {
  slot_device_.assign(correlation_.size(), 0);
  for (const device_op& op : in_.device_ops) {
    const std::uint32_t slot = correlation_.slot(op.correlation_id);
    if (slot == correlation_index::none) continue;  // counted in attribute_device_ops()
    slot_device_[slot] += duration(op);
    const std::int64_t call_start = in_.intervals[correlation_.call(slot)].start_ns;
    if (op.start_ns < call_start) {
      ++clock_anomalies_;
      clock_anomaly_max_ = std::max(clock_anomaly_max_, call_start - op.start_ns);
    }
  }
  slot_run_.assign(correlation_.size(), no_run::none);
  slot_aggregate_.assign(correlation_.size(), no_aggregate::none);
}

std::uint32_t open_instance(const std::vector<region_instance>& instances, std::int64_t time, std::size_t& cursor) {
  auto by_start = [](std::int64_t t, const region_instance& r) { return t < r.start; };
  // The last instance starting at or before `time`. One thread's times come in order, so gallop forward
  // from the previous one's; a later thread starts again from the beginning.
  if (cursor >= instances.size() || instances[cursor].start > time) cursor = 0;
  std::size_t after = cursor;
  for (std::size_t step = 1; after < instances.size() && instances[after].start <= time; step *= 2) {
    cursor = after;
    after = std::min(instances.size(), after + step);
  }
  after = static_cast<std::size_t>(std::upper_bound(instances.begin() + static_cast<std::ptrdiff_t>(cursor),
                                                    instances.begin() + static_cast<std::ptrdiff_t>(after), time,
                                                    by_start) -
                                   instances.begin());
  if (after == 0) return no_instance;
  cursor = after - 1;
  // Climb to the innermost instance still open at `time` (closed intervals; rule 14).
  std::uint32_t i = static_cast<std::uint32_t>(after - 1);
  while (i != no_instance && instances[i].end < time) i = instances[i].parent;
  return i;
}

// Rule 9: an off-thread launch outside any region of its thread goes to the topmost region open on the
// marker's thread when the launching call started, else to the residual; with the region tree, to the
// innermost region instance open then (rule 14), whose topmost region is that one. Rule 21: memory
// events outside any region of their thread likewise, at their instant.
void engine::resolve_pending() {
  if (!any_pending_) return;
  for (std::size_t r = 0; r < run_sides_.size(); ++r) {
    run_side& run = run_sides_[r];
    const std::vector<region_instance>& instances = run.instances;
    std::size_t cursor = 0;
    for (const pending_launch& launch : run.pending) {
      const std::uint32_t i = open_instance(instances, launch.start, cursor);
      aggregate_index result = no_aggregate::none;
      if (i != no_instance) {
        result = instances[i].aggregate;
        if (instances[i].node.is_index()) {
          tree_[instances[i].node].self_device += launch.device - captured_device(launch.slot);
        }
      }
      slot_aggregate_[launch.slot] = result;
    }
    cursor = 0;
    for (const pending_memory& event : run.pending_memory_events) {
      const std::uint32_t i = open_instance(instances, event.time, cursor);
      own_memory_event(event.event, run_index::at(r), i == no_instance ? aggregate_index{no_aggregate::none}
                                                                       : instances[i].aggregate);
    }
    run.pending.clear();
    run.pending.shrink_to_fit();
    run.pending_memory_events.clear();
    run.pending_memory_events.shrink_to_fit();
  }
}

// After resolve_pending(): every slot's aggregate is an index or no_aggregate::none.
void engine::attribute_device_ops() {
  if (in_.device_ops.empty()) return;
  run_devices_.assign(runs_.size(), {});
  for (std::uint32_t index = 0; index < in_.device_ops.size(); ++index) {
    const device_op& op = in_.device_ops[index];
    const std::int64_t length = duration(op);
    const std::uint32_t slot = correlation_.slot(op.correlation_id);
    if (slot == correlation_index::none) {
      ++(op.correlation_id == 0 ? uncorrelated_zero_ : uncorrelated_unmatched_);
      uncorrelated_time_ += length;
      continue;
    }
    const run_index run = slot_run_[slot];
    if (run == no_run::off_thread) {
      ++off_thread_ops_;
      continue;
    }
    if (!run.is_index()) continue;  // launched outside every run
    run_device_state& r = run_devices_[run];
    r.device += length;
    ++r.ops;
    const std::int64_t end = op.start_ns + length;
    r.first_op = std::min(r.first_op, op.start_ns);
    r.last_op = std::max(r.last_op, end);
    if (op.start_ns < r.last_start) r.unordered = true;
    r.last_start = op.start_ns;
    if (!r.unordered) {
      if (op.start_ns > r.open_end) {
        if (r.open_end != min_ns) r.busy += r.open_end - r.open_start;
        r.open_start = op.start_ns;
        r.open_end = end;
      } else {
        r.open_end = std::max(r.open_end, end);
      }
    }
    aggregate_index owner = slot_aggregate_[slot];
    tree_node_index captured_node;
    if (capture_owner(index, run, owner, captured_node)) {
      // Rule 15: the capture-time region within the launch's run; the launch's node gave this time up.
      if (captured_node.is_index()) tree_[captured_node].self_device += length;
    }
    if (owner.is_index()) aggregates_[owner].device += length;
    // Rules 10 and 20: a row of the region that got its time (rule 6, or 15 by capture), else of the residual.
    const name_id name = op.name < in_.strings.size() ? op.name : name_id{0};
    cpu_key_stats& row =
        region_ops_[region_op(owner.is_index() ? aggregates_[owner].region : residual_owner(), name, device_type::cuda)]
            .stats;
    ++row.count;
    row.total_device += length;
  }
  for (run_device_state& r : run_devices_) {
    if (!r.unordered && r.open_end != min_ns) r.busy += r.open_end - r.open_start;
  }
  finish_unordered_unions();
}

// Device busy time of runs whose ops did not arrive in start order: gather each such run's ops, sort by
// start and sweep. Memory: 4 bytes per op of those runs, plus 16 bytes per op of the largest one.
void engine::finish_unordered_unions() {
  std::vector<std::uint32_t> first(runs_.size() + 1, 0);
  bool any = false;
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    const run_device_state& state = run_devices_[run_index::at(r)];
    any = any || state.unordered;
    first[r + 1] = first[r] + (state.unordered ? static_cast<std::uint32_t>(state.ops) : 0);
  }
  if (!any) return;
  std::vector<std::uint32_t> grouped(first.back());
  {
    std::vector<std::uint32_t> cursor(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < in_.device_ops.size(); ++i) {
      const std::uint32_t slot = correlation_.slot(in_.device_ops[i].correlation_id);
      if (slot == correlation_index::none) continue;
      const run_index run = slot_run_[slot];
      if (run.is_index() && run_devices_[run].unordered) grouped[cursor[run.index()]++] = static_cast<std::uint32_t>(i);
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    run_device_state& state = run_devices_[run_index::at(r)];
    if (!state.unordered) continue;
    spans.clear();
    for (std::uint32_t k = first[r]; k < first[r + 1]; ++k) {
      const device_op& op = in_.device_ops[grouped[k]];
      spans.emplace_back(op.start_ns, op.start_ns + duration(op));
    }
    std::sort(spans.begin(), spans.end());
    std::int64_t busy = 0;
    std::int64_t open_start = spans.front().first;
    std::int64_t open_end = spans.front().second;
    for (const auto& [s, e] : spans) {
      if (s > open_end) {
        busy += open_end - open_start;
        open_start = s;
        open_end = e;
      } else {
        open_end = std::max(open_end, e);
      }
    }
    state.busy = busy + (open_end - open_start);
  }
}

}  // namespace regionprof::detail::attribution
