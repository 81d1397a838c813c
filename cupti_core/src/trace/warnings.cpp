#include "regionprof/warnings.hpp"

#include <array>

namespace regionprof {
namespace {

constexpr std::array warning_codes{
#define REGIONPROF_WARNING_CODE(enumerator, value, code, sources, meaning, action) \
  warning_code_info{warning_code::enumerator, code, sources, meaning, action},
#include "regionprof/warning_codes.def"
#undef REGIONPROF_WARNING_CODE
};

// Values increase along the table; a value may be skipped (one reserved for a code another branch
// appends), so to_string() finds a code by a table indexed by value.
constexpr bool increasing() {
  for (std::size_t i = 1; i < warning_codes.size(); ++i) {
    if (static_cast<std::size_t>(warning_codes[i].code) <= static_cast<std::size_t>(warning_codes[i - 1].code)) {
      return false;
    }
  }
  return true;
}
static_assert(increasing(), "warning_codes.def: values must increase in table order");

constexpr std::size_t value_count = static_cast<std::size_t>(warning_codes.back().code) + 1;
constexpr std::size_t no_row = static_cast<std::size_t>(-1);
/// Per enum value: its row in warning_codes, or no_row for a reserved value.
constexpr std::array<std::size_t, value_count> row_of_value = [] {
  std::array<std::size_t, value_count> rows{};
  rows.fill(no_row);
  for (std::size_t i = 0; i < warning_codes.size(); ++i) rows[static_cast<std::size_t>(warning_codes[i].code)] = i;
  return rows;
}();

constexpr std::array warning_sources{warning_source::core, warning_source::nvtx, warning_source::cupti,
                                     warning_source::import};

}  // namespace

std::string_view to_string(warning_code code) noexcept {
  const auto value = static_cast<std::size_t>(code);
  if (value >= row_of_value.size() || row_of_value[value] == no_row) return "UNKNOWN";
  return warning_codes[row_of_value[value]].name;
}

std::string_view to_string(warning_source source) noexcept {
  switch (source) {
    case warning_source::core: return "core";
    case warning_source::nvtx: return "nvtx";
    case warning_source::cupti: return "cupti";
    case warning_source::import: return "import";
  }
  return "core";
}

std::optional<warning_code> warning_code_from_string(std::string_view text) noexcept {
  for (const warning_code_info& info : warning_codes) {
    if (info.name == text) return info.code;
  }
  return std::nullopt;
}

std::optional<warning_source> warning_source_from_string(std::string_view text) noexcept {
  for (warning_source source : warning_sources) {
    if (to_string(source) == text) return source;
  }
  return std::nullopt;
}

std::span<const warning_code_info> warning_code_table() noexcept { return warning_codes; }

}  // namespace regionprof
