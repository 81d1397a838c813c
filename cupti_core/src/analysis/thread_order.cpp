#include "analysis/thread_order.hpp"

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

bool is_ordered(const std::vector<cpu_interval>& intervals, std::span<const std::uint32_t> slice) {
  for (std::size_t i = 1; i < slice.size(); ++i) {
    if (before(intervals[slice[i]], intervals[slice[i - 1]])) return false;
  }
  return true;
}

constexpr unsigned digit_bits = 11;
constexpr std::size_t buckets = std::size_t{1} << digit_bits;

/// Stable LSD radix sort of `slice` (input order) by start, then a stable sort of each run of equal
/// starts by end descending.
void sort_slice(const std::vector<cpu_interval>& intervals, std::span<std::uint32_t> slice,
                std::vector<std::uint64_t>& keys_a, std::vector<std::uint64_t>& keys_b,
                std::vector<std::uint32_t>& index_b) {
  const std::size_t n = slice.size();
  std::int64_t low = intervals[slice[0]].start_ns;
  std::int64_t high = low;
  for (std::uint32_t i : slice) {
    low = std::min(low, intervals[i].start_ns);
    high = std::max(high, intervals[i].start_ns);
  }
  // Unsigned difference: exact for any pair of int64 values.
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  const unsigned bits = static_cast<unsigned>(std::bit_width(range));
  const unsigned passes = (bits + digit_bits - 1) / digit_bits;

  keys_a.resize(n);
  keys_b.resize(n);
  index_b.resize(n);
  std::vector<std::array<std::uint32_t, buckets>> counts(passes);
  for (auto& c : counts) c.fill(0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t key = static_cast<std::uint64_t>(intervals[slice[i]].start_ns) - static_cast<std::uint64_t>(low);
    keys_a[i] = key;
    for (unsigned p = 0; p < passes; ++p) ++counts[p][(key >> (p * digit_bits)) & (buckets - 1)];
  }
  std::uint64_t* keys_in = keys_a.data();
  std::uint64_t* keys_out = keys_b.data();
  std::uint32_t* index_in = slice.data();
  std::uint32_t* index_out = index_b.data();
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
    const unsigned shift = p * digit_bits;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t slot = count[(keys_in[i] >> shift) & (buckets - 1)]++;
      keys_out[slot] = keys_in[i];
      index_out[slot] = index_in[i];
    }
    std::swap(keys_in, keys_out);
    std::swap(index_in, index_out);
  }
  if (index_in != slice.data()) std::copy(index_in, index_in + n, slice.data());

  // Equal starts: the longer interval first, input order among equal ends (stable).
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && intervals[slice[j]].start_ns == intervals[slice[i]].start_ns) ++j;
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
  std::vector<std::uint64_t> keys_a;
  std::vector<std::uint64_t> keys_b;
  std::vector<std::uint32_t> index_b;
  for (std::size_t t = 0; t < thread_count; ++t) {
    std::span<std::uint32_t> slice(order.index.data() + order.offset[t], order.index.data() + order.offset[t + 1]);
    if (slice.size() > 1 && !is_ordered(intervals, slice)) sort_slice(intervals, slice, keys_a, keys_b, index_b);
  }
  return order;
}

}  // namespace regionprof::detail
