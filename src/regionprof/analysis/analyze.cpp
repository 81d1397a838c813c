// regionprof::analyze: the attribution engine's entry and the order of its passes (docs/design.md,
// rules 1-10; the passes are listed in engine.hpp).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/engine.hpp"
#include "regionprof/analysis/releasing.hpp"

namespace regionprof {

namespace detail::attribution {

analysis_result engine::run() {
  device_data_ = in_.has_device_data();
  find_marker_threads();
  order_memory_events();  // rule 21: before the walks, which place each event
  order_ = order_by_thread(in_.intervals, thread_count_);
  cpu_keys_.assign(in_.strings.size(), {});
  last_cpu_op_.assign(in_.strings.size(), {});
  last_device_op_.assign(in_.strings.size(), {});
  sum_launches();
  resolve_captures();  // rule 15: needs the thread order and the correlation slots

  if (marker_threads_.size() > 1) discover_markers();
  const std::vector<std::uint32_t> order = walk_order();
  walk_threads(order);
  order_ = {};
  resolve_pending();
  add_memory_peaks();
  attribute_device_ops();
  // No pass after this point reads an interval: a long trace's intervals and its result are never
  // held together when the caller gave them up (docs/design.md, rule 13).
  interval_count_ = in_.intervals.size();
  if (releasable_ != nullptr) std::vector<cpu_interval>().swap(releasable_->intervals);
  return assemble();
}

}  // namespace detail::attribution

namespace {

void check_analysable(const trace& input) {
  // Interval and op indices are 32-bit (4 bytes per event of analysis state) and stay below the states.
  if (input.intervals.size() >= detail::first_state_value || input.device_ops.size() >= detail::first_state_value ||
      input.memory_events.size() >= detail::first_state_value) {
    throw std::length_error("regionprof::analyze: " + std::to_string(input.intervals.size()) + " CPU intervals, " +
                            std::to_string(input.device_ops.size()) + " device ops and " +
                            std::to_string(input.memory_events.size()) +
                            " memory events; one analysis handles fewer than 2^32 - 3 of each. Split the trace.");
  }
  if (std::string problem = input.time_range_problem(); !problem.empty()) {
    throw std::invalid_argument("regionprof::analyze: the trace's times are out of range: " + problem);
  }
}

}  // namespace

analysis_result analyze(const trace& input, const analysis_options& options) {
  check_analysable(input);
  detail::attribution::engine e(input, options);
  return e.run();
}

namespace detail {

analysis_result analyze_releasing_intervals(trace& input, const analysis_options& options) {
  check_analysable(input);
  attribution::engine e(input, options, attribution::release_intervals_t{});
  return e.run();
}

}  // namespace detail

}  // namespace regionprof
