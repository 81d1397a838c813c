// The terminal view (`regionprof report --format table`): aligned columns and a bar per region showing
// its share of the run; ANSI colour only when the caller asks for it.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/report/html_page.hpp"
#include "regionprof/report/markdown_table.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/report/report_common.hpp"

namespace regionprof {
namespace {

using report_detail::display_width;
using report_detail::html::fixed;

constexpr std::string_view colours[] = {"\x1b[34m", "\x1b[33m", "\x1b[32m", "\x1b[31m", "\x1b[36m", "\x1b[35m"};
constexpr std::string_view grey = "\x1b[90m";
constexpr std::string_view bold = "\x1b[1m";
constexpr std::string_view reset = "\x1b[0m";

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::size_t shown = display_width(text);
  const std::string fill(shown < width ? width - shown : 0, ' ');
  return right ? fill + text : text + fill;
}

/// A bar of `share` (0..1) of `chars` characters: full blocks (U+2588) and one partial eighth block.
std::string bar(double share, std::size_t chars) {
  static constexpr std::string_view eighths[] = {"", "\u258F", "\u258E", "\u258D", "\u258C", "\u258B", "\u258A", "\u2589"};
  const double clamped = std::clamp(share, 0.0, 1.0);
  const auto units = static_cast<std::size_t>(clamped * static_cast<double>(chars) * 8.0 + 0.5);
  std::string out;
  for (std::size_t i = 0; i < units / 8; ++i) out += "\u2588";
  out += eighths[units % 8];
  return out;
}

/// Each region's first ops (docs/design.md, rule 20): type, total time in the row's own domain, count, name.
template <typename Paint>
void append_region_ops(std::string& out, const analysis_result& result, const Paint& paint, std::size_t width) {
  if (!result.has_region_ops || result.region_ops.empty()) return;
  constexpr std::size_t number_width = 14;
  constexpr std::size_t count_width = 8;
  constexpr std::size_t fixed_width = 2 + 4 + 2 + number_width + 2 + count_width + 2;
  const std::size_t name_width = width > fixed_width + 20 ? width - fixed_width : 20;
  out += "\n" + paint(bold, "ops per region: the first " + std::to_string(report_detail::region_op_rows_shown) +
                                 ", by total us in the row's own domain (CPU or device)") +
         "\n";
  for (const region_op_rows& entry : result.region_ops) {
    const bool residual = entry.region == region_op_rows::residual;
    out += paint(residual ? grey : colours[entry.region % std::size(colours)],
                 report_detail::clean(report_detail::region_ops_owner(result, entry), width)) +
           "\n";
    if (entry.rows.empty()) out += "  (no ops)\n";
    const std::size_t shown = std::min(entry.rows.size(), report_detail::region_op_rows_shown);
    for (std::size_t i = 0; i < shown; ++i) {
      const key_average_row& row = entry.rows[i];
      std::string line = "  " + pad(std::string(to_string(row.type)), 4, false) + "  " +
                         pad(fixed(static_cast<double>(own_domain_total_ns(row)) / 1000.0, 3), number_width, true) + "  " +
                         pad(std::to_string(row.count) + "x", count_width, true) + "  " +
                         report_detail::clean(row.key, name_width);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    if (entry.rows.size() > shown) out += "  ... " + std::to_string(entry.rows.size() - shown) + " more\n";
  }
}

/// Memory per region (docs/design.md, rule 21), only when some owner has figures: per region, then the
/// residual and the run total, one line per device with the medians of region_summary and run_summary.
template <typename Paint>
void append_memory(std::string& out, const analysis_result& result,
                   const std::vector<report_detail::region_summary>& summaries,
                   const report_detail::run_summary& totals, const Paint& paint) {
  if (!report_detail::has_memory(result)) return;
  struct memory_line {
    std::string name;
    std::string_view colour;
    const report_detail::device_memory_median* medians;
  };
  std::vector<memory_line> lines;
  for (const report_detail::memory_view_row& row : report_detail::memory_view_rows(summaries, totals)) {
    if (row.owner == report_detail::memory_owner::region) {
      lines.push_back({report_detail::clean(result.regions[row.region].id, 40),
                       colours[row.region % std::size(colours)], row.medians});
    } else {
      lines.push_back({std::string(report_detail::memory_owner_label(row.owner)),
                       row.owner == report_detail::memory_owner::residual ? grey : bold, row.medians});
    }
  }
  std::size_t name_width = std::string_view("region").size();
  for (const memory_line& l : lines) name_width = std::max(name_width, display_width(l.name));
  constexpr std::size_t device_width = 7;
  constexpr std::size_t number_width = 12;
  out += "\n" + paint(bold, "memory per region: medians over " + std::to_string(result.runs.size()) +
                                 " runs (no event: 0); peak: over the runs with one") +
         "\n";
  out += paint(bold, pad("region", name_width, false) + "  " + pad("device", device_width, false) + "  " +
                         pad("allocated", number_width, true) + "  " + pad("freed", number_width, true) + "  " +
                         pad("allocs", number_width, true) + "  " + pad("peak", number_width, true)) +
         "\n";
  for (const memory_line& l : lines) {
    const report_detail::device_memory_median& m = *l.medians;
    out += paint(l.colour, pad(l.name, name_width, false)) + "  " +
           pad(memory_device_key(m.device), device_width, false) + "  " +
           pad(report_detail::bytes_text(m.allocated_bytes), number_width, true) + "  " +
           pad(report_detail::bytes_text(m.freed_bytes), number_width, true) + "  " +
           pad(report_detail::count_text(m.allocations), number_width, true) + "  " +
           pad(m.peak_allocated_bytes ? report_detail::bytes_text(*m.peak_allocated_bytes) : "-", number_width, true) +
           "\n";
  }
  for (const report_detail::timeline_peak& peak : report_detail::timeline_peaks(result)) {
    out += report_detail::timeline_peak_text(result, peak, [](std::string_view id) {
      return report_detail::clean(id, 40);
    }) + "\n";
  }
}

}  // namespace

std::string to_terminal_table(const Profile& profile, bool colour, std::size_t width) {
  const analysis_result& result = profile.result();
  const trace& source = profile.source();
  const report_context& context = profile.context();
  const std::vector<report_detail::region_summary> summaries =
      report_detail::summarize_regions(result, report_detail::peak_memory_bandwidth(context));
  const std::optional<report_detail::run_summary> totals = report_detail::summarize_runs(result);
  std::string out;
  const auto paint = [&](std::string_view code, const std::string& text) {
    return colour ? std::string(code) + text + std::string(reset) : text;
  };
  out += paint(bold, "regionprof: " + report_detail::clean(source.target.type)) + ", " +
         std::to_string(result.runs.size()) + " runs" + (result.has_device_data ? ", CPU and device" : ", CPU only") +
         ", " + std::to_string(result.warnings.size()) + " warnings\n";
  if (!totals) return out + "No runs.\n";

  const bool device = result.has_device_data && totals->device.has_value();
  const double runs = static_cast<double>(result.runs.size());
  struct line {
    std::string name;
    double cpu_median_us;
    double cpu_share;
    std::optional<double> device_median_us;
    std::optional<double> device_share;
    std::string_view colour;
    report_detail::throughput rate;  ///< medians (rule 18)
  };
  std::vector<line> lines;
  const double cpu_sum = totals->cpu.mean * runs;
  const double device_sum = device ? totals->device->mean * runs : 0.0;
  const auto share = [](double part, double whole) { return whole == 0.0 ? 0.0 : part / whole; };
  for (const report_detail::region_summary& s : summaries) {
    line l{report_detail::clean(result.regions[s.region].id, 40), s.cpu.median / 1000.0,
           share(s.cpu.mean * runs, cpu_sum), std::nullopt, std::nullopt, colours[s.region % std::size(colours)],
           s.median_throughput};
    if (device && s.device) {
      l.device_median_us = s.device->median / 1000.0;
      l.device_share = share(s.device->mean * runs, device_sum);
    }
    lines.push_back(std::move(l));
  }
  const report_detail::run_stats& rc = totals->residual_cpu;
  line residual{"(residual)", rc.median / 1000.0, share(rc.mean * runs, cpu_sum), std::nullopt, std::nullopt, grey, {}};
  if (device && totals->residual_device) {
    residual.device_median_us = totals->residual_device->median / 1000.0;
    residual.device_share = share(totals->residual_device->mean * runs, device_sum);
  }
  lines.push_back(residual);

  std::size_t name_width = std::string_view("region").size();
  for (const line& l : lines) name_width = std::max(name_width, display_width(l.name));
  const std::size_t number_width = 14;
  const std::size_t share_width = 8;
  std::size_t fixed_width = name_width + 2 + number_width + 1 + share_width + 2;
  if (device) fixed_width += number_width + 1 + share_width + 2;
  const auto rates = report_detail::throughput_columns(summaries);  // rule 18: only figures some region has
  for (bool column : rates) fixed_width += column ? number_width + 2 : 0;
  const std::size_t bar_width = width > fixed_width + 10 ? width - fixed_width : 10;

  std::string heading = pad("region", name_width, false) + "  " + pad("median CPU us", number_width, true) + " " +
                        pad("CPU %", share_width, true);
  if (device) heading += "  " + pad("median dev us", number_width, true) + " " + pad("dev %", share_width, true);
  for (std::size_t f = 0; f < rates.size(); ++f) {
    if (rates[f]) heading += "  " + pad(std::string(report_detail::throughput::headings[f]), number_width, true);
  }
  heading += "  share of run (CPU)";
  out += paint(bold, heading) + "\n";
  for (const line& l : lines) {
    std::string row = pad(l.name, name_width, false) + "  " + pad(fixed(l.cpu_median_us, 3), number_width, true) + " " +
                      pad(fixed(100.0 * l.cpu_share, 2), share_width, true);
    if (device) {
      row += "  " + pad(l.device_median_us ? fixed(*l.device_median_us, 3) : "-", number_width, true) + " " +
             pad(l.device_share ? fixed(100.0 * *l.device_share, 2) : "-", share_width, true);
    }
    for (std::size_t f = 0; f < rates.size(); ++f) {
      if (!rates[f]) continue;
      const std::optional<double>& rate = l.rate.figures[f];
      row += "  " + pad(rate ? report_detail::throughput_text(f, *rate) : "-", number_width, true);
    }
    row += "  " + paint(l.colour, bar(l.cpu_share, bar_width));
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  }
  out += pad("(run total)", name_width, false) + "  " + pad(fixed(totals->cpu.median / 1000.0, 3), number_width, true) +
         " " + pad("100.00", share_width, true);
  if (device) {
    out += "  " + pad(fixed(totals->device->median / 1000.0, 3), number_width, true) + " " +
           pad("100.00", share_width, true);
  }
  out += "\nMedians over " + std::to_string(result.runs.size()) +
         " runs; % is the region's time summed over runs over the run totals summed over runs.";
  if (std::find(rates.begin(), rates.end(), true) != rates.end()) {
    out += " Rates: declared work over the region's own time, the median over the runs that have one.";
  }
  if (rates[report_detail::throughput::peak_fraction]) {
    out += " % of peak BW: device bytes/s over the GPUs' peak memory bandwidth.";
  }
  out += "\n";
  append_memory(out, result, summaries, *totals, paint);  // rule 21
  append_region_ops(out, result, paint, width);
  return out;
}

}  // namespace regionprof
