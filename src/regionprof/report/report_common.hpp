// What the JSON and Markdown reports share: tool identity, timestamps, rule names, and the per-region
// and run summaries across runs (report keys `region_summary`, `run_summary`).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/statistics/statistics.hpp"

namespace regionprof::report_detail {

/// The project version (CMake PROJECT_VERSION), e.g. "0.1.0".
std::string_view tool_version() noexcept;

/// context.created_at when set, else the current UTC time as ISO-8601 with seconds: 2024-05-01T12:34:56Z.
std::string created_at(const report_context& context);

/// "exact", "prefix" or "regex".
std::string_view to_string(match_kind kind) noexcept;

/// context.measured_runs, or the number of runs found when it is 0.
std::size_t measured_runs(const analysis_result& result, const report_context& context) noexcept;

/// Throws std::invalid_argument when a run's region aggregate or a region_ops entry points outside
/// result.regions, or a memory index (a region aggregate's, run_memory's) outside result.memory.
void check_region_indices(const analysis_result& result);

/// Rows of each region's ops the Markdown and terminal views show (docs/design.md, rule 20); the JSON
/// report and the HTML page hold all of them.
inline constexpr std::size_t region_op_rows_shown = 5;

/// The report's `region_id` of a region_ops entry: the region's id, or region_op_rows::residual_id.
std::string_view region_ops_owner(const analysis_result& result, const region_op_rows& entry);

/// The spread over all runs of one per-run quantity, in ns (statistics/statistics.hpp: median, mean, sample
/// stddev, min, max, unscaled mad, cv). A run in which the region does not appear counts as 0.
using run_stats = stats::summary;

/// Declared work over own time (docs/design.md, rule 18), per second: work / (time_ns / 1e9). Each figure
/// is absent when its quantity was not declared or its time is 0 (device figures also without device
/// time). Figures are in the report's key order: per quantity (bytes, flops, items) CPU, then device; then
/// `device_bytes_peak_fraction`, device bytes per second over the peak memory bandwidth every GPU of the
/// environment shares (machine.hpp, shared_peak_memory_bandwidth), absent without one.
struct throughput {
  static constexpr std::size_t size = 7;
  /// The index of `device_bytes_peak_fraction` (a share, not a rate).
  static constexpr std::size_t peak_fraction = 6;
  /// The report key of each figure.
  static constexpr std::array<std::string_view, size> names = {
      "cpu_bytes_per_second", "device_bytes_per_second", "cpu_flops_per_second",
      "device_flops_per_second", "cpu_items_per_second", "device_items_per_second", "device_bytes_peak_fraction"};
  /// Column headings of the views (Markdown, HTML, terminal), same order.
  static constexpr std::array<std::string_view, size> headings = {
      "CPU bytes/s", "device bytes/s", "CPU FLOP/s", "device FLOP/s", "CPU items/s", "device items/s", "% of peak BW"};
  std::array<std::optional<double>, size> figures;

  bool empty() const noexcept {
    for (const auto& figure : figures) {
      if (figure) return false;
    }
    return true;
  }
};

/// The peak memory bandwidth of `context`'s environment that `device_bytes_peak_fraction` divides by:
/// shared_peak_memory_bandwidth of context.environment; nullopt without an environment (an imported trace).
std::optional<double> peak_memory_bandwidth(const report_context& context);

/// The run's throughput of one region: its declared work (absent: every figure absent) over its CPU
/// time (rule 5) and its device time (rule 6); with `peak_bytes_per_second`, the device bytes per second
/// over it.
throughput throughput_of(const analysis_result& result, const region_aggregate& aggregate,
                         std::optional<double> peak_bytes_per_second);

/// A figure for the views: a rate by rate_text, the peak fraction as a percentage with 2 decimals
/// (`37.50 %` for 0.375).
std::string throughput_text(std::size_t figure, double value);

/// True when some region of some run declared work (the views then show throughput columns).
bool has_declared_work(const analysis_result& result);

/// A rate for the views: 3 decimals and an SI prefix (k, M, G, T, P, E), e.g. `1.250 G` for 1.25e9.
std::string rate_text(double per_second);

/// One device's medians over the runs of a series of memory figures (docs/design.md, rule 21; report
/// `region_summary[k].memory`, `run_summary.memory`, `run_summary.residual_memory`). The four sums are
/// medians over every run, a run without an event on the device (or without the owner) counting as 0;
/// the peak is the median over the runs that have one, absent when none has. Bytes and counts; a median
/// of an even count is the mean of the two middle values (exact below 2^53).
struct device_memory_median {
  memory_device device = cpu_memory;
  double allocated_bytes = 0.0;
  double freed_bytes = 0.0;
  double allocations = 0.0;
  double frees = 0.0;
  std::optional<double> peak_allocated_bytes;
};
/// By device ascending; empty when no run has figures.
using memory_medians = std::vector<device_memory_median>;

/// The figures at `index` (memory_of) when they list some device; nullptr when absent or empty, which
/// every view shows as no figures.
const memory_figures* shown_memory(const analysis_result& result, std::uint32_t index) noexcept;

/// True when some run, residual or region aggregate has figures to show (shown_memory): the views'
/// memory sections and the summaries' medians. Without memory events: false after one test.
bool has_memory(const analysis_result& result) noexcept;

/// The medians of `per_run` (one entry per run of the analysis; nullptr: no figures in that run).
memory_medians median_memory(const std::vector<const memory_figures*>& per_run);

/// Bytes for the views in binary units with 2 decimals (`32.00 KiB`, `1.50 MiB`; KiB = 1024 B), below
/// 1 KiB as `512 B` (a median of an even count may be `512.5 B`).
std::string bytes_text(double bytes);

/// A count for the views: whole as an integer (`3`), a median between two counts with 1 decimal (`2.5`).
std::string count_text(double count);

/// One region across all runs (report `region_summary[i]`).
struct region_summary {
  std::uint32_t region = 0;        ///< index into analysis_result::regions
  std::size_t runs_present = 0;    ///< runs with an aggregate for this region
  std::uint64_t calls_total = 0;   ///< calls summed over runs
  run_stats cpu;
  std::optional<run_stats> device;      ///< iff the analysis has device data
  std::optional<run_stats> off_thread;  ///< iff some run has off-thread time for the region
  /// Rule 18: each figure the median over the runs in which it is present (not a run without it as 0);
  /// absent when no run has it.
  throughput median_throughput;
  /// Rule 21: per device, the medians of the region's memory figures over the runs.
  memory_medians memory;
};

/// One entry per analysis_result::regions, in that order. Empty when there are no runs. The throughput
/// medians' peak fraction divides by `peak_bytes_per_second` (peak_memory_bandwidth of the context).
std::vector<region_summary> summarize_regions(const analysis_result& result, std::optional<double> peak_bytes_per_second);

/// Which throughput figures some summary has a median of: the views' throughput columns (rule 18).
std::array<bool, throughput::size> throughput_columns(const std::vector<region_summary>& summaries);

/// The run totals across all runs and their residuals (report `run_summary`), in ns.
struct run_summary {
  run_stats wall;
  run_stats cpu;
  std::optional<run_stats> device;       ///< iff the analysis has device data
  std::optional<run_stats> device_busy;  ///< iff every run has it
  std::optional<run_stats> device_span;  ///< iff every run has it
  run_stats residual_cpu;                ///< the runs' residual CPU time (time no region owned)
  std::optional<run_stats> residual_device;  ///< iff the analysis has device data (a run without: 0)
  memory_medians memory;           ///< rule 21: the runs' memory figures, per device
  memory_medians residual_memory;  ///< rule 21: their residuals' (never a peak)
};

/// The run totals' statistics; nullopt when there are no runs.
std::optional<run_summary> summarize_runs(const analysis_result& result);

/// Who a row of the memory views is (rule 21).
enum class memory_owner : std::uint8_t { region = 0, residual = 1, run_total = 2 };

/// One row of the memory views: one owner's medians on one device.
struct memory_view_row {
  memory_owner owner = memory_owner::region;
  std::uint32_t region = 0;  ///< index into analysis_result::regions when owner is region
  const device_memory_median* medians = nullptr;
};

/// The rows of the Markdown, terminal and HTML memory views, in their order: each region of `summaries`
/// per device, then the residual's devices, then the run total's.
std::vector<memory_view_row> memory_view_rows(const std::vector<region_summary>& summaries,
                                              const run_summary& totals);

/// `(residual)` or `(run total)`: the label of a row that is no region.
std::string_view memory_owner_label(memory_owner owner) noexcept;

/// What every memory view's medians mean, for `runs` runs (one sentence, without its full stop).
std::string memory_medians_note(std::size_t runs);

/// Where a charted run's device peaked (rule 21, analysis_result::memory_timelines): its first sample with
/// the largest total, and the regions whose spans hold that instant (closed; in span order, each once).
struct timeline_peak {
  std::uint32_t run = 0;  ///< index into analysis_result::runs
  memory_device device = cpu_memory;
  std::int64_t offset_ns = 0;  ///< since the run's start
  std::int64_t total_bytes = 0;
  std::vector<std::uint32_t> regions;  ///< indices into analysis_result::regions; empty: in no region
};
/// The peak of `series` (which has samples), a series of `timeline`.
timeline_peak peak_of(const memory_timeline& timeline, const memory_series& series);
/// One per charted run and device with samples, in the timelines' order.
std::vector<timeline_peak> timeline_peaks(const analysis_result& result);
/// `run 0, cpu: peak 1.13 MiB at 4991.006 us, in untuned_module_backward:0`; region ids are passed
/// through `id` (code spans for Markdown, escaping for HTML), `in no region` when none holds it.
std::string timeline_peak_text(const analysis_result& result, const timeline_peak& peak,
                               const std::function<std::string(std::string_view)>& id);

}  // namespace regionprof::report_detail
