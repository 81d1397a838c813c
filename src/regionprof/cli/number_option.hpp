// A decimal option value (`--alpha 0.05`), parsed and range-checked as a usage error. Whole numbers:
// options::parse_count (options/option_table.hpp).
#pragma once

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

}  // namespace regionprof::cli
