#include "report_settings.hpp"

#include <charconv>
#include <ostream>

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
  name_rule rule{match_kind::regex, std::string(regex), "run", ""};
  try {
    validate_name_rule(rule, "run marker");
  } catch (const std::invalid_argument& e) {
    fail(setting, e);
  }
  analysis.run_marker = std::move(rule);
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

void write_reports(const Profile& profile, const report_settings& settings, std::ostream& out,
                   const markdown_options& markdown) {
  if (settings.json_path) profile.write_json(*settings.json_path);
  if (settings.markdown_path) profile.write_markdown(*settings.markdown_path, markdown);
  if (settings.trace_path) profile.write_trace(*settings.trace_path);
  if (!settings.json_path) {
    out << profile.markdown(markdown);
    out.flush();
    if (!out) throw std::runtime_error("cannot write the Markdown report to standard output");
  }
}

}  // namespace regionprof::cli
