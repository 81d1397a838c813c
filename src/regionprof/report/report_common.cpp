#include "regionprof/report/report_common.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "regionprof/json/microseconds.hpp"

#ifndef REGIONPROF_VERSION
#error "REGIONPROF_VERSION must be defined by the build (CMake PROJECT_VERSION)"
#endif

namespace regionprof::report_detail {

std::string_view tool_version() noexcept { return REGIONPROF_VERSION; }

std::string created_at(const report_context& context) {
  return context.created_at.empty() ? utc_timestamp_now() : context.created_at;
}

std::string_view to_string(match_kind kind) noexcept {
  switch (kind) {
    case match_kind::exact: return "exact";
    case match_kind::prefix: return "prefix";
    case match_kind::regex: return "regex";
  }
  return "exact";
}

std::size_t measured_runs(const analysis_result& result, const report_context& context) noexcept {
  return context.measured_runs != 0 ? context.measured_runs : result.runs.size();
}

namespace {

/// Rule 21: `index` (of `whose` figures) is no_memory or names an entry of result.memory.
void check_memory_index(const analysis_result& result, std::uint32_t index, const std::string& whose) {
  if (index != no_memory && index >= result.memory.size()) {
    throw std::invalid_argument("regionprof report: " + whose + " has memory figures at index " +
                                std::to_string(index) + " but the analysis holds only " +
                                std::to_string(result.memory.size()));
  }
}

}  // namespace

void check_region_indices(const analysis_result& result) {
  for (std::size_t r = 0; r < result.runs.size(); ++r) {
    for (const region_aggregate& aggregate : result.runs[r].regions) {
      if (aggregate.region >= result.regions.size()) {
        throw std::invalid_argument("regionprof report: run " + std::to_string(r) + " has a region aggregate with index " +
                                    std::to_string(aggregate.region) + " but the analysis lists only " +
                                    std::to_string(result.regions.size()) + " regions");
      }
      check_memory_index(result, aggregate.memory, "run " + std::to_string(r) + "'s region aggregate");
    }
  }
  if (result.run_memory.size() > result.runs.size()) {
    throw std::invalid_argument("regionprof report: memory figures for " + std::to_string(result.run_memory.size()) +
                                " runs, but the analysis has " + std::to_string(result.runs.size()));
  }
  for (std::size_t r = 0; r < result.run_memory.size(); ++r) {
    check_memory_index(result, result.run_memory[r].run, "run " + std::to_string(r));
    check_memory_index(result, result.run_memory[r].residual, "run " + std::to_string(r) + "'s residual");
  }
  for (const region_op_rows& entry : result.region_ops) {
    if (entry.region != region_op_rows::residual && entry.region >= result.regions.size()) {
      throw std::invalid_argument("regionprof report: region_ops has an entry for region index " +
                                  std::to_string(entry.region) + " but the analysis lists only " +
                                  std::to_string(result.regions.size()) + " regions");
    }
  }
  for (const memory_timeline& timeline : result.memory_timelines) {
    if (timeline.run >= result.runs.size()) {
      throw std::invalid_argument("regionprof report: a memory timeline of run " + std::to_string(timeline.run) +
                                  ", but the analysis has " + std::to_string(result.runs.size()) + " runs");
    }
    for (const region_span& span : timeline.spans) {
      if (span.region >= result.regions.size()) {
        throw std::invalid_argument("regionprof report: run " + std::to_string(timeline.run) +
                                    "'s memory timeline has a span of region index " + std::to_string(span.region) +
                                    " but the analysis lists only " + std::to_string(result.regions.size()) +
                                    " regions");
      }
    }
  }
}

std::string_view region_ops_owner(const analysis_result& result, const region_op_rows& entry) {
  return entry.region == region_op_rows::residual ? region_op_rows::residual_id
                                                  : std::string_view(result.regions[entry.region].id);
}

const memory_figures* shown_memory(const analysis_result& result, std::uint32_t index) noexcept {
  const memory_figures* figures = memory_of(result, index);
  return figures != nullptr && !figures->empty() ? figures : nullptr;
}

bool has_memory(const analysis_result& result) noexcept {
  if (result.memory.empty()) return false;
  for (const run_memory_indices& run : result.run_memory) {
    if (shown_memory(result, run.run) != nullptr || shown_memory(result, run.residual) != nullptr) return true;
  }
  return std::any_of(result.runs.begin(), result.runs.end(), [&result](const run_result& run) {
    return std::any_of(run.regions.begin(), run.regions.end(), [&result](const region_aggregate& aggregate) {
      return shown_memory(result, aggregate.memory) != nullptr;
    });
  });
}

memory_medians median_memory(const std::vector<const memory_figures*>& per_run) {
  std::vector<memory_device> devices;
  for (const memory_figures* figures : per_run) {
    if (figures == nullptr) continue;
    for (const device_memory& entry : *figures) devices.push_back(entry.device);
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  memory_medians out;
  out.reserve(devices.size());
  std::array<std::vector<double>, 4> sums;  // allocated, freed, allocations, frees: one value per run
  std::vector<double> peaks;                // one value per run that has a peak
  for (const memory_device device : devices) {
    for (std::vector<double>& values : sums) values.clear();
    peaks.clear();
    for (const memory_figures* figures : per_run) {
      const device_memory* found = nullptr;
      if (figures != nullptr) {
        const auto at = std::find_if(figures->begin(), figures->end(),
                                     [device](const device_memory& entry) { return entry.device == device; });
        if (at != figures->end()) found = &*at;
      }
      // Exact below 2^53 bytes (8 PiB).
      sums[0].push_back(found != nullptr ? static_cast<double>(found->allocated_bytes) : 0.0);
      sums[1].push_back(found != nullptr ? static_cast<double>(found->freed_bytes) : 0.0);
      sums[2].push_back(found != nullptr ? static_cast<double>(found->allocations) : 0.0);
      sums[3].push_back(found != nullptr ? static_cast<double>(found->frees) : 0.0);
      if (found != nullptr && found->peak_allocated_bytes) {
        peaks.push_back(static_cast<double>(*found->peak_allocated_bytes));
      }
    }
    out.push_back({device, stats::median(sums[0]), stats::median(sums[1]), stats::median(sums[2]),
                   stats::median(sums[3]), peaks.empty() ? std::nullopt : std::optional<double>(stats::median(peaks))});
  }
  return out;
}

std::string count_text(double count) {
  const bool whole = count == std::floor(count);
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, count, std::chars_format::fixed, whole ? 0 : 1).ptr;
  return std::string(buffer, end);
}

std::string bytes_text(double bytes) {
  if (bytes < 1024.0) return count_text(bytes) + " B";
  static constexpr const char* units[] = {" KiB", " MiB", " GiB", " TiB", " PiB", " EiB"};
  double value = bytes / 1024.0;
  std::size_t unit = 0;
  while (unit + 1 < std::size(units) && value >= 1023.995) {  // never `1024.00 KiB`
    value /= 1024.0;
    ++unit;
  }
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 2).ptr;
  return std::string(buffer, end) + units[unit];
}

namespace {

run_stats summarize_ns(const std::vector<std::int64_t>& values_ns) {
  std::vector<double> values(values_ns.begin(), values_ns.end());  // exact below 2^53 ns
  return stats::summarize(values);
}

}  // namespace

std::optional<double> peak_memory_bandwidth(const report_context& context) {
  if (!context.environment) return std::nullopt;
  return shared_peak_memory_bandwidth(*context.environment);
}

throughput throughput_of(const analysis_result& result, const region_aggregate& aggregate,
                         std::optional<double> peak_bytes_per_second) {
  throughput out;
  const declared_work* declared = work_of(result, aggregate);
  if (declared == nullptr) return out;
  const declared_work& work = *declared;
  const std::optional<std::uint64_t>* quantities[] = {&work.bytes, &work.flops, &work.items};
  const std::optional<std::int64_t> times[] = {aggregate.cpu_time_ns, aggregate.device_time_ns};
  for (std::size_t q = 0; q < 3; ++q) {
    for (std::size_t d = 0; d < 2; ++d) {
      if (*quantities[q] && times[d] && *times[d] > 0) {
        out.figures[2 * q + d] = static_cast<double>(**quantities[q]) * 1e9 / static_cast<double>(*times[d]);
      }
    }
  }
  const std::optional<double>& device_bytes = out.figures[1];
  if (device_bytes && peak_bytes_per_second && *peak_bytes_per_second > 0.0) {
    out.figures[throughput::peak_fraction] = *device_bytes / *peak_bytes_per_second;
  }
  return out;
}

std::string throughput_text(std::size_t figure, double value) {
  if (figure != throughput::peak_fraction) return rate_text(value);
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, 100.0 * value, std::chars_format::fixed, 2).ptr;
  return std::string(buffer, end) + " %";
}

bool has_declared_work(const analysis_result& result) {
  return !result.work.empty();
}

std::string rate_text(double per_second) {
  static constexpr const char* prefixes[] = {"", " k", " M", " G", " T", " P", " E"};
  std::size_t p = 0;
  while (p + 1 < std::size(prefixes) && per_second >= 999.9995) {
    per_second /= 1000.0;
    ++p;
  }
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, per_second, std::chars_format::fixed, 3).ptr;
  return std::string(buffer, end) + prefixes[p];
}

std::array<bool, throughput::size> throughput_columns(const std::vector<region_summary>& summaries) {
  std::array<bool, throughput::size> columns{};
  for (const region_summary& summary : summaries) {
    for (std::size_t f = 0; f < throughput::size; ++f) columns[f] = columns[f] || summary.median_throughput.figures[f];
  }
  return columns;
}

std::vector<region_summary> summarize_regions(const analysis_result& result, std::optional<double> peak_bytes_per_second) {
  check_region_indices(result);
  std::vector<region_summary> summaries;
  if (result.runs.empty()) return summaries;
  const std::size_t region_count = result.regions.size();
  const std::size_t runs = result.runs.size();
  // Per region, one value per run (0 where the run lacks the region).
  std::vector<std::vector<std::int64_t>> cpu(region_count, std::vector<std::int64_t>(runs, 0));
  std::vector<std::vector<std::int64_t>> device = cpu;
  std::vector<std::vector<std::int64_t>> off_thread = cpu;
  std::vector<bool> has_off_thread(region_count, false);
  summaries.resize(region_count);
  for (std::size_t i = 0; i < runs; ++i) {
    for (const region_aggregate& aggregate : result.runs[i].regions) {
      const std::size_t r = aggregate.region;
      region_summary& summary = summaries[r];
      ++summary.runs_present;
      summary.calls_total += aggregate.calls;
      if (aggregate.off_thread_cpu_time_ns) has_off_thread[r] = true;
      cpu[r][i] = aggregate.cpu_time_ns;
      device[r][i] = aggregate.device_time_ns.value_or(0);
      off_thread[r][i] = aggregate.off_thread_cpu_time_ns.value_or(0);
    }
  }
  for (std::size_t r = 0; r < region_count; ++r) {
    region_summary& summary = summaries[r];
    summary.region = static_cast<std::uint32_t>(r);
    summary.cpu = summarize_ns(cpu[r]);
    if (result.has_device_data) summary.device = summarize_ns(device[r]);
    if (has_off_thread[r]) summary.off_thread = summarize_ns(off_thread[r]);
  }
  if (has_memory(result)) {
    // Rule 21: per region, its figures in each run (nullptr where the run lacks the region or figures).
    std::vector<const memory_figures*> per_run(runs);
    std::vector<std::vector<std::pair<std::size_t, const memory_figures*>>> seen(region_count);
    for (std::size_t i = 0; i < runs; ++i) {
      for (const region_aggregate& aggregate : result.runs[i].regions) {
        const memory_figures* figures = shown_memory(result, aggregate.memory);
        if (figures != nullptr) seen[aggregate.region].emplace_back(i, figures);
      }
    }
    for (std::size_t r = 0; r < region_count; ++r) {
      if (seen[r].empty()) continue;
      std::fill(per_run.begin(), per_run.end(), nullptr);
      for (const auto& [i, figures] : seen[r]) per_run[i] = figures;
      summaries[r].memory = median_memory(per_run);
    }
  }
  if (has_declared_work(result)) {
    // Rule 18: per region and figure, the median over the runs that have the figure.
    std::vector<std::vector<throughput>> series(region_count);
    for (const run_result& run : result.runs) {
      for (const region_aggregate& aggregate : run.regions) {
        if (work_of(result, aggregate)) series[aggregate.region].push_back(throughput_of(result, aggregate, peak_bytes_per_second));
      }
    }
    std::vector<double> values;
    for (std::size_t r = 0; r < region_count; ++r) {
      for (std::size_t f = 0; f < throughput::size; ++f) {
        values.clear();
        for (const throughput& t : series[r]) {
          if (t.figures[f]) values.push_back(*t.figures[f]);
        }
        if (!values.empty()) summaries[r].median_throughput.figures[f] = stats::median(values);
      }
    }
  }
  return summaries;
}

std::vector<memory_view_row> memory_view_rows(const std::vector<region_summary>& summaries,
                                              const run_summary& totals) {
  std::vector<memory_view_row> rows;
  for (const region_summary& summary : summaries) {
    for (const device_memory_median& m : summary.memory) rows.push_back({memory_owner::region, summary.region, &m});
  }
  for (const device_memory_median& m : totals.residual_memory) rows.push_back({memory_owner::residual, 0, &m});
  for (const device_memory_median& m : totals.memory) rows.push_back({memory_owner::run_total, 0, &m});
  return rows;
}

std::string_view memory_owner_label(memory_owner owner) noexcept {
  return owner == memory_owner::residual ? "(residual)" : owner == memory_owner::run_total ? "(run total)" : "";
}

std::string memory_medians_note(std::size_t runs) {
  return "Per device, medians over all " + std::to_string(runs) +
         " runs, a run without the region or without an event on the device counting as 0; the peak (the "
         "largest total allocated on the device while the region ran) is the median over the runs that have "
         "one";
}

timeline_peak peak_of(const memory_timeline& timeline, const memory_series& series) {
  const auto highest = std::max_element(series.samples.begin(), series.samples.end(),
                                        [](const memory_sample& a, const memory_sample& b) {
                                          return a.total_bytes < b.total_bytes;
                                        });  // the first of equals
  timeline_peak peak{.run = timeline.run,
                     .device = series.device,
                     .offset_ns = highest->offset_ns,
                     .total_bytes = highest->total_bytes,
                     .regions = {}};
  for (const region_span& span : timeline.spans) {
    if (span.start_offset_ns <= peak.offset_ns && peak.offset_ns <= span.end_offset_ns &&
        std::find(peak.regions.begin(), peak.regions.end(), span.region) == peak.regions.end()) {
      peak.regions.push_back(span.region);
    }
  }
  return peak;
}

std::vector<timeline_peak> timeline_peaks(const analysis_result& result) {
  std::vector<timeline_peak> peaks;
  for (const memory_timeline& timeline : result.memory_timelines) {
    for (const memory_series& series : timeline.series) {
      if (!series.samples.empty()) peaks.push_back(peak_of(timeline, series));
    }
  }
  return peaks;
}

std::string timeline_peak_text(const analysis_result& result, const timeline_peak& peak,
                               const std::function<std::string(std::string_view)>& id) {
  char at[64];
  const auto at_end = std::to_chars(at, at + sizeof at, ns_to_us(peak.offset_ns), std::chars_format::fixed, 3).ptr;
  std::string text = "run " + std::to_string(result.runs.at(peak.run).run_index) + ", " +
                     memory_device_key(peak.device) + ": peak " +
                     bytes_text(static_cast<double>(peak.total_bytes)) + " at " + std::string(at, at_end) + " us, ";
  if (peak.regions.empty()) return text + "in no region";
  text += "in ";
  for (std::size_t i = 0; i < peak.regions.size(); ++i) {
    if (i > 0) text += ", ";
    text += id(result.regions.at(peak.regions[i]).id);
  }
  return text;
}

std::optional<run_summary> summarize_runs(const analysis_result& result) {
  if (result.runs.empty()) return std::nullopt;
  // One series at a time in one reused vector: 8 B per run, not 40 (docs/design.md, rule 13).
  std::vector<double> values;
  values.reserve(result.runs.size());
  auto series = [&](auto value_of) {
    values.clear();
    for (const run_result& run : result.runs) values.push_back(static_cast<double>(value_of(run)));  // exact below 2^53 ns
    return stats::summarize(values);
  };
  run_summary out{series([](const run_result& r) { return r.wall_time_ns; }),
                  series([](const run_result& r) { return r.cpu_time_ns; }),
                  std::nullopt,
                  std::nullopt,
                  std::nullopt,
                  series([](const run_result& r) { return r.residual_cpu_ns; }),
                  std::nullopt,
                  {},
                  {}};
  if (result.has_device_data) {
    out.residual_device = series([](const run_result& r) { return r.residual_device_ns.value_or(0); });
    const auto all = [&](auto field) {
      return std::all_of(result.runs.begin(), result.runs.end(), [&](const run_result& r) { return (r.*field).has_value(); });
    };
    out.device = series([](const run_result& r) { return r.device_time_ns.value_or(0); });
    if (all(&run_result::device_busy_ns)) out.device_busy = series([](const run_result& r) { return r.device_busy_ns.value_or(0); });
    if (all(&run_result::device_span_ns)) out.device_span = series([](const run_result& r) { return r.device_span_ns.value_or(0); });
  }
  if (has_memory(result)) {  // rule 21
    std::vector<const memory_figures*> per_run;
    per_run.reserve(result.runs.size());
    const auto index = [&result](std::size_t run, std::uint32_t run_memory_indices::*which) {
      return run < result.run_memory.size() ? result.run_memory[run].*which : no_memory;
    };
    for (std::size_t run = 0; run < result.runs.size(); ++run) {
      per_run.push_back(shown_memory(result, index(run, &run_memory_indices::run)));
    }
    out.memory = median_memory(per_run);
    per_run.clear();
    for (std::size_t run = 0; run < result.runs.size(); ++run) {
      per_run.push_back(shown_memory(result, index(run, &run_memory_indices::residual)));
    }
    out.residual_memory = median_memory(per_run);
  }
  return out;
}

}  // namespace regionprof::report_detail

namespace regionprof {

std::vector<memory_row> memory_rows(const Profile& profile) {
  const analysis_result& result = profile.result();
  report_detail::check_region_indices(result);
  std::vector<memory_row> rows;
  const auto add = [&](std::size_t run_index, std::string_view owner, std::uint32_t index) {
    if (const memory_figures* figures = report_detail::shown_memory(result, index)) {
      for (const device_memory& entry : *figures) rows.push_back({run_index, owner, entry});
    }
  };
  for (std::size_t position = 0; position < result.runs.size(); ++position) {
    const run_result& run = result.runs[position];
    for (const region_aggregate& aggregate : run.regions) {
      add(run.run_index, result.regions[aggregate.region].id, aggregate.memory);
    }
    if (position < result.run_memory.size()) {
      add(run.run_index, region_op_rows::residual_id, result.run_memory[position].residual);
      add(run.run_index, "(run total)", result.run_memory[position].run);
    }
  }
  return rows;
}

}  // namespace regionprof
