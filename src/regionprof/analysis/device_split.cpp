// Each run's device figures per device (report `runs[i].timing.devices`): rule 6's busy-sum, busy
// union and span over the ops the run launched, split by the device they ran on.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

// Invariant: the figures of a run's devices sum (device time) to the run's device_time_ns; busy and
// span of one device are at most the run's. With one device in the whole trace the run's own figures
// are that device's (no extra memory); otherwise 24 bytes per op owned by some run, sorted.
void engine::add_device_figures(analysis_result& result) const {
  bool one_device = true;
  for (const device_op& op : in_.device_ops) {
    if (op.device != in_.device_ops.front().device) {
      one_device = false;
      break;
    }
  }
  if (one_device) {
    if (in_.device_ops.empty()) return;
    const std::uint16_t device = in_.device_ops.front().device;
    for (run_result& run : result.runs) {
      if (run_devices_[run_index::at(run.run_index)].ops == 0) continue;
      run.devices.push_back({device, *run.device_time_ns, *run.device_busy_ns, *run.device_span_ns});
    }
    return;
  }
  struct owned_op {
    std::uint32_t run;
    std::uint16_t device;
    std::int64_t start;
    std::int64_t end;  ///< start + duration (rule 6: never before start)
  };
  std::vector<owned_op> ops;
  for (const device_op& op : in_.device_ops) {
    const std::uint32_t slot = correlation_.slot(op.correlation_id);
    if (slot == correlation_index::none) continue;
    const run_index run = slot_run_[slot];
    if (!run.is_index()) continue;
    ops.push_back({static_cast<std::uint32_t>(run.index()), op.device, op.start_ns, op.start_ns + duration(op)});
  }
  std::sort(ops.begin(), ops.end(), [](const owned_op& a, const owned_op& b) {
    return std::tie(a.run, a.device, a.start, a.end) < std::tie(b.run, b.device, b.start, b.end);
  });
  for (std::size_t i = 0; i < ops.size();) {
    const std::uint32_t run = ops[i].run;
    const std::uint16_t device = ops[i].device;
    device_timing figures{device, 0, 0, 0};
    std::int64_t open_start = ops[i].start;
    std::int64_t open_end = ops[i].end;
    std::int64_t last_end = ops[i].end;
    const std::int64_t first_start = ops[i].start;
    for (; i < ops.size() && ops[i].run == run && ops[i].device == device; ++i) {
      figures.device_time_ns += ops[i].end - ops[i].start;
      last_end = std::max(last_end, ops[i].end);
      if (ops[i].start > open_end) {
        figures.device_busy_ns += open_end - open_start;
        open_start = ops[i].start;
        open_end = ops[i].end;
      } else {
        open_end = std::max(open_end, ops[i].end);
      }
    }
    figures.device_busy_ns += open_end - open_start;
    figures.device_span_ns = last_end - first_start;
    result.runs[run].devices.push_back(figures);
  }
}

}  // namespace regionprof::detail::attribution
