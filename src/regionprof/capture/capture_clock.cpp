#include "regionprof/capture/capture_clock.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if REGIONPROF_CAPTURE_HAS_RDTSC
#include <cpuid.h>
#endif

namespace regionprof::capture_detail {

bool clock_is_tsc = false;

namespace {

bool tsc_is_invariant() noexcept {
#if REGIONPROF_CAPTURE_HAS_RDTSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;  // "Invariant TSC": constant rate, runs in every C/P state
#else
  return false;
#endif
}

clock_sample first_sample;
std::once_flag clock_once;

}  // namespace

bool choose_capture_clock() noexcept {
  std::call_once(clock_once, [] {
    const char* forced = std::getenv("REGIONPROF_CAPTURE_CLOCK");
    const bool monotonic_forced = forced != nullptr && std::strcmp(forced, "monotonic") == 0;
    clock_is_tsc = !monotonic_forced && tsc_is_invariant();
    first_sample = sample_clock();
  });
  return clock_is_tsc;
}

clock_sample sample_clock() noexcept {
  if (!clock_is_tsc) {
    const std::int64_t now = monotonic_now_ns();
    return {static_cast<std::uint64_t>(now), now};
  }
  clock_sample best{};
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::uint64_t before = read_ticks();
    const std::int64_t ns = monotonic_now_ns();
    const std::uint64_t after = read_ticks();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

clock_sample process_sample() noexcept {
  choose_capture_clock();
  return first_sample;
}

tick_converter tick_converter::calibrate(clock_sample start, clock_sample end) noexcept {
  tick_converter converter;
  converter.anchor_ticks_ = start.ticks;
  converter.anchor_ns_ = start.ns;
  if (!clock_is_tsc) return converter;  // ticks are ns
  constexpr std::int64_t min_baseline_ns = 10'000'000;
  clock_sample from = start;
  if (end.ns - start.ns < min_baseline_ns) from = process_sample();
  const std::int64_t span_ns = end.ns - from.ns;
  const auto span_ticks = static_cast<std::int64_t>(end.ticks - from.ticks);
  if (span_ns > 0 && span_ticks > 0) {
    converter.ns_per_tick_q32_ = (static_cast<int128>(span_ns) << 32) / span_ticks;
  } else {
    // No usable baseline (both samples in the same instant): a nominal 1 GHz rate keeps the order of
    // events; only reached for sessions a few ns long started right after the process's first sample.
    converter.ns_per_tick_q32_ = int128{1} << 32;
  }
  return converter;
}

}  // namespace regionprof::capture_detail
