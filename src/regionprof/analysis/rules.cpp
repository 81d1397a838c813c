#include <cctype>
#include <stdexcept>
#include <string>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/name_regex.hpp"
#include "regionprof/analysis/run_marker.hpp"

namespace regionprof {

name_rule default_run_marker() {
  return {match_kind::exact, "regionprof.profiled_run", "run", ""};
}

name_rule run_marker_rule(const std::optional<std::string_view>& regex) {
  if (!regex) return default_run_marker();
  name_rule rule{match_kind::regex, std::string(*regex), "run", ""};
  validate_name_rule(rule, "run marker");
  return rule;
}

std::vector<name_rule> default_region_rules() {
  return {{match_kind::prefix, "aot_module:", "aot_module", ""},
          {match_kind::prefix, "untuned_module:", "untuned_module", ""},
          {match_kind::prefix, "aot_module_backward:", "aot_module_backward", ""},
          {match_kind::prefix, "untuned_module_backward:", "untuned_module_backward", ""}};
}

namespace detail {

std::unique_ptr<const re2::RE2> compile_name_regex(const std::string& pattern, std::string& error) {
  re2::RE2::Options options;
  options.set_log_errors(false);  // the error goes into the caller's message, not to stderr
  auto compiled = std::make_unique<const re2::RE2>(pattern, options);
  if (compiled->ok()) return compiled;
  error = compiled->error();
  return nullptr;
}

}  // namespace detail

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
      if (std::string error; !detail::compile_name_regex(rule.pattern, error)) {
        fail("invalid regex (RE2 syntax; no backreferences or lookaround): " + error);
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

std::string_view to_string(graph_attribution mode) noexcept {
  return mode == graph_attribution::launch ? "launch" : "capture";
}

std::optional<graph_attribution> parse_graph_attribution(std::string_view text) noexcept {
  if (text == "capture") return graph_attribution::capture;
  if (text == "launch") return graph_attribution::launch;
  return std::nullopt;
}

}  // namespace regionprof
