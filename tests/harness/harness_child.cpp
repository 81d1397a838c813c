// A harness program: profiles 4 measured runs of a workload with one region, prints the JSON report.
// test_harness runs it with NVTX_INJECTION64_PATH naming another tool (NVTX_TOOL_CONFLICT). With an
// argument, in windows of 3 runs written to that path pattern (`%w`): the last (1 run) is printed.
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <thread>

#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.hpp"

int main(int argc, char** argv) {
  try {
    static const regionprof::registered_region work{regionprof::region_kind::aot_module, "work"};
    regionprof::profile_options options;
    options.warmup_runs = 1;
    options.measured_runs = 4;
    if (argc > 1) {
      options.window_runs = 3;
      options.window_output = argv[1];
    }
    const regionprof::Profile profile = regionprof::profile(
        [] {
          const regionprof::scoped_region region{work};
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        },
        options);
    std::cout << regionprof::to_json(profile) << '\n';
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness_child: %s\n", e.what());
    return 1;
  }
  return 0;
}
