// Windows of a long profile: paths, run numbering, target members, the cut's run-marker predicate
// (regionprof/analysis/window.hpp).
#include "regionprof/analysis/window.hpp"

#include <memory>
#include <stdexcept>
#include <utility>

#include <re2/re2.h>

#include "regionprof/analysis/name_regex.hpp"

namespace regionprof {

std::uint64_t window_first_run(const window_position& window) noexcept { return window.index * window.runs; }

std::string window_output_path(std::string_view pattern, process_identity identity, std::uint64_t window_index) {
  identity.window_index = window_index;
  return expand_output_path(pattern, identity);
}

analysis_options window_analysis(analysis_options options, const window_position& window) {
  if (window.index > 0) options.skip_runs = 0;
  return options;
}

void number_runs_of_window(analysis_result& result, const window_position& window) {
  const std::uint64_t first = window_first_run(window);
  for (run_result& run : result.runs) run.run_index += static_cast<std::size_t>(first);
}

std::function<bool(std::string_view name, std::string_view domain)> run_marker_predicate_of(const name_rule& rule) {
  std::shared_ptr<const re2::RE2> regex;
  if (rule.match == match_kind::regex) {
    std::string error;
    regex = detail::compile_name_regex(rule.pattern, error);
    if (!regex) throw std::invalid_argument("run marker '" + rule.pattern + "': " + error);
  }
  return [rule, regex](std::string_view name, std::string_view domain) {
    if (!rule.domain.empty() && domain != rule.domain) return false;
    switch (rule.match) {
      case match_kind::exact: return name == rule.pattern;
      case match_kind::prefix: return name.starts_with(rule.pattern);
      case match_kind::regex: return re2::RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *regex);
    }
    return false;
  };
}

}  // namespace regionprof
