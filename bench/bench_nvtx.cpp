// NVTX capture overhead (docs/design.md, Budgets: a push+pop with capture on costs <= 1.5 x two clock reads and
// < 30 ns; <= 16 bytes per range event: 12-byte records, 12.007 with chunk headers). All figures in ns per
// iteration.
//
// NVTX binds its tool once per NVTX instance, and this program links the static capture tool, so:
// - BM_PushPop_NoTool runs in libregionprof_bench_nvtx_notool.so, whose own NVTX instance has NO tool
//   attached (NVTX's inline call finds a null function pointer);
// - BM_PushPop_NotRecording runs here: the tool is attached but no session is active (one relaxed load);
// - BM_PushPop_Registered / _Ascii / BM_ScopedRegion record (a capture_session is active). They restart
//   the session every 128 x records_per_chunk iterations (256 chunks; timing paused) so memory stays
//   bounded, and report the capture's memory as the counter bytes_per_range_event: chunk bytes taken /
//   records (a push or a pop is one range event), chunk headers and the last chunk's unused tail included.
// - BM_MemoryEvent_NotRecording / _Recording: regionprof::record_memory_event (docs/design.md, rule 21;
//   budget <= 30 ns per recorded event), as an allocator's reporting hook calls it; the recording one
//   reports bytes_per_memory_event (two records per event).
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <memory>

#include <benchmark/benchmark.h>

#include "notool_push_pop.hpp"
#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_clock.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "regionprof/regions/regions.hpp"

namespace {

using regionprof::detail::registered_attributes;

/// Runs `body` (two records: one range, push + pop, or one memory event) per iteration with the capture
/// recording; the counter `counter` is chunk bytes per `events_per_iteration`.
template <class Body>
void recorded(benchmark::State& state, Body&& body, const char* counter = "bytes_per_range_event",
              double events_per_iteration = 2.0) {
  // 256 chunks exactly per session (and within the chunk pool, so chunks are reused warm).
  constexpr std::int64_t ranges_per_session = std::int64_t{128} * regionprof::capture_detail::records_per_chunk;
  regionprof::capture_options options;
  options.memory_cap_bytes = std::size_t{1} << 30;
  auto session = std::make_unique<regionprof::capture_session>(options);
  std::int64_t in_session = 0;
  double bytes = 0;
  double events = 0;
  for (auto _ : state) {
    body();
    if (++in_session == ranges_per_session) {
      state.PauseTiming();
      bytes += static_cast<double>(session->chunk_bytes());
      events += events_per_iteration * static_cast<double>(in_session);
      session.reset();  // discards
      session = std::make_unique<regionprof::capture_session>(options);
      in_session = 0;
      state.ResumeTiming();
    }
  }
  bytes += static_cast<double>(session->chunk_bytes());
  events += events_per_iteration * static_cast<double>(in_session);
  session.reset();
  if (events > 0) state.counters[counter] = bytes / events;
}

void BM_ClockRead(benchmark::State& state) {
  const bool tsc = regionprof::capture_detail::choose_capture_clock();
  for (auto _ : state) benchmark::DoNotOptimize(regionprof::capture_detail::read_ticks());
  state.SetLabel(tsc ? "rdtsc (invariant TSC)" : "CLOCK_MONOTONIC (no invariant TSC)");
}
BENCHMARK(BM_ClockRead);

void BM_PushPop_NoTool(benchmark::State& state) {
  if (regionprof_bench_notool_attached()) {
    state.SkipWithError("NVTX_INJECTION64_PATH attached a tool to the no-tool NVTX instance");
    return;
  }
  regionprof_bench_notool_push_pop(state);
  state.SetLabel("no tool attached");
}
BENCHMARK(BM_PushPop_NoTool);

void BM_PushPop_NotRecording(benchmark::State& state) {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("regionprof");
  const nvtxEventAttributes_t attributes = registered_attributes(nvtxDomainRegisterStringA(domain, "region:bench"));
  if (!regionprof::nvtx_capture_attached()) state.SkipWithError("the capture tool is not attached");
  for (auto _ : state) {
    nvtxDomainRangePushEx(domain, &attributes);
    nvtxDomainRangePop(domain);
  }
  state.SetLabel("tool attached, not recording");
}
BENCHMARK(BM_PushPop_NotRecording);

void BM_PushPop_Registered(benchmark::State& state) {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("regionprof");
  const nvtxEventAttributes_t attributes = registered_attributes(nvtxDomainRegisterStringA(domain, "region:bench"));
  recorded(state, [&] {
    nvtxDomainRangePushEx(domain, &attributes);
    nvtxDomainRangePop(domain);
  });
  state.SetLabel("capture on, registered name");
}
BENCHMARK(BM_PushPop_Registered);

void BM_PushPop_Ascii(benchmark::State& state) {
  static const char name[] = "ascii_range_name_24char_";
  static_assert(sizeof(name) == 25, "a 24-character name");
  recorded(state, [] {
    nvtxRangePushA(name);
    nvtxRangePop();
  });
  state.SetLabel("capture on, 24-char ASCII name");
}
BENCHMARK(BM_PushPop_Ascii);

void BM_ScopedRegion_Registered(benchmark::State& state) {
  static const regionprof::registered_region region{regionprof::region_kind::aot_module, "bench"};
  recorded(state, [] { const regionprof::scoped_region scope{region}; });
  state.SetLabel("capture on, regionprof::scoped_region");
}
BENCHMARK(BM_ScopedRegion_Registered);

void BM_MemoryEvent_NotRecording(benchmark::State& state) {
  std::int64_t total = 0;
  for (auto _ : state) {
    total += 32768;
    benchmark::DoNotOptimize(regionprof::record_memory_event(32768, total, regionprof::cpu_memory,
                                                             regionprof::memory_event_kind::allocation));
  }
  state.SetLabel("no session recording");
}
BENCHMARK(BM_MemoryEvent_NotRecording);

void BM_MemoryEvent_Recording(benchmark::State& state) {
  std::int64_t total = 0;
  recorded(
      state,
      [&total] {
        total += 32768;
        benchmark::DoNotOptimize(regionprof::record_memory_event(32768, total, regionprof::cpu_memory,
                                                                 regionprof::memory_event_kind::allocation));
      },
      "bytes_per_memory_event", 1.0);
  state.SetLabel("capture on");
}
BENCHMARK(BM_MemoryEvent_Recording);

}  // namespace
