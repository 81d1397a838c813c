#include "regionprof/trace/warnings.hpp"

#include <array>

namespace regionprof {
namespace {

constexpr std::array warning_codes{
#define REGIONPROF_WARNING_CODE(enumerator, value, code, sources, meaning, action) \
  warning_code_info{warning_code::enumerator, code, sources, meaning, action},
#include "regionprof/trace/warning_codes.def"
#undef REGIONPROF_WARNING_CODE
};

// The table is indexed by the enum's value: values are dense and in order (0, 1, 2, ...).
constexpr bool dense_in_order() {
  for (std::size_t i = 0; i < warning_codes.size(); ++i) {
    if (static_cast<std::size_t>(warning_codes[i].code) != i) return false;
  }
  return true;
}
static_assert(dense_in_order(), "warning_codes.def: values must be 0, 1, 2, ... in order");

constexpr std::array warning_sources{warning_source::core, warning_source::nvtx, warning_source::cupti,
                                     warning_source::import};

}  // namespace

std::string_view to_string(warning_code code) noexcept {
  const auto index = static_cast<std::size_t>(code);
  return index < warning_codes.size() ? warning_codes[index].name : std::string_view("UNKNOWN");
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
