// The option table: every user option, from its one declaration (options/profile_options.def,
// analysis/analysis_options.def, statistics/stopping_options.def), with what every front-end needs of it:
// the command's flag, value name and help; the injection library's environment variable; Python's keyword;
// its kind, bounds and default; and how to read, write and check its value in a profile_options. The
// command's flags and --help, the environment codec, Python's keywords with their messages, the
// generated stubs (_options.pyi) and the options tables of docs/ are all made from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "regionprof/options/profile_options.hpp"
#include "regionprof/output/output.hpp"

namespace regionprof::options {

/// Who shows an option (a bit mask): the command's `analyze` and `run`, the injection library's
/// environment, and Python's regionprof.profile (and regionprof.torch.profile), analyze, run and
/// regionprof.torch.profiler (the step API: harness/step_profiler.hpp).
enum option_surface : unsigned {
  cli_analyze = 1u << 0,
  cli_run = 1u << 1,
  environment = 1u << 2,
  py_profile = 1u << 3,
  py_analyze = 1u << 4,
  py_run = 1u << 5,
  py_steps = 1u << 6,
};

/// How an option's value is written and checked.
enum class option_kind : std::uint8_t {
  count = 0,              ///< a whole number in [min, max]
  optional_count = 1,     ///< a whole number in [min, max], or none
  flag = 2,               ///< on or off
  optional_number = 3,    ///< a number (a fraction, seconds), or none; checked by the code that uses it
  optional_path = 4,      ///< a file path pattern (placeholders %r %l %h %p %n %w %%), or none
  run_marker = 5,         ///< a regex (RE2) marking the runs (regionprof::run_marker_rule)
  region_rules = 6,       ///< REGEX[=KIND] rules, in order (regionprof::parse_region_arg)
  graph_attribution = 7,  ///< `capture` or `launch`
};

/// The kind's name: `count`, `optional_count`, `flag`, `optional_number`, `optional_path`, `run_marker`,
/// `region_rules`, `graph_attribution`.
std::string_view to_string(option_kind kind) noexcept;

/// An option's value as the front-ends hand it over: none, a flag, a whole number, a number, a text,
/// or texts (region rules).
using option_value =
    std::variant<std::monostate, bool, std::uint64_t, double, std::string, std::vector<std::string>>;

/// A value that an option does not take. what() names the setting (`option --row-limit`,
/// `REGIONPROF_ROW_LIMIT`, `row_limit`) and says what it takes: `option --row-limit needs a whole number
/// from 1 to 1000000, got '0'`.
class setting_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// One option, from its declaration.
struct option {
  std::string_view member;      ///< the C++ member (`row_limit`; `analysis.` or `stopping.` below)
  std::string_view group;       ///< "" (profile_options), "analysis" or "stopping"
  option_kind kind = option_kind::count;
  std::uint64_t min = 0;        ///< a count's bounds
  std::uint64_t max = 0;
  unsigned surfaces = 0;        ///< option_surface bits
  std::string_view python;      ///< the keyword ("" none)
  std::string_view flag;        ///< the command's flag ("" none)
  std::string_view variable;    ///< the environment variable ("" none)
  std::string_view value_name;  ///< in --help: `N`, `REGEX`, `OUT.json` ("" a flag)
  std::string_view doc;         ///< the help text; lines joined by \n
  /// The member's value, as the front-ends hand it over (region rules and the run marker as their text).
  option_value (*get)(const profile_options& options);
  /// Sets the member (the value is of the kind's type: set_option checks it first).
  void (*put)(profile_options& options, const option_value& value);

  bool on(option_surface surface) const noexcept { return (surfaces & surface) != 0; }
};

/// Every option, in declaration order: profile_options.def, then analysis_options.def, then
/// stopping_options.def.
///
/// ```
/// for (const regionprof::options::option& o : regionprof::options::all_options()) {
///   if (o.on(regionprof::options::cli_run)) std::cout << o.flag << "\n";
/// }
/// ```
std::span<const option> all_options() noexcept;

/// The options a surface shows, in declaration order.
std::vector<const option*> options_of(option_surface surface);

/// The option a surface shows under `name` (its flag for the command, its variable for the environment,
/// its keyword for Python), or null.
const option* find_option(option_surface surface, std::string_view name);

/// The one whole-number parser of the command line and the environment: a non-negative decimal integer
/// in [min, max]; throws setting_error "<setting> needs a whole number from <min> to <max>, got '<text>'".
///
/// ```
/// regionprof::options::parse_count("option --runs-detail", "20", 0, 1'000'000'000);  // 20
/// ```
std::uint64_t parse_count(std::string_view setting, std::string_view text, std::uint64_t min, std::uint64_t max);

/// What a command's output flags ask to be written: the JSON report to `json` (-o), the Markdown report
/// to `markdown` (--markdown), the trace to `trace` (--trace), and the Markdown report to standard
/// output when there is no -o.
output_set command_outputs(const std::optional<std::string>& json, const std::optional<std::string>& markdown,
                           const std::optional<std::string>& trace);

/// Parses `text` as `o`'s value, as the command line and the environment give it: a decimal whole number
/// in [min, max]; `1` or `0` for a flag; a number; a path; a regex; one rule (the command repeats the
/// flag; the environment has one per line); `capture` or `launch`. Throws setting_error naming `setting`.
option_value parse_option_text(const option& o, std::string_view setting, std::string_view text);

/// `value` as text, as parse_option_text reads it back (region rules one per line).
std::string option_text(const option& o, const option_value& value);

/// Checks `value` (of the kind's type, in bounds, a valid rule or mode) and sets it (region rules: all of
/// them, replacing those `options` holds). Throws setting_error naming `setting`: `option --row-limit needs
/// a whole number from 1 to 1000000, got '0'`; `regions: region rule 'layer_(': invalid regex ...`.
void set_option(profile_options& options, const option& o, std::string_view setting, const option_value& value);

/// The options `regionprof analyze` and `run` start from (and the injection library, which `run`
/// configures): profile_options' defaults with the reference module's region rules (aot_module:,
/// untuned_module:) and no inference function.
profile_options command_defaults();

/// True when `options` and `baseline` hold the same value of `o`.
bool same_value(const profile_options& options, const profile_options& baseline, const option& o);

/// The default value's text in docs and stubs: `20`, `None`, `'capture'`, `True`.
std::string default_text(const option& o, bool python);

}  // namespace regionprof::options
