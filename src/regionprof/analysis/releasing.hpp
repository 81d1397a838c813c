// analyze() for callers that give up the trace's CPU intervals: Profile::analyzed_without_events.
#pragma once

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::detail {

/// analyze(input, options), but `input.intervals` is emptied (its memory freed) once the passes that
/// read intervals are done, before the result is assembled; the rest of `input` is unchanged.
analysis_result analyze_releasing_intervals(trace& input, const analysis_options& options);

}  // namespace regionprof::detail
