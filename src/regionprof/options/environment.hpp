// The injection library's settings as environment variables: `regionprof run` encodes its options with
// to_environment, the library decodes them with from_environment; both from the option table, so the
// two sides cannot drift apart. Every option with a variable (REGIONPROF_RUN_MARKER, REGIONPROF_REGIONS,
// ..., docs/cli.md "Environment") travels this way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regionprof/options/option_table.hpp"

namespace regionprof::options {

/// A variable's value, or nullopt when it is unset or empty.
using environment_lookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The file the first process to load the injection library creates: it alone is profiled (unset: every
/// process). `regionprof run`'s protocol with the library, not an option.
inline constexpr const char* claim_variable = "REGIONPROF_CLAIM";

/// The variables that give `options`: one per option with a variable whose value differs from
/// `baseline`'s, as (name, value) pairs in declaration order. A region rule holding a newline cannot be
/// encoded (they travel one per line): setting_error.
///
/// ```
/// regionprof::profile_options o = regionprof::options::command_defaults();
/// o.analysis.row_limit = 5;
/// auto variables = regionprof::options::to_environment(o);  // {"REGIONPROF_ROW_LIMIT", "5"}
/// ```
std::vector<std::pair<std::string, std::string>> to_environment(const profile_options& options,
                                                                const profile_options& baseline = command_defaults());

/// `baseline` with every option whose variable `lookup` gives, checked as the command's flags are;
/// setting_error naming the variable. from_environment(lookup of to_environment(o)) gives back `o`.
profile_options from_environment(const environment_lookup& lookup, profile_options baseline = command_defaults());

/// The options' variables `regionprof run` owns: those of its flags (the caller's values never reach the
/// program). The others (REGIONPROF_DEVICE_BUFFER_MB, REGIONPROF_SYNC_RECORDS) pass through.
std::vector<std::string_view> owned_variables();

/// This process's environment as an environment_lookup (std::getenv; an empty value is unset).
std::optional<std::string> process_environment(std::string_view name);

}  // namespace regionprof::options
