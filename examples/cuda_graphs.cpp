// cuda_graphs: a CUDA graph captured inside regions and replayed inside others (docs/design.md, rule 15).
//
//   build/bin/regionprof run --run-marker step --region '(layer_.|built|replay)=stage'
//       --graph-attribution capture -- build/bin/cuda_graphs
//
// Before the steps (outside every run), in range `capture`: layer_i's spin kernel ((i + 1) x 100 us) is
// captured inside range `layer_i` (layer_2 also captures a 1 MiB memset), then a 50 us kernel node is
// added explicitly inside `built`, and the graph is instantiated. Each of 6 `step` ranges holds
// `replay`: one graph launch and one directly launched 30 us kernel. With capture attribution layer_i
// and built own their nodes' device time in every step and replay only its direct kernel; with
// --graph-attribution launch, replay owns everything.
//
//   build/bin/cuda_graphs --sessions 100
//
// instead profiles 100 in-process sessions (regionprof::profile, 3 measured runs each): each session's
// first call recaptures the graph, the others replay it. Checks that every session attributes the same
// device time by capture, and that kernel launches after the sessions are no slower than before
// (CUPTI detached). Prints what it measures; exits 1 when a check fails, 2 without a usable device.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "cuda_graphs_work.hpp"
#include "regionprof/harness/harness.hpp"

namespace {

int steps_main() {
  if (!cuda_graphs::init() || !cuda_graphs::capture()) return 2;
  for (int step = 0; step < 6; ++step) {
    nvtxRangePushA("step");
    const bool ok = cuda_graphs::replay_step();
    nvtxRangePop();
    if (!ok) return 2;
  }
  cuda_graphs::release_graph();
  std::printf("cuda_graphs: 6 steps done\n");
  return 0;
}

/// Device time (ns) of region `id` in `run`, or -1 when absent.
std::int64_t device_of(const regionprof::analysis_result& result, const regionprof::run_result& run,
                       const std::string& id) {
  for (const regionprof::region_aggregate& region : run.regions) {
    if (result.regions[region.region].id == id) return region.device_time_ns.value_or(-1);
  }
  return -1;
}

int sessions_main(int sessions) {
  if (!cuda_graphs::init()) return 2;
  const double before = cuda_graphs::launch_loop_ns(20000);
  int failures = 0;
  std::vector<double> layer_share;  // per session: layer_3's device time / the run's, median run
  regionprof::profile_options options;
  options.warmup_runs = 0;  // the internal warm-up run (recorded, discarded) captures the graph
  options.measured_runs = 3;
  options.analysis.region_rules = {regionprof::parse_region_arg("(layer_.|built|replay)=stage")};
  for (int session = 0; session < sessions; ++session) {
    bool captured = false;
    bool ok = true;
    const regionprof::Profile profile = regionprof::profile(
        [&] {
          if (!captured) ok = cuda_graphs::capture() && ok;
          captured = true;
          ok = cuda_graphs::replay_step() && ok;
        },
        options);
    cuda_graphs::release_graph();
    const regionprof::analysis_result& result = profile.result();
    std::string problems;
    if (!ok) problems += " CUDA call failed;";
    for (const regionprof::warning& w : result.warnings) {
      const std::string code(regionprof::to_string(w.code));
      if (code != "UNMAPPED_REGION_EVENTS" && code != "CUPTI_OVERHEAD") problems += " " + code + ": " + w.message + ";";
    }
    if (result.runs.size() != 3) problems += " " + std::to_string(result.runs.size()) + " runs;";
    std::vector<double> shares;
    for (const regionprof::run_result& run : result.runs) {
      const std::int64_t device = run.device_time_ns.value_or(0);
      const std::int64_t layer0 = device_of(result, run, "stage:layer_0");
      const std::int64_t layer3 = device_of(result, run, "stage:layer_3");
      const std::int64_t replay = device_of(result, run, "stage:replay");
      // ~1080 us per run: layers 100..400 us, built 50, direct 30; by capture, replay owns ~30 us.
      if (device < 500'000 || device > 100'000'000) problems += " run device time " + std::to_string(device) + " ns;";
      if (layer0 <= 0 || layer3 <= 2 * layer0) problems += " layer_0/layer_3 not attributed by capture;";
      if (replay < 0 || replay > device / 5) problems += " replay owns " + std::to_string(replay) + " ns;";
      shares.push_back(device > 0 ? static_cast<double>(layer3) / static_cast<double>(device) : 0.0);
    }
    std::sort(shares.begin(), shares.end());
    layer_share.push_back(shares.empty() ? 0.0 : shares[shares.size() / 2]);
    if (!problems.empty()) {
      ++failures;
      std::printf("cuda_graphs: session %d:%s\n", session, problems.c_str());
    }
  }
  const double after = cuda_graphs::launch_loop_ns(20000);
  const auto [low, high] = std::minmax_element(layer_share.begin(), layer_share.end());
  std::printf("cuda_graphs: %d sessions, layer_3's share of a run's device time %.4f..%.4f\n", sessions,
              layer_share.empty() ? 0.0 : *low, layer_share.empty() ? 0.0 : *high);
  if (!layer_share.empty() && *high - *low > 0.05) {
    ++failures;
    std::printf("cuda_graphs: FAIL: the attribution drifts across sessions\n");
  }
  std::printf("cuda_graphs: %.1f ns per launch before the sessions, %.1f after\n", before, after);
  if (before < 0 || after < 0 || after > 1.15 * before + 200.0) {
    ++failures;
    std::printf("cuda_graphs: FAIL: launches are slower after profiling (CUPTI left attached?)\n");
  }
  std::printf("cuda_graphs: %s\n", failures == 0 ? "sessions ok" : "sessions FAILED");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--sessions") == 0) return sessions_main(std::atoi(argv[2]));
  if (argc != 1) {
    std::fprintf(stderr, "usage: cuda_graphs [--sessions N]\n");
    return 2;
  }
  return steps_main();
}
