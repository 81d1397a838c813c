// Python's keyword options, made from the option table (regionprof/options/option_table.hpp): which
// keywords regionprof.profile, analyze and run take, with their defaults and docs (option_table), and a
// dict of keywords made a profile_options with Python's exception types, each message naming the keyword.
#pragma once

#include <nanobind/nanobind.h>

#include <string_view>

#include "regionprof/options/option_table.hpp"

namespace regionprof::python {

/// The option surface of a Python function: "profile" (regionprof.profile, regionprof.torch.profile),
/// "analyze" or "run". ValueError for another name.
options::option_surface surface_of(std::string_view function);

/// `base` with each keyword of `given` (a dict) set. A None region rule list or run marker keeps the
/// default. TypeError for a keyword `function` does not take or a value of the wrong type; ValueError for
/// a value it does not take (`measured_runs must be at least 1, not 0`).
profile_options options_from_python(std::string_view function, nanobind::handle given, profile_options base);

/// Adds `option_table(function)` and `run_flags(options)` to `m`.
///
/// ```
/// regionprof::python::add_options_api(m);  // in NB_MODULE
/// ```
void add_options_api(nanobind::module_& m);

}  // namespace regionprof::python
