// An optional time in nanoseconds in 8 bytes: the device figures of a run, a region and a tree node,
// present iff the trace has device data. std::optional<std::int64_t> takes 16 bytes, and a profile
// of a million runs holds four per run (docs/design.md, rule 13).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>

namespace regionprof {

/// std::optional<std::int64_t>'s interface (has_value, *, value, value_or, reset, == with a value or
/// nullopt, conversion to and from std::optional) over one int64. Invariant: INT64_MIN is "absent";
/// no time regionprof computes or reads is INT64_MIN (durations and sums are >= 0; read times are
/// within +-INT64_MAX / 1000 * 1000), so storing it is a caller bug and reads as absent.
///
/// ```
/// regionprof::optional_ns t;          // absent
/// t = 1500;                           // 1500 ns
/// std::int64_t ns = t.value_or(0);    // 1500
/// std::optional<std::int64_t> o = t;  // where a std::optional is wanted
/// ```
class optional_ns {
 public:
  constexpr optional_ns() noexcept = default;
  constexpr optional_ns(std::nullopt_t) noexcept {}
  constexpr optional_ns(std::int64_t ns) noexcept : ns_(ns) {}
  constexpr optional_ns(const std::optional<std::int64_t>& ns) noexcept : ns_(ns ? *ns : absent) {}

  constexpr optional_ns& operator=(std::nullopt_t) noexcept {
    ns_ = absent;
    return *this;
  }

  constexpr bool has_value() const noexcept { return ns_ != absent; }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  /// The value; like std::optional's, only when has_value().
  constexpr std::int64_t& operator*() noexcept { return ns_; }
  constexpr const std::int64_t& operator*() const noexcept { return ns_; }
  /// The value; std::bad_optional_access when absent.
  constexpr std::int64_t value() const {
    if (!has_value()) throw std::bad_optional_access();
    return ns_;
  }
  constexpr std::int64_t value_or(std::int64_t otherwise) const noexcept { return has_value() ? ns_ : otherwise; }
  constexpr void reset() noexcept { ns_ = absent; }
  constexpr std::int64_t& emplace(std::int64_t ns) noexcept { return ns_ = ns; }

  constexpr operator std::optional<std::int64_t>() const noexcept {
    return has_value() ? std::optional<std::int64_t>(ns_) : std::nullopt;
  }

  friend constexpr bool operator==(const optional_ns& a, const optional_ns& b) noexcept { return a.ns_ == b.ns_; }
  friend constexpr bool operator==(const optional_ns& a, std::nullopt_t) noexcept { return !a.has_value(); }
  friend constexpr bool operator==(const optional_ns& a, std::int64_t b) noexcept { return a.has_value() && a.ns_ == b; }
  friend constexpr bool operator==(const optional_ns& a, const std::optional<std::int64_t>& b) noexcept {
    return a == optional_ns(b);
  }
  /// `ns` or `none` (for test messages).
  friend std::ostream& operator<<(std::ostream& out, const optional_ns& t) {
    return t.has_value() ? out << t.ns_ << " ns" : out << "none";
  }

 private:
  static constexpr std::int64_t absent = std::numeric_limits<std::int64_t>::min();
  std::int64_t ns_ = absent;
};

static_assert(sizeof(optional_ns) == 8);

}  // namespace regionprof
