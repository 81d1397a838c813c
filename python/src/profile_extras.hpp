// regionprof._native additions for the Python package: output path expansion (the native writers' own).
#pragma once

#include <nanobind/nanobind.h>

namespace regionprof::python {

/// Adds `expand_output_path(pattern, window=None)` to `m`.
///
/// ```
/// regionprof::python::add_profile_extras(m);  // in NB_MODULE, after nb::class_<regionprof::Profile>
/// ```
void add_profile_extras(nanobind::module_& m);

}  // namespace regionprof::python
