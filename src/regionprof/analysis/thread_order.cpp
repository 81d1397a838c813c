#include "regionprof/analysis/thread_order.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace regionprof::detail {

namespace {

/// True when a precedes b in the walk order (start ascending, then end descending); equal keys keep
/// input order because every sort below is stable.
bool before(const cpu_interval& a, const cpu_interval& b) noexcept {
  if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
  return effective_end(a) > effective_end(b);
}

/// Where the already ordered stretches of `slice` begin, stopping (and answering an empty list) once
/// there are more than `limit` of them.
std::vector<std::size_t> ordered_stretches(const std::vector<cpu_interval>& intervals,
                                           std::span<const std::uint32_t> slice, std::size_t limit) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 1; i < slice.size(); ++i) {
    if (!before(intervals[slice[i]], intervals[slice[i - 1]])) continue;
    if (starts.size() == limit) return {};
    starts.push_back(i);
  }
  return starts;
}

/// Merges the ordered stretches pairwise (a stable merge keeps input order among equal keys).
void merge_stretches(const std::vector<cpu_interval>& intervals, std::span<std::uint32_t> slice,
                     std::vector<std::size_t> starts) {
  auto less = [&](std::uint32_t a, std::uint32_t b) { return before(intervals[a], intervals[b]); };
  starts.push_back(slice.size());
  while (starts.size() > 2) {
    std::vector<std::size_t> merged;
    for (std::size_t k = 0; k + 2 < starts.size(); k += 2) {
      std::inplace_merge(slice.begin() + static_cast<std::ptrdiff_t>(starts[k]),
                         slice.begin() + static_cast<std::ptrdiff_t>(starts[k + 1]),
                         slice.begin() + static_cast<std::ptrdiff_t>(starts[k + 2]), less);
      merged.push_back(starts[k]);
    }
    if (starts.size() % 2 == 0) merged.push_back(starts[starts.size() - 2]);  // odd stretch count: carry the last
    merged.push_back(slice.size());
    starts = std::move(merged);
  }
}

/// Up to this many ordered stretches per thread are merged (log2(16) = 4 merge passes); more are sorted.
constexpr std::size_t max_merged_stretches = 16;

constexpr unsigned digit_bits = 11;
constexpr std::size_t buckets = std::size_t{1} << digit_bits;

/// Stable LSD radix sort of `keys` by bits [low_bit, high_bit); the result ends in `keys`.
void radix_sort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& scratch, unsigned low_bit,
                unsigned high_bit) {
  const std::size_t n = keys.size();
  const unsigned passes = (high_bit - low_bit + digit_bits - 1) / digit_bits;
  std::vector<std::array<std::uint32_t, buckets>> counts(passes);
  for (auto& c : counts) c.fill(0);
  for (const std::uint64_t key : keys) {
    for (unsigned p = 0; p < passes; ++p) ++counts[p][(key >> (low_bit + p * digit_bits)) & (buckets - 1)];
  }
  scratch.resize(n);
  std::uint64_t* in = keys.data();
  std::uint64_t* out = scratch.data();
  for (unsigned p = 0; p < passes; ++p) {
    auto& count = counts[p];
    // A digit that is the same for every key changes nothing: skip the pass.
    if (std::find(count.begin(), count.end(), static_cast<std::uint32_t>(n)) != count.end()) continue;
    std::uint32_t sum = 0;
    for (auto& c : count) {
      const std::uint32_t here = c;
      c = sum;
      sum += here;
    }
    const unsigned shift = low_bit + p * digit_bits;
    for (std::size_t i = 0; i < n; ++i) out[count[(in[i] >> shift) & (buckets - 1)]++] = in[i];
    std::swap(in, out);
  }
  if (in != keys.data()) std::copy(in, in + n, keys.data());
}

/// Sorts `slice` (input order) into walk order. Each interval becomes one 64-bit key
/// (start - lowest start) << index_bits | position, so a radix sort on the start bits keeps input order
/// among equal starts; then each group of equal starts is ordered by end, descending (stable).
void sort_slice(const std::vector<cpu_interval>& intervals, std::span<std::uint32_t> slice,
                std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& scratch,
                std::vector<std::uint32_t>& original) {
  const std::size_t n = slice.size();
  std::int64_t low = intervals[slice[0]].start_ns;
  std::int64_t high = low;
  for (std::uint32_t i : slice) {
    low = std::min(low, intervals[i].start_ns);
    high = std::max(high, intervals[i].start_ns);
  }
  // Unsigned difference: exact for any pair of int64 values.
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  const unsigned range_bits = static_cast<unsigned>(std::bit_width(range));
  const unsigned index_bits = static_cast<unsigned>(std::bit_width(n - 1));
  if (range_bits + index_bits > 64) {  // e.g. a day-long trace with millions of intervals on one thread
    std::stable_sort(slice.begin(), slice.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return before(intervals[a], intervals[b]); });
    return;
  }
  keys.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t start = static_cast<std::uint64_t>(intervals[slice[i]].start_ns) - static_cast<std::uint64_t>(low);
    keys[i] = index_bits == 0 ? start : (start << index_bits) | i;
  }
  radix_sort(keys, scratch, index_bits, index_bits + range_bits);
  original.assign(slice.begin(), slice.end());
  const std::uint64_t position_mask = index_bits == 0 ? 0 : (std::uint64_t{1} << index_bits) - 1;
  for (std::size_t i = 0; i < n; ++i) slice[i] = original[keys[i] & position_mask];

  // Equal starts: the longer interval first, input order among equal ends (stable).
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && (keys[j] >> index_bits) == (keys[i] >> index_bits)) ++j;
    if (j - i > 1) {
      std::stable_sort(slice.begin() + static_cast<std::ptrdiff_t>(i), slice.begin() + static_cast<std::ptrdiff_t>(j),
                       [&](std::uint32_t a, std::uint32_t b) {
                         return effective_end(intervals[a]) > effective_end(intervals[b]);
                       });
    }
    i = j;
  }
}

}  // namespace

thread_order order_by_thread(const std::vector<cpu_interval>& intervals, std::size_t thread_count) {
  thread_order order;
  order.offset.assign(thread_count + 1, 0);
  for (const cpu_interval& interval : intervals) ++order.offset[interval.thread + 1];
  for (std::size_t t = 0; t < thread_count; ++t) order.offset[t + 1] += order.offset[t];
  order.index.resize(intervals.size());
  {
    std::vector<std::uint32_t> cursor(order.offset.begin(), order.offset.end() - 1);
    for (std::size_t i = 0; i < intervals.size(); ++i) {
      order.index[cursor[intervals[i].thread]++] = static_cast<std::uint32_t>(i);
    }
  }
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> scratch;
  std::vector<std::uint32_t> original;
  for (std::size_t t = 0; t < thread_count; ++t) {
    std::span<std::uint32_t> slice(order.index.data() + order.offset[t], order.index.data() + order.offset[t + 1]);
    if (slice.size() < 2) continue;
    // Producers append ordered sequences (ranges, then API calls, ...): merge a few, radix-sort many.
    std::vector<std::size_t> stretches = ordered_stretches(intervals, slice, max_merged_stretches);
    if (stretches.size() == 1) continue;
    if (!stretches.empty()) {
      merge_stretches(intervals, slice, std::move(stretches));
    } else {
      sort_slice(intervals, slice, keys, scratch, original);
    }
  }
  return order;
}

}  // namespace regionprof::detail
