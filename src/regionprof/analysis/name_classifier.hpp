// Maps CPU intervals to "run marker", "region r" or "nothing" by the analysis rules (docs/design.md, rules 2, 3 and 11).
//
// Rules are evaluated once per distinct (name id, domain), never per event: the first lookup of a name
// fills a table indexed by name id; a name seen in a second domain goes to a small map keyed by the pair.
// API calls never match.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/name_regex.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::detail {

/// The class of an interval: no_class, marker_class, or region_class + region index.
inline constexpr std::uint32_t no_class = 0;
inline constexpr std::uint32_t marker_class = 1;
inline constexpr std::uint32_t region_class = 2;

/// A region id produced by a rule: `kind:name`.
struct region_def {
  std::string id;
  std::string name;
  std::string kind;
};

class name_classifier {
 public:
  /// Compiles the rules. Throws std::invalid_argument naming the rule when a regex is invalid.
  name_classifier(const trace& input, const analysis_options& options);

  /// The class of `interval` (see no_class). Precondition: interval.name < strings.size().
  std::uint32_t classify(const cpu_interval& interval) {
    if (interval.kind != interval_kind::range && interval.kind != interval_kind::cpu_op &&
        interval.kind != interval_kind::python_function) {
      return no_class;
    }
    const cache_entry entry = by_name_[interval.name];
    if (entry.domain_plus_one == static_cast<std::uint32_t>(interval.domain) + 1) return entry.value;
    return classify_slow(interval.name, interval.domain);
  }

  const std::vector<region_def>& regions() const noexcept { return regions_; }
  /// A one-line description of the run marker rule for messages, e.g. `exact 'x' in domain 'd'`.
  std::string marker_description() const;

 private:
  struct compiled_rule {
    const name_rule* rule = nullptr;
    std::shared_ptr<const re2::RE2> regex;  ///< regex rules only; shared: RE2 is not copyable
    bool has_group = false;
    std::optional<domain_index> domain;  ///< empty: any domain
    bool domain_absent = false;          ///< the rule names a domain the trace does not have
  };
  struct cache_entry {
    std::uint32_t domain_plus_one = 0;  ///< 0: not computed yet
    std::uint32_t value = no_class;
  };

  std::uint32_t classify_slow(name_id name, domain_index domain);
  std::uint32_t evaluate(name_id name, domain_index domain);
  /// The part of `text` that names the region when `rule` matches, else nullopt.
  static std::optional<std::string> match(const compiled_rule& rule, std::string_view text);
  compiled_rule compile(const name_rule& rule, const char* role) const;

  const trace& trace_;
  compiled_rule marker_;
  std::vector<compiled_rule> region_rules_;
  std::vector<cache_entry> by_name_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_name_and_domain_;  // per distinct pair, rare
  std::vector<region_def> regions_;
  std::unordered_map<std::string, std::uint32_t> region_index_;
};

}  // namespace regionprof::detail
