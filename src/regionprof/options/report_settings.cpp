#include "regionprof/options/report_settings.hpp"

#include <charconv>

namespace regionprof::cli {
namespace {

[[noreturn]] void fail(std::string_view setting, const std::exception& e) {
  throw setting_error(std::string(setting) + ": " + e.what());
}

}  // namespace

std::size_t parse_count(std::string_view setting, std::string_view text, std::size_t min, std::size_t max) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
    throw setting_error(std::string(setting) + " needs a whole number from " + std::to_string(min) + " to " +
                        std::to_string(max) + ", got '" + std::string(text) + "'");
  }
  return value;
}

void report_settings::set_run_marker(std::string_view setting, std::string_view regex) {
  try {
    analysis.run_marker = run_marker_rule(regex);
  } catch (const std::invalid_argument& e) {
    fail(setting, e);
  }
  run_marker = std::string(regex);
}

void report_settings::add_region(std::string_view setting, std::string_view arg) {
  name_rule rule;
  try {
    rule = parse_region_arg(arg);
  } catch (const std::invalid_argument& e) {
    fail(setting, e);
  }
  if (regions.empty()) analysis.region_rules.clear();
  analysis.region_rules.push_back(std::move(rule));
  regions.emplace_back(arg);
}

void report_settings::set_row_limit(std::string_view setting, std::string_view text) {
  row_limit = analysis.row_limit = parse_count(setting, text, 1, 1'000'000);
}

void report_settings::set_warmup_runs(std::string_view setting, std::string_view text) {
  analysis.skip_runs = parse_count(setting, text, 0, 1'000'000);
}

void report_settings::set_graph_attribution(std::string_view setting, std::string_view mode) {
  const std::optional<regionprof::graph_attribution> parsed = parse_graph_attribution(mode);
  if (!parsed) {
    throw setting_error(std::string(setting) + " must be 'capture' or 'launch', got '" + std::string(mode) + "'");
  }
  analysis.graph_attribution = *parsed;
  graph_attribution = std::string(mode);
}

output_set report_settings::outputs() const {
  output_set set;
  if (json_path) set.add(output_format::json, *json_path);
  if (markdown_path) set.add(output_format::markdown, *markdown_path);
  if (trace_path) set.add(output_format::chrome_trace, *trace_path);
  if (!json_path) set.to_stdout = output_format::markdown;
  return set;
}

}  // namespace regionprof::cli
