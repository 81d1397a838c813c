#include "report/report_common.hpp"

#include <algorithm>
#include <ctime>
#include <stdexcept>

#ifndef REGIONPROF_VERSION
#error "REGIONPROF_VERSION must be defined by the build (CMake PROJECT_VERSION)"
#endif

namespace regionprof::report_detail {

std::string_view tool_version() noexcept { return REGIONPROF_VERSION; }

std::string created_at(const report_context& context) {
  if (!context.created_at.empty()) return context.created_at;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  const std::size_t length = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buffer, length);
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

void check_region_indices(const analysis_result& result) {
  for (std::size_t r = 0; r < result.runs.size(); ++r) {
    for (const region_aggregate& aggregate : result.runs[r].regions) {
      if (aggregate.region >= result.regions.size()) {
        throw std::invalid_argument("regionprof report: run " + std::to_string(r) + " has a region aggregate with index " +
                                    std::to_string(aggregate.region) + " but the analysis lists only " +
                                    std::to_string(result.regions.size()) + " regions");
      }
    }
  }
}

namespace {

/// Folds one run's value (0 when absent) into min/max/sum.
struct accumulator {
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  double sum_ns = 0.0;
  bool any = false;

  void add(std::int64_t ns) {
    min_ns = any ? std::min(min_ns, ns) : ns;
    max_ns = any ? std::max(max_ns, ns) : ns;
    sum_ns += static_cast<double>(ns);
    any = true;
  }
  run_stats stats(std::size_t runs) const {
    return {min_ns, max_ns, runs == 0 ? 0.0 : sum_ns / static_cast<double>(runs)};
  }
};

}  // namespace

std::vector<region_summary> summarize_regions(const analysis_result& result) {
  check_region_indices(result);
  std::vector<region_summary> summaries;
  if (result.runs.empty()) return summaries;
  const std::size_t region_count = result.regions.size();
  std::vector<accumulator> cpu(region_count), device(region_count), off_thread(region_count);
  std::vector<bool> has_off_thread(region_count, false);
  summaries.resize(region_count);
  std::vector<const region_aggregate*> in_run(region_count);
  for (const run_result& run : result.runs) {
    std::fill(in_run.begin(), in_run.end(), nullptr);
    for (const region_aggregate& aggregate : run.regions) in_run[aggregate.region] = &aggregate;
    for (std::size_t r = 0; r < region_count; ++r) {
      const region_aggregate* aggregate = in_run[r];
      region_summary& summary = summaries[r];
      if (aggregate != nullptr) {
        ++summary.runs_present;
        summary.calls_total += aggregate->calls;
        if (aggregate->off_thread_cpu_time_ns) has_off_thread[r] = true;
      }
      cpu[r].add(aggregate != nullptr ? aggregate->cpu_time_ns : 0);
      device[r].add(aggregate != nullptr ? aggregate->device_time_ns.value_or(0) : 0);
      off_thread[r].add(aggregate != nullptr ? aggregate->off_thread_cpu_time_ns.value_or(0) : 0);
    }
  }
  const std::size_t runs = result.runs.size();
  for (std::size_t r = 0; r < region_count; ++r) {
    region_summary& summary = summaries[r];
    summary.region = static_cast<std::uint32_t>(r);
    summary.cpu = cpu[r].stats(runs);
    if (result.has_device_data) summary.device = device[r].stats(runs);
    if (has_off_thread[r]) summary.off_thread = off_thread[r].stats(runs);
  }
  return summaries;
}

}  // namespace regionprof::report_detail
