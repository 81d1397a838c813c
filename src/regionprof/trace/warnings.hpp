// Structured warnings: every loss or anomaly is counted and reported, never dropped silently.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace regionprof {

/// Stable warning codes (docs/report-schema.md, "Warning codes"), from the one table
/// `warning_codes.def`. The string form is part of the report schema.
enum class warning_code : std::uint8_t {
#define REGIONPROF_WARNING_CODE(enumerator, value, code, sources, meaning, action) enumerator = value,
#include "regionprof/trace/warning_codes.def"
#undef REGIONPROF_WARNING_CODE
};

/// Which part of regionprof raised a warning.
enum class warning_source : std::uint8_t { core = 0, nvtx = 1, cupti = 2, import = 3 };

/// `UNMAPPED_REGION_EVENTS`, ... exactly as the report writes it.
std::string_view to_string(warning_code code) noexcept;
/// `core`, `nvtx`, `cupti` or `import`.
std::string_view to_string(warning_source source) noexcept;

/// The code whose string form is `text` (`"CUPTI_OVERHEAD"` -> `warning_code::cupti_overhead`), if any.
///
/// ```
/// auto code = regionprof::warning_code_from_string("NO_RUN_MARKERS");  // warning_code::no_run_markers
/// ```
std::optional<warning_code> warning_code_from_string(std::string_view text) noexcept;
/// The source whose string form is `text` (`"cupti"` -> `warning_source::cupti`), if any.
std::optional<warning_source> warning_source_from_string(std::string_view text) noexcept;

/// One row of the warning-code table: what a code means and what the user should do.
struct warning_code_info {
  warning_code code;
  std::string_view name;     ///< `NO_RUN_MARKERS`, as the report writes it
  std::string_view sources;  ///< the sources that raise it, `core, nvtx`
  std::string_view meaning;
  std::string_view action;   ///< what the user should do
};

/// Every warning code in enum order, from `warning_codes.def`.
///
/// ```
/// for (const auto& info : regionprof::warning_code_table()) std::cout << info.name << '\n';
/// ```
std::span<const warning_code_info> warning_code_table() noexcept;

/// One report warning. `message` states the count and what to do about it.
///
/// ```
/// regionprof::warning w{regionprof::warning_code::no_run_markers, regionprof::warning_source::core,
///                       "no run marker matched 'step'; the whole trace is one run"};
/// ```
struct warning {
  warning_code code;
  warning_source source;
  std::string message;
};

}  // namespace regionprof
