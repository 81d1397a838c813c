// The Markdown report: GitHub-flavoured tables padded to their column widths so they read in a
// terminal as well as rendered. Times are microseconds with 3 decimals formatted from integer ns;
// percentages have 2 decimals. No line ends in a space.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/html_page.hpp"
#include "regionprof/report/markdown_report.hpp"
#include "regionprof/report/markdown_table.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/report/report_common.hpp"
#include "regionprof/report/tree_report.hpp"

namespace regionprof {
namespace {

using report_detail::html::fixed;
using report_detail::code;
using report_detail::clean;
using report_detail::region_summary;
using report_detail::table;

/// Key-average names (C++ kernel signatures run to kilobytes) are cut to this many characters.
constexpr std::size_t max_name_chars = 80;
/// Region ids are cut too (the JSON report keeps them whole): one 30 MB name would pad every row.
constexpr std::size_t max_region_id_chars = 256;

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

/// part / total as a percentage with 2 decimals, from doubles; "-" when the total is 0.
std::string percent_of(double part, double total);

/// `- Machine: ...` (report `environment`): what was read, in the schema's order.
void machine_line(std::string& out, const machine_environment& env) {
  std::string parts;
  const auto add = [&parts](const std::string& part) { parts += (parts.empty() ? "" : ", ") + part; };
  if (!env.cpu_model.empty()) add(clean(env.cpu_model));
  if (env.cpu_count != 0) add(std::to_string(env.cpu_count) + " CPUs");
  if (env.load_average) add("load " + fixed((*env.load_average)[0], 2) + " at start");
  if (env.runs_load && env.cpu_count != 0) {
    add(std::to_string(env.runs_load->above_cpu_count) + " of " + std::to_string(env.runs_load->samples) +
        " load samples through the runs above the CPU count");
  }
  if (env.memory_available_bytes && env.memory_total_bytes) {
    add(fixed(static_cast<double>(*env.memory_available_bytes) / (1u << 30), 1) + " of " +
        fixed(static_cast<double>(*env.memory_total_bytes) / (1u << 30), 1) + " GiB available");
  }
  if (!env.cpu_governor.empty()) add("governor " + clean(env.cpu_governor));
  for (const gpu_environment& gpu : env.gpus) {
    std::string text = "GPU " + std::to_string(gpu.index) + " " + clean(gpu.name);
    if (gpu.before) text += " " + std::to_string(gpu.before->sm_clock_mhz) + " MHz before";
    if (gpu.after) text += ", " + std::to_string(gpu.after->sm_clock_mhz) + " MHz after";
    add(text);
  }
  out += "- Machine: " + (parts.empty() ? std::string("nothing could be read") : parts) + "\n";
}

void overview(std::string& out, const analysis_result& result, const trace& source, const analysis_options& options,
              const report_context& context) {
  out += "# regionprof report\n\n";
  out += "- Tool: regionprof " + std::string(report_detail::tool_version()) + ", report created " +
         clean(report_detail::created_at(context)) + "\n";
  out += "- Target: " + code(source.target.type) + "\n";
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
  if (context.stopping) {  // docs/design.md, rule 16
    const stopping_summary& stopping = *context.stopping;
    out += "- Stopping: " + std::string(to_string(stopping.reason)) + " after " + std::to_string(stopping.runs) +
           " runs, noise (" + clean(stopping.criterion) + ") " + (stopping.noise ? percent_of(*stopping.noise, 1.0) : "undefined") +
           ", target " + percent_of(stopping.target, 1.0) + "\n";
  }
  if (context.environment) machine_line(out, *context.environment);
  out += "- Warnings: " + std::to_string(result.warnings.size()) + "\n\n";
}

/// part / total as a percentage with 2 decimals, from doubles; "-" when the total is 0.
std::string percent_of(double part, double total) {
  if (total == 0.0) return "-";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, 100.0 * part / total, std::chars_format::fixed, 2);
  return std::string(buffer, result.ptr) + " %";
}

std::string cv_percent(const std::optional<double>& cv) { return cv ? percent_of(*cv, 1.0) : "-"; }

/// `## Summary`: per region (and the residual and run total) the median over runs, the share of the
/// run (the region's time summed over runs over the run totals summed over runs) and the spread (MAD,
/// cv), and the median off-thread CPU time when some region has one. A run without the region counts as 0.
void summary_section(std::string& out, const analysis_result& result, const std::vector<region_summary>& summaries) {
  out += "## Summary\n\n";
  const std::optional<report_detail::run_summary> totals = report_detail::summarize_runs(result);
  if (!totals) {
    out += "No runs.\n\n";
    return;
  }
  const bool device = result.has_device_data && totals->device.has_value();
  const bool off_thread = std::any_of(summaries.begin(), summaries.end(),
                                      [](const region_summary& s) { return s.off_thread.has_value(); });
  std::vector<table::column> columns{{"region", false},       {"runs", true},         {"median CPU (us)", true},
                                     {"CPU share", true},     {"CPU MAD (us)", true}, {"CPU cv", true}};
  if (off_thread) columns.push_back({"median off-thread CPU (us)", true});
  if (device) {
    columns.push_back({"median device (us)", true});
    columns.push_back({"device share", true});
    columns.push_back({"device MAD (us)", true});
  }
  const auto rates = report_detail::throughput_columns(summaries);  // rule 18
  for (std::size_t f = 0; f < rates.size(); ++f) {
    if (rates[f]) columns.push_back({"median " + std::string(report_detail::throughput::headings[f]), true});
  }
  table rows(std::move(columns));
  const double runs = static_cast<double>(result.runs.size());
  const double cpu_total = totals->cpu.mean * runs;
  const double device_total = device ? totals->device->mean * runs : 0.0;
  const auto add = [&](std::string name, std::string present, const report_detail::run_stats& cpu,
                       const std::optional<report_detail::run_stats>& dev,
                       const std::optional<report_detail::run_stats>& off, const report_detail::throughput& rate) {
    std::vector<std::string> row{std::move(name), std::move(present), mean_us(cpu.median),
                                 percent_of(cpu.mean * runs, cpu_total), mean_us(cpu.mad), cv_percent(cpu.cv)};
    if (off_thread) row.push_back(off ? mean_us(off->median) : "-");
    if (device) {
      row.push_back(dev ? mean_us(dev->median) : "-");
      row.push_back(dev ? percent_of(dev->mean * runs, device_total) : "-");
      row.push_back(dev ? mean_us(dev->mad) : "-");
    }
    for (std::size_t f = 0; f < rates.size(); ++f) {
      if (rates[f]) row.push_back(rate.figures[f] ? report_detail::throughput_text(f, *rate.figures[f]) : "-");
    }
    rows.add(std::move(row));
  };
  for (const region_summary& summary : summaries) {
    add(code(result.regions[summary.region].id, max_region_id_chars), std::to_string(summary.runs_present), summary.cpu, summary.device,
        summary.off_thread, summary.median_throughput);
  }
  const std::string all = std::to_string(result.runs.size());
  add("(residual)", all, totals->residual_cpu, device ? totals->residual_device : std::nullopt, std::nullopt, {});
  add("(run total)", all, totals->cpu, totals->device, std::nullopt, {});
  rows.render(out);
  out += "Medians, MAD (median absolute deviation) and cv (stddev / mean) are over all " + all +
         " runs, a run without the region counting as 0; a share is the region's time summed over runs over "
         "the run totals summed over runs.";
  if (std::find(rates.begin(), rates.end(), true) != rates.end()) {
    out += " Throughput (declared work over the region's own time in that domain) is the median over the runs "
           "that have it.";
  }
  if (rates[report_detail::throughput::peak_fraction]) {
    out += " % of peak BW: device bytes/s over the GPUs' peak memory bandwidth (environment.gpus).";
  }
  out += "\n\n";
}

/// `## Memory` (docs/design.md, rule 21), only when some owner has memory figures: per region, then the
/// residual and the run total, one row per device with the medians of region_summary and run_summary.
void memory_section(std::string& out, const analysis_result& result, const std::vector<region_summary>& summaries) {
  if (!report_detail::has_memory(result)) return;
  const std::optional<report_detail::run_summary> totals = report_detail::summarize_runs(result);
  if (!totals) return;
  out += "## Memory\n\n";
  table rows({{"region", false},
              {"device", false},
              {"median allocated", true},
              {"median freed", true},
              {"median allocations", true},
              {"median frees", true},
              {"median peak", true}});
  for (const report_detail::memory_view_row& row : report_detail::memory_view_rows(summaries, *totals)) {
    const report_detail::device_memory_median& m = *row.medians;
    const bool region = row.owner == report_detail::memory_owner::region;
    rows.add({region ? code(result.regions[row.region].id, max_region_id_chars)
                     : std::string(report_detail::memory_owner_label(row.owner)),
              memory_device_key(m.device), report_detail::bytes_text(m.allocated_bytes),
              report_detail::bytes_text(m.freed_bytes), report_detail::count_text(m.allocations),
              report_detail::count_text(m.frees),
              m.peak_allocated_bytes ? report_detail::bytes_text(*m.peak_allocated_bytes) : "-"});
  }
  rows.render(out);
  out += report_detail::memory_medians_note(result.runs.size()) + " (`-`: none). 1 KiB = 1024 bytes.\n\n";
  const std::vector<report_detail::timeline_peak> peaks = report_detail::timeline_peaks(result);
  if (peaks.empty()) return;
  out += "Peaks of the charted runs (the HTML report draws them over time):\n\n";
  for (const report_detail::timeline_peak& peak : peaks) {
    out += "- " +
           report_detail::timeline_peak_text(result, peak,
                                             [](std::string_view id) { return code(id, max_region_id_chars); }) +
           "\n";
  }
  out += "\n";
}

void runs_section(std::string& out, const analysis_result& result, const std::function<void()>& spill) {
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
  // A row per run, made twice and never held (render_made): one row of memory for any number of runs.
  runs.render_made(out, result.runs.size(), [&](std::size_t i, std::vector<std::string>& row) {
    const run_result& run = result.runs[i];
    row.push_back(std::to_string(run.run_index));
    row.push_back(us(run.wall_time_ns));
    row.push_back(us(run.cpu_time_ns));
    if (result.has_device_data) {
      row.push_back(us(run.device_time_ns));
      row.push_back(us(run.device_busy_ns));
      row.push_back(us(run.device_span_ns));
    }
  }, spill);
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
    std::vector<std::string> row{code(region.id, max_region_id_chars), clean(region.kind), clean(region.module_type)};
    if (!summaries.empty()) {
      const region_summary& summary = summaries[r];
      row.push_back(std::to_string(summary.runs_present));
      row.push_back(count(summary.calls_total));
      row.push_back(mean_us(summary.cpu.mean));
      if (result.has_device_data) row.push_back(summary.device ? mean_us(summary.device->mean) : "-");
    }
    regions.add(std::move(row));
  }
  regions.render(out);
  if (!summaries.empty()) out += "Means are over all runs; a run without the region counts as 0.\n\n";
}

/// Runs that get a `### Run i` table: markdown.runs_detail when set, else every run when there are at
/// most default_detailed_runs, else none.
std::size_t detailed_runs(const analysis_result& result, const markdown_options& markdown) {
  const std::size_t runs = result.runs.size();
  if (markdown.runs_detail) return std::min(*markdown.runs_detail, runs);
  return runs <= markdown_options::default_detailed_runs ? runs : 0;
}

void attribution_section(std::string& out, const analysis_result& result, const markdown_options& markdown,
                         std::optional<double> peak_bytes_per_second) {
  out += "## Attribution per run\n\n";
  if (result.runs.empty()) {
    out += "No runs.\n\n";
    return;
  }
  const std::size_t detailed = detailed_runs(result, markdown);
  if (detailed < result.runs.size()) {
    out += "Per-run tables for " + std::to_string(detailed) + " of " + std::to_string(result.runs.size()) +
           " runs (`--runs-detail N` shows the first N; the summary and the runs table cover all).\n\n";
  }
  for (const run_result& run : std::span(result.runs).first(detailed)) {
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
    std::array<bool, report_detail::throughput::size> rates{};  // rule 18: the figures this run has
    for (const region_aggregate& aggregate : run.regions) {
      const report_detail::throughput rate = report_detail::throughput_of(result, aggregate, peak_bytes_per_second);
      for (std::size_t f = 0; f < rates.size(); ++f) rates[f] = rates[f] || rate.figures[f];
    }
    for (std::size_t f = 0; f < rates.size(); ++f) {
      if (rates[f]) columns.push_back({std::string(report_detail::throughput::headings[f]), true});
    }
    table attribution(std::move(columns));
    const auto add = [&](std::string name, std::string calls, std::int64_t cpu_ns, std::string off_thread_us,
                         std::optional<std::int64_t> device_ns, const report_detail::throughput& rate) {
      std::vector<std::string> row{std::move(name), std::move(calls), us(cpu_ns), percent(cpu_ns, run.cpu_time_ns)};
      if (off_thread) row.push_back(std::move(off_thread_us));
      if (device) {
        row.push_back(us(device_ns));
        row.push_back(percent(device_ns, run.device_time_ns));
      }
      for (std::size_t f = 0; f < rates.size(); ++f) {
        if (rates[f]) row.push_back(rate.figures[f] ? report_detail::throughput_text(f, *rate.figures[f]) : "-");
      }
      attribution.add(std::move(row));
    };
    for (const region_aggregate& aggregate : run.regions) {
      add(code(result.regions[aggregate.region].id, max_region_id_chars), count(aggregate.calls), aggregate.cpu_time_ns,
          us(aggregate.off_thread_cpu_time_ns), aggregate.device_time_ns,
          report_detail::throughput_of(result, aggregate, peak_bytes_per_second));
    }
    add("(residual)", "-", run.residual_cpu_ns, "-", run.residual_device_ns, {});
    add("(run total)", "-", run.cpu_time_ns, "-", run.device_time_ns, {});
    attribution.render(out);
  }
}

/// A table of key-average rows (rule 10: a view, or a region's ops, rule 20); device columns when some
/// row has device figures, allocated bytes (rule 21) when some row has them.
void key_average_rows_table(std::string& out, std::span<const key_average_row> key_rows) {
  const bool device = std::any_of(key_rows.begin(), key_rows.end(), [](const key_average_row& row) {
    return row.self_device_time_ns.has_value() || row.device_time_total_ns.has_value();
  });
  const bool memory = std::any_of(key_rows.begin(), key_rows.end(), [](const key_average_row& row) {
    return row.allocated_bytes.value_or(0) != 0;
  });
  std::vector<table::column> columns{{"name", false},          {"type", false},
                                     {"count", true},          {"self CPU (us)", true},
                                     {"CPU total (us)", true}};
  if (device) {
    columns.push_back({"self device (us)", true});
    columns.push_back({"device total (us)", true});
  }
  if (memory) {
    columns.push_back({"self allocated", true});
    columns.push_back({"allocated", true});
  }
  table rows(std::move(columns));
  for (const key_average_row& row : key_rows) {
    std::vector<std::string> cells{code(row.key, max_name_chars), std::string(to_string(row.type)), count(row.count),
                                   us(row.self_cpu_time_ns), us(row.cpu_time_total_ns)};
    if (device) {
      cells.push_back(us(row.self_device_time_ns));
      cells.push_back(us(row.device_time_total_ns));
    }
    if (memory) {
      const auto bytes = [](std::optional<std::uint64_t> value) {
        return value ? report_detail::bytes_text(static_cast<double>(*value)) : std::string("-");
      };
      cells.push_back(bytes(row.self_allocated_bytes));
      cells.push_back(bytes(row.allocated_bytes));
    }
    rows.add(std::move(cells));
  }
  rows.render(out);
}

void key_average_view_section(std::string& out, const key_average_view& view, std::string_view title) {
  out += "### " + std::string(title) + " (sorted by " + code(view.sort_by) + ", row limit " +
         std::to_string(view.row_limit) + ")\n\n";
  if (view.rows.empty()) {
    out += "No events.\n\n";
    return;
  }
  key_average_rows_table(out, view.rows);
}

/// `## Ops per region` (rule 20): the first rows of each region's ops, then the residual's.
void region_ops_section(std::string& out, const analysis_result& result) {
  if (!result.has_region_ops || result.region_ops.empty()) return;
  constexpr std::size_t shown = report_detail::region_op_rows_shown;
  out += "## Ops per region\n\n";
  out += "The first " + std::to_string(shown) +
         " rows of each region's ops over all runs (the JSON report's `region_ops` holds up to the row limit, " +
         std::to_string(result.cpu_time_total.row_limit) +
         "), by total time in the row's own domain: CPU total for `CPU` rows, device total for `CUDA` rows.\n\n";
  for (const region_op_rows& entry : result.region_ops) {
    const std::string_view owner = report_detail::region_ops_owner(result, entry);
    out += "### " + (entry.region == region_op_rows::residual ? std::string(owner) : code(owner, max_region_id_chars)) +
           "\n\n";
    if (entry.rows.empty()) {
      out += "No ops.\n\n";
      continue;
    }
    const std::size_t first = std::min(entry.rows.size(), shown);
    key_average_rows_table(out, std::span<const key_average_row>(entry.rows.data(), first));
    if (entry.rows.size() > first) {
      out += std::to_string(entry.rows.size() - first) + " more in the JSON report.\n\n";
    }
  }
}

void warnings_section(std::string& out, const analysis_result& result) {
  report_detail::append_warnings(out, result.warnings);
}

}  // namespace

namespace report_detail {

void write_markdown_report(std::string& out, std::ostream* stream, const analysis_result& result, const trace& source,
                           const analysis_options& options, const report_context& context,
                           const markdown_options& markdown) {
  const std::optional<double> peak = peak_memory_bandwidth(context);  // rule 18's peak fraction
  const std::vector<region_summary> summaries = summarize_regions(result, peak);  // checks indices
  const auto flush = [&] {
    if (stream == nullptr) return;
    stream->write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  };
  overview(out, result, source, options, context);
  summary_section(out, result, summaries);
  memory_section(out, result, summaries);  // rule 21
  flush();
  runs_section(out, result, stream != nullptr ? std::function<void()>(flush) : std::function<void()>());
  flush();
  regions_section(out, result, summaries);
  attribution_section(out, result, markdown, peak);
  report_detail::append_tree_markdown(out, result);  // rule 14
  flush();
  region_ops_section(out, result);  // rule 20
  flush();
  out += "## Key averages\n\n";
  key_average_view_section(out, result.cpu_time_total, "By total CPU time");
  if (result.device_time_total) key_average_view_section(out, *result.device_time_total, "By total device time");
  warnings_section(out, result);
  flush();
}

}  // namespace report_detail

std::string to_markdown(const Profile& profile, const markdown_options& markdown) {
  std::string out;
  report_detail::write_markdown_report(out, nullptr, profile.result(), profile.source(), profile.options(),
                                       profile.context(), markdown);
  return out;
}

}  // namespace regionprof
