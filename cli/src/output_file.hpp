// Writing a command's text output to a file: checked, and the error names the path.
#pragma once

#include <string>

namespace regionprof::cli {

/// Writes `text` to `path`; throws std::runtime_error naming the path when it cannot be written.
///
/// ```
/// write_text_file("diff.md", regionprof::to_markdown(diff));
/// ```
void write_text_file(const std::string& path, const std::string& text);

}  // namespace regionprof::cli
