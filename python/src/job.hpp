// regionprof._native's job API (job.cpp): merge_profiles and the NativeJob it returns.
#pragma once

#include <nanobind/nanobind.h>

/// Adds merge_profiles and NativeJob to the module.
///
/// ```
/// NB_MODULE(_native, m) { define_job_api(m); }
/// ```
void define_job_api(nanobind::module_& m);
