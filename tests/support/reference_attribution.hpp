// The one independent, deliberately naive reading of the attribution rules (docs/design.md, rules
// 1-14 and 20) that the analysis tests (random traces) and the CLI tests (real traces) judge the engine by. It shares no code with the engine:
// each interval's parent by scanning every earlier interval of its thread, ownership by walking parent
// chains, each device op's launching call by scanning all intervals, the device union by testing every
// elementary segment, each tree node's figures by comparing every pair of paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/analysis/analysis.hpp"  // device_type only: the reference never calls the engine
#include "regionprof/trace/trace.hpp"

namespace regionprof::test::reference {

/// A name whose whole text matches `pattern` is a region of `kind`; its id is KIND:<capture group 1>,
/// or KIND:<whole name> when the pattern has no group (without the "KIND:" when `kind` is empty).
struct region_rule {
  std::regex pattern;
  std::string kind;
};

struct rules {
  std::regex run_marker;             ///< whole-name match
  std::string run_marker_domain;     ///< the NVTX domain a marker must be in; empty: every domain
  std::vector<region_rule> regions;  ///< the first matching rule wins
  bool cross_thread = false;         ///< rule 9: off-thread work joins the run whose marker holds it
  std::size_t skip_runs = 0;         ///< the first N markers in time are no runs
};

/// The engine's defaults, restated: the marker 'regionprof.profiled_run' in the domain 'regionprof';
/// regions are names starting 'aot_module:' or 'untuned_module:', the whole name their id.
///
/// ```
/// auto want = regionprof::test::reference::attribute(trace, reference::default_rules());
/// ```
rules default_rules();

struct region_figures {
  std::uint64_t calls = 0;              ///< topmost on-thread instances
  std::int64_t cpu_ns = 0;              ///< their clipped durations
  std::int64_t device_ns = 0;           ///< ops their launches own
  std::int64_t off_thread_cpu_ns = 0;   ///< topmost off-thread instances (cross_thread on)
  bool seen_off_thread = false;
  std::int64_t first_seen_ns = std::numeric_limits<std::int64_t>::max();  ///< earliest on-thread start
};

/// One node of the naive region tree (rule 14): the figures of one path of region ids, ns.
struct tree_figures {
  std::uint64_t calls = 0;        ///< on-thread instances with this path
  std::int64_t cpu_ns = 0;        ///< their clipped durations (inclusive)
  std::int64_t self_cpu_ns = 0;   ///< cpu_ns - the cpu_ns of the paths one region longer
  std::int64_t device_ns = 0;     ///< ops launched with this path or a longer one open
  std::int64_t self_device_ns = 0;  ///< ops launched with exactly this path innermost
};

struct run_figures {
  std::int64_t cpu_ns = 0;     ///< the marker's (clipped) duration
  std::int64_t device_ns = 0;  ///< sum of the ops its launches own
  std::int64_t busy_ns = 0;    ///< their union
  std::int64_t span_ns = 0;    ///< first op start to last op end
  std::map<std::string, region_figures> regions;  ///< by region id
  std::int64_t residual_cpu_ns = 0;
  std::int64_t residual_device_ns = 0;
  std::map<std::vector<std::string>, tree_figures> tree;  ///< by path, topmost region first
};

/// Rule 10's figures of one (name, device) key, over on-thread work only (as with cross_thread off).
struct key_figures {
  std::uint64_t count = 0;
  std::int64_t self_cpu = 0;
  std::int64_t total_cpu = 0;
  std::int64_t self_device = 0;
  std::int64_t total_device = 0;
};

/// The owner of the residual's ops in result::region_keys (rule 20).
inline constexpr const char* residual_owner = "(residual)";

struct result {
  std::vector<run_figures> runs;  ///< in marker order, skipped runs left out
  std::map<std::pair<std::string, device_type>, key_figures> keys;
  /// Rule 20: rule 10's figures per owner (a region id, or residual_owner) of on-thread work: the CPU
  /// intervals below the run's marker that are no region, and the ops their launches own.
  std::map<std::string, std::map<std::pair<std::string, device_type>, key_figures>> region_keys;
  std::int64_t overlaps = 0;              ///< intervals clipped to their parent
  std::int64_t nested_markers = 0;        ///< markers inside a marker
  std::int64_t unmapped = 0;              ///< region intervals in no run, on any thread
  std::int64_t off_thread_intervals = 0;  ///< intervals inside another thread's (counted) run
  std::int64_t off_thread_ops = 0;        ///< ops launched from such intervals
  std::int64_t uncorrelated = 0;          ///< ops without a launching call
  std::int64_t anomalies = 0;             ///< ops starting before their launching call
};

result attribute(const trace& t, const rules& r);

}  // namespace regionprof::test::reference
