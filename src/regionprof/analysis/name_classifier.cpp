#include "regionprof/analysis/name_classifier.hpp"

#include <stdexcept>

namespace regionprof::detail {

namespace {

std::string_view match_name(match_kind kind) {
  switch (kind) {
    case match_kind::exact: return "exact";
    case match_kind::prefix: return "prefix";
    case match_kind::regex: return "regex";
  }
  return "exact";
}

}  // namespace

name_classifier::compiled_rule name_classifier::compile(const name_rule& rule, const char* role) const {
  compiled_rule compiled;
  compiled.rule = &rule;
  validate_name_rule(rule, role);
  if (rule.match == match_kind::regex) {
    std::string error;
    compiled.regex = compile_name_regex(rule.pattern, error);  // validated above: never null
    compiled.has_group = compiled.regex->NumberOfCapturingGroups() >= 1;
  }
  if (!rule.domain.empty()) {
    compiled.domain_absent = true;
    const name_id id = trace_.strings.find(rule.domain);
    for (std::size_t i = 0; id != string_table::npos && i < trace_.domains.size(); ++i) {
      if (trace_.domains[i] == id) {
        compiled.domain = static_cast<domain_index>(i);
        compiled.domain_absent = false;
        break;
      }
    }
  }
  return compiled;
}

name_classifier::name_classifier(const trace& input, const analysis_options& options)
    : trace_(input), by_name_(input.strings.size()) {
  marker_ = compile(options.run_marker, "run marker");
  region_rules_.reserve(options.region_rules.size());
  for (const name_rule& rule : options.region_rules) region_rules_.push_back(compile(rule, "region rule"));
}

std::optional<std::string> name_classifier::match(const compiled_rule& rule, std::string_view text) {
  const name_rule& r = *rule.rule;
  switch (r.match) {
    case match_kind::exact:
      if (text == r.pattern) return std::string(text);
      return std::nullopt;
    case match_kind::prefix:
      if (text.starts_with(r.pattern)) return std::string(text.substr(r.pattern.size()));
      return std::nullopt;
    case match_kind::regex: {
      const re2::StringPiece whole(text.data(), text.size());
      if (!rule.has_group) {
        if (!re2::RE2::FullMatch(whole, *rule.regex)) return std::nullopt;
        return std::string(text);
      }
      re2::StringPiece group;  // data() stays null when group 1 did not take part in the match
      if (!re2::RE2::FullMatch(whole, *rule.regex, &group)) return std::nullopt;
      return group.data() ? std::string(group.data(), group.size()) : std::string();
    }
  }
  return std::nullopt;
}

std::uint32_t name_classifier::evaluate(name_id name, domain_index domain) {
  const std::string_view text = trace_.strings.view(name);
  auto domain_ok = [domain](const compiled_rule& rule) {
    return !rule.domain_absent && (!rule.domain || *rule.domain == domain);
  };
  if (domain_ok(marker_) && match(marker_, text)) return marker_class;
  for (const compiled_rule& rule : region_rules_) {
    if (!domain_ok(rule)) continue;
    std::optional<std::string> part = match(rule, text);
    if (!part) continue;
    std::string id = rule.rule->kind + ":" + *part;
    auto [it, added] = region_index_.try_emplace(id, static_cast<std::uint32_t>(regions_.size()));
    if (added) regions_.push_back({std::move(id), std::move(*part), rule.rule->kind});
    return region_class + it->second;
  }
  return no_class;
}

std::uint32_t name_classifier::classify_slow(name_id name, domain_index domain) {
  cache_entry& entry = by_name_[name];
  if (entry.domain_plus_one == 0) {
    entry.value = evaluate(name, domain);
    entry.domain_plus_one = static_cast<std::uint32_t>(domain) + 1;
    return entry.value;
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(name) << 16) | domain;
  if (auto found = by_name_and_domain_.find(key); found != by_name_and_domain_.end()) return found->second;
  const std::uint32_t value = evaluate(name, domain);
  by_name_and_domain_.emplace(key, value);
  return value;
}

std::string name_classifier::marker_description() const {
  const name_rule& r = *marker_.rule;
  std::string text = std::string(match_name(r.match)) + " '" + r.pattern + "'";
  text += r.domain.empty() ? std::string(" in any domain") : " in domain '" + r.domain + "'";
  return text;
}

}  // namespace regionprof::detail
