#include "regionprof/inject/inject_settings.hpp"

#include <cstdlib>
#include <sstream>

#include "regionprof/inject/inject_env.hpp"

namespace regionprof::inject {

std::vector<std::pair<std::string, std::string>> to_environment(const inject_settings& settings) {
  const cli::report_settings& report = settings.report;
  std::vector<std::pair<std::string, std::string>> variables;
  variables.emplace_back(inject_env::warmup_runs, std::to_string(report.analysis.skip_runs));
  if (settings.claim) variables.emplace_back(inject_env::claim, *settings.claim);
  if (report.json_path) variables.emplace_back(inject_env::output, *report.json_path);
  if (report.markdown_path) variables.emplace_back(inject_env::markdown, *report.markdown_path);
  if (report.trace_path) variables.emplace_back(inject_env::trace, *report.trace_path);
  if (report.run_marker) variables.emplace_back(inject_env::run_marker, *report.run_marker);
  if (!report.regions.empty()) {
    std::string lines;
    for (const std::string& region : report.regions) {
      if (region.find('\n') != std::string::npos) {
        throw cli::setting_error(std::string(inject_env::regions) + ": a region rule must be one line, got '" +
                                 region + "'");
      }
      lines += region + "\n";
    }
    variables.emplace_back(inject_env::regions, lines);
  }
  variables.emplace_back(inject_env::cross_thread, report.analysis.cross_thread ? "1" : "0");
  if (report.row_limit) variables.emplace_back(inject_env::row_limit, std::to_string(*report.row_limit));
  if (report.graph_attribution) variables.emplace_back(inject_env::graph_attribution, *report.graph_attribution);
  if (settings.device_buffer_mb) {
    variables.emplace_back(inject_env::device_buffer_mb, std::to_string(*settings.device_buffer_mb));
  }
  if (settings.sync_records) variables.emplace_back(inject_env::sync_records, "1");
  if (settings.window_runs) variables.emplace_back(inject_env::window_runs, std::to_string(*settings.window_runs));
  return variables;
}

inject_settings from_environment(const environment_lookup& lookup) {
  inject_settings settings;
  cli::report_settings& report = settings.report;
  if (auto marker = lookup(inject_env::run_marker)) report.set_run_marker(inject_env::run_marker, *marker);
  if (auto regions = lookup(inject_env::regions)) {
    std::istringstream lines(*regions);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) report.add_region(inject_env::regions, line);
    }
  }
  report.analysis.cross_thread = lookup(inject_env::cross_thread).value_or("0") == "1";
  if (auto limit = lookup(inject_env::row_limit)) report.set_row_limit(inject_env::row_limit, *limit);
  if (auto mode = lookup(inject_env::graph_attribution)) {
    report.set_graph_attribution(inject_env::graph_attribution, *mode);
  }
  if (auto warmup = lookup(inject_env::warmup_runs)) report.set_warmup_runs(inject_env::warmup_runs, *warmup);
  report.json_path = lookup(inject_env::output);
  report.markdown_path = lookup(inject_env::markdown);
  report.trace_path = lookup(inject_env::trace);
  settings.claim = lookup(inject_env::claim);
  if (auto megabytes = lookup(inject_env::device_buffer_mb)) {
    settings.device_buffer_mb = cli::parse_count(inject_env::device_buffer_mb, *megabytes, 4, 1 << 20);
  }
  settings.sync_records = lookup(inject_env::sync_records).value_or("0") == "1";
  if (auto runs = lookup(inject_env::window_runs)) {
    settings.window_runs = cli::parse_count(inject_env::window_runs, *runs, 1, inject_settings::max_window_runs);
  }
  return settings;
}

std::optional<std::string> process_environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace regionprof::inject
