// Warnings about the trace and the attribution (docs/design.md, rules 2, 6, 9, 14): each names its count,
// its cause and the remedy.
#include <cstdint>
#include <string>
#include <utility>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

std::string thread_label(const trace& input, std::uint32_t thread) {
  if (thread >= input.threads.size()) return "thread #" + std::to_string(thread);
  const thread_info& info = input.threads[thread];
  std::string label = "tid " + std::to_string(info.tid);
  if (info.name != 0 && info.name < input.strings.size()) label += " '" + std::string(input.strings.view(info.name)) + "'";
  return label;
}

void engine::add_warnings(analysis_result& result) const {
  result.warnings = in_.warnings;
  auto warn = [&](warning_code code, std::string message) {
    result.warnings.push_back({code, warning_source::core, std::move(message)});
  };
  const std::string marker_rule = classes_.marker_description();
  if (marker_threads_.empty()) {
    if (interval_count_ == 0) {
      warn(warning_code::no_run_markers,
           "no run marker (" + marker_rule + ") and no CPU interval in the trace: nothing to attribute, 0 runs. "
           "Record the CPU side (NVTX ranges or CPU ops) and mark each measured run.");
    } else {
      const run_state& r = runs_.front();
      warn(warning_code::no_run_markers,
           "no range matched the run marker rule (" + marker_rule + ") among " +
               std::to_string(interval_count_) +
               " CPU intervals; the whole trace is analysed as 1 synthetic run spanning " +
               thread_label(in_, r.thread) + " from its first interval's start to its last interval's end (" +
               std::to_string(r.end - r.start) +
               " ns). Mark each measured run with that range, or set the run marker rule to your trace's step "
               "name (e.g. regex 'ProfilerStep#\\d+').");
    }
  }
  if (nested_markers_ > 0) {
    warn(warning_code::run_count_mismatch,
         std::to_string(nested_markers_) + " run marker(s) (" + marker_rule +
             ") lie inside another run marker on the same thread and are not runs of their own (their time "
             "belongs to the enclosing run); " + std::to_string(runs_.size()) +
             " run(s) were found. Emit run markers at the top level only, once per measured run.");
  }
  if (marker_count_ > 0 && runs_.empty()) {
    warn(warning_code::run_count_mismatch,
         std::to_string(marker_count_) + " run marker(s) found but skip_runs = " + std::to_string(options_.skip_runs) +
             " discards all of them: no run is measured. Lower skip_runs or record more runs.");
  }
  if (!in_.run_wall_times_ns.empty() && in_.run_wall_times_ns.size() != runs_.size()) {
    warn(warning_code::run_count_mismatch,
         "the trace carries " + std::to_string(in_.run_wall_times_ns.size()) + " harness wall time(s) but " +
             std::to_string(runs_.size()) + " run(s) were found from run markers (" + marker_rule +
             ", skip_runs = " + std::to_string(options_.skip_runs) +
             "); wall times are matched to runs in order and a run without one reports its marker's duration. "
             "Check skip_runs and that each measured run emits exactly one marker.");
  }
  if (overlaps_ > 0) {
    warn(warning_code::overlapping_ranges,
         std::to_string(overlaps_) + " CPU interval(s) started inside another interval on the same thread but "
             "ended after it (e.g. " + overlap_example_ +
             "); each was clipped to end with the enclosing interval, so its CPU time is lower than recorded. "
             "Check for ranges that are not properly nested (asynchronous ranges, push/pop on different threads).");
  }
  if (!unmapped_by_kind_.empty()) {
    std::uint64_t total = 0;
    std::string kinds;
    for (const auto& [kind, count] : unmapped_by_kind_) {
      total += count;
      kinds += (kinds.empty() ? "" : ", ") + kind + ": " + std::to_string(count);
    }
    warn(warning_code::unmapped_region_events,
         std::to_string(total) + " region range(s) have no run marker above them and are not attributed (" +
             kinds + "). Emit regions inside the measured runs' markers (" + marker_rule +
             "), or set the run marker rule to the range that marks your runs.");
  }
  if (off_thread_intervals_ + off_thread_ops_ + off_thread_memory_events_ > 0) {
    std::string threads;
    for (std::size_t i = 0; i < off_threads_.size() && i < 8; ++i) {
      threads += (i ? ", " : "") + thread_label(in_, off_threads_[i]);
    }
    if (off_threads_.size() > 8) threads += ", ...";
    warn(warning_code::off_thread_events,
         std::to_string(off_thread_intervals_) + " CPU interval(s) and " + std::to_string(off_thread_ops_) +
             " device op(s) they launched" +
             (off_thread_memory_events_ == 0
                  ? std::string()
                  : ", and " + std::to_string(off_thread_memory_events_) + " memory event(s) (rule 21),") +
             " run on threads without a run marker above them (" + threads +
             ") inside a run's marker interval on another thread, and are not attributed. Enable cross_thread "
             "to attribute them to that run.");
  }
  if (uncorrelated_zero_ + uncorrelated_unmatched_ > 0) {
    warn(warning_code::uncorrelated_device_ops,
         std::to_string(uncorrelated_zero_ + uncorrelated_unmatched_) + " device op(s) (" +
             std::to_string(uncorrelated_time_) + " ns of device time) have no launching API call in the trace (" +
             std::to_string(uncorrelated_zero_) + " without a correlation id, " +
             std::to_string(uncorrelated_unmatched_) +
             " whose id no API call carries) and belong to no run. Record the CUDA runtime and driver API "
             "together with the device activity.");
  }
  if (correlation_.duplicate_calls() > 0) {
    warn(warning_code::duplicate_correlation_ids,
         std::to_string(correlation_.duplicate_calls()) +
             " API call(s) carry a correlation id an earlier call already carries; the device ops of each such "
             "id go to the first call in input order. CUPTI never repeats an id within a process: analyse one "
             "process's session per trace.");
  }
  if (clock_anomalies_ > 0) {
    warn(warning_code::clock_anomaly,
         std::to_string(clock_anomalies_) + " device op(s) start before the API call that launched them (by up "
             "to " + std::to_string(clock_anomaly_max_) +
             " ns): the CPU and device clocks disagree. Attribution by correlation id is unaffected, but "
             "timelines and spans are skewed; record CPU and device timestamps on one clock.");
  }
  if (tree_truncated_ > 0) {
    warn(warning_code::region_tree_truncated,
         std::to_string(tree_truncated_) + " nested region instance(s) would have opened a region-tree node past "
             "the cap of " + std::to_string(options_.region_tree_max_nodes) +
             " nodes (analysis_options::region_tree_max_nodes) or deeper than " +
             std::to_string(options_.region_tree_max_depth) +
             " regions (region_tree_max_depth) and were folded into their parent node, whose self time now "
             "holds theirs; topmost regions and every other figure are unaffected. Raise the caps or use "
             "region rules that make fewer distinct nesting paths.");
  }
  if (uncaptured_graph_ops_ > 0) {
    warn(warning_code::graph_captured_before_profiling,
         std::to_string(uncaptured_graph_ops_) + " device op(s) of CUDA graph replays (" +
             std::to_string(uncaptured_graph_time_) +
             " ns of device time) have no capture-time region: their graph nodes were made before device tracing "
             "began, or the API call that made them was not recorded. They went to the region around their graph "
             "launch; start profiling before the graph is captured (rule 15).");
  }
  if (out_of_memory_events_ > 0) {
    const memory_event& e = in_.memory_events[first_out_of_memory_];
    const std::string owner = first_out_of_memory_owner_.is_index()
                                  ? "region " + classes_.regions()[aggregates_[first_out_of_memory_owner_].region].id
                                  : std::string("the run's residual (no region)");
    std::string total = e.total_allocated == memory_event::no_total
                            ? std::string()
                            : " with " + std::to_string(e.total_allocated) + " bytes allocated";
    warn(warning_code::out_of_memory,
         std::to_string(out_of_memory_events_) + " allocation(s) failed during the runs; the first in run " +
             std::to_string(first_out_of_memory_run_.index()) + ", owned by " + owner + ", asked for " +
             std::to_string(e.bytes) + " bytes on " + memory_device_key(e.device) + total + " (rule 21).");
  }
}


}  // namespace regionprof::detail::attribution
