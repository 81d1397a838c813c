// A program with the static capture tool, run by test_capture as a child process for what depends on
// the environment at NVTX initialisation (REGIONPROF_CAPTURE_CLOCK, NVTX_INJECTION64_PATH).
//
// Usage: capture_child RANGES   records RANGES push/pop pairs on two threads, then prints
//        `intervals=N records=N tsc=0|1 attached=0|1 warnings=CODE,...` and, per warning, `CODE: message`.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "regionprof/capture/capture.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: capture_child RANGES\n");
    return 2;
  }
  const int ranges = std::atoi(argv[1]);
  auto emit = [ranges] {
    for (int i = 0; i < ranges; ++i) {
      nvtxRangePushA("child_range");
      nvtxRangePop();
    }
  };
  regionprof::capture_session session;
  emit();
  std::thread other(emit);
  other.join();
  const regionprof::capture_result result = session.stop();
  std::string codes;
  for (const regionprof::warning& w : result.data.warnings) {
    codes += (codes.empty() ? "" : ",") + std::string(regionprof::to_string(w.code));
  }
  std::printf("intervals=%zu records=%llu tsc=%d attached=%d warnings=%s\n", result.data.intervals.size(),
              static_cast<unsigned long long>(result.stats.records), result.stats.clock_is_tsc ? 1 : 0,
              result.stats.tool_attached ? 1 : 0, codes.c_str());
  for (const regionprof::warning& w : result.data.warnings) {
    std::printf("%s: %s\n", std::string(regionprof::to_string(w.code)).c_str(), w.message.c_str());
  }
  return 0;
}
