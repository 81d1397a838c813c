// Markdown building blocks shared by the profile and diff reports: cleaned one-line text, code spans,
// and tables padded to their column widths (GitHub-flavoured, readable in a terminal).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/trace/warnings.hpp"

namespace regionprof::report_detail {

/// Characters as a terminal shows them: UTF-8 continuation bytes do not count.
std::size_t display_width(std::string_view text);

/// Valid UTF-8 on one line: control characters become spaces, and text longer than `limit`
/// characters (0: no limit) is cut to limit - 3 characters plus "...".
std::string clean(std::string_view raw, std::size_t limit = 0);

/// A code span around `raw` (cleaned), fenced with more backticks than the longest run inside.
std::string code(std::string_view raw, std::size_t limit = 0);

/// A table whose columns are padded to their widest cell; `right` columns are right-aligned. A `|`
/// in a cell is escaped (GFM reads `\|` as `|` in a table cell, code spans included).
///
/// ```
/// table t({{"region", false}, {"CPU (us)", true}});
/// t.add({"`a`", "1.000"});
/// std::string out;
/// t.render(out);
/// ```
class table {
 public:
  struct column {
    std::string title;
    bool right = false;
  };

  explicit table(std::vector<column> columns);

  /// Precondition: one cell per column.
  void add(std::vector<std::string> row);
  /// True before the first add().
  bool empty() const noexcept { return cell_ends_.empty(); }
  /// Appends the table and a blank line; with `spill`, calls it whenever `out` holds 1 MiB or more (it
  /// writes `out` somewhere and clears it), so a long table never stands whole in memory.
  void render(std::string& out, const std::function<void()>& spill = {}) const;

  /// Fills `row` (cleared before each call) with row `index`'s cells, one per column.
  using row_maker = std::function<void(std::size_t index, std::vector<std::string>& row)>;
  /// Appends this table's rows (added ones first) and then `rows` rows made by `make`, which is called
  /// twice per row (once for the column widths, once to write it), so those rows are never held: a
  /// table of a million runs costs one row of memory (docs/design.md, rule 13). `spill` as in render.
  void render_made(std::string& out, std::size_t rows, const row_maker& make, const std::function<void()>& spill = {});

 private:
  /// Appends one row; `cell(c)` is column c's text.
  template <typename Cell>
  void line(std::string& out, Cell cell) const;
  void header(std::string& out) const;
  void added_rows(std::string& out, const std::function<void()>& spill) const;

  std::vector<column> columns_;
  std::vector<std::size_t> widths_;  ///< per column, the widest cell so far (titles included, at least 3)
  // The rows' cells end to end (escaped), and where each ends: a row costs its text and 8 B per cell,
  // not a vector of strings (a million-run table stays small; docs/design.md, rule 13).
  std::string cells_;
  std::vector<std::size_t> cell_ends_;
};

/// `## Warnings` and each warning as `` - `CODE` (source): message `` (cleaned), or `None.`: the
/// report's and the diff's section.
void append_warnings(std::string& out, std::span<const warning> warnings);

}  // namespace regionprof::report_detail
