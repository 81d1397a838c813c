// The hot path of microseconds_text_to_ns, inline for the importer's inner loop.
#pragma once

#include <cstdint>
#include <string_view>

namespace regionprof::json_detail {

/// Converts the common forms [-]digits[.d[d[d]]] (below 9.22e15 us, so that the ns fit int64) to
/// ns. Returns false for anything else (more decimals, an exponent, more digits, not a number):
/// microseconds_text_to_ns then takes the general, exact path.
inline bool microseconds_to_ns_fast(std::string_view text, std::int64_t& out) noexcept {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p != end && *p == '-';
  p += negative;
  const char* const digits = p;
  std::uint64_t value = 0;
  for (; p != end; ++p) {
    const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(*p)) - '0';
    if (d > 9) break;
    value = value * 10 + d;
  }
  const auto int_digits = p - digits;
  // JSON: no leading zeros; 16 digits below 9223372036854775 keep value * 1000 + 999 in int64.
  if (int_digits == 0 || int_digits > 16 || (int_digits > 1 && *digits == '0') ||
      (int_digits == 16 && value >= 9223372036854775ULL)) {
    return false;
  }
  int decimals = 0;
  if (p != end) {
    if (*p != '.') return false;
    ++p;
    for (; p != end && decimals < 3; ++p, ++decimals) {
      const unsigned d = static_cast<unsigned>(static_cast<unsigned char>(*p)) - '0';
      if (d > 9) return false;
      value = value * 10 + d;
    }
    if (p != end || decimals == 0) return false;
  }
  constexpr std::uint64_t scale[] = {1000, 100, 10, 1};
  value *= scale[decimals];
  out = negative ? -static_cast<std::int64_t>(value) : static_cast<std::int64_t>(value);
  return true;
}

}  // namespace regionprof::json_detail
