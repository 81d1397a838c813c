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

void validate_name_rule(const name_rule& rule, std::string_view role) {
  auto fail = [&](const std::string& reason) {
    throw std::invalid_argument(std::string(role) + " '" + rule.pattern + "': " + reason);
  };
  switch (rule.match) {
    case match_kind::exact:
    case match_kind::prefix:  // an empty prefix is allowed: every range is a region
      return;
    case match_kind::regex:
      if (rule.pattern.empty()) fail("empty regex");
      try {
        const std::regex check(rule.pattern, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        fail(std::string("invalid ECMAScript regex: ") + e.what());
      }
      return;
  }
  fail("unknown match kind " + std::to_string(static_cast<int>(rule.match)));
}

name_rule parse_region_arg(std::string_view arg) {
  name_rule rule{match_kind::regex, std::string(arg), "region", ""};
  if (auto eq = arg.rfind('='); eq != std::string_view::npos && is_identifier(arg.substr(eq + 1))) {
    rule.pattern = std::string(arg.substr(0, eq));
    rule.kind = std::string(arg.substr(eq + 1));
  }
  validate_name_rule(rule, "region rule");
  return rule;
}

std::string_view to_string(device_type type) noexcept { return type == device_type::cuda ? "CUDA" : "CPU"; }

}  // namespace regionprof
