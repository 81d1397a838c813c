#include "regionprof/report/markdown_table.hpp"

#include <algorithm>

#include "regionprof/json/json_text.hpp"

namespace regionprof::report_detail {

/// Characters as a terminal shows them: UTF-8 continuation bytes do not count.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Valid UTF-8 on one line: control characters become spaces, and text longer than `limit`
/// characters is cut to limit - 3 characters plus "...". (`|` is escaped by `table`, where it matters.)
std::string clean(std::string_view raw, std::size_t limit) {
  // A character is at most 4 bytes: a longer raw text is longer than `limit` characters, and only its
  // first limit - 3 characters are kept, so a 30 MB name is never copied whole.
  if (limit != 0 && raw.size() > 4 * limit + 4) raw = raw.substr(0, 4 * limit + 4);
  std::string text = report_detail::repair_utf8(raw);
  if (limit != 0 && display_width(text) > limit) {
    std::size_t chars = 0;
    std::size_t cut = 0;
    while (cut < text.size()) {
      if ((static_cast<unsigned char>(text[cut]) & 0xC0) != 0x80 && chars++ == limit - 3) break;
      ++cut;
    }
    text.resize(cut);
    text += "...";
  }
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? ' ' : c;
  }
  return out;
}

/// A code span around `raw` (cleaned), fenced with more backticks than the longest run inside.
std::string code(std::string_view raw, std::size_t limit) {
  const std::string text = clean(raw, limit);
  if (text.empty()) return "\"\"";
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = longest > 0;  // a span starting or ending with a backtick needs a space inside
  return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

table::table(std::vector<column> columns) : columns_(std::move(columns)), widths_(columns_.size(), 3) {
  for (std::size_t c = 0; c < columns_.size(); ++c) widths_[c] = std::max(widths_[c], display_width(columns_[c].title));
}

namespace {

/// `cell` with each `|` escaped, appended to `out`.
void append_escaped(std::string& out, std::string_view cell) {
  for (char ch : cell) {
    if (ch == '|') out += '\\';
    out += ch;
  }
}

}  // namespace

void table::add(std::vector<std::string> row) {
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    const std::string_view cell = c < row.size() ? std::string_view(row[c]) : std::string_view();
    const std::size_t begin = cells_.size();
    append_escaped(cells_, cell);
    widths_[c] = std::max(widths_[c], display_width(std::string_view(cells_).substr(begin)));
    cell_ends_.push_back(cells_.size());
  }
}

void table::header(std::string& out) const {
  line(out, [this](std::size_t c) { return std::string_view(columns_[c].title); });
  out += '|';
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    out += ' ';
    out += std::string(widths_[c] - (columns_[c].right ? 1 : 0), '-');
    if (columns_[c].right) out += ':';
    out += " |";
  }
  out += '\n';
}

void table::added_rows(std::string& out, const std::function<void()>& spill) const {
  const std::string_view cells(cells_);
  for (std::size_t first = 0; first < cell_ends_.size(); first += columns_.size()) {
    line(out, [&](std::size_t c) {
      const std::size_t begin = first + c == 0 ? 0 : cell_ends_[first + c - 1];
      return cells.substr(begin, cell_ends_[first + c] - begin);
    });
    if (spill && out.size() >= (std::size_t{1} << 20)) spill();
  }
}

void table::render(std::string& out, const std::function<void()>& spill) const {
  header(out);
  added_rows(out, spill);
  out += '\n';
}

void table::render_made(std::string& out, std::size_t rows, const row_maker& make, const std::function<void()>& spill) {
  std::vector<std::string> row;
  std::vector<std::string> escaped(columns_.size());
  const auto make_escaped = [&](std::size_t index) {
    row.clear();
    make(index, row);
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      escaped[c].clear();
      if (c < row.size()) append_escaped(escaped[c], row[c]);
    }
  };
  for (std::size_t i = 0; i < rows; ++i) {
    make_escaped(i);
    for (std::size_t c = 0; c < columns_.size(); ++c) widths_[c] = std::max(widths_[c], display_width(escaped[c]));
  }
  header(out);
  added_rows(out, spill);
  for (std::size_t i = 0; i < rows; ++i) {
    make_escaped(i);
    line(out, [&](std::size_t c) { return std::string_view(escaped[c]); });
    if (spill && out.size() >= (std::size_t{1} << 20)) spill();
  }
  out += '\n';
}

template <typename Cell>
void table::line(std::string& out, Cell cell) const {
  out += '|';
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    const std::string_view text = cell(c);
    const std::string padding(widths_[c] - display_width(text), ' ');
    out += ' ';
    if (columns_[c].right) out += padding;
    out += text;
    if (!columns_[c].right) out += padding;
    out += " |";
  }
  out += '\n';
}

void append_warnings(std::string& out, std::span<const warning> warnings) {
  out += "## Warnings\n\n";
  if (warnings.empty()) {
    out += "None.\n";
    return;
  }
  for (const warning& item : warnings) {
    out += "- " + code(to_string(item.code)) + " (" + std::string(to_string(item.source)) + "): " + clean(item.message);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
}

}  // namespace regionprof::report_detail
