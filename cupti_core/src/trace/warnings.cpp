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

// Values ascend; codes appended on parallel branches may leave a gap until they meet.
constexpr bool ascending() {
  for (std::size_t i = 1; i < warning_codes.size(); ++i) {
    if (warning_codes[i - 1].code >= warning_codes[i].code) return false;
  }
  return true;
}
static_assert(ascending(), "warning_codes.def: values must ascend (append new codes at the end)");

constexpr std::array warning_sources{warning_source::core, warning_source::nvtx, warning_source::cupti,
                                     warning_source::import};

}  // namespace

std::string_view to_string(warning_code code) noexcept {
  for (const warning_code_info& info : warning_codes) {
    if (info.code == code) return info.name;
  }
  return "UNKNOWN";
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
