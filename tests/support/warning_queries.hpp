// Warnings by code, for tests: in a trace, an analysis_result, or anything else with a `warnings` vector.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "regionprof/trace/warnings.hpp"

namespace regionprof::test {

/// The first warning with `code`, or nullptr.
/// Example: `BOOST_REQUIRE(find_warning(result.warnings, warning_code::clock_anomaly) != nullptr);`
inline const warning* find_warning(const std::vector<warning>& warnings, warning_code code) {
  for (const warning& w : warnings) {
    if (w.code == code) return &w;
  }
  return nullptr;
}

/// How many warnings carry `code`.
inline std::size_t count_warnings(const std::vector<warning>& warnings, warning_code code) {
  std::size_t n = 0;
  for (const warning& w : warnings) n += w.code == code ? 1 : 0;
  return n;
}

inline bool has_warning(const std::vector<warning>& warnings, warning_code code) {
  return find_warning(warnings, code) != nullptr;
}

/// The message of the first warning with `code`; empty when there is none.
inline std::string warning_text(const std::vector<warning>& warnings, warning_code code) {
  const warning* w = find_warning(warnings, code);
  return w != nullptr ? w->message : std::string();
}

/// The same on what holds a `warnings` vector (trace, analysis_result).
/// Example: `BOOST_TEST(has_warning(capture.data, warning_code::unbalanced_ranges));`
template <typename Holder>
  requires requires(const Holder& h) { h.warnings; }
const warning* find_warning(const Holder& holder, warning_code code) {
  return find_warning(holder.warnings, code);
}
template <typename Holder>
  requires requires(const Holder& h) { h.warnings; }
std::size_t count_warnings(const Holder& holder, warning_code code) {
  return count_warnings(holder.warnings, code);
}
template <typename Holder>
  requires requires(const Holder& h) { h.warnings; }
bool has_warning(const Holder& holder, warning_code code) {
  return has_warning(holder.warnings, code);
}
template <typename Holder>
  requires requires(const Holder& h) { h.warnings; }
std::string warning_text(const Holder& holder, warning_code code) {
  return warning_text(holder.warnings, code);
}

}  // namespace regionprof::test
