// regionprof._native additions for the Python package: output path expansion and report extras that
// only the Python layer knows (the torch target's kind, COMPILED_MODULES).
#pragma once

#include <nanobind/nanobind.h>

namespace regionprof::python {

/// Adds `expand_output_path` and `with_report_extras` to `m` (after NativeProfile).
///
/// ```
/// regionprof::python::add_profile_extras(m);  // in NB_MODULE, after nb::class_<regionprof::Profile>
/// ```
void add_profile_extras(nanobind::module_& m);

}  // namespace regionprof::python
