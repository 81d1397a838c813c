// `regionprof analyze` with several traces: the analysis of one trace per rank on a pool of threads.
#pragma once

#include <string>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/job/job.hpp"

namespace regionprof::cli {

/// Imports and analyses every trace with `analysis`, one thread per core (at most one per
/// file), and returns each one's profile without its events (Profile::without_events), in the order of
/// `paths`.
/// The first failure in that order is rethrown (import_error names the file).
///
/// ```
/// auto profiles = analyze_traces({"rank0.json.gz", "rank1.json.gz"}, options.analysis);
/// ```
std::vector<named_profile> analyze_traces(const std::vector<std::string>& paths, const analysis_options& analysis);

}  // namespace regionprof::cli
