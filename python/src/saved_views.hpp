// regionprof._native views of saved reports: a JSON report or a job report rendered again with the
// writers that produced it (regionprof.load).
#pragma once

#include <nanobind/nanobind.h>

namespace regionprof::python {

/// Adds `load_profile(path)` -> SavedProfile and `load_job(ranks)` -> SavedJob (markdown(), html()) to
/// `m`. A file that is not a readable profile raises ValueError naming the file and the key.
///
/// ```
/// regionprof::python::add_saved_views(m);  // in NB_MODULE
/// ```
void add_saved_views(nanobind::module_& m);

}  // namespace regionprof::python
