// A job report: the profiles of the ranks of one distributed job (one process per rank), side by side,
// with per-run and per-region statistics across ranks that show the stragglers (docs/report-schema.md,
// "Job report").
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/model/profile.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// One rank of the job: its identity and its full profile.
struct job_rank {
  std::uint64_t rank = 0;
  std::string host;                ///< target.host; "" when the profile does not say
  std::optional<std::int64_t> pid;  ///< target.pid, when the profile says
  std::string file;                ///< named_profile::file
  Profile profile;
};

/// One figure across the ranks that have it. Times in ns; the median of an even count is the mean of
/// the two middle values (stats::median, the one median of src/regionprof/statistics).
struct cross_rank_figure {
  double median_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  std::uint64_t slowest_rank = 0;   ///< the rank with max_ns (the lowest such rank on ties)
  std::optional<double> imbalance;  ///< max / median; absent when the median is 0
  std::size_t ranks = 0;            ///< how many ranks have the figure
};

/// One region of one run index across ranks (`cross_rank.runs[i].regions[j]`).
struct cross_rank_region {
  std::string region_id;
  cross_rank_figure cpu;
  std::optional<cross_rank_figure> device;  ///< when some rank has the region's device time
};

/// One run index across ranks (`cross_rank.runs[i]`).
struct cross_rank_run {
  std::size_t run_index = 0;
  cross_rank_figure wall;
  cross_rank_figure cpu;
  std::optional<cross_rank_figure> device;       ///< when some rank has device data
  std::optional<cross_rank_figure> device_busy;
  std::optional<cross_rank_figure> device_span;
  std::vector<cross_rank_region> regions;  ///< by first appearance over ranks in rank order
};

/// The job: ranks in ascending rank order, the cross-rank statistics, and the job's own warnings
/// (RANK_MISMATCH; every rank's warnings stay in its profile).
struct job_report {
  std::string created_at;  ///< ISO-8601 (`created_at`); empty: the time the report is written
  std::vector<job_rank> ranks;
  std::vector<cross_rank_run> runs;  ///< one per run index up to the largest run count of any rank
  std::vector<warning> warnings;
};

/// Joins rank profiles (live, Profile(trace, options).without_events(), or read back, read_profile) into
/// one job report. A profile's rank is its target's `rank` (the report's
/// `target.rank`: a member of trace::target_extra_json), else its
/// `target.distributedInfo.rank` (Kineto), else its place in `profiles`; when some profile has none or
/// two have the same, every rank is its place, with a RANK_MISMATCH warning. Ranks with different run
/// counts or regions are merged by run index, with a RANK_MISMATCH warning, never dropped: a figure's
/// statistics are over the ranks that have it. Throws std::invalid_argument for an empty `profiles`.
///
/// ```
/// std::vector<regionprof::named_profile> profiles;
/// for (const char* p : {"prof-0.json", "prof-1.json"}) profiles.push_back({p, regionprof::read_profile(p)});
/// regionprof::job_report job = regionprof::merge_ranks(std::move(profiles));
/// std::printf("slowest in run 0: rank %llu\n", (unsigned long long)job.runs[0].cpu.slowest_rank);
/// ```
job_report merge_ranks(std::vector<named_profile> profiles);

/// Reads a job report that job_to_json wrote (`"kind": "regionprof_job"`) back into the job_report:
/// each rank's profile is read as read_profile_text reads one (named by its `file`), and the ranks
/// are joined again by merge_ranks, so job_to_json of the result is the file's text byte for byte
/// (the `tool` version aside, for a file of another version). `name` stands for the file in messages.
/// Throws profile_read_error (profile_reader.hpp) naming the file and the key:
/// `job.json: ranks[1].profile.runs: required key missing`.
///
/// ```
/// regionprof::job_report job = regionprof::read_job("job.json");
/// std::cout << regionprof::job_to_markdown(job);
/// ```
job_report read_job_text(std::string_view text, const std::string& name = "<memory>");

/// read_job_text of the file `path`; profile_read_error naming it when it cannot be read.
job_report read_job(const std::string& path);

/// A saved report of either kind: exactly one of the two is set.
struct saved_report {
  std::optional<Profile> profile;  ///< a profile (read_profile_text)
  std::optional<job_report> job;   ///< a job report (`"kind": "regionprof_job"`, read_job_text)
};

/// Reads a saved profile or job report, whichever `text` holds (by its `kind`), from one parse; errors
/// as read_profile_text and read_job_text give them.
///
/// ```
/// regionprof::saved_report saved = regionprof::read_saved_report("any.json");
/// std::cout << (saved.job ? regionprof::job_to_markdown(*saved.job) : saved.profile->markdown());
/// ```
saved_report read_saved_report_text(std::string_view text, const std::string& name = "<memory>");

/// read_saved_report_text of the file `path`.
saved_report read_saved_report(const std::string& path);

/// The job report as JSON (`"kind": "regionprof_job"`, schema_version 1; docs/report-schema.md): one
/// member per line, 2-space indent, final newline; each rank's profile as its JSON report (to_json), nested.
///
/// ```
/// std::ofstream("job.json") << regionprof::job_to_json(job);
/// ```
std::string job_to_json(const job_report& job);

/// The job report as Markdown: the stragglers first (each run's regions by time lost to the slowest
/// rank, max - median), then the ranks, the runs across ranks, and the warnings.
///
/// ```
/// std::cout << regionprof::job_to_markdown(job);
/// ```
std::string job_to_markdown(const job_report& job);

/// The job as a Chrome trace: one process per rank (pid = rank), run i of every rank starting at the
/// same time (the end of the slowest rank's run i - 1: clocks of different hosts are never compared),
/// and within a run its regions one after another in order of appearance, CPU time on thread 0 and
/// device time on thread 1 (their places inside a run are not measured, only their lengths).
///
/// ```
/// std::ofstream out("job_trace.json", std::ios::binary);
/// regionprof::write_job_trace(job, out);
/// ```
void write_job_trace(const job_report& job, std::ostream& out);

}  // namespace regionprof
