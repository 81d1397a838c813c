// The one run-marker rule builder, for every front end (CLI `--run-marker`, `REGIONPROF_RUN_MARKER`,
// Python's `run_marker`), and its one default (regionprof::default_run_marker, analysis.hpp).
#pragma once

#include <optional>
#include <string_view>

#include "regionprof/analysis/analysis.hpp"

namespace regionprof {

/// No regex gives default_run_marker(): the name `regionprof.profiled_run` exactly, in any domain, so
/// it matches what the harness emits (NVTX domain `regionprof`) and a Kineto trace's
/// `torch.profiler.record_function("regionprof.profiled_run")` alike. A regex gives that RE2 regex
/// over the whole name, in any domain. Throws std::invalid_argument (validate_name_rule's message,
/// role `run marker`) for an empty or invalid regex.
///
/// ```
/// regionprof::analysis_options options;
/// options.run_marker = regionprof::run_marker_rule(R"(ProfilerStep#\d+)");
/// options.run_marker = regionprof::run_marker_rule(std::nullopt);  // the default
/// ```
name_rule run_marker_rule(const std::optional<std::string_view>& regex);

}  // namespace regionprof
