// The capture's clock: the TSC (rdtsc) where it is invariant, else CLOCK_MONOTONIC; mapped onto the one
// clock of every trace (regionprof::monotonic_now_ns(), CLOCK_MONOTONIC ns) by a calibration taken at
// session start and end.
//
// Only the capture reads this clock (the harness's wall clock and CUPTI's timestamps are
// monotonic_now_ns() directly), so it lives here and not in the core's public clock.hpp.
#pragma once

#include <cstdint>

#include "regionprof/trace/clock.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define REGIONPROF_CAPTURE_HAS_RDTSC 1
#else
#define REGIONPROF_CAPTURE_HAS_RDTSC 0
#endif

namespace regionprof::capture_detail {

__extension__ typedef __int128 int128;  // 64x64 -> 128-bit products of the tick conversion

/// True once choose_capture_clock() found an invariant TSC. Written once, before the first session
/// records anything (sessions call choose_capture_clock() before they enable recording), so the hot
/// path reads it without synchronisation.
extern bool clock_is_tsc;

/// Decides the clock once per process: the TSC when cpuid reports it invariant (leaf 0x80000007,
/// EDX bit 8) and the environment variable REGIONPROF_CAPTURE_CLOCK is not `monotonic`; else
/// CLOCK_MONOTONIC. Thread-safe; later calls return the first decision.
bool choose_capture_clock() noexcept;

/// Raw ticks of the capture clock: TSC cycles, or CLOCK_MONOTONIC ns.
inline std::uint64_t read_ticks() noexcept {
#if REGIONPROF_CAPTURE_HAS_RDTSC
  if (clock_is_tsc) return __rdtsc();
#endif
  return static_cast<std::uint64_t>(monotonic_now_ns());
}

/// One (ticks, CLOCK_MONOTONIC ns) pair taken as close together as the machine allows.
struct clock_sample {
  std::uint64_t ticks = 0;
  std::int64_t ns = 0;
};

/// Best of several bracketed reads (ticks, ns, ticks): the pair whose bracket was narrowest, with
/// ticks at the bracket's midpoint. Error: half the narrowest bracket (tens of ns).
clock_sample sample_clock() noexcept;

/// The first sample this process took (at the first choose_capture_clock()); a long baseline for the
/// tick rate when a session is too short to calibrate on its own.
clock_sample process_sample() noexcept;

/// Maps capture ticks to CLOCK_MONOTONIC ns: ns = anchor.ns + (ticks - anchor.ticks) * ns_per_tick.
class tick_converter {
 public:
  tick_converter() = default;

  /// Calibration of one session: anchored at `start`; the rate from `start` to `end`, or from the
  /// process's first sample to `end` when the session spans less than 10 ms (a longer baseline).
  /// With the CLOCK_MONOTONIC fallback ticks are already ns and the map is the identity.
  static tick_converter calibrate(clock_sample start, clock_sample end) noexcept;

  std::int64_t to_ns(std::uint64_t ticks) const noexcept {
    const auto delta = static_cast<int128>(static_cast<std::int64_t>(ticks - anchor_ticks_));
    return anchor_ns_ + static_cast<std::int64_t>((delta * ns_per_tick_q32_) >> 32);
  }
  /// Nanoseconds per tick (1.0 for the CLOCK_MONOTONIC fallback).
  double ns_per_tick() const noexcept { return static_cast<double>(ns_per_tick_q32_) / 4294967296.0; }

 private:
  std::uint64_t anchor_ticks_ = 0;
  std::int64_t anchor_ns_ = 0;
  int128 ns_per_tick_q32_ = int128{1} << 32;  // fixed point, 32 fractional bits
};

}  // namespace regionprof::capture_detail
