#include "regionprof/collect/clock_fit.hpp"

#include <cmath>

#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/trace/clock.hpp"

namespace regionprof::collect {

clock_map clock_map::fit(const clock_sample& first, const clock_sample& last) noexcept {
  if (last.cupti_ns <= first.cupti_ns) return offset(first);
  clock_map map;
  map.identity_ = false;
  map.cupti_origin_ = first.cupti_ns;
  map.monotonic_origin_ = first.monotonic_ns;
  map.slope_ = static_cast<long double>(last.monotonic_ns - first.monotonic_ns) /
               static_cast<long double>(last.cupti_ns - first.cupti_ns);
  return map;
}

clock_map clock_map::offset(const clock_sample& only) noexcept {
  clock_map map;
  map.identity_ = false;
  map.cupti_origin_ = only.cupti_ns;
  map.monotonic_origin_ = only.monotonic_ns;
  return map;
}

std::int64_t clock_map::to_monotonic(std::uint64_t cupti_ns) const noexcept {
  if (identity_) return static_cast<std::int64_t>(cupti_ns);
  // Signed distance from the origin (two's complement wrap of the unsigned difference is exact).
  const auto delta = static_cast<std::int64_t>(cupti_ns - cupti_origin_);
  return monotonic_origin_ + static_cast<std::int64_t>(std::llround(static_cast<long double>(delta) * slope_));
}

std::optional<clock_sample> sample_clocks(activity_backend& backend) {
  std::optional<clock_sample> best;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::int64_t before = monotonic_now_ns();
    const std::optional<std::uint64_t> cupti = backend.timestamp();
    const std::int64_t after = monotonic_now_ns();
    if (!cupti) return std::nullopt;
    const clock_sample sample{before + (after - before) / 2, *cupti, after - before};
    if (!best || sample.bracket_ns < best->bracket_ns) best = sample;
  }
  return best;
}

}  // namespace regionprof::collect
