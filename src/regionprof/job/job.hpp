// A job report: the profiles of the ranks of one distributed job (one process per rank), side by side,
// with per-run and per-region statistics across ranks that show the stragglers (docs/report-schema.md,
// "Job report").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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
/// one job report. A profile's rank is its target's `rank` (trace::target, the report's `target.rank`),
/// else its `target.distributedInfo.rank` (Kineto's, a foreign member), else its place in `profiles`; when some profile has none or
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

}  // namespace regionprof
