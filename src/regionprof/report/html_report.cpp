// The HTML views: a profile (stacked bar per run, each region's distribution across runs, the ops per
// region, key averages, warnings), one self-contained file (report/html_page.hpp); the diff's is
// compare/diff_html.cpp.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/json/microseconds.hpp"
#include "regionprof/report/html_page.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/report/report_common.hpp"
#include "regionprof/report/tree_report.hpp"
#include "regionprof/statistics/statistics.hpp"

namespace regionprof {
namespace {


namespace html = report_detail::html;

constexpr std::string_view residual_colour = "#c8c8c8";

using html::cell;
using html::header_row;

std::string legend(const analysis_result& result) {
  std::string out = "<p class=\"legend\">";
  for (std::size_t r = 0; r < result.regions.size(); ++r) {
    out += "<span><i class=\"swatch\" style=\"background:" + std::string(html::palette(r)) + "\"></i><code>" +
           html::escape(result.regions[r].id) + "</code></span>";
  }
  out += "<span><i class=\"swatch\" style=\"background:" + std::string(residual_colour) + "\"></i>(residual)</span></p>";
  return out;
}

/// One stacked bar per run: its regions' time in the domain, then the residual.
std::string run_bars(const analysis_result& result, bool device) {
  std::vector<html::stacked_bar> bars;
  for (const run_result& run : result.runs) {
    html::stacked_bar bar{"run " + std::to_string(run.run_index), {}};
    for (const region_aggregate& a : run.regions) {
      const double value = device ? ns_to_us(a.device_time_ns.value_or(0)) : ns_to_us(a.cpu_time_ns);
      bar.segments.push_back({result.regions[a.region].id, value, std::string(html::palette(a.region))});
    }
    const double residual = device ? ns_to_us(run.residual_device_ns.value_or(0)) : ns_to_us(run.residual_cpu_ns);
    bar.segments.push_back({"(residual)", residual, std::string(residual_colour)});
    bars.push_back(std::move(bar));
  }
  return html::stacked_bars_svg(bars, device ? "us device" : "us CPU");
}

/// Each region's per-run time (0 where the run lacks it) in one domain, one series.
std::string distributions(const analysis_result& result, bool device) {
  std::vector<html::strip_row> rows;
  for (std::size_t r = 0; r < result.regions.size(); ++r) {
    std::vector<double> values;
    for (const run_result& run : result.runs) {
      double value = 0.0;
      for (const region_aggregate& a : run.regions) {
        if (a.region == r) value = device ? ns_to_us(a.device_time_ns.value_or(0)) : ns_to_us(a.cpu_time_ns);
      }
      values.push_back(value);
    }
    rows.push_back({result.regions[r].id, {std::move(values)}});
  }
  return html::strip_chart_svg(rows, {device ? "device time per run" : "CPU time per run"},
                               {device ? "#e15759" : "#4e79a7"});
}

std::string summary_table(const analysis_result& result, const std::vector<report_detail::region_summary>& summaries) {
  std::vector<std::string> titles{"region", "runs", "median CPU (us)", "CPU MAD (us)", "CPU cv"};
  if (result.has_device_data) {
    titles.push_back("median device (us)");
    titles.push_back("device MAD (us)");
  }
  const auto rates = report_detail::throughput_columns(summaries);  // rule 18
  for (std::size_t f = 0; f < rates.size(); ++f) {
    if (rates[f]) titles.push_back("median " + std::string(report_detail::throughput::headings[f]));
  }
  std::string out = "<table class=\"sortable\">" + header_row(titles) + "<tbody>";
  for (const report_detail::region_summary& s : summaries) {
    out += "<tr>" + cell("<code>" + html::escape(result.regions[s.region].id) + "</code>") +
           cell(std::to_string(s.runs_present), true) + cell(html::fixed(s.cpu.median / 1000.0, 3), true) +
           cell(html::fixed(s.cpu.mad / 1000.0, 3), true) +
           cell(s.cpu.cv ? html::fixed(100.0 * *s.cpu.cv, 2) + " %" : "-", true);
    if (result.has_device_data) {
      out += cell(s.device ? html::fixed(s.device->median / 1000.0, 3) : "-", true) +
             cell(s.device ? html::fixed(s.device->mad / 1000.0, 3) : "-", true);
    }
    for (std::size_t f = 0; f < rates.size(); ++f) {
      if (!rates[f]) continue;
      const std::optional<double>& rate = s.median_throughput.figures[f];
      if (f == report_detail::throughput::peak_fraction) {
        out += cell(rate ? report_detail::throughput_text(f, *rate) : std::string("-"), true);
        continue;
      }
      // Scientific notation (1.250e+09): readable, and the sortable table's parseFloat orders it.
      char buffer[64];
      char* end = rate ? std::to_chars(buffer, buffer + sizeof buffer, *rate, std::chars_format::scientific, 3).ptr
                       : buffer;
      out += cell(rate ? std::string(buffer, static_cast<std::size_t>(end - buffer)) : std::string("-"), true);
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

/// A number of bytes as a sortable cell: the bytes (a median may end in .5), in binary units in its title.
std::string bytes_cell(double bytes) {
  return "<td class=\"n\" title=\"" + report_detail::bytes_text(bytes) + "\">" + report_detail::count_text(bytes) +
         "</td>";
}

/// Memory per region (docs/design.md, rule 21), empty unless some owner has figures: per region, then the
/// residual and the run total, one row per device with the medians of region_summary and run_summary.
std::string memory_table(const analysis_result& result, const std::vector<report_detail::region_summary>& summaries) {
  if (!report_detail::has_memory(result)) return {};
  const std::optional<report_detail::run_summary> totals = report_detail::summarize_runs(result);
  if (!totals) return {};
  std::string out = "<h2>Memory</h2><p>" + html::escape(report_detail::memory_medians_note(result.runs.size())) +
                    ". Bytes; hover a cell for KiB, MiB, GiB.</p><table class=\"sortable\">" +
                    header_row({"region", "device", "median allocated (B)", "median freed (B)", "median allocations",
                                "median frees", "median peak (B)"}) +
                    "<tbody>";
  for (const report_detail::memory_view_row& row : report_detail::memory_view_rows(summaries, *totals)) {
    const report_detail::device_memory_median& m = *row.medians;
    out += "<tr>" +
           cell(row.owner == report_detail::memory_owner::region
                    ? "<code>" + html::escape(result.regions[row.region].id) + "</code>"
                    : std::string(report_detail::memory_owner_label(row.owner))) +
           cell(memory_device_key(m.device)) + bytes_cell(m.allocated_bytes) + bytes_cell(m.freed_bytes) +
           cell(report_detail::count_text(m.allocations), true) + cell(report_detail::count_text(m.frees), true) +
           (m.peak_allocated_bytes ? bytes_cell(*m.peak_allocated_bytes) : cell("-", true)) + "</tr>";
  }
  return out + "</tbody></table>";
}

/// Memory over time (rule 21): per charted run (analysis_result::memory_timelines) and device, the total
/// allocated as a step chart with the run's topmost region instances beneath it; empty without timelines.
std::string memory_timeline_charts(const analysis_result& result) {
  if (result.memory_timelines.empty()) return {};
  std::string out = "<h2>Memory over time</h2><p>The total allocated on each device as its events reported it, "
                    "in the first run with such events and in the run with the highest peak; beneath it, the "
                    "topmost instances of the regions. Time since the run's marker started.</p>" +
                    legend(result);
  for (const memory_timeline& timeline : result.memory_timelines) {
    const run_result& run = result.runs.at(timeline.run);
    std::vector<html::chart_span> spans;
    spans.reserve(timeline.spans.size());
    for (const region_span& span : timeline.spans) {
      spans.push_back({result.regions.at(span.region).id, ns_to_us(span.start_offset_ns), ns_to_us(span.end_offset_ns),
                       std::string(html::palette(span.region))});
    }
    for (const memory_series& series : timeline.series) {
      if (series.samples.empty()) continue;
      std::vector<html::step_sample> samples;
      for (const memory_sample& sample : series.samples) {
        const double bytes = static_cast<double>(sample.total_bytes);
        samples.push_back({ns_to_us(sample.offset_ns), bytes, report_detail::bytes_text(bytes)});
      }
      const report_detail::timeline_peak peak = report_detail::peak_of(timeline, series);
      out += "<h3>" +
             report_detail::timeline_peak_text(result, peak, [](std::string_view id) {
               return "<code>" + html::escape(id) + "</code>";
             }) +
             "</h3>";
      out += html::step_chart_svg(samples, ns_to_us(run.cpu_time_ns), spans,
                                  report_detail::bytes_text(static_cast<double>(peak.total_bytes)));
    }
    if (timeline.spans_left_out > 0) {
      out += "<p>" + std::to_string(timeline.spans_left_out) + " later region instances of run " +
             std::to_string(run.run_index) + " are not drawn.</p>";
    }
  }
  return out;
}

/// The region tree (tree_summary: medians over all runs) as an icicle chart scaled to the run total's
/// median CPU time; empty without a tree. A node's colour is its region's (tree_regions index).
std::string tree_icicle(const analysis_result& result) {
  const std::vector<report_detail::tree_summary_node> tree = report_detail::summarize_tree(result);
  std::vector<double> run_cpu_us;
  for (const run_result& run : result.runs) run_cpu_us.push_back(ns_to_us(run.cpu_time_ns));
  const double total_us = stats::median(run_cpu_us);
  // Colours: a region of `regions` its index (as in the other charts); a region seen only nested the
  // next colours in the order the tree shows them, so that they follow from what the JSON report holds.
  std::map<std::uint32_t, std::size_t> nested_colour;
  std::vector<html::icicle_node> nodes;
  for (const report_detail::tree_summary_node& node : tree) {
    const std::uint32_t region = node.path.back();
    std::size_t colour = region;
    if (region >= result.regions.size()) {
      colour = nested_colour.try_emplace(region, result.regions.size() + nested_colour.size()).first->second;
    }
    nodes.push_back({result.tree_regions.at(region).id, node.path.size() - 1, node.cpu_ns / 1000.0,
                     node.self_cpu_ns / 1000.0, std::string(html::palette(colour))});
  }
  const std::string svg = html::icicle_svg(nodes, total_us);
  if (svg.empty()) return {};
  return "<h2>Region tree (CPU)</h2><p>Each region under the region it nests in; width: the median over " +
         std::to_string(result.runs.size()) + " run(s) of its inclusive CPU time, the full width the run total's median (" +
         html::fixed(total_us, 3) + " us); a parent's self time is the part of it no child covers.</p>" + svg;
}

/// A sortable table of key-average rows (rule 10: a view, or a region's ops, rule 20); device columns
/// when some row has device figures.
std::string key_average_rows(const std::vector<key_average_row>& rows) {
  const bool device = std::any_of(rows.begin(), rows.end(),
                                  [](const key_average_row& row) { return row.device_time_total_ns.has_value(); });
  std::vector<std::string> titles{"name", "type", "count", "self CPU (us)", "CPU total (us)"};
  if (device) {
    titles.push_back("self device (us)");
    titles.push_back("device total (us)");
  }
  std::string out = "<table class=\"sortable\">" + header_row(titles) + "<tbody>";
  for (const key_average_row& row : rows) {
    out += "<tr>" + cell("<code>" + html::escape(row.key.size() > 120 ? row.key.substr(0, 117) + "..." : row.key) +
                         "</code>") +
           cell(std::string(to_string(row.type))) + cell(std::to_string(row.count), true) +
           cell(html::fixed(ns_to_us(row.self_cpu_time_ns), 3), true) + cell(html::fixed(ns_to_us(row.cpu_time_total_ns), 3), true);
    if (device) {
      out += cell(html::fixed(ns_to_us(row.self_device_time_ns.value_or(0)), 3), true) +
             cell(html::fixed(ns_to_us(row.device_time_total_ns.value_or(0)), 3), true);
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string key_average_table(const key_average_view& view) {
  return "<h3>Sorted by <code>" + html::escape(view.sort_by) + "</code> (row limit " + std::to_string(view.row_limit) +
         ")</h3>" + key_average_rows(view.rows);
}

/// Ops per region (rule 20): each region, then the residual, a `<details>` that expands to its rows.
std::string region_ops_section(const analysis_result& result) {
  if (!result.has_region_ops || result.region_ops.empty()) return {};
  std::string out = "<h2>Ops per region</h2><p>Expand a region to see the CPU ops and device kernels, copies and "
                    "memsets it owned over all runs, by total time in the row's own domain (CPU total for CPU "
                    "rows, device total for CUDA rows).</p>";
  for (const region_op_rows& entry : result.region_ops) {
    const bool residual = entry.region == region_op_rows::residual;
    const std::string_view colour = residual ? residual_colour : html::palette(entry.region);
    const std::string_view owner = report_detail::region_ops_owner(result, entry);
    out += "<details class=\"region-ops\"><summary><i class=\"swatch\" style=\"background:" + std::string(colour) +
           "\"></i>" + (residual ? html::escape(owner) : "<code>" + html::escape(owner) + "</code>") + " (" +
           std::to_string(entry.rows.size()) + (entry.rows.size() == 1 ? " op" : " ops") + ")</summary>";
    out += entry.rows.empty() ? std::string("<p>No ops.</p>") : key_average_rows(entry.rows);
    out += "</details>";
  }
  return out;
}

}  // namespace

std::string to_html_fragment(const Profile& profile, std::string_view id) {
  const analysis_result& result = profile.result();
  const trace& source = profile.source();
  const analysis_options& options = profile.options();
  const report_context& context = profile.context();
  report_detail::check_region_indices(result);
  std::string body = "<h1>regionprof report: <code>" + html::escape(source.target.type) + "</code></h1>";
  body += "<p>regionprof " + html::escape(report_detail::tool_version()) + ", created " +
          html::escape(report_detail::created_at(context)) + "; " + std::to_string(result.runs.size()) +
          " runs; run marker <code>" + html::escape(options.run_marker.pattern) + "</code>; " +
          (result.has_device_data ? "CPU and device" : "CPU only (no device data)") + "; " +
          std::to_string(result.warnings.size()) + " warnings.</p>";
  const std::vector<report_detail::region_summary> summaries =
      report_detail::summarize_regions(result, report_detail::peak_memory_bandwidth(context));
  body += "<h2>Summary</h2>" + summary_table(result, summaries);
  body += memory_table(result, summaries);  // rule 21
  body += memory_timeline_charts(result);
  if (!result.runs.empty()) {
    body += "<h2>CPU time per run</h2>" + legend(result) + run_bars(result, false);
    if (result.has_device_data) body += "<h2>Device time per run</h2>" + legend(result) + run_bars(result, true);
    if (!result.regions.empty()) {
      body += "<h2>Regions across runs (CPU)</h2>" + distributions(result, false);
      if (result.has_device_data) body += "<h2>Regions across runs (device)</h2>" + distributions(result, true);
    }
    body += tree_icicle(result);
  }
  body += region_ops_section(result);
  body += "<h2>Key averages</h2>" + key_average_table(result.cpu_time_total);
  if (result.device_time_total) body += key_average_table(*result.device_time_total);
  body += "<h2>Warnings</h2>";
  if (result.warnings.empty()) {
    body += "<p>None.</p>";
  } else {
    body += "<ul>";
    for (const warning& w : result.warnings) {
      body += "<li><code>" + html::escape(to_string(w.code)) + "</code> (" + html::escape(to_string(w.source)) +
              "): " + html::escape(w.message) + "</li>";
    }
    body += "</ul>";
  }
  return html::fragment(id, body);
}

std::string to_html(const Profile& profile) {
  return html::page("regionprof report: " + profile.source().target.type, to_html_fragment(profile, "regionprof-report"));
}

}  // namespace regionprof
