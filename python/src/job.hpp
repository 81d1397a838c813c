// regionprof._native's job API (job.cpp): NativeJob, made by merge_profiles or read_job_text.
#pragma once

#include <nanobind/nanobind.h>

/// Adds NativeJob, merge_profiles and read_job_text to the module.
///
/// ```
/// NB_MODULE(_native, m) { define_job_api(m); }
/// ```
void define_job_api(nanobind::module_& m);
