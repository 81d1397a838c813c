// What several commands share: writing a text output file (checked, the error names the path) and
// parsing a numeric option value.
#pragma once

#include <string>
#include <string_view>

namespace regionprof::cli {

/// Writes `text` to `path`; throws std::runtime_error naming the path when it cannot be written.
///
/// ```
/// write_text_file("diff.md", regionprof::to_markdown(diff));
/// ```
void write_text_file(const std::string& path, const std::string& text);

/// Parses a finite decimal number for option `setting` within [low, high]; throws usage_error otherwise,
/// saying `expected <range>` (e.g. "a number above 0, at most 1").
///
/// ```
/// double alpha = parse_number("option --alpha", "0.05", 1e-300, 1.0, "a number above 0, at most 1");
/// ```
double parse_number(std::string_view setting, std::string_view text, double low, double high,
                    std::string_view range);

}  // namespace regionprof::cli
