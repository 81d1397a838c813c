// merge_ranks: rank profiles (the one result model, Profile) -> one job report, with each run's and region's figures across ranks.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "regionprof/job/job.hpp"
#include "regionprof/statistics/statistics.hpp"
#include "regionprof/trace/run_target_json.hpp"

namespace regionprof {
namespace {

/// One rank's value of one figure.
struct sample {
  std::int64_t ns;
  std::uint64_t rank;
};

/// Median (statistics/statistics.hpp, the one place for it), min, max, the slowest rank (lowest on ties)
/// and max / median.
cross_rank_figure figure_of(std::vector<sample>& samples) {
  cross_rank_figure f;
  f.ranks = samples.size();
  if (samples.empty()) return f;
  std::sort(samples.begin(), samples.end(),
            [](const sample& a, const sample& b) { return a.ns != b.ns ? a.ns < b.ns : a.rank > b.rank; });
  f.min_ns = samples.front().ns;
  f.max_ns = samples.back().ns;
  f.slowest_rank = samples.back().rank;  // among equal maxima, the lowest rank sorts last
  thread_local std::vector<double> values;  // reused: a 1,024-rank merge computes a million figures
  values.clear();
  for (const sample& s : samples) values.push_back(static_cast<double>(s.ns));
  f.median_ns = stats::median(values);
  if (f.median_ns > 0) f.imbalance = static_cast<double>(f.max_ns) / f.median_ns;
  return f;
}

std::optional<cross_rank_figure> optional_figure(std::vector<sample>& samples) {
  if (samples.empty()) return std::nullopt;
  return figure_of(samples);
}

/// A profile's identity in its target (trace::target): `rank`, else `distributedInfo.rank` (Kineto's),
/// when a non-negative integer; `host`; `pid`.
struct target_identity {
  std::optional<std::uint64_t> rank;
  std::string host;
  std::optional<std::int64_t> pid;
};

target_identity identity_of(const Profile& profile) {
  const auto as_rank = [](const boost::json::value* v) -> std::optional<std::uint64_t> {
    if (v == nullptr) return std::nullopt;
    if (v->is_uint64()) return v->get_uint64();
    if (v->is_int64() && v->get_int64() >= 0) return static_cast<std::uint64_t>(v->get_int64());
    return std::nullopt;
  };
  const run_target& target = profile.source().target;
  target_identity out{target.rank, target.host.value_or(""), target.pid};
  if (!out.rank) {
    const boost::json::value* info = trace_detail::foreign_value(target, "distributedInfo");
    if (info != nullptr && info->is_object()) out.rank = as_rank(info->as_object().if_contains("rank"));
  }
  return out;
}

std::string rank_list(const std::vector<std::uint64_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  if (ranks.size() > 8) out += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return out;
}

void add_mismatch(job_report& job, std::string message) {
  job.warnings.push_back({warning_code::rank_mismatch, warning_source::core, std::move(message)});
}

/// Places the ranks: their own rank numbers when every profile has a distinct one, else file order.
void place_ranks(job_report& job, std::vector<named_profile>& profiles) {
  std::vector<target_identity> found;
  std::set<std::uint64_t> distinct;
  std::size_t missing = 0;
  for (const named_profile& p : profiles) {
    found.push_back(identity_of(p.profile));
    if (found.back().rank) {
      distinct.insert(*found.back().rank);
    } else {
      ++missing;
    }
  }
  const bool own = missing == 0 && distinct.size() == profiles.size();
  if (!own && missing != profiles.size()) {
    add_mismatch(job, std::to_string(missing) + " of " + std::to_string(profiles.size()) +
                          " profiles name no rank and " + std::to_string(profiles.size() - missing - distinct.size()) +
                          " repeat another's rank (target.rank, target.distributedInfo.rank); every rank is its "
                          "place in the input order instead");
  }
  job.ranks.reserve(profiles.size());
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    job.ranks.push_back({own ? *found[i].rank : i, std::move(found[i].host), found[i].pid, std::move(profiles[i].file),
                         std::move(profiles[i].profile)});
  }
  std::stable_sort(job.ranks.begin(), job.ranks.end(),
                   [](const job_rank& a, const job_rank& b) { return a.rank < b.rank; });
}

/// Run counts that differ between ranks: one warning naming the counts and their ranks.
void check_run_counts(job_report& job) {
  std::map<std::size_t, std::vector<std::uint64_t>> by_count;
  for (const job_rank& r : job.ranks) by_count[r.profile.result().runs.size()].push_back(r.rank);
  if (by_count.size() < 2) return;
  std::string message = "the ranks have different run counts (";
  bool first = true;
  for (const auto& [count, ranks] : by_count) {
    message += (first ? "" : "; ") + std::to_string(count) + " runs: rank " + rank_list(ranks);
    first = false;
  }
  message += "); runs were merged by run index, each over the ranks that have it";
  add_mismatch(job, std::move(message));
}

}  // namespace

job_report merge_ranks(std::vector<named_profile> profiles) {
  if (profiles.empty()) throw std::invalid_argument("regionprof::merge_ranks: no profile to merge");
  job_report job;
  place_ranks(job, profiles);
  check_run_counts(job);

  std::size_t run_count = 0;
  for (const job_rank& r : job.ranks) run_count = std::max(run_count, r.profile.result().runs.size());
  std::size_t partial_regions = 0;  // (run, region) pairs some rank that has the run lacks
  std::string partial_example;
  std::vector<sample> wall, cpu, device, busy, span;
  for (std::size_t run = 0; run < run_count; ++run) {
    cross_rank_run out;
    out.run_index = run;
    wall.clear();
    cpu.clear();
    device.clear();
    busy.clear();
    span.clear();
    std::unordered_map<std::string_view, std::size_t> region_index;
    std::vector<std::string_view> region_ids;
    std::vector<std::vector<sample>> region_cpu;
    std::vector<std::vector<sample>> region_device;
    std::size_t ranks_with_run = 0;
    for (const job_rank& r : job.ranks) {
      const analysis_result& result = r.profile.result();
      if (run >= result.runs.size()) continue;
      ++ranks_with_run;
      const run_result& s = result.runs[run];
      wall.push_back({s.wall_time_ns, r.rank});
      cpu.push_back({s.cpu_time_ns, r.rank});
      if (s.device_time_ns) device.push_back({*s.device_time_ns, r.rank});
      if (s.device_busy_ns) busy.push_back({*s.device_busy_ns, r.rank});
      if (s.device_span_ns) span.push_back({*s.device_span_ns, r.rank});
      for (const region_aggregate& region : s.regions) {
        const std::string_view id = result.regions[region.region].id;
        auto [at, added] = region_index.try_emplace(id, region_ids.size());
        if (added) {
          region_ids.push_back(id);
          region_cpu.emplace_back();
          region_device.emplace_back();
        }
        region_cpu[at->second].push_back({region.cpu_time_ns, r.rank});
        if (region.device_time_ns) region_device[at->second].push_back({*region.device_time_ns, r.rank});
      }
    }
    out.wall = figure_of(wall);
    out.cpu = figure_of(cpu);
    out.device = optional_figure(device);
    out.device_busy = optional_figure(busy);
    out.device_span = optional_figure(span);
    for (std::size_t i = 0; i < region_ids.size(); ++i) {
      cross_rank_region region;
      region.region_id = std::string(region_ids[i]);
      region.cpu = figure_of(region_cpu[i]);
      region.device = optional_figure(region_device[i]);
      if (region.cpu.ranks != ranks_with_run) {
        if (partial_regions++ == 0) {
          partial_example = "'" + region.region_id + "' in run " + std::to_string(run) + " is on " +
                            std::to_string(region.cpu.ranks) + " of " + std::to_string(ranks_with_run) + " ranks";
        }
      }
      out.regions.push_back(std::move(region));
    }
    job.runs.push_back(std::move(out));
  }
  if (partial_regions != 0) {
    add_mismatch(job, std::to_string(partial_regions) +
                          " regions of a run are missing on some ranks that have the run (e.g. " + partial_example +
                          "); their figures are over the ranks that have them");
  }
  return job;
}

}  // namespace regionprof
