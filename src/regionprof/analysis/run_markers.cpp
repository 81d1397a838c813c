// Runs from run markers (docs/design.md, rule 2) and the off-thread lookup by marker interval (rule 9).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "regionprof/analysis/engine.hpp"

namespace regionprof::detail::attribution {

void run_lookup::build(std::vector<marker_span> markers) {
  markers_ = std::move(markers);
  auto by_start = [](const marker_span& a, const marker_span& b) { return a.start < b.start; };
  // One marker thread's markers come in start order: no sort (a stable sort's buffer is 32 B per run).
  if (!std::is_sorted(markers_.begin(), markers_.end(), by_start)) {
    std::stable_sort(markers_.begin(), markers_.end(), by_start);
  }
  max_end_.resize(markers_.size());
  std::int64_t high = min_ns;
  for (std::size_t i = 0; i < markers_.size(); ++i) max_end_[i] = high = std::max(high, markers_[i].end);
}

void engine::find_marker_threads() {
  thread_count_ = in_.threads.size();
  for (const cpu_interval& interval : in_.intervals) {
    thread_count_ = std::max<std::size_t>(thread_count_, std::size_t{interval.thread} + 1);
  }
  for (const memory_event& event : in_.memory_events) {
    thread_count_ = std::max<std::size_t>(thread_count_, std::size_t{event.thread} + 1);
  }
  std::vector<bool> has_marker(thread_count_, false);
  for (const cpu_interval& interval : in_.intervals) {
    if (classify(interval) == marker_class) {
      has_marker[interval.thread] = true;
      ++marker_intervals_;
    }
  }
  runs_.reserve(std::max<std::size_t>(marker_intervals_, 1));  // at most one run per marker, or the synthetic one
  for (std::uint32_t t = 0; t < thread_count_; ++t) {
    if (has_marker[t]) marker_threads_.push_back(t);
  }
}

// Rule 2 with several marker threads: run i is the i-th topmost marker in time across threads, so every
// marker thread's markers are found (a light walk with clipping) before the full walks need run indices.
void engine::discover_markers() {
  std::vector<marker_span> found;
  struct light_frame {
    std::int64_t end;
    bool under_marker;
  };
  std::vector<light_frame> stack;
  for (std::uint32_t t : marker_threads_) {
    stack.clear();
    std::uint32_t ordinal = 0;
    for (std::uint32_t index : order_.of(t)) {
      const cpu_interval& interval = in_.intervals[index];
      const std::int64_t start = interval.start_ns;
      std::int64_t end = effective_end(interval);
      while (!stack.empty()) {
        if (end <= stack.back().end) break;
        if (start < stack.back().end) {
          end = stack.back().end;
          break;
        }
        stack.pop_back();
      }
      const bool parent_under = !stack.empty() && stack.back().under_marker;
      const bool topmost_marker = !parent_under && classify(interval) == marker_class;
      if (topmost_marker) found.push_back({start, end, t, ordinal++, no_run::none});
      stack.push_back({end, parent_under || topmost_marker});
    }
  }
  // Built thread by thread in walk order: a stable sort by start breaks ties by thread, then walk order.
  std::stable_sort(found.begin(), found.end(), [](const marker_span& a, const marker_span& b) { return a.start < b.start; });
  thread_runs_.assign(thread_count_, {});
  std::vector<std::uint32_t> per_thread(thread_count_, 0);
  for (const marker_span& m : found) ++per_thread[m.thread];
  for (std::uint32_t t = 0; t < thread_count_; ++t) thread_runs_[t].resize(per_thread[t]);
  const std::size_t skip = options_.skip_runs;
  for (std::size_t i = 0; i < found.size(); ++i) {
    marker_span& m = found[i];
    const run_index code = i < skip ? run_index{no_run::skipped} : run_index::at(i - skip);
    thread_runs_[m.thread][m.ordinal] = code;
    m.run = code;
    if (code != no_run::skipped) runs_.push_back(new_run(m.start, m.end, m.thread));
  }
  marker_count_ = found.size();
  markers_ = std::move(found);
  lookup_.build(std::move(markers_));  // moved: the lookup is their only reader (a copy was 32 B per run)
  runs_known_ = true;
}

// The marker threads, ascending; with no marker at all (rule 2), the thread of one synthetic run spanning
// the busiest thread (ties: lowest index) from its first interval's start to its last interval's end.
std::vector<std::uint32_t> engine::walk_order() {
  std::vector<std::uint32_t> order;
  if (!marker_threads_.empty()) {
    order = marker_threads_;
  } else if (!in_.intervals.empty()) {
    std::uint32_t busiest = 0;
    for (std::uint32_t t = 1; t < thread_count_; ++t) {
      if (order_.of(t).size() > order_.of(busiest).size()) busiest = t;
    }
    synthetic_thread_ = busiest;
    std::int64_t low = max_ns;
    std::int64_t high = min_ns;
    for (std::uint32_t index : order_.of(busiest)) {
      low = std::min(low, in_.intervals[index].start_ns);
      high = std::max(high, effective_end(in_.intervals[index]));
    }
    runs_.push_back(new_run(low, high, busiest));
    markers_.push_back({low, high, busiest, 0, run_index::at(0)});
    ++marker_count_;
    order.push_back(busiest);
  }
  return order;
}

}  // namespace regionprof::detail::attribution
