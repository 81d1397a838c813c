// The one clock of a trace: CLOCK_MONOTONIC, in integer nanoseconds.
//
// Every producer writes timestamps on this timeline: the NVTX capture reads a cheaper counter (TSC) and
// maps it here with a calibration taken at session start and end; CUPTI is handed monotonic_now_ns() as
// its timestamp callback (or mapped here by paired samples where it refuses); the harness's wall clock
// reads it directly.
#pragma once

#include <cstdint>
#include <ctime>

namespace regionprof {

/// Nanoseconds on CLOCK_MONOTONIC, the timeline of every trace regionprof records.
///
/// ```
/// const std::int64_t start = regionprof::monotonic_now_ns();
/// work();
/// const std::int64_t elapsed_ns = regionprof::monotonic_now_ns() - start;
/// ```
inline std::int64_t monotonic_now_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace regionprof
