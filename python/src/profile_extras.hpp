// regionprof._native additions for the Python package: output path expansion (the native writers' own).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>

namespace regionprof::python {

/// The path an output pattern names in this process: with `window`, that window's (%w, which the pattern
/// must hold); with `process_index` and `process_count`, that process's of `regionprof run --processes`
/// (%n). Throws process_identity_error for a pattern that cannot be used.
std::string output_path_here(const std::string& pattern, std::optional<std::uint64_t> window,
                             std::optional<std::uint64_t> process_index = std::nullopt,
                             std::optional<std::uint64_t> process_count = std::nullopt);

/// Adds `expand_output_path(pattern, window=None)` to `m`.
///
/// ```
/// regionprof::python::add_profile_extras(m);  // in NB_MODULE, after nb::class_<regionprof::Profile>
/// ```
void add_profile_extras(nanobind::module_& m);

}  // namespace regionprof::python
