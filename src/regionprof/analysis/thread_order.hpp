// Per-thread order of CPU intervals for the parent-tree walk (docs/design.md, rule 1).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "regionprof/trace/trace.hpp"

namespace regionprof::detail {

/// The end used by the analysis before clipping: an end before the start counts as the start.
inline std::int64_t effective_end(const cpu_interval& interval) noexcept {
  return interval.end_ns < interval.start_ns ? interval.start_ns : interval.end_ns;
}

/// Interval indices grouped by thread; within a thread ordered by start ascending, then end
/// descending (the longer one is the parent), then input order (the earlier one is the parent).
///
/// Cost: O(n) when each thread's intervals already come in that order (checked), a stable merge when
/// they come as a few (<= 16) ordered stretches (e.g. ranges, then API calls), else a stable LSD
/// radix sort on the start (11-bit digits, only as many passes as the thread's time range needs) plus a
/// sort of each group of equal starts. Extra memory: 4 bytes per interval, plus 20 bytes per interval of
/// the largest unsorted thread while it is sorted.
struct thread_order {
  std::vector<std::uint32_t> index;   ///< interval indices, thread after thread
  std::vector<std::uint32_t> offset;  ///< thread t's indices are [offset[t], offset[t + 1])

  std::span<const std::uint32_t> of(std::size_t thread) const noexcept {
    return {index.data() + offset[thread], index.data() + offset[thread + 1]};
  }
  std::size_t thread_count() const noexcept { return offset.size() - 1; }
};

/// Builds the order. `thread_count` must exceed every interval's thread index.
thread_order order_by_thread(const std::vector<cpu_interval>& intervals, std::size_t thread_count);

}  // namespace regionprof::detail
