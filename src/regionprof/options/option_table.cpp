#include "regionprof/options/option_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "regionprof/analysis/run_marker.hpp"
#include "regionprof/regions/regions.hpp"

namespace regionprof {

std::vector<name_rule> in_process_region_rules() {
  std::vector<name_rule> rules = default_region_rules();
  rules.push_back({match_kind::prefix, "region:", "region", nvtx_domain_name});
  return rules;
}

device_options device_options_of(const profile_options& options) {
  device_options device = options.device;
  if (options.device_buffer_mb) device.max_buffer_bytes = *options.device_buffer_mb << 20;
  if (options.sync_records) device.synchronization_records = true;
  return device;
}

namespace options {
namespace {

// The member's value as the front-ends hand it over, and back (set_option checked its kind first).
option_value to_value(std::size_t value) { return static_cast<std::uint64_t>(value); }
option_value to_value(bool value) { return value; }
option_value to_value(const std::optional<std::size_t>& value) {
  return value ? option_value(static_cast<std::uint64_t>(*value)) : option_value();
}
option_value to_value(const std::optional<double>& value) { return value ? option_value(*value) : option_value(); }
option_value to_value(const std::optional<std::string>& value) {
  return value ? option_value(*value) : option_value();
}
option_value to_value(const name_rule& rule) { return rule.pattern; }
option_value to_value(regionprof::graph_attribution mode) { return std::string(to_string(mode)); }
option_value to_value(const std::vector<name_rule>& rules) {
  std::vector<std::string> texts;
  for (const name_rule& rule : rules) {
    if (rule.match != match_kind::regex || !rule.domain.empty()) {
      throw setting_error("region rule '" + rule.pattern + "' has no REGEX=KIND form (a prefix or exact rule, or "
                          "one in a domain)");
    }
    texts.push_back(rule.pattern + "=" + rule.kind);
  }
  return texts;
}

void from_value(const option_value& value, std::size_t& out) { out = static_cast<std::size_t>(std::get<std::uint64_t>(value)); }
void from_value(const option_value& value, bool& out) { out = std::get<bool>(value); }
void from_value(const option_value& value, std::optional<std::size_t>& out) {
  out.reset();
  if (const auto* number = std::get_if<std::uint64_t>(&value)) out = static_cast<std::size_t>(*number);
}
void from_value(const option_value& value, std::optional<double>& out) {
  out.reset();
  if (const auto* number = std::get_if<double>(&value)) out = *number;
}
void from_value(const option_value& value, std::optional<std::string>& out) {
  out.reset();
  if (const auto* text = std::get_if<std::string>(&value)) out = *text;
}
void from_value(const option_value& value, name_rule& out) { out = run_marker_rule(std::get<std::string>(value)); }
void from_value(const option_value& value, regionprof::graph_attribution& out) {
  out = *parse_graph_attribution(std::get<std::string>(value));
}
void from_value(const option_value& value, std::vector<name_rule>& out) {
  std::vector<name_rule> rules;
  for (const std::string& text : std::get<std::vector<std::string>>(value)) rules.push_back(parse_region_arg(text));
  out = std::move(rules);
}

#define REGIONPROF_OPTION_ENTRY(group_name, path, member, kind, min, max, surfaces, python, flag, variable,      \
                                value_name, doc)                                                                \
  option{#member,                                                                                              \
         group_name,                                                                                           \
         option_kind::kind,                                                                                    \
         min,                                                                                                  \
         max,                                                                                                  \
         surfaces,                                                                                             \
         python,                                                                                               \
         flag,                                                                                                 \
         variable,                                                                                             \
         value_name,                                                                                           \
         doc,                                                                                                  \
         [](const profile_options& o) -> option_value { return to_value(o.path member); },                     \
         [](profile_options& o, const option_value& value) { from_value(value, o.path member); }},

// constexpr, so constant-initialised: the injection library decodes its environment from its ELF
// constructor, which may run before this file's dynamic initialisation.
constexpr option table[] = {
#define REGIONPROF_OPTION(member, type, initializer, kind, min, max, surfaces, python, flag, variable, value_name, \
                          doc)                                                                                    \
  REGIONPROF_OPTION_ENTRY("", , member, kind, min, max, surfaces, python, flag, variable, value_name, doc)
#include "regionprof/options/profile_options.def"
#undef REGIONPROF_OPTION
#define REGIONPROF_OPTION(member, type, initializer, kind, min, max, surfaces, python, flag, variable, value_name, \
                          doc)                                                                                    \
  REGIONPROF_OPTION_ENTRY("analysis", analysis., member, kind, min, max, surfaces, python, flag, variable,        \
                          value_name, doc)
#include "regionprof/analysis/analysis_options.def"
#undef REGIONPROF_OPTION
#define REGIONPROF_OPTION(member, type, initializer, kind, min, max, surfaces, python, flag, variable, value_name, \
                          doc)                                                                                    \
  REGIONPROF_OPTION_ENTRY("stopping", stopping., member, kind, min, max, surfaces, python, flag, variable,        \
                          value_name, doc)
#include "regionprof/statistics/stopping_options.def"
#undef REGIONPROF_OPTION
};
#undef REGIONPROF_OPTION_ENTRY

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

/// What kind of value `kind` takes, for messages.
const char* expected_of(option_kind kind) {
  switch (kind) {
    case option_kind::count:
    case option_kind::optional_count: return "a whole number";
    case option_kind::flag: return "on or off";
    case option_kind::optional_number: return "a number";
    case option_kind::optional_path: return "a path";
    case option_kind::run_marker: return "a regex";
    case option_kind::region_rules: return "REGEX[=KIND] rules";
    case option_kind::graph_attribution: return "'capture' or 'launch'";
  }
  return "a value";
}

}  // namespace

std::span<const option> all_options() noexcept { return table; }

std::string_view to_string(option_kind kind) noexcept {
  switch (kind) {
    case option_kind::count: return "count";
    case option_kind::optional_count: return "optional_count";
    case option_kind::flag: return "flag";
    case option_kind::optional_number: return "optional_number";
    case option_kind::optional_path: return "optional_path";
    case option_kind::run_marker: return "run_marker";
    case option_kind::region_rules: return "region_rules";
    case option_kind::graph_attribution: return "graph_attribution";
  }
  return "unknown";
}

std::vector<const option*> options_of(option_surface surface) {
  std::vector<const option*> out;
  for (const option& o : table) {
    if (o.on(surface)) out.push_back(&o);
  }
  return out;
}

const option* find_option(option_surface surface, std::string_view name) {
  for (const option& o : table) {
    if (!o.on(surface)) continue;
    const std::string_view shown = surface == environment                               ? o.variable
                                   : (surface == cli_analyze || surface == cli_run) ? o.flag
                                                                                    : o.python;
    if (!shown.empty() && shown == name) return &o;
  }
  return nullptr;
}

std::uint64_t parse_count(std::string_view setting, std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
    throw setting_error(std::string(setting) + " needs a whole number from " + std::to_string(min) + " to " +
                        std::to_string(max) + ", got " + quoted(text));
  }
  return value;
}

output_set command_outputs(const std::optional<std::string>& json, const std::optional<std::string>& markdown,
                           const std::optional<std::string>& trace) {
  output_set set;
  if (json) set.add(output_format::json, *json);
  if (markdown) set.add(output_format::markdown, *markdown);
  if (trace) set.add(output_format::chrome_trace, *trace);
  if (!json) set.to_stdout = output_format::markdown;
  return set;
}

option_value parse_option_text(const option& o, std::string_view setting, std::string_view text) {
  const std::string name(setting);
  switch (o.kind) {
    case option_kind::count:
    case option_kind::optional_count: return parse_count(setting, text, o.min, o.max);
    case option_kind::flag:
      if (text == "1") return true;
      if (text == "0") return false;
      throw setting_error(name + " needs 1 (on) or 0 (off), got " + quoted(text));
    case option_kind::optional_number: {
      double value = 0.0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        throw setting_error(name + " needs a number, got " + quoted(text));
      }
      return value;
    }
    case option_kind::optional_path:
    case option_kind::run_marker: return std::string(text);
    case option_kind::region_rules: return std::vector<std::string>{std::string(text)};
    case option_kind::graph_attribution:
      if (!parse_graph_attribution(text)) {
        throw setting_error(name + " must be 'capture' or 'launch', got " + quoted(text));
      }
      return std::string(text);
  }
  throw setting_error(name + ": unknown option kind");
}

std::string option_text(const option& o, const option_value& value) {
  if (const auto* flag = std::get_if<bool>(&value)) return *flag ? "1" : "0";
  if (const auto* number = std::get_if<std::uint64_t>(&value)) return std::to_string(*number);
  if (const auto* real = std::get_if<double>(&value)) {
    std::ostringstream out;
    out.precision(17);
    out << *real;
    return out.str();
  }
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* texts = std::get_if<std::vector<std::string>>(&value)) {
    std::string lines;
    for (const std::string& line : *texts) {
      if (line.find('\n') != std::string::npos) {
        throw setting_error(std::string(o.variable) + ": a region rule must be one line, got " + quoted(line));
      }
      lines += line + "\n";
    }
    return lines;
  }
  return "";
}

void set_option(profile_options& options, const option& o, std::string_view setting, const option_value& value) {
  const std::string name(setting);
  const auto wrong = [&] { return setting_error(name + " needs " + expected_of(o.kind)); };
  const bool none = std::holds_alternative<std::monostate>(value);
  switch (o.kind) {
    case option_kind::count:
    case option_kind::optional_count: {
      if (none && o.kind == option_kind::optional_count) break;
      const auto* number = std::get_if<std::uint64_t>(&value);
      if (number == nullptr) throw wrong();
      if (*number < o.min) throw setting_error(name + " must be at least " + std::to_string(o.min) + ", not " + std::to_string(*number));
      if (*number > o.max) throw setting_error(name + " must be at most " + std::to_string(o.max) + ", not " + std::to_string(*number));
      break;
    }
    case option_kind::flag:
      if (!std::holds_alternative<bool>(value)) throw wrong();
      break;
    case option_kind::optional_number:
      if (!none && !std::holds_alternative<double>(value)) throw wrong();
      break;
    case option_kind::optional_path:
      if (!none && !std::holds_alternative<std::string>(value)) throw wrong();
      break;
    case option_kind::run_marker: {
      const auto* text = std::get_if<std::string>(&value);
      if (text == nullptr) throw wrong();
      try {
        (void)run_marker_rule(*text);
      } catch (const std::invalid_argument& e) {
        throw setting_error(name + ": " + e.what());
      }
      break;
    }
    case option_kind::region_rules: {
      const auto* texts = std::get_if<std::vector<std::string>>(&value);
      if (texts == nullptr) throw wrong();
      for (const std::string& text : *texts) {
        try {
          (void)parse_region_arg(text);
        } catch (const std::invalid_argument& e) {
          throw setting_error(name + ": " + e.what());
        }
      }
      break;
    }
    case option_kind::graph_attribution: {
      const auto* text = std::get_if<std::string>(&value);
      if (text == nullptr) throw wrong();
      if (!parse_graph_attribution(*text)) {
        throw setting_error(name + " must be 'capture' or 'launch', not " + quoted(*text));
      }
      break;
    }
  }
  o.put(options, value);
}

profile_options command_defaults() {
  profile_options options;
  options.analysis.region_rules = default_region_rules();
  options.uses_inference_function = false;
  return options;
}

bool same_value(const profile_options& options, const profile_options& baseline, const option& o) {
  if (o.kind == option_kind::region_rules) return options.analysis.region_rules == baseline.analysis.region_rules;
  if (o.kind == option_kind::run_marker) return options.analysis.run_marker == baseline.analysis.run_marker;
  return o.get(options) == o.get(baseline);
}

std::string default_text(const option& o, bool python) {
  const profile_options defaults;
  switch (o.kind) {
    case option_kind::count: return std::to_string(std::get<std::uint64_t>(o.get(defaults)));
    case option_kind::flag: {
      const bool on = std::get<bool>(o.get(defaults));
      return python ? (on ? "True" : "False") : (on ? "on" : "off");
    }
    case option_kind::graph_attribution: return quoted(std::get<std::string>(o.get(defaults)));
    case option_kind::run_marker: return python ? "None" : "regionprof.profiled_run";
    case option_kind::region_rules: return python ? "None" : "the defaults";
    default: {
      const option_value value = o.get(defaults);
      if (std::holds_alternative<std::monostate>(value)) return python ? "None" : "none";
      return option_text(o, value);
    }
  }
}

}  // namespace options
}  // namespace regionprof
