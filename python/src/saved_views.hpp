// regionprof._native view of a saved job report: its rank profiles joined again (regionprof.load).
#pragma once

#include <nanobind/nanobind.h>

namespace regionprof::python {

/// Adds `load_job(ranks)` -> SavedJob (markdown(), json()) to `m`; `ranks` holds (name, JSON text) of
/// each rank's profile. A rank that is not a readable profile raises ProfileReadError (a ValueError)
/// naming it.
///
/// ```
/// regionprof::python::add_saved_views(m);  // in NB_MODULE, after ProfileReadError
/// ```
void add_saved_views(nanobind::module_& m);

}  // namespace regionprof::python
