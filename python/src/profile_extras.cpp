// Invariants:
// - with_report_extras never edits a profile: it builds a new one from a copy of the trace, with the
//   same analysis options and report context, so its reports and Chrome trace agree with each other.
// - The target kind is a lower-case identifier (torch_module, torch_object): it is written into
//   trace::target_extra_json without escaping, first among the members the harness put there.
#include "profile_extras.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/process_identity.hpp"
#include "regionprof/profile.hpp"
#include "regionprof/warnings.hpp"

namespace nb = nanobind;

namespace regionprof::python {
namespace {

bool is_identifier(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  return true;
}

/// `{"kind":"<kind>", <members of extra>}` for a JSON object text `extra`.
std::string with_kind(const std::string& extra, const std::string& kind) {
  const std::string members = extra.size() >= 2 ? extra.substr(1, extra.size() - 2) : std::string();
  const bool empty = members.find_first_not_of(" \t\n") == std::string::npos;
  return "{\"kind\":\"" + kind + "\"" + (empty ? std::string() : "," + members) + "}";
}

regionprof::Profile with_report_extras(const regionprof::Profile& profile, const std::string& target_kind,
                                       const std::vector<std::pair<std::string, std::string>>& warnings) {
  regionprof::trace source = profile.source();
  if (!target_kind.empty()) {
    if (!is_identifier(target_kind)) throw std::invalid_argument("target kind '" + target_kind + "' is not an identifier");
    source.target_extra_json = with_kind(source.target_extra_json, target_kind);
  }
  for (const auto& [code_text, message] : warnings) {
    const auto code = regionprof::warning_code_from_string(code_text);
    if (!code) throw std::invalid_argument("unknown warning code '" + code_text + "'");
    source.warnings.push_back({*code, regionprof::warning_source::nvtx, message});
  }
  return regionprof::Profile(std::move(source), profile.options(), profile.context());
}

}  // namespace

void add_profile_extras(nb::module_& m) {
  m.def("expand_output_path",
        [](const std::string& pattern) {
          return regionprof::expand_output_path(pattern, regionprof::this_process_identity());
        },
        nb::arg("pattern"),
        "The path an output pattern names in this process (%r rank, %l local rank, %h host, %p pid, %%). "
        "Raises ValueError for a pattern that cannot be used.");
  m.def("with_report_extras", &with_report_extras, nb::arg("profile"), nb::arg("target_kind"), nb::arg("warnings"),
        "A new profile: `target.kind` and (code, message) warnings added to the trace, analysed again.");
}

}  // namespace regionprof::python
