#include <cctype>
#include <regex>
#include <stdexcept>
#include <string>

#include "regionprof/analysis.hpp"

namespace regionprof {

name_rule default_run_marker() {
  return {match_kind::exact, "regionprof.profiled_run", "run", "regionprof"};
}

std::vector<name_rule> default_region_rules() {
  return {{match_kind::prefix, "aot_module:", "aot_module", ""},
          {match_kind::prefix, "untuned_module:", "untuned_module", ""}};
}

namespace {

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

name_rule parse_region_arg(std::string_view arg) {
  name_rule rule{match_kind::regex, std::string(arg), "region", ""};
  if (auto eq = arg.rfind('='); eq != std::string_view::npos && is_identifier(arg.substr(eq + 1))) {
    rule.pattern = std::string(arg.substr(0, eq));
    rule.kind = std::string(arg.substr(eq + 1));
  }
  if (rule.pattern.empty()) throw std::invalid_argument("region rule '" + std::string(arg) + "': empty regex");
  try {
    std::regex check(rule.pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("region rule '" + std::string(arg) + "': invalid ECMAScript regex '" +
                                rule.pattern + "': " + e.what());
  }
  return rule;
}

std::string_view to_string(device_type type) noexcept { return type == device_type::cuda ? "CUDA" : "CPU"; }

}  // namespace regionprof
