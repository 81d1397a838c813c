// Exact conversion of a JSON number of microseconds, from its text, to integer nanoseconds.
//
// A Kineto `ts` is an epoch time in us (1.7e15) written with up to 3 decimals. As a double it keeps
// only ~16 significant digits, so parsing it as a double loses the last ns (97 % of a real trace's
// values come out wrong by up to 250 ns). Here the decimal digits are shifted instead:
// ns = digits * 10^(3 + exponent - decimals), in 128-bit integers.
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "regionprof/json/microseconds.hpp"
#include "regionprof/json/microseconds_fast.hpp"

namespace regionprof {
namespace {

__extension__ typedef unsigned __int128 u128;  // GCC/Clang extension; -Wpedantic otherwise

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// 10^38 < 2^127: up to 38 significant digits fit; we keep at most 36 and note the rest as "sticky".
constexpr int max_kept_digits = 36;

u128 pow10(int n) noexcept {
  u128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

}  // namespace

std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text) noexcept {
  if (std::int64_t fast = 0; json_detail::microseconds_to_ns_fast(text, fast)) return fast;
  std::size_t i = 0;
  const std::size_t n = text.size();
  bool negative = false;
  if (i < n && text[i] == '-') {
    negative = true;
    ++i;
  }
  // JSON grammar: int = "0" / [1-9] digit*; frac = "." digit+; exp = [eE] [+-]? digit+.
  if (i >= n || !is_digit(text[i])) return std::nullopt;
  if (text[i] == '0' && i + 1 < n && is_digit(text[i + 1])) return std::nullopt;

  u128 mantissa = 0;
  int kept = 0;          // significant digits in mantissa
  long long scale = 3;   // ns = mantissa * 10^scale (before rounding)
  bool sticky = false;   // a non-zero digit was dropped beyond max_kept_digits
  auto take = [&](char c, bool fractional) {
    const int d = c - '0';
    if (kept == 0 && d == 0) {
      if (fractional) --scale;  // leading zeros after the point only shift
      return;
    }
    if (kept < max_kept_digits) {
      mantissa = mantissa * 10 + static_cast<unsigned>(d);
      ++kept;
      if (fractional) --scale;
    } else {
      if (!fractional) ++scale;  // an integer digit we cannot keep still multiplies by 10
      if (d != 0) sticky = true;
    }
  };
  for (; i < n && is_digit(text[i]); ++i) take(text[i], false);
  if (i < n && text[i] == '.') {
    ++i;
    if (i >= n || !is_digit(text[i])) return std::nullopt;
    for (; i < n && is_digit(text[i]); ++i) take(text[i], true);
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (text[i] == '+' || text[i] == '-')) {
      exp_negative = text[i] == '-';
      ++i;
    }
    if (i >= n || !is_digit(text[i])) return std::nullopt;
    long long exponent = 0;
    for (; i < n && is_digit(text[i]); ++i) {
      if (exponent < 100000) exponent = exponent * 10 + (text[i] - '0');  // saturate: only the sign of huge exponents matters
    }
    scale += exp_negative ? -exponent : exponent;
  }
  if (i != n) return std::nullopt;

  const u128 limit = negative ? u128{1} << 63 : (u128{1} << 63) - 1;
  u128 magnitude = 0;
  if (mantissa == 0) {
    magnitude = 0;
  } else if (scale >= 0) {
    // int64 has 19 digits: a larger shift of a non-zero mantissa overflows.
    if (scale > 19 || kept + scale > 20) return std::nullopt;
    magnitude = mantissa * pow10(static_cast<int>(scale));
  } else {
    // More than 3 decimals: divide and round half to even (the dropped digits beyond
    // max_kept_digits only break ties, through `sticky`).
    if (-scale > 38) {
      magnitude = 0;  // below 10^-38 of ... i.e. far below half a ns
    } else {
      const u128 divisor = pow10(static_cast<int>(-scale));
      magnitude = mantissa / divisor;
      const u128 remainder = mantissa % divisor;
      const u128 half = divisor / 2;  // divisor is a power of ten >= 10, so exact
      if (remainder > half || (remainder == half && (sticky || (magnitude & 1) != 0))) ++magnitude;
    }
  }
  if (magnitude > limit) return std::nullopt;
  if (negative) return magnitude == (u128{1} << 63) ? std::numeric_limits<std::int64_t>::min()
                                                     : -static_cast<std::int64_t>(magnitude);
  return static_cast<std::int64_t>(magnitude);
}

}  // namespace regionprof
