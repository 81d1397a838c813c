// Correlation id -> launching API call, built once per analysis (docs/design.md, rule 6).
#pragma once

#include <cstdint>
#include <vector>

#include "regionprof/trace/trace.hpp"

namespace regionprof::detail {

/// Maps each correlation id carried by an API call to a dense slot and that call's interval index.
///
/// CUPTI's ids are dense from 1 (a process's later sessions continue the count), so when the ids span
/// at most about twice their number the slot is `id - lowest id` (one subtraction per lookup); otherwise
/// the ids are kept sorted and looked up by binary search. When several API calls carry one id, the
/// first in input order owns it (the others launch nothing). Memory: 4 bytes per slot.
class correlation_index {
 public:
  static constexpr std::uint32_t none = static_cast<std::uint32_t>(-1);

  explicit correlation_index(const std::vector<cpu_interval>& intervals);

  /// The slot of `id`, or none when no API call carries it (and always for id 0).
  std::uint32_t slot(std::uint32_t id) const noexcept {
    if (dense_) {
      const std::uint32_t at = id - base_;  // wraps for id < base_: then at >= size
      return id != 0 && at < calls_.size() ? (calls_[at] == none ? none : at) : none;
    }
    return sparse_slot(id);
  }
  /// Index in trace::intervals of the API call that owns `slot`.
  std::uint32_t call(std::uint32_t slot) const noexcept { return calls_[slot]; }
  /// Number of slots (some may be unused in the dense form).
  std::size_t size() const noexcept { return calls_.size(); }
  /// API calls whose id was already owned by an earlier call.
  std::size_t duplicate_calls() const noexcept { return duplicates_; }

 private:
  std::uint32_t sparse_slot(std::uint32_t id) const noexcept;

  bool dense_ = true;
  std::uint32_t base_ = 0;
  std::vector<std::uint32_t> calls_;  ///< per slot: interval index, or none (dense form only)
  std::vector<std::uint32_t> ids_;    ///< sparse form: sorted ids, parallel to calls_
  std::size_t duplicates_ = 0;
};

}  // namespace regionprof::detail
