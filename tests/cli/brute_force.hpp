// An independent, deliberately naive reading of DESIGN.md's attribution rules (and the choices the
// README's "How the analysis decides" documents), to check `regionprof analyze` on real traces:
// O(n^2) parent search per thread, ancestor walks, linear lookups. It never calls the engine.
#pragma once

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "regionprof/trace.hpp"

namespace brute {

struct region_rule {
  std::regex pattern;
  std::string kind;
};

struct region_figures {
  std::uint64_t calls = 0;
  std::int64_t cpu_ns = 0;
  std::int64_t device_ns = 0;
  std::int64_t off_thread_cpu_ns = 0;
  bool seen_off_thread = false;
};

struct run_figures {
  std::int64_t cpu_ns = 0;     ///< the marker's (clipped) duration
  std::int64_t device_ns = 0;  ///< busy-sum of the ops its launches own
  std::map<std::string, region_figures> regions;  ///< by region id
  std::int64_t residual_cpu_ns = 0;
  std::int64_t residual_device_ns = 0;
};

/// Runs in marker order, with their regions.
std::vector<run_figures> attribute(const regionprof::trace& t, const std::regex& run_marker,
                                   const std::vector<region_rule>& rules, bool cross_thread);

}  // namespace brute
