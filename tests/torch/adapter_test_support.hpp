// What the adapter's test files read from a handle, a profile and a capture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "regionprof/harness/harness.hpp"
#include "regionprof/torch/torch.hpp"

namespace adapter_test {

/// The handle's region ids, in discovery order.
inline std::vector<std::string> region_ids(const regionprof::torch::instrumentation& handle) {
  std::vector<std::string> ids;
  for (const auto& region : handle.regions()) ids.push_back(region.region_id);
  return ids;
}

/// Region id -> calls, per run, from the analysis.
inline std::vector<std::map<std::string, std::uint64_t>> calls_per_run(const regionprof::Profile& profile) {
  std::vector<std::map<std::string, std::uint64_t>> runs;
  for (const auto& run : profile.result().runs) {
    auto& calls = runs.emplace_back();
    for (const auto& aggregate : run.regions) calls[profile.result().regions[aggregate.region].id] = aggregate.calls;
  }
  return runs;
}

/// Name -> number of captured ranges with that name (all threads).
inline std::map<std::string, std::size_t> range_counts(const regionprof::trace& t) {
  std::map<std::string, std::size_t> counts;
  for (const auto& interval : t.intervals) ++counts[std::string(t.strings.view(interval.name))];
  return counts;
}

}  // namespace adapter_test
