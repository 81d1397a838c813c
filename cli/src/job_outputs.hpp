// The outputs of a job report (`regionprof merge`, `regionprof analyze` with several traces), and the
// analysis of one trace per rank on a pool of threads.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "regionprof/job.hpp"
#include "report_settings.hpp"

namespace regionprof::cli {

/// Writes what `settings` asks for: the job JSON to -o, its Markdown to --markdown, its Chrome trace
/// to --trace, and the Markdown to `out` when there is no -o. Throws std::runtime_error naming a file
/// that cannot be written.
///
/// ```
/// write_job_outputs(regionprof::merge_ranks(std::move(profiles)), settings, std::cout);
/// ```
void write_job_outputs(const job_report& job, const report_settings& settings, std::ostream& out);

/// Imports and analyses every trace with `settings.analysis`, one thread per core (at most one per
/// file), and returns each one's profile without its events (Profile::without_events), in the order of
/// `paths`.
/// The first failure in that order is rethrown (import_error names the file).
///
/// ```
/// auto profiles = analyze_traces({"rank0.json.gz", "rank1.json.gz"}, settings);
/// ```
std::vector<named_profile> analyze_traces(const std::vector<std::string>& paths, const report_settings& settings);

}  // namespace regionprof::cli
