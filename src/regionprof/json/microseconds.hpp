// Microseconds as JSON text to integer nanoseconds, exactly: what the Kineto importer reads `ts` and
// `dur` with, and the saved-profile reader a report's times.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace regionprof {

/// Converts the text of a JSON number of microseconds to integer nanoseconds exactly: digits are
/// shifted, never multiplied as a double (1682725898236567.123 us -> 1682725898236567123 ns).
/// More than 3 decimals round half to even. Returns nullopt when `text` is not a JSON number or the
/// result does not fit in int64.
///
/// ```
/// std::optional<std::int64_t> ns = regionprof::microseconds_text_to_ns("1234.5675");  // 1234568 (half to even)
/// ```
/// `ns` in microseconds, as a double: for statistics and charts (the reports' microsecond text is written
/// from the integer ns exactly, json/json_text.hpp).
///
/// ```
/// regionprof::ns_to_us(1500);  // 1.5
/// ```
inline double ns_to_us(std::int64_t ns) noexcept { return static_cast<double>(ns) / 1000.0; }

std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text) noexcept;

}  // namespace regionprof
