// The attribution engine's shared state: docs/design.md, rules 1-10.
//
// Passes (n intervals, m device ops; every pass is linear, none allocates per event):
//   1. classify names (name_classifier, once per distinct name and domain), find the threads that hold
//      run markers (run_markers.cpp);
//   2. order each thread's intervals (thread_order: linear when already ordered, else a radix sort);
//   3. sum each launch's device time by correlation slot (needed by the key averages' subtree totals),
//      count uncorrelated ops and clock anomalies (device_ops.cpp);
//   4. walk each thread once with a stack (rule 1), marker threads first: run ownership (2, 9), topmost
//      regions (3-5), key averages (10) and each launch's owner (run, region) per correlation slot
//      (thread_walk.cpp);
//   5. give each device op to its launch's owner (6), union and span per run (device_ops.cpp), then
//      assemble the result (assemble.cpp, key_averages.cpp, warnings.cpp).
// Per-event state: the per-thread order (4 B per interval), the stack (depth only), and per correlation
// slot 20 B (interval index, device time, owning run, owning aggregate).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/correlation_index.hpp"
#include "analysis/name_classifier.hpp"
#include "analysis/thread_order.hpp"
#include "analysis/typed_index.hpp"
#include "regionprof/analysis.hpp"

namespace regionprof::detail::attribution {

/// Key of the synthetic run's base frame, which is no event.
inline constexpr name_id no_key = static_cast<name_id>(-1);
/// engine::synthetic_thread_ when there is no synthetic run.
inline constexpr std::uint32_t no_thread = static_cast<std::uint32_t>(-1);

inline constexpr std::int64_t max_ns = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t min_ns = std::numeric_limits<std::int64_t>::min();

/// Who owns an interval (and its subtree unless a run marker below starts a run of its own).
enum class ownership : std::uint8_t {
  none = 0,         ///< no run: outside every marker interval
  on_thread = 1,    ///< a run, through its marker (rules 2-5)
  off_thread = 2,   ///< a run, through the marker interval on another thread (rule 9, cross_thread on)
  skipped = 3,      ///< a marker discarded by skip_runs
  off_counted = 4,  ///< inside another thread's run with cross_thread off: counted (OFF_THREAD_EVENTS)
};

constexpr bool owned(ownership state) noexcept {
  return state == ownership::on_thread || state == ownership::off_thread;
}

/// A topmost run marker: [start, end] ns on `thread`; `run` is its run index or no_run::skipped.
struct marker_span {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t thread = 0;
  std::uint32_t ordinal = 0;  ///< its rank among its thread's topmost markers, in walk order
  run_index run;
};

/// Which run's marker interval contains a time, looking only at markers of other threads (rule 9).
class run_lookup {
 public:
  void build(std::vector<marker_span> markers);
  bool empty() const noexcept { return markers_.empty(); }
  /// The run (index or no_run::skipped) of the latest-starting marker on a thread other than `thread`
  /// whose closed interval contains `time` (ns), or no_run::none.
  run_index find(std::uint32_t thread, std::int64_t time) const noexcept {
    auto after = std::upper_bound(markers_.begin(), markers_.end(), time,
                                  [](std::int64_t t, const marker_span& m) { return t < m.start; });
    for (auto i = static_cast<std::size_t>(after - markers_.begin()); i-- > 0 && max_end_[i] >= time;) {
      if (markers_[i].end >= time && markers_[i].thread != thread) return markers_[i].run;
    }
    return no_run::none;
  }

 private:
  std::vector<marker_span> markers_;   ///< by start, ties in discovery order
  std::vector<std::int64_t> max_end_;  ///< prefix maximum of the ends: stops the backward scan early
};

/// Key averages of one name on the CPU (rule 10), ns.
struct cpu_key_stats {
  std::uint64_t count = 0;
  std::int64_t self_cpu = 0;
  std::int64_t total_cpu = 0;
  std::int64_t self_device = 0;
  std::int64_t total_device = 0;
};

/// Key averages of one kernel or memory op name on the device (rule 10), ns.
struct device_key_stats {
  std::uint64_t count = 0;
  std::int64_t total = 0;
};

/// One region's totals in one run, ns.
struct aggregate {
  run_index run = run_index::at(0);  ///< always an index
  std::uint32_t region = 0;          ///< classifier region index
  std::uint64_t calls = 0;
  std::int64_t cpu = 0;
  std::int64_t device = 0;
  std::int64_t off_cpu = 0;
  bool off_thread = false;
  std::int64_t first_seen = max_ns;  ///< earliest start of an owning instance
};

/// A topmost region instance on the marker's thread (rule 9's "region open at that moment"), ns.
struct region_instance {
  std::int64_t start = 0;
  std::int64_t end = 0;
  aggregate_index aggregate;  ///< always an index
};

/// One run: its marker interval and its device ops' totals, ns.
struct run_state {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t thread = 0;
  std::int64_t device = 0;
  std::int64_t first_op = max_ns;
  std::int64_t last_op = min_ns;
  std::uint64_t ops = 0;
  // Union sweep over the run's ops in input order; valid while they arrive in start order.
  std::int64_t busy = 0;
  std::int64_t open_start = 0;
  std::int64_t open_end = min_ns;
  std::int64_t last_start = min_ns;
  bool unordered = false;
  std::vector<region_instance> instances;  ///< cross_thread only, in start order
};

inline run_state new_run(std::int64_t start, std::int64_t end, std::uint32_t thread) {
  run_state r;
  r.start = start;
  r.end = end;
  r.thread = thread;
  return r;
}

/// A device op's duration, ns; 0 when it ends before it starts.
inline std::int64_t duration(const device_op& op) noexcept {
  return op.end_ns > op.start_ns ? op.end_ns - op.start_ns : 0;
}

/// `tid N 'name'` for messages.
std::string thread_label(const trace& input, std::uint32_t thread);

class engine {
 public:
  engine(const trace& input, const analysis_options& options)
      : in_(input), options_(options), classes_(input, options), correlation_(input.intervals) {}

  analysis_result run();

 private:
  name_id name_of(const cpu_interval& interval) const noexcept {
    return interval.name < in_.strings.size() ? interval.name : name_id{0};
  }
  std::uint32_t classify(const cpu_interval& interval) {
    if (interval.name >= in_.strings.size()) return no_class;
    return classes_.classify(interval);
  }

  // run_markers.cpp
  void find_marker_threads();
  void discover_markers();
  std::vector<std::uint32_t> walk_order();
  // thread_walk.cpp. walk() and pop() are templates only so that the frame type stays local to that file:
  // with internal linkage GCC 12 (-O2) inlines the per-event stack push, as it did with one file.
  void walk_threads(const std::vector<std::uint32_t>& order);
  template <typename Frame>
  void walk(std::uint32_t thread, std::vector<Frame>& stack);
  template <typename Frame>
  void pop(std::vector<Frame>& stack);
  aggregate_index begin_topmost_region(run_index run, ownership state, std::uint32_t region, std::int64_t start,
                                       std::int64_t end);
  aggregate_index aggregate_of(run_index run, std::uint32_t region);
  // device_ops.cpp
  void sum_launches();
  void resolve_pending();
  void attribute_device_ops();
  void finish_unordered_unions();
  // device_split.cpp
  void add_device_figures(analysis_result& result) const;
  // assemble.cpp, key_averages.cpp, warnings.cpp
  analysis_result assemble();
  void add_key_averages(analysis_result& result) const;
  void add_warnings(analysis_result& result) const;

  const trace& in_;
  const analysis_options& options_;
  name_classifier classes_;
  correlation_index correlation_;
  thread_order order_;
  bool device_data_ = false;

  // Threads and runs.
  std::size_t thread_count_ = 0;
  std::vector<std::uint32_t> marker_threads_;  ///< threads holding a marker-classified range, ascending
  std::vector<std::vector<run_index>> thread_runs_;  ///< per thread: runs of its topmost markers
  bool runs_known_ = false;  ///< thread_runs_ filled by discover_markers()
  std::uint32_t synthetic_thread_ = no_thread;  ///< the thread of the synthetic run (no markers at all)
  std::size_t marker_count_ = 0;           ///< topmost markers, skipped ones included
  index_vector<run_index, run_state> runs_;
  std::vector<marker_span> markers_;  ///< topmost markers for the off-thread lookup
  run_lookup lookup_;

  // Per correlation slot.
  std::vector<std::int64_t> slot_device_;  ///< ns
  std::vector<run_index> slot_run_;        ///< a run, no_run::off_thread, or no_run::none
  std::vector<aggregate_index> slot_aggregate_;  ///< no_aggregate::pending only until resolve_pending()
  std::vector<std::uint32_t> pending_slots_;

  // Regions and key averages.
  index_vector<aggregate_index, aggregate> aggregates_;
  std::vector<run_index> region_last_run_;              ///< per region: run of its last aggregate
  std::vector<aggregate_index> region_last_aggregate_;  ///< ... and that aggregate
  std::unordered_map<std::uint64_t, aggregate_index> aggregate_index_;  // (run, region), per aggregate
  std::vector<cpu_key_stats> cpu_keys_;
  std::vector<device_key_stats> device_keys_;

  // Counts for warnings.
  std::uint64_t overlaps_ = 0;
  std::string overlap_example_;
  std::uint64_t nested_markers_ = 0;
  std::map<std::string, std::uint64_t> unmapped_by_kind_;
  std::uint64_t off_thread_intervals_ = 0;
  std::uint64_t off_thread_ops_ = 0;
  std::vector<std::uint32_t> off_threads_;  ///< threads with counted off-thread work, first seen order
  std::uint64_t uncorrelated_zero_ = 0;
  std::uint64_t uncorrelated_unmatched_ = 0;
  std::int64_t uncorrelated_time_ = 0;  ///< ns
  std::uint64_t clock_anomalies_ = 0;
  std::int64_t clock_anomaly_max_ = 0;  ///< ns
};

}  // namespace regionprof::detail::attribution
