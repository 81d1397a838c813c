// regionprof._native additions for the Python package: output path expansion (the native writers' own)
// and the memory table's rows (typed, never re-parsed from the JSON text).
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "regionprof/model/profile.hpp"

namespace regionprof::python {

/// The path an output pattern names in this process: with `window`, that window's (%w, which the pattern
/// must hold); with `process_index` and `process_count`, that process's of `regionprof run --processes`
/// (%n). Throws process_identity_error for a pattern that cannot be used.
std::string output_path_here(const std::string& pattern, std::optional<std::uint64_t> window,
                             std::optional<std::uint64_t> process_index = std::nullopt,
                             std::optional<std::uint64_t> process_count = std::nullopt);

/// One row of `Profile.to_pandas(table="memory")` (docs/python.md): run index, owner (a region id,
/// `(residual)` or `(run total)`), device key (`cpu`, `cuda:N`), allocated bytes, freed bytes, allocations,
/// frees, peak allocated bytes (None: no peak).
using memory_tuple = std::tuple<std::size_t, std::string, std::string, std::uint64_t, std::uint64_t, std::uint64_t,
                                std::uint64_t, std::optional<std::int64_t>>;

/// regionprof::memory_rows(profile) (report.hpp, docs/design.md rule 21) as tuples for Python.
std::vector<memory_tuple> memory_tuples(const regionprof::Profile& profile);

/// Adds `expand_output_path(pattern, window=None)` to `m`.
///
/// ```
/// regionprof::python::add_profile_extras(m);  // in NB_MODULE, after nb::class_<regionprof::Profile>
/// ```
void add_profile_extras(nanobind::module_& m);

}  // namespace regionprof::python
