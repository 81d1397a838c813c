// The Markdown report: GitHub-flavoured tables padded to their column widths so they read in a
// terminal as well as rendered. Times are microseconds with 3 decimals formatted from integer ns;
// percentages have 2 decimals. No line ends in a space.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/report.hpp"
#include "report/json_text.hpp"
#include "report/report_common.hpp"
#include "report/tree_report.hpp"

namespace regionprof {
namespace {

using report_detail::region_summary;

/// Key-average names (C++ kernel signatures run to kilobytes) are cut to this many characters.
constexpr std::size_t max_name_chars = 80;

/// Characters as a terminal shows them: UTF-8 continuation bytes do not count.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Valid UTF-8 on one line: control characters become spaces, and text longer than `limit`
/// characters is cut to limit - 3 characters plus "...". (`|` is escaped by `table`, where it matters.)
std::string clean(std::string_view raw, std::size_t limit = 0) {
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
std::string code(std::string_view raw, std::size_t limit = 0) {
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

std::string us(std::int64_t ns) {
  std::string text;
  report_detail::append_us(text, ns);
  return text;
}

std::string us(const std::optional<std::int64_t>& ns) { return ns ? us(*ns) : "-"; }

std::string mean_us(double mean_ns) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, mean_ns / 1000.0, std::chars_format::fixed, 3);
  return std::string(buffer, result.ptr);
}

/// part / total as a percentage with 2 decimals, "-" when the total is 0 or absent.
std::string percent(std::optional<std::int64_t> part, std::optional<std::int64_t> total) {
  if (!part || !total || *total == 0) return "-";
  const double value = 100.0 * static_cast<double>(*part) / static_cast<double>(*total);
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 2);
  return std::string(buffer, result.ptr) + " %";
}

std::string count(std::uint64_t value) { return std::to_string(value); }

/// A table whose columns are padded to their widest cell; `right` columns are right-aligned. A `|`
/// in a cell is escaped (GFM reads `\|` as `|` in a table cell, code spans included).
class table {
 public:
  struct column {
    std::string title;
    bool right = false;
  };

  explicit table(std::vector<column> columns) : columns_(std::move(columns)) {}

  void add(std::vector<std::string> row) {
    for (std::string& cell : row) {
      for (std::size_t at = cell.find('|'); at != std::string::npos; at = cell.find('|', at + 2)) cell.insert(at, 1, '\\');
    }
    rows_.push_back(std::move(row));
  }

  void render(std::string& out) const {
    std::vector<std::size_t> widths(columns_.size(), 3);
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      widths[c] = std::max(widths[c], display_width(columns_[c].title));
      for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
    }
    std::vector<std::string> titles;
    for (const column& col : columns_) titles.push_back(col.title);
    line(out, titles, widths);
    out += '|';
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      out += ' ';
      out += std::string(widths[c] - (columns_[c].right ? 1 : 0), '-');
      if (columns_[c].right) out += ':';
      out += " |";
    }
    out += '\n';
    for (const auto& row : rows_) line(out, row, widths);
    out += '\n';
  }

 private:
  void line(std::string& out, const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) const {
    out += '|';
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string padding(widths[c] - display_width(cells[c]), ' ');
      out += ' ';
      if (columns_[c].right) out += padding;
      out += cells[c];
      if (!columns_[c].right) out += padding;
      out += " |";
    }
    out += '\n';
  }

  std::vector<column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

void overview(std::string& out, const analysis_result& result, const trace& source, const analysis_options& options,
              const report_context& context) {
  out += "# regionprof report\n\n";
  out += "- Tool: regionprof " + std::string(report_detail::tool_version()) + ", report created " +
         clean(report_detail::created_at(context)) + "\n";
  out += "- Target: " + code(source.target_type) + "\n";
  out += "- Runs: " + std::to_string(result.runs.size()) + " analysed (" +
         std::to_string(report_detail::measured_runs(result, context)) + " measured, " +
         std::to_string(context.warmup_runs) + " warm-up; inference function: " +
         (context.uses_inference_function ? "yes" : "no") + ")\n";
  out += std::string("- Activities: CPU") + (result.has_device_data ? ", CUDA" : "") +
         (result.has_device_data ? "\n" : " (no device data: device columns are left out)\n");
  const name_rule& marker = options.run_marker;
  out += "- Run marker: " + code(marker.pattern) + " (" + std::string(report_detail::to_string(marker.match)) +
         (marker.domain.empty() ? ", any domain" : ", domain " + code(marker.domain)) + ")\n";
  out += "- Region rules:";
  if (options.region_rules.empty()) out += " none";
  out += '\n';
  for (const name_rule& rule : options.region_rules) {
    out += "  - " + code(rule.pattern) + " (" + std::string(report_detail::to_string(rule.match)) +
           (rule.domain.empty() ? "" : ", domain " + code(rule.domain)) + ") -> kind " + code(rule.kind) + "\n";
  }
  out += std::string("- Cross-thread attribution: ") + (options.cross_thread ? "on" : "off") + "\n";
  out += "- Warnings: " + std::to_string(result.warnings.size()) + "\n\n";
}

void runs_section(std::string& out, const analysis_result& result) {
  out += "## Runs\n\n";
  if (result.runs.empty()) {
    out += "No runs.\n\n";
    return;
  }
  std::vector<table::column> columns{{"run", true}, {"wall (us)", true}, {"CPU (us)", true}};
  if (result.has_device_data) {
    columns.push_back({"device (us)", true});
    columns.push_back({"device busy (us)", true});
    columns.push_back({"device span (us)", true});
  }
  table runs(std::move(columns));
  for (const run_result& run : result.runs) {
    std::vector<std::string> row{std::to_string(run.run_index), us(run.wall_time_ns), us(run.cpu_time_ns)};
    if (result.has_device_data) {
      row.push_back(us(run.device_time_ns));
      row.push_back(us(run.device_busy_ns));
      row.push_back(us(run.device_span_ns));
    }
    runs.add(std::move(row));
  }
  runs.render(out);
}

void regions_section(std::string& out, const analysis_result& result, const std::vector<region_summary>& summaries) {
  out += "## Regions\n\n";
  if (result.regions.empty()) {
    out += "No region owned time in any run.\n\n";
    return;
  }
  std::vector<table::column> columns{{"region", false}, {"kind", false}, {"module type", false}};
  if (!summaries.empty()) {
    columns.push_back({"runs", true});
    columns.push_back({"calls", true});
    columns.push_back({"mean CPU (us)", true});
    if (result.has_device_data) columns.push_back({"mean device (us)", true});
  }
  table regions(std::move(columns));
  for (std::size_t r = 0; r < result.regions.size(); ++r) {
    const region_info& region = result.regions[r];
    std::vector<std::string> row{code(region.id), clean(region.kind), clean(region.module_type)};
    if (!summaries.empty()) {
      const region_summary& summary = summaries[r];
      row.push_back(std::to_string(summary.runs_present));
      row.push_back(count(summary.calls_total));
      row.push_back(mean_us(summary.cpu.mean_ns));
      if (result.has_device_data) row.push_back(summary.device ? mean_us(summary.device->mean_ns) : "-");
    }
    regions.add(std::move(row));
  }
  regions.render(out);
  if (!summaries.empty()) out += "Means are over all runs; a run without the region counts as 0.\n\n";
}

void attribution_section(std::string& out, const analysis_result& result) {
  out += "## Attribution per run\n\n";
  if (result.runs.empty()) {
    out += "No runs.\n\n";
    return;
  }
  for (const run_result& run : result.runs) {
    out += "### Run " + std::to_string(run.run_index) + "\n\n";
    const bool device = result.has_device_data;
    const bool off_thread = std::any_of(run.regions.begin(), run.regions.end(),
                                        [](const region_aggregate& a) { return a.off_thread_cpu_time_ns.has_value(); });
    std::vector<table::column> columns{{"region", false}, {"calls", true}, {"CPU (us)", true}, {"CPU %", true}};
    if (off_thread) columns.push_back({"off-thread CPU (us)", true});
    if (device) {
      columns.push_back({"device (us)", true});
      columns.push_back({"device %", true});
    }
    table attribution(std::move(columns));
    const auto add = [&](std::string name, std::string calls, std::int64_t cpu_ns, std::string off_thread_us,
                         std::optional<std::int64_t> device_ns) {
      std::vector<std::string> row{std::move(name), std::move(calls), us(cpu_ns), percent(cpu_ns, run.cpu_time_ns)};
      if (off_thread) row.push_back(std::move(off_thread_us));
      if (device) {
        row.push_back(us(device_ns));
        row.push_back(percent(device_ns, run.device_time_ns));
      }
      attribution.add(std::move(row));
    };
    for (const region_aggregate& aggregate : run.regions) {
      add(code(result.regions[aggregate.region].id), count(aggregate.calls), aggregate.cpu_time_ns,
          us(aggregate.off_thread_cpu_time_ns), aggregate.device_time_ns);
    }
    add("(residual)", "-", run.residual_cpu_ns, "-", run.residual_device_ns);
    add("(run total)", "-", run.cpu_time_ns, "-", run.device_time_ns);
    attribution.render(out);
  }
}

void key_average_view_section(std::string& out, const key_average_view& view, std::string_view title) {
  out += "### " + std::string(title) + " (sorted by " + code(view.sort_by) + ", row limit " +
         std::to_string(view.row_limit) + ")\n\n";
  if (view.rows.empty()) {
    out += "No events.\n\n";
    return;
  }
  const bool device = std::any_of(view.rows.begin(), view.rows.end(), [](const key_average_row& row) {
    return row.self_device_time_ns.has_value() || row.device_time_total_ns.has_value();
  });
  std::vector<table::column> columns{{"name", false},          {"type", false},
                                     {"count", true},          {"self CPU (us)", true},
                                     {"CPU total (us)", true}};
  if (device) {
    columns.push_back({"self device (us)", true});
    columns.push_back({"device total (us)", true});
  }
  table rows(std::move(columns));
  for (const key_average_row& row : view.rows) {
    std::vector<std::string> cells{code(row.key, max_name_chars), std::string(to_string(row.type)), count(row.count),
                                   us(row.self_cpu_time_ns), us(row.cpu_time_total_ns)};
    if (device) {
      cells.push_back(us(row.self_device_time_ns));
      cells.push_back(us(row.device_time_total_ns));
    }
    rows.add(std::move(cells));
  }
  rows.render(out);
}

void warnings_section(std::string& out, const analysis_result& result) {
  out += "## Warnings\n\n";
  if (result.warnings.empty()) {
    out += "None.\n";
    return;
  }
  for (const warning& item : result.warnings) {
    out += "- " + code(to_string(item.code)) + " (" + std::string(to_string(item.source)) + "): " + clean(item.message);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
}

}  // namespace

std::string to_markdown(const analysis_result& result, const trace& source, const analysis_options& options,
                        const report_context& context) {
  const std::vector<region_summary> summaries = report_detail::summarize_regions(result);  // checks indices
  std::string out;
  overview(out, result, source, options, context);
  runs_section(out, result);
  regions_section(out, result, summaries);
  attribution_section(out, result);
  report_detail::append_tree_markdown(out, result);  // rule 14
  out += "## Key averages\n\n";
  key_average_view_section(out, result.cpu_time_total, "By total CPU time");
  if (result.device_time_total) key_average_view_section(out, *result.device_time_total, "By total device time");
  warnings_section(out, result);
  return out;
}

}  // namespace regionprof
