#include "regionprof/options/environment.hpp"

#include <cstdlib>
#include <sstream>

namespace regionprof::options {

std::vector<std::pair<std::string, std::string>> to_environment(const profile_options& options,
                                                                const profile_options& baseline) {
  std::vector<std::pair<std::string, std::string>> variables;
  for (const option& o : all_options()) {
    if (o.variable.empty() || same_value(options, baseline, o)) continue;
    variables.emplace_back(o.variable, option_text(o, o.get(options)));
  }
  return variables;
}

profile_options from_environment(const environment_lookup& lookup, profile_options baseline) {
  for (const option& o : all_options()) {
    if (o.variable.empty()) continue;
    const std::optional<std::string> text = lookup(o.variable);
    if (!text) continue;
    if (o.kind == option_kind::region_rules) {
      std::vector<std::string> rules;
      std::istringstream lines(*text);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) rules.push_back(line);
      }
      set_option(baseline, o, o.variable, rules);
    } else {
      set_option(baseline, o, o.variable, parse_option_text(o, o.variable, *text));
    }
  }
  return baseline;
}

std::vector<std::string_view> owned_variables() {
  std::vector<std::string_view> owned;
  for (const option& o : all_options()) {
    if (!o.variable.empty() && o.on(cli_run)) owned.push_back(o.variable);
  }
  return owned;
}

std::optional<std::string> process_environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace regionprof::options
