// Mapping CUPTI's timestamps onto the one clock (CLOCK_MONOTONIC ns) when CUPTI refused our timestamp
// callback: a linear fit through paired (CUPTI, monotonic) readings taken at session start and stop.
#pragma once

#include <cstdint>
#include <optional>

namespace regionprof::collect {

class activity_backend;

/// One pairing of the two clocks: CUPTI's reading bracketed by two monotonic readings.
struct clock_sample {
  std::int64_t monotonic_ns = 0;  ///< midpoint of the bracketing monotonic readings
  std::uint64_t cupti_ns = 0;
  std::int64_t bracket_ns = 0;    ///< width of the bracket: the pairing's uncertainty
};

/// cupti_ns -> monotonic ns. Default: identity (CUPTI already stamps monotonic_now_ns()).
class clock_map {
 public:
  clock_map() = default;
  /// The line through two samples (slope from their spans; the later sample must be later in CUPTI time,
  /// else the offset of `first` alone is used).
  static clock_map fit(const clock_sample& first, const clock_sample& last) noexcept;
  /// A constant offset from one sample (slope 1).
  static clock_map offset(const clock_sample& only) noexcept;

  std::int64_t to_monotonic(std::uint64_t cupti_ns) const noexcept;
  bool is_identity() const noexcept { return identity_; }
  double slope() const noexcept { return static_cast<double>(slope_); }

 private:
  bool identity_ = true;
  std::uint64_t cupti_origin_ = 0;
  std::int64_t monotonic_origin_ = 0;
  long double slope_ = 1.0L;
};

/// The tightest of five bracketed readings of CUPTI's clock against monotonic_now_ns(); nullopt when
/// CUPTI's clock cannot be read.
std::optional<clock_sample> sample_clocks(activity_backend& backend);

}  // namespace regionprof::collect
