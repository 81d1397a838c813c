#include "regionprof/analysis/correlation_index.hpp"

#include <algorithm>
#include <utility>

namespace regionprof::detail {

correlation_index::correlation_index(const std::vector<cpu_interval>& intervals) {
  std::uint32_t low = none;
  std::uint32_t high = 0;
  std::size_t count = 0;
  for (const cpu_interval& interval : intervals) {
    if (!is_api_call(interval.kind) || interval.correlation_id == 0) continue;
    low = std::min(low, interval.correlation_id);
    high = std::max(high, interval.correlation_id);
    ++count;
  }
  if (count == 0) return;  // dense and empty: every lookup answers none
  const std::uint64_t span = std::uint64_t{high} - low + 1;
  if (span <= 2 * std::uint64_t{count} + 1024) {
    base_ = low;
    calls_.assign(static_cast<std::size_t>(span), none);
    for (std::size_t i = 0; i < intervals.size(); ++i) {
      const cpu_interval& interval = intervals[i];
      if (!is_api_call(interval.kind) || interval.correlation_id == 0) continue;
      std::uint32_t& owner = calls_[interval.correlation_id - base_];
      if (owner == none) {
        owner = static_cast<std::uint32_t>(i);
      } else {
        ++duplicates_;
      }
    }
    return;
  }
  dense_ = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // (id, interval index), temporary
  pairs.reserve(count);
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    const cpu_interval& interval = intervals[i];
    if (is_api_call(interval.kind) && interval.correlation_id != 0) {
      pairs.emplace_back(interval.correlation_id, static_cast<std::uint32_t>(i));
    }
  }
  std::sort(pairs.begin(), pairs.end());  // by id, then input order: the first call wins
  ids_.reserve(pairs.size());
  calls_.reserve(pairs.size());
  for (const auto& [id, index] : pairs) {
    if (!ids_.empty() && ids_.back() == id) {
      ++duplicates_;
      continue;
    }
    ids_.push_back(id);
    calls_.push_back(index);
  }
}

std::uint32_t correlation_index::sparse_slot(std::uint32_t id) const noexcept {
  auto found = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (id == 0 || found == ids_.end() || *found != id) return none;
  return static_cast<std::uint32_t>(found - ids_.begin());
}

}  // namespace regionprof::detail
