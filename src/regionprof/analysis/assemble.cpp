// The result: regions by first appearance, each run's figures and region aggregates (docs/design.md,
// rules 3-8) and region trees (rule 14), then the key averages, the ops per region (rule 20) and the
// warnings.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

analysis_result engine::assemble() {
  analysis_result result;
  result.has_device_data = device_data_;

  // Regions that own something in some run, ordered by first appearance in time.
  const std::size_t region_count = classes_.regions().size();
  std::vector<std::int64_t> region_first(region_count, max_ns);
  for (const aggregate& a : aggregates_) region_first[a.region] = std::min(region_first[a.region], a.first_seen);
  std::vector<std::uint32_t> region_order;
  std::vector<bool> seen(region_count, false);
  for (const aggregate& a : aggregates_) seen[a.region] = true;
  for (std::uint32_t r = 0; r < region_count; ++r) {
    if (seen[r]) region_order.push_back(r);
  }
  std::stable_sort(region_order.begin(), region_order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return region_first[a] < region_first[b]; });
  constexpr std::uint32_t not_reported = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> result_index(region_count, not_reported);  // per region: its index in result.regions
  for (std::uint32_t region : region_order) {
    const region_def& def = classes_.regions()[region];
    result_index[region] = static_cast<std::uint32_t>(result.regions.size());
    auto type = in_.module_types.find(def.id);
    result.regions.push_back({def.id, def.name, def.kind, type == in_.module_types.end() ? "-" : type->second});
  }

  // Each run's aggregates, ordered by first appearance in the run.
  std::vector<aggregate_index> by_run;
  by_run.reserve(aggregates_.size());
  for (std::size_t i = 0; i < aggregates_.size(); ++i) by_run.push_back(aggregate_index::at(i));
  std::stable_sort(by_run.begin(), by_run.end(), [&](aggregate_index a, aggregate_index b) {
    if (aggregates_[a].run != aggregates_[b].run) return aggregates_[a].run.index() < aggregates_[b].run.index();
    return aggregates_[a].first_seen < aggregates_[b].first_seen;
  });
  std::size_t next = 0;
  result.runs.reserve(runs_.size());
  for (std::size_t r = 0; r < runs_.size(); ++r) {
    const run_index index = run_index::at(r);
    const run_state& state = runs_[index];
    run_result run;
    run.run_index = r;
    run.cpu_time_ns = state.end - state.start;
    run.wall_time_ns = r < in_.run_wall_times_ns.size() ? in_.run_wall_times_ns[r] : run.cpu_time_ns;
    std::int64_t region_cpu = 0;
    std::int64_t region_device = 0;
    for (; next < by_run.size() && aggregates_[by_run[next]].run == index; ++next) {
      const aggregate& a = aggregates_[by_run[next]];
      region_aggregate out;
      out.region = result_index[a.region];
      out.calls = a.calls;
      out.cpu_time_ns = a.cpu;
      if (device_data_) out.device_time_ns = a.device;
      if (a.off_thread) out.off_thread_cpu_time_ns = a.off_cpu;
      if (const std::size_t i = by_run[next].index(); i < aggregate_work_.size() && !aggregate_work_[i].empty()) {
        out.work = static_cast<std::uint32_t>(result.work.size());  // rule 18
        result.work.push_back(aggregate_work_[i]);
      }
      region_cpu += a.cpu;
      region_device += a.device;
      run.regions.push_back(out);
    }
    run.residual_cpu_ns = std::max<std::int64_t>(0, run.cpu_time_ns - region_cpu);
    if (device_data_) {
      const run_device_state device = run_devices_.empty() ? run_device_state{} : run_devices_[index];
      run.device_time_ns = device.device;
      run.device_busy_ns = device.busy;
      run.device_span_ns = device.ops == 0 ? 0 : device.last_op - device.first_op;
      run.residual_device_ns = std::max<std::int64_t>(0, device.device - region_device);
    }
    result.runs.push_back(std::move(run));
  }

  assemble_memory(result, by_run, result_index);  // rule 21
  assemble_tree(result, by_run, result_index);  // rule 14
  if (device_data_) add_device_figures(result);
  add_region_ops(result, result_index);  // rule 20
  add_key_averages(result);
  add_warnings(result);
  return result;
}

}  // namespace regionprof::detail::attribution
