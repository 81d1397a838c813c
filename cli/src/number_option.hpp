// A numeric option value (`--alpha 0.05`, `--runs-detail 3`), parsed and range-checked as a usage error.
#pragma once

#include <cstddef>
#include <string_view>

namespace regionprof::cli {

/// Parses a finite decimal number for option `setting` within [low, high]; throws usage_error otherwise,
/// saying `expected <range>` (e.g. "a number above 0, at most 1").
///
/// ```
/// double alpha = parse_number("option --alpha", "0.05", 1e-300, 1.0, "a number above 0, at most 1");
/// ```
double parse_number(std::string_view setting, std::string_view text, double low, double high,
                    std::string_view range);

/// Parses a whole number from 0 to `max` for option `setting`; throws usage_error otherwise.
///
/// ```
/// std::size_t runs = parse_whole_number("option --runs-detail", "3", 1'000'000'000);
/// ```
std::size_t parse_whole_number(std::string_view setting, std::string_view text, std::size_t max);

}  // namespace regionprof::cli
